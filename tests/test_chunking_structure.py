"""Chunk shape rules: class skeletons, oversize splitting, tiny-sibling merging, broken input, stable ids."""

from __future__ import annotations

import re

import pytest
from local_memory_indexer.chunking import ChunkDraft, chunk_file, stable_chunk_id
from local_memory_shared.errors import InvalidArgument

SERVICE = """\
import json


class Service:
    \"\"\"Loads and saves records.\"\"\"

    retries = 3

    def load(self, path):
        with open(path) as handle:
            data = json.load(handle)
        self.records = data["records"]
        return len(self.records)

    @staticmethod
    def save(records, path):
        payload = {"records": records}
        with open(path, "w") as handle:
            json.dump(payload, handle)

    class Meta:
        def describe(self):
            name = type(self).__name__
            fields = sorted(vars(self))
            return f"{name}: {fields}"
"""

JAVA_SERVICE = """\
public class Service {
    private int retries = 3;

    public int load(String path) {
        String data = read(path);
        records = parse(data);
        return records.size();
    }

    private int size;
}
"""


def _by_symbol(drafts: list[ChunkDraft]) -> dict[str, ChunkDraft]:
    return {d.symbol_name: d for d in drafts}


def _lines(source: str, draft: ChunkDraft) -> list[str]:
    return source.split("\n")[draft.start_line - 1 : draft.end_line]


# -- class skeletons ------------------------------------------------------------------------------


def test_class_chunk_is_a_skeleton_with_member_bodies_elided() -> None:
    drafts = _by_symbol(chunk_file("service.py", SERVICE.encode(), "python"))
    service = drafts["Service"]
    assert (service.chunk_kind, service.start_line, service.end_line) == ("class", 4, 25)
    assert service.text.split("\n") == [
        "class Service:",
        '    """Loads and saves records."""',
        "",
        "    retries = 3",
        "",
        "    def load(self, path):",
        "        # ... Service.load (lines 9-13)",
        "",
        "    @staticmethod",
        "    def save(records, path):",
        "        # ... Service.save (lines 15-19)",
        "",
        "    class Meta:",
        "        # ... Service.Meta (lines 21-25)",
    ]
    # the elided bodies live in the members' own chunks, verbatim
    assert drafts["Service.load"].text.split("\n") == _lines(SERVICE, drafts["Service.load"])
    assert "json.load(handle)" in drafts["Service.load"].text
    assert "json.load(handle)" not in service.text
    meta = drafts["Service.Meta"]
    assert (meta.start_line, meta.end_line) == (21, 25)
    assert meta.text.split("\n") == [
        "    class Meta:",
        "        def describe(self):",
        "            # ... Service.Meta.describe (lines 22-25)",
    ]
    describe = drafts["Service.Meta.describe"]
    assert (describe.chunk_kind, describe.class_name, describe.start_line, describe.end_line) == (
        "method",
        "Meta",
        22,
        25,
    )


def test_brace_language_skeleton_keeps_closing_brace_and_trailing_fields() -> None:
    drafts = _by_symbol(chunk_file("Service.java", JAVA_SERVICE.encode(), "java"))
    assert drafts["Service"].text.split("\n") == [
        "public class Service {",
        "    private int retries = 3;",
        "",
        "    public int load(String path) {",
        "        // ... Service.load (lines 4-8)",
        "    }",
        "",
        "    private int size;",
        "}",
    ]
    assert (drafts["Service.load"].start_line, drafts["Service.load"].end_line) == (4, 8)


def test_short_members_stay_verbatim_in_the_skeleton() -> None:
    source = (
        "class Point:\n    def x(self):\n        return self._x\n\n    def y(self):\n        return self._y\n"
    )
    drafts = _by_symbol(chunk_file("point.py", source.encode(), "python"))
    assert drafts["Point"].text == source.rstrip("\n")


# -- oversize splitting -----------------------------------------------------------------------------


def _long_function(body_lines: int) -> str:
    body = "\n".join(f"    total += step({i})" for i in range(body_lines - 3))
    return f"def crunch(step):\n    total = 0\n{body}\n    return total\n"


