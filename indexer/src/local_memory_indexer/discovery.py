"""The indexer's view of discovery: the shared rules, with files tagged by our grammar table.

Every rule lives in :mod:`local_memory_shared.discovery` (the searcher's freshness check walks
with the same function); this module only adds the language of each file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from local_memory_shared.discovery import (
    BINARY_EXTENSIONS,
    GENERATED_PATTERNS,
    IGNORE_FILES,
    SECRET_PATTERNS,
    VENDORED_DIRS,
    Discovery,
    SourceFile,
    is_secret_name,
    sniff,
)
from local_memory_shared.discovery import discover as _discover

from .treesitter import language_for_path

__all__ = [
    "BINARY_EXTENSIONS",
    "GENERATED_PATTERNS",
    "IGNORE_FILES",
    "SECRET_PATTERNS",
    "VENDORED_DIRS",
    "Discovery",
    "SourceFile",
    "discover",
    "is_secret_name",
    "sniff",
]


def discover(
    root: Path,
    *,
    max_file_bytes: int,
    skip_secrets: bool = True,
    trusted: Mapping[str, tuple[int, float]] | None = None,
) -> Discovery:
    """Walk ``root`` with the shared rules; each file carries its tree-sitter language tag.

    ``trusted``: paths with the (size, mtime) they had when last indexed; such files skip the
    content read (binary, minified and secret-content checks were passed on that content).
    """
    return _discover(
        root,
        max_file_bytes=max_file_bytes,
        skip_secrets=skip_secrets,
        language_for=language_for_path,
        trusted=trusted,
    )
