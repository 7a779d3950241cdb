"""Records shared by the chunkers: the public ``ChunkDraft`` and the internal ``Piece`` before splitting."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

#: one source line as a chunk sees it: (1-based line number, text without the newline)
Row = tuple[int, str]


@dataclass(frozen=True)
class ChunkDraft:
    """One chunk of a file as the chunker proposes it (the pipeline adds ids, hashes, provenance)."""

    chunk_kind: str
    symbol_name: str
    class_name: str
    function_name: str
    start_line: int
    end_line: int
    text: str
    summary: str
    ordinal: int


@dataclass(frozen=True)
class Piece:
    """A chunk before oversize splitting and ordinal numbering; ``rows`` keep their true line numbers."""

    chunk_kind: str
    symbol_name: str
    class_name: str
    function_name: str
    rows: tuple[Row, ...]
    summary: str


def stable_chunk_id(file_path: str, chunk_kind: str, symbol_name: str, ordinal: int) -> str:
    """Deterministic 32-hex id: the same file, kind, symbol and ordinal give the same id on every run."""
    key = "\x1f".join((file_path, chunk_kind, symbol_name, str(ordinal)))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