@pytest.mark.parametrize(
    ("length", "max_lines", "overlap"), [(300, 120, 10), (121, 120, 10), (95, 40, 5), (50, 20, 0)]
)
def test_oversized_definition_splits_into_overlapping_parts(
    length: int, max_lines: int, overlap: int
) -> None:
    source = _long_function(length)
    drafts = chunk_file(
        "crunch.py", source.encode(), "python", max_chunk_lines=max_lines, overlap_lines=overlap
    )
    assert {(d.chunk_kind, d.symbol_name, d.function_name) for d in drafts} == {
        ("function", "crunch", "crunch")
    }
    assert [d.ordinal for d in drafts] == list(range(len(drafts)))
    assert len(drafts) > 1
    assert drafts[0].start_line == 1 and drafts[-1].end_line == length
    for previous, current in zip(drafts, drafts[1:], strict=False):
        assert previous.end_line - current.start_line + 1 == overlap
    for index, draft in enumerate(drafts, start=1):
        assert draft.end_line - draft.start_line + 1 <= max_lines
        assert draft.text.split("\n") == _lines(source, draft)
        assert draft.summary == f"def crunch(step):\n[part {index}/{len(drafts)}]".replace("\n[", " [")


def test_parts_are_balanced_rather_than_leaving_a_scrap() -> None:
    drafts = chunk_file("crunch.py", _long_function(125).encode(), "python")
    assert [(d.start_line, d.end_line) for d in drafts] == [(1, 68), (59, 125)]


def test_definition_of_exactly_max_lines_is_not_split() -> None:
    drafts = chunk_file("crunch.py", _long_function(120).encode(), "python")
    assert [(d.start_line, d.end_line, d.ordinal) for d in drafts] == [(1, 120, 0)]


def test_oversized_class_skeleton_splits_too() -> None:
    fields = "\n".join(f"    field_{i} = {i}" for i in range(200))
    source = f"class Config:\n{fields}\n\n    def reset(self):\n        self.field_0 = 0\n        self.field_1 = 1\n        return self\n"
    drafts = chunk_file("config.py", source.encode(), "python")
    classes = [d for d in drafts if d.chunk_kind == "class"]
    assert len(classes) == 2 and [d.ordinal for d in classes] == [0, 1]
    assert all(d.symbol_name == "Config" and d.end_line - d.start_line + 1 <= 120 for d in classes)
    assert classes[-1].text.endswith("    def reset(self):\n        # ... Config.reset (lines 203-206)")
    assert (classes[0].start_line, classes[-1].end_line) == (1, 206)
    assert [(d.symbol_name, d.start_line, d.end_line) for d in drafts if d.chunk_kind == "method"] == [
        ("Config.reset", 203, 206)
    ]


# -- merging tiny siblings -------------------------------------------------------------------------


ONE_LINERS = """\
def a(): return 1
def b(): return 2

def c(): return 3
LIMIT = 3
def d(): return 4


class Pair:
    def left(self): return self._left
    def right(self): return self._right
"""


def test_adjacent_tiny_siblings_merge_with_joined_names() -> None:
    drafts = chunk_file("small.py", ONE_LINERS.encode(), "python")
    assert [
        (d.chunk_kind, d.symbol_name, d.class_name, d.function_name, d.start_line, d.end_line) for d in drafts
    ] == [
        ("function", "a+b+c", "", "a+b+c", 1, 4),
        ("module", "", "", "", 5, 5),
        ("function", "d", "", "d", 6, 6),
        ("class", "Pair", "Pair", "", 9, 11),
        ("method", "Pair.left+Pair.right", "Pair", "left+right", 10, 11),
    ]
    merged = drafts[0]
    assert merged.text.split("\n") == _lines(ONE_LINERS, merged)
    assert merged.summary == "def a(): return 1\ndef b(): return 2\ndef c(): return 3"


def test_min_chunk_lines_one_disables_merging() -> None:
    drafts = chunk_file("small.py", ONE_LINERS.encode(), "python", min_chunk_lines=1)
    assert [d.symbol_name for d in drafts if d.chunk_kind == "function"] == ["a", "b", "c", "d"]


def test_go_getters_merge_but_kinds_do_not_mix() -> None:
    source = """\
package geo

type Point struct{ X, Y int }

func (p Point) GetX() int { return p.X }
func (p Point) GetY() int { return p.Y }
func Origin() Point { return Point{} }
"""
    drafts = chunk_file("geo.go", source.encode(), "go")
    assert [(d.chunk_kind, d.symbol_name, d.class_name, d.start_line, d.end_line) for d in drafts] == [
        ("module", "", "", 1, 1),
        ("struct", "Point", "Point", 3, 3),
        ("method", "Point.GetX+Point.GetY", "Point", 5, 6),
        ("function", "Origin", "", 7, 7),
    ]


def test_merging_stops_at_eight_siblings() -> None:
    source = "".join(f"def f{i}(): return {i}\n" for i in range(10))
    drafts = chunk_file("many.py", source.encode(), "python")
    assert [(d.symbol_name, d.start_line, d.end_line) for d in drafts] == [
        ("+".join(f"f{i}" for i in range(8)), 1, 8),
        ("f8+f9", 9, 10),
    ]


# -- comments ---------------------------------------------------------------------------------------


