"""Line handling shared by every chunker: splitting source into rows, balanced windows, final numbering."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ._model import ChunkDraft, Piece, Row

#: window length for plain text files (capped by ``max_chunk_lines``)
TEXT_WINDOW_LINES = 60
#: summaries are a line or two for result lists, never a second copy of the chunk
SUMMARY_MAX_CHARS = 300


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only (tree-sitter's row convention), dropping ``\\r`` and the empty tail after a final newline."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def is_blank(text: str) -> bool:
    """True for an empty or whitespace-only line."""
    return not text.strip()


def trim_blank(rows: Sequence[Row]) -> tuple[Row, ...]:
    """Drop blank rows at both ends."""
    start, end = 0, len(rows)
    while start < end and is_blank(rows[start][1]):
        start += 1
    while end > start and is_blank(rows[end - 1][1]):
        end -= 1
    return tuple(rows[start:end])


def clip(text: str, limit: int = SUMMARY_MAX_CHARS) -> str:
    """Cut ``text`` to ``limit`` characters, marking the cut."""
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def first_line_summary(rows: Iterable[Row]) -> str:
    """The first non-blank line, stripped: the summary of a chunk without a signature."""
    for _, text in rows:
        if not is_blank(text):
            return clip(text.strip())
    return ""


def window_bounds(count: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Half-open ``[start, end)`` windows over ``count`` rows, at most ``size`` long, consecutive ones sharing exactly ``overlap`` rows.

    Windows are balanced (all but the last the same length) so a 125-line function becomes two
    ~68-line parts instead of a 120-line part and a 15-line scrap.
    """
    if count <= size:
        return [(0, count)]
    parts = math.ceil((count - overlap) / (size - overlap))
    length = math.ceil((count + (parts - 1) * overlap) / parts)
    step = length - overlap
    return [(i * step, min(count, i * step + length)) for i in range(parts)]


def text_windows(lines: Sequence[str], *, size: int, overlap: int) -> list[Piece]:
    """Line windows over a whole file (kind ``window``); blank-only windows are dropped."""
    rows = [(i + 1, line) for i, line in enumerate(lines)]
    rows_trimmed = trim_blank(rows)
    pieces = []
    for start, end in window_bounds(len(rows_trimmed), size, min(overlap, size - 1)):
        part = trim_blank(rows_trimmed[start:end])
        if part:
            pieces.append(Piece("window", "", "", "", part, first_line_summary(part)))
    return pieces


def finalize(pieces: Iterable[Piece], *, max_lines: int, overlap: int) -> list[ChunkDraft]:
    """Split oversized pieces into overlapping parts, order by position and number ordinals per (kind, symbol)."""
    drafts: list[tuple[tuple[int, int, int], ChunkDraft]] = []
    for seq, piece in enumerate(pieces):
        bounds = window_bounds(len(piece.rows), max_lines, overlap)
        for part_no, (start, end) in enumerate(bounds, start=1):
            rows = piece.rows[start:end]
            summary = piece.summary
            if len(bounds) > 1:
                summary = (
                    f"{summary} [part {part_no}/{len(bounds)}]"
                    if summary
                    else f"[part {part_no}/{len(bounds)}]"
                )
            draft = ChunkDraft(
                chunk_kind=piece.chunk_kind,
                symbol_name=piece.symbol_name,
                class_name=piece.class_name,
                function_name=piece.function_name,
                start_line=rows[0][0],
                end_line=rows[-1][0],
                text="\n".join(text for _, text in rows),
                summary=summary,
                ordinal=0,
            )
            # outer definitions sort before the members they contain; ``seq`` keeps ties deterministic
            drafts.append(((draft.start_line, -draft.end_line, seq), draft))
    drafts.sort(key=lambda item: item[0])
    seen: Counter[tuple[str, str]] = Counter()
    out = []
    for _, draft in drafts:
        key = (draft.chunk_kind, draft.symbol_name)
        out.append(replace(draft, ordinal=seen[key]))
        seen[key] += 1
    return out
