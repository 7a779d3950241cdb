"""Frozen records passed between layers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Chunk:
    """One indexed span of a file (a function, class, section or line window)."""

    chunk_id: str
    file_path: str
    language: str
    file_extension: str
    chunk_kind: str
    symbol_name: str
    class_name: str
    function_name: str
    chunk_index: int
    start_line: int
    end_line: int
    text: str
    summary: str
    content_hash: str
    updated_at: str
    last_commit_hash: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["tags"] = list(self.tags)
        return out