def test_leading_comment_attaches_only_without_a_blank_line() -> None:
    source = "# License: MIT\n\n# Adds numbers.\ndef add(a, b):\n    return a + b\n"
    drafts = chunk_file("add.py", source.encode(), "python")
    assert [(d.chunk_kind, d.start_line, d.end_line, d.summary) for d in drafts] == [
        ("module", 1, 1, "# License: MIT"),
        ("function", 3, 5, "def add(a, b):\nAdds numbers."),
    ]


def test_trailing_comment_of_previous_line_does_not_attach() -> None:
    source = "int x = 1; /* counter */\nint next(void) {\n    return ++x;\n}\n"
    drafts = chunk_file("x.c", source.encode(), "c")
    assert [(d.chunk_kind, d.symbol_name, d.start_line, d.end_line) for d in drafts] == [
        ("module", "", 1, 1),
        ("function", "next", 2, 4),
    ]


# -- module runs and overloads ------------------------------------------------------------------


def test_long_module_runs_are_cut_into_balanced_runs_of_at_most_60_lines() -> None:
    constants = "".join(f"LIMIT_{i} = {i}\n" for i in range(130))
    source = constants + "\n\ndef tail():\n    return LIMIT_1\n"
    drafts = chunk_file("limits.py", source.encode(), "python")
    module = [d for d in drafts if d.chunk_kind == "module"]
    assert [(d.start_line, d.end_line) for d in module] == [(1, 44), (45, 88), (89, 130)]
    assert "\n".join(d.text for d in module) == constants.rstrip("\n")  # every line once, in order
    assert [d.symbol_name for d in drafts if d.chunk_kind == "function"] == ["tail"]


def test_a_short_module_run_stays_one_chunk() -> None:
    source = "".join(f"LIMIT_{i} = {i}\n" for i in range(60))
    drafts = chunk_file("limits.py", source.encode(), "python")
    assert [(d.chunk_kind, d.start_line, d.end_line) for d in drafts] == [("module", 1, 60)]


OVERLOADS = """\
import { Observable } from './Observable';

/**
 * Waits, then emits 0.
 */
export function timer(due: number): Observable<0>;

/**
 * Waits, then counts up every period.
 */
export function timer(due: number, period: number): Observable<number>;

export function timer(due: number, period = -1): Observable<number> {
  return schedule(due, period);
}

export function declared(x: number): void;

interface Clock {
  now(): number;
  now(zone: string): number;
}

class Scheduler {
  /** Runs work now. */
  run(work: () => void): void;
  run(work: () => void, delay: number): void;
  run(work: () => void, delay = 0): void {
    setTimeout(work, delay);
  }
}
"""


def test_typescript_overload_signatures_join_the_function_they_declare() -> None:
    drafts = chunk_file("timer.ts", OVERLOADS.encode(), "typescript")
    by_symbol = _by_symbol(drafts)
    timer = by_symbol["timer"]
    # one chunk from the first overload's doc comment to the end of the body
    assert (timer.chunk_kind, timer.start_line, timer.end_line) == ("function", 3, 15)
    assert "Waits, then counts up every period." in timer.text
    assert timer.summary.startswith("export function timer(due: number, period = -1)")
    assert "Waits, then emits 0." in timer.summary
    method = by_symbol["Scheduler.run"]
    assert (method.chunk_kind, method.start_line, method.end_line) == ("method", 25, 30)
    assert [d.symbol_name for d in drafts].count("timer") == 1


def test_a_lone_or_interface_signature_is_not_a_definition() -> None:
    drafts = chunk_file("timer.ts", OVERLOADS.encode(), "typescript")
    symbols = {d.symbol_name for d in drafts}
    assert "declared" not in symbols and "Clock.now" not in symbols
    lone = next(d for d in drafts if "export function declared" in d.text)
    assert lone.chunk_kind == "module"
    clock = _by_symbol(drafts)["Clock"]
    assert (clock.chunk_kind, clock.start_line, clock.end_line) == ("interface", 19, 22)


# -- broken and odd input ----------------------------------------------------------------------------


BROKEN = """\
import os

def good_one(a):
    return a + 1

def broken(x:
    return x +

class Fine
    pass
"""


def test_syntax_errors_keep_recovered_definitions_and_window_the_rest() -> None:
    drafts = chunk_file("broken.py", BROKEN.encode(), "python")
    assert [(d.chunk_kind, d.symbol_name, d.start_line, d.end_line) for d in drafts] == [
        ("module", "", 1, 1),
        ("function", "good_one", 3, 4),
        ("window", "", 6, 10),
    ]


