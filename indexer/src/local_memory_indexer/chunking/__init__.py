"""Cut a file into chunks: syntax-tree definitions for code, heading sections for Markdown, line windows otherwise.

``chunk_file`` never raises on file content (syntax errors, undecodable bytes, binary noise); only
out-of-range arguments raise ``InvalidArgument``. See ``code.py`` for how code is cut and how class
chunks avoid repeating method bodies, ``markdown.py`` for sections, ``window.py`` for splitting.
"""

from __future__ import annotations

import logging

from local_memory_shared.errors import InvalidArgument

from .. import treesitter
from ._model import ChunkDraft, Piece, stable_chunk_id
from .code import chunk_code
from .markdown import chunk_markdown
from .window import TEXT_WINDOW_LINES, finalize, split_lines, text_windows

__all__ = ["ChunkDraft", "chunk_file", "stable_chunk_id"]

log = logging.getLogger(__name__)


def chunk_file(
    file_path: str,
    source: bytes,
    language: str,
    *,
    max_chunk_lines: int = 120,
    overlap_lines: int = 10,
    min_chunk_lines: int = 3,
) -> list[ChunkDraft]:
    """Chunks of one file in line order; ordinals count up per (chunk_kind, symbol_name)."""
    _check_arguments(max_chunk_lines, overlap_lines, min_chunk_lines)
    text = source.decode("utf-8", errors="replace")
    if not text.strip():
        return []
    lines = split_lines(text)
    pieces: list[Piece] | None = None
    if language in treesitter.CODE_LANGUAGES:
        pieces = _code_pieces(file_path, source, language, lines, min_chunk_lines)
    elif language == "markdown":
        pieces = chunk_markdown(lines)
    if pieces is None:
        pieces = text_windows(lines, size=min(TEXT_WINDOW_LINES, max_chunk_lines), overlap=overlap_lines)
    return finalize(pieces, max_lines=max_chunk_lines, overlap=overlap_lines)


def _code_pieces(
    file_path: str, source: bytes, language: str, lines: list[str], min_chunk_lines: int
) -> list[Piece] | None:
    try:
        return chunk_code(lines, source, language, min_chunk_lines=min_chunk_lines)
    except (OSError, ValueError, KeyError) as exc:
        # a grammar that fails to load must not stop an index run: the file is still searchable as windows
        log.warning("tree-sitter failed on %s (%s); chunking it as line windows", file_path, exc)
        return None


def _check_arguments(max_chunk_lines: int, overlap_lines: int, min_chunk_lines: int) -> None:
    if max_chunk_lines < 2:
        raise InvalidArgument("max_chunk_lines must be at least 2", field="max_chunk_lines")
    if not 0 <= overlap_lines < max_chunk_lines:
        raise InvalidArgument("overlap_lines must be >= 0 and below max_chunk_lines", field="overlap_lines")
    if min_chunk_lines < 1:
        raise InvalidArgument("min_chunk_lines must be at least 1", field="min_chunk_lines")
