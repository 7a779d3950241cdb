"""Chunk Markdown by headings with a line scanner that knows fences, front matter and setext underlines.

A section runs from its heading to the line before the next heading of any level; its symbol is the
heading path (``Install > Linux``). Text before the first heading is a section with an empty symbol.
A heading with no text of its own (``# Project`` directly followed by ``## Install``) is folded into
the following section when that one is a sub-section, so it is not a one-line chunk. Setext headings
take only the line directly above the underline as their title.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ._model import Piece
from .window import clip, is_blank, trim_blank

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_NOT_PARAGRAPH = re.compile(r" {0,3}([-*+]\s|\d{1,9}[.)]\s|>|#|\|)|\s{4,}\S")


@dataclass(frozen=True)
class _Heading:
    row: int  # 0-based row where the section starts (the title line of a setext heading)
    level: int
    title: str


def chunk_markdown(lines: Sequence[str]) -> list[Piece]:
    """Section pieces for a Markdown file."""
    headings = _scan(lines)
    sections: list[tuple[int, int, str, str]] = []  # (first row, last row, heading path, heading title)
    stack: list[tuple[int, str]] = []
    bounds = [h.row for h in headings] + [len(lines)]
    if headings and headings[0].row > 0:
        sections.append((0, headings[0].row - 1, "", ""))
    elif not headings:
        sections.append((0, len(lines) - 1, "", ""))
    for index, heading in enumerate(headings):
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.title))
        path = " > ".join(title for _, title in stack)
        sections.append((heading.row, bounds[index + 1] - 1, path, heading.title))

    pieces: list[Piece] = []
    carry_from: int | None = None
    for index, (first, last, path, title) in enumerate(sections):
        start = carry_from if carry_from is not None else first
        carry_from = None
        body = [lines[row] for row in range(first + 1, last + 1)]
        next_path = sections[index + 1][2] if index + 1 < len(sections) else None
        if (
            title
            and all(is_blank(text) for text in body)
            and next_path is not None
            and next_path.startswith(path + " > ")
        ):
            carry_from = start
            continue
        rows = trim_blank([(row + 1, lines[row]) for row in range(start, last + 1)])
        if not rows:
            continue
        pieces.append(Piece("section", path, "", "", rows, _summary(path, lines, first + 1, last)))
    return pieces


def _scan(lines: Sequence[str]) -> list[_Heading]:
    """Headings outside code fences and front matter."""
    headings: list[_Heading] = []
    fence: str | None = None
    row = _front_matter_end(lines)
    previous_is_paragraph = False
    while row < len(lines):
        text = lines[row]
        if fence is not None:
            stripped = text.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = None
            row += 1
            previous_is_paragraph = False
            continue
        opening = _FENCE.fullmatch(text)
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence = opening.group(1)
            row += 1
            previous_is_paragraph = False
            continue
        atx = _ATX.fullmatch(text)
        if atx:
            headings.append(_Heading(row, len(atx.group(1)), (atx.group(2) or "").strip()))
            previous_is_paragraph = False
        elif previous_is_paragraph and _SETEXT.fullmatch(text):
            level = 1 if text.strip().startswith("=") else 2
            headings.append(_Heading(row - 1, level, lines[row - 1].strip()))
            previous_is_paragraph = False
        else:
            previous_is_paragraph = not is_blank(text) and not _NOT_PARAGRAPH.match(text)
        row += 1
    return headings


def _front_matter_end(lines: Sequence[str]) -> int:
    """Row after a leading YAML front-matter block (its ``---`` lines are not setext underlines)."""
    if lines and lines[0].strip() == "---":
        for row in range(1, len(lines)):
            if lines[row].strip() in ("---", "..."):
                return row + 1
    return 0


def _summary(path: str, lines: Sequence[str], first: int, last: int) -> str:
    """Heading path plus the first line of prose under it."""
    fence = False
    for row in range(first, last + 1):
        text = lines[row].strip()
        if _FENCE.fullmatch(lines[row]):
            fence = not fence
            continue
        if text and not fence and not _SETEXT.fullmatch(lines[row]):
            return clip(f"{path}\n{text}" if path else text)
    return clip(path)