@pytest.mark.parametrize("language", ["python", "javascript", "go", "rust", "java", "cpp", "ruby", "kotlin"])
def test_prose_or_noise_in_a_code_file_becomes_windows(language: str) -> None:
    noise = ("Lorem ipsum dolor sit amet, (consectetur adipiscing elit] }{ \n" * 70).encode()
    drafts = chunk_file("notes.src", noise, language)
    assert {d.chunk_kind for d in drafts} == {"window"}
    assert drafts[0].start_line == 1 and drafts[-1].end_line == 70
    assert all(d.end_line - d.start_line + 1 <= 60 for d in drafts)


@pytest.mark.parametrize("language", ["python", "javascript", "c", "csharp", "php", "markdown", "text"])
def test_random_bytes_never_raise(language: str) -> None:
    import random

    generator = random.Random(7)
    blob = bytes(generator.randrange(256) for _ in range(4000))
    drafts = chunk_file("blob.bin", blob, language)
    assert drafts and all(d.start_line <= d.end_line for d in drafts)


def test_undecodable_bytes_are_replaced() -> None:
    drafts = chunk_file("latin.py", b"def name():\n    return '\xe9t\xe9'\n", "python")
    assert [d.symbol_name for d in drafts] == ["name"]
    assert "\ufffd" in drafts[0].text


@pytest.mark.parametrize("language", ["python", "go", "markdown", "text", "unknown"])
@pytest.mark.parametrize("source", [b"", b"   \n\n\t\n", b"\n"])
def test_empty_and_whitespace_files_have_no_chunks(language: str, source: bytes) -> None:
    assert chunk_file("empty", source, language) == []


def test_crlf_line_endings() -> None:
    source = b"import os\r\n\r\ndef f():\r\n    return os.sep\r\n"
    drafts = chunk_file("crlf.py", source, "python")
    assert [(d.chunk_kind, d.start_line, d.end_line, d.text) for d in drafts] == [
        ("module", 1, 1, "import os"),
        ("function", 3, 4, "def f():\n    return os.sep"),
    ]


def test_unknown_language_is_windowed() -> None:
    # no grammar tree-sitter 0.21 loads parses Dart: a Dart file is line windows
    drafts = chunk_file("x.dart", b"class Main {\n  void main() {}\n}\n", "text")
    assert [(d.chunk_kind, d.start_line, d.end_line) for d in drafts] == [("window", 1, 3)]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_chunk_lines": 1}, "max_chunk_lines"),
        ({"overlap_lines": 120}, "overlap_lines"),
        ({"overlap_lines": -1}, "overlap_lines"),
        ({"min_chunk_lines": 0}, "min_chunk_lines"),
    ],
)
def test_bad_arguments_raise_invalid_argument(kwargs: dict[str, int], field: str) -> None:
    with pytest.raises(InvalidArgument) as raised:
        chunk_file("a.py", b"x = 1\n", "python", **kwargs)
    assert raised.value.field == field


# -- ids --------------------------------------------------------------------------------------------


def _ids(path: str, drafts: list[ChunkDraft]) -> list[str]:
    return [stable_chunk_id(path, d.chunk_kind, d.symbol_name, d.ordinal) for d in drafts]


def test_ids_are_stable_across_runs_and_unique_within_a_file() -> None:
    first = _ids("service.py", chunk_file("service.py", SERVICE.encode(), "python"))
    second = _ids("service.py", chunk_file("service.py", SERVICE.encode(), "python"))
    assert first == second
    assert len(set(first)) == len(first)
    assert all(re.fullmatch(r"[0-9a-f]{32}", chunk_id) for chunk_id in first)


def test_ids_survive_edits_to_other_code_and_differ_across_files() -> None:
    edited = (
        SERVICE.replace("return len(self.records)", "return len(self.records) or 0")
        + "\n\ndef extra():\n    return 1\n"
    )
    before = dict(
        zip(
            (d.symbol_name for d in chunk_file("s.py", SERVICE.encode(), "python")),
            _ids("s.py", chunk_file("s.py", SERVICE.encode(), "python")),
            strict=True,
        )
    )
    after_drafts = chunk_file("s.py", edited.encode(), "python")
    after = dict(zip((d.symbol_name for d in after_drafts), _ids("s.py", after_drafts), strict=True))
    assert {name: after[name] for name in before} == before
    assert stable_chunk_id("a.py", "function", "f", 0) != stable_chunk_id("b.py", "function", "f", 0)


def test_repeated_symbols_get_distinct_ids_through_ordinals() -> None:
    source = "def f():\n    return 1\n    # first\n\n\ndef f():\n    return 2\n    # second\n"
    drafts = chunk_file("dup.py", source.encode(), "python")
    assert [(d.symbol_name, d.ordinal) for d in drafts] == [("f", 0), ("f", 1)]
    assert len(set(_ids("dup.py", drafts))) == 2
