"""Markdown sections by heading path and line windows for plain text."""

from __future__ import annotations

from local_memory_indexer.chunking import ChunkDraft, chunk_file

README = """\
---
title: Demo
---
Intro paragraph.

# Project

## Install

Run the installer.

```bash
# not a heading
pip install thing
```

### Linux
Use apt.

~~~
## also not a heading
~~~

Usage Guide
===========

Body under setext.

Options
-------
text

- list item
---

#hashtag is not a heading
## Closing ##
The end.
"""


def _shape(drafts: list[ChunkDraft]) -> list[tuple[str, str, int, int]]:
    return [(d.chunk_kind, d.symbol_name, d.start_line, d.end_line) for d in drafts]


def test_markdown_sections_follow_heading_paths_and_skip_fences() -> None:
    drafts = chunk_file("README.md", README.encode(), "markdown")
    assert _shape(drafts) == [
        ("section", "", 1, 4),
        ("section", "Project > Install", 6, 15),
        ("section", "Project > Install > Linux", 17, 22),
        ("section", "Usage Guide", 24, 27),
        ("section", "Usage Guide > Options", 29, 36),
        ("section", "Usage Guide > Closing", 37, 38),
    ]
    lines = README.split("\n")
    for draft in drafts:
        assert draft.text.split("\n") == lines[draft.start_line - 1 : draft.end_line]


def test_markdown_summaries_are_heading_path_and_first_prose_line() -> None:
    summaries = {d.symbol_name: d.summary for d in chunk_file("README.md", README.encode(), "markdown")}
    assert summaries["Project > Install"] == "Project > Install\nRun the installer."
    assert summaries["Usage Guide"] == "Usage Guide\nBody under setext."
    assert summaries["Usage Guide > Closing"] == "Usage Guide > Closing\nThe end."


def test_empty_heading_is_kept_when_its_successor_is_not_a_subsection() -> None:
    source = "# A\n\n# B\ntext b\n"
    assert _shape(chunk_file("x.md", source.encode(), "markdown")) == [
        ("section", "A", 1, 1),
        ("section", "B", 3, 4),
    ]


def test_markdown_without_headings_is_one_section() -> None:
    drafts = chunk_file("notes.md", b"just some notes\n\nand more\n", "markdown")
    assert _shape(drafts) == [("section", "", 1, 3)]


def test_long_markdown_section_is_windowed_under_the_same_path() -> None:
    body = "\n".join(f"Paragraph line {i}." for i in range(250))
    source = f"# Guide\n\n## Reference\n{body}\n"
    drafts = chunk_file("guide.md", source.encode(), "markdown")
    assert {d.symbol_name for d in drafts} == {"Guide > Reference"}
    assert [d.ordinal for d in drafts] == [0, 1, 2]
    assert drafts[0].start_line == 1 and drafts[-1].end_line == 253
    for previous, current in zip(drafts, drafts[1:], strict=False):
        assert previous.end_line - current.start_line + 1 == 10
    assert all(d.end_line - d.start_line + 1 <= 120 for d in drafts)


def test_text_is_cut_into_overlapping_windows() -> None:
    source = "\n".join(f"log line {i}" for i in range(1, 151)) + "\n"
    drafts = chunk_file("server.log", source.encode(), "text")
    assert [(d.chunk_kind, d.symbol_name, d.start_line, d.end_line, d.ordinal) for d in drafts] == [
        ("window", "", 1, 57, 0),
        ("window", "", 48, 104, 1),
        ("window", "", 95, 150, 2),
    ]
    assert drafts[1].text.split("\n")[0] == "log line 48"
    assert drafts[1].summary == "log line 48"


def test_short_text_is_one_window_without_surrounding_blank_lines() -> None:
    drafts = chunk_file("notes.txt", b"\n\nfirst\nsecond\n\n\n", "text")
    assert [(d.start_line, d.end_line, d.text) for d in drafts] == [(3, 4, "first\nsecond")]


def test_text_windows_respect_a_smaller_max_chunk_lines() -> None:
    source = "\n".join(str(i) for i in range(100)) + "\n"
    drafts = chunk_file("n.txt", source.encode(), "text", max_chunk_lines=30, overlap_lines=5)
    assert all(d.end_line - d.start_line + 1 <= 30 for d in drafts)
    assert drafts[-1].end_line == 100
