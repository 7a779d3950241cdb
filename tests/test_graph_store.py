"""Graph rows in the real SQLite state DB: incremental replace/delete, the caller's transaction, chunk mapping."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from local_memory_indexer.graph import (
    chunk_for_span,
    delete_file_graph,
    extract_file_graph,
    reresolve_imports,
    write_file_graph,
)
from local_memory_indexer.state_db import open_state_rw
from local_memory_search.graph import find_callers, get_import_graph
from local_memory_shared.state import open_state_ro


def write(conn: sqlite3.Connection, path: str, text: str, project: frozenset[str], spans=()) -> None:
    language = "python"
    write_file_graph(
        conn, path, language, extract_file_graph(path, text.encode(), language), list(spans), project
    )


def rows(conn: sqlite3.Connection, table: str, path: str) -> int:
    return conn.execute(f"SELECT count(*) FROM {table} WHERE file_path = ?", (path,)).fetchone()[0]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "state.db"


def test_editing_a_file_replaces_its_edges_and_leaves_others(db: Path) -> None:
    project = frozenset({"a.py", "b.py"})
    conn = open_state_rw(db)
    write(conn, "a.py", "import b\ndef old():\n    b.target()\n", project)
    write(conn, "b.py", "def target():\n    pass\n", project)
    ro = open_state_ro(db)
    assert [c["id"] for c in find_callers(ro, "target")[0]["callers"]] == ["a.py:old"]

    write(conn, "a.py", "def new():\n    pass\n", project)
    assert find_callers(ro, "target")[0]["status"] == "no_callers"
    assert find_callers(ro, "old")[0]["status"] == "not_found"
    assert rows(conn, "import_edges", "a.py") == 0
    assert rows(conn, "symbols", "b.py") == 1


def test_deleting_a_file_removes_every_row(db: Path) -> None:
    project = frozenset({"a.py"})
    conn = open_state_rw(db)
    write(conn, "a.py", "import os\ndef f():\n    g()\ndef g():\n    pass\n", project)
    assert (
        rows(conn, "symbols", "a.py"),
        rows(conn, "call_edges", "a.py"),
        rows(conn, "import_edges", "a.py"),
    ) == (
        2,
        1,
        1,
    )
    delete_file_graph(conn, "a.py")
    assert (
        rows(conn, "symbols", "a.py"),
        rows(conn, "call_edges", "a.py"),
        rows(conn, "import_edges", "a.py"),
    ) == (
        0,
        0,
        0,
    )


def test_writes_belong_to_the_callers_transaction(db: Path) -> None:
    conn = open_state_rw(db)
    conn.execute("BEGIN")
    write(conn, "a.py", "def f():\n    pass\n", frozenset({"a.py"}))
    assert conn.in_transaction  # nothing inside committed or ended it
    conn.execute("ROLLBACK")
    assert rows(conn, "symbols", "a.py") == 0


def test_calls_map_to_the_right_definition_among_redefinitions(db: Path) -> None:
    text = (
        "class A:\n"
        "    @property\n"
        "    def x(self):\n"
        "        return get()\n"
        "    @x.setter\n"
        "    def x(self, v):\n"
        "        put(v)\n"
    )
    conn = open_state_rw(db)
    write(conn, "a.py", text, frozenset({"a.py"}))
    found = conn.execute(
        "SELECT e.callee_name, s.start_line FROM call_edges e JOIN symbols s ON s.id = e.caller_symbol_id "
        "WHERE e.callee_name IN ('get', 'put') ORDER BY e.line"
    ).fetchall()
    assert [tuple(r) for r in found] == [("get", 3), ("put", 6)]


def test_symbols_point_at_the_tightest_chunk() -> None:
    spans = [("module", 1, 100), ("class", 10, 60), ("method", 20, 30), ("tail", 90, 120)]
    assert chunk_for_span(spans, 20, 30) == "method"
    assert chunk_for_span(spans, 12, 60) == "class"
    assert chunk_for_span(spans, 95, 99) == "tail"
    assert chunk_for_span([("late", 5, 9)], 1, 6) == "late"  # no chunk holds line 1: the first overlapping
    assert chunk_for_span([], 1, 2) is None


def test_chunk_ids_are_stored_with_symbols(db: Path) -> None:
    conn = open_state_rw(db)
    write(
        conn,
        "a.py",
        "def f():\n    pass\n\ndef g():\n    pass\n",
        frozenset({"a.py"}),
        [("c0", 1, 2), ("c1", 4, 5)],
    )
    found = conn.execute("SELECT name, chunk_id FROM symbols ORDER BY start_line").fetchall()
    assert [tuple(r) for r in found] == [("f", "c0"), ("g", "c1")]


def test_imports_are_re_resolved_when_files_come_and_go(db: Path) -> None:
    conn = open_state_rw(db)
    write(
        conn,
        "app/main.py",
        "from app import models\nimport json\n",
        frozenset({"app/main.py", "app/__init__.py"}),
    )
    ro = open_state_ro(db)
    assert [i["target"] for i in get_import_graph(ro, "app/main.py")[0]["imports"]] == [
        "app/__init__.py",
        None,
    ]

    grown = frozenset({"app/main.py", "app/__init__.py", "app/models.py"})
    assert reresolve_imports(conn, grown) == 1
    assert [i["target"] for i in get_import_graph(ro, "app/main.py")[0]["imports"]] == ["app/models.py", None]
    assert reresolve_imports(conn, grown) == 0  # idempotent

    assert reresolve_imports(conn, frozenset({"app/main.py"})) == 1
    assert [i["target"] for i in get_import_graph(ro, "app/main.py")[0]["imports"]] == [None, None]


def test_searcher_memory_follows_the_graph_version_of_its_snapshot(db: Path) -> None:
    project = frozenset({"a.py", "b.py"})
    writer = open_state_rw(db)
    write(writer, "b.py", "def target():\n    pass\n", project)
    write(writer, "a.py", "from b import target\ndef old():\n    target()\n", project)
    reader = open_state_ro(db)
    assert [c["id"] for c in find_callers(reader, "target")[0]["callers"]] == ["a.py:old"]

    reader.execute("BEGIN")  # a reader inside one snapshot, as the search store holds one per call
    reader.execute("SELECT count(*) FROM symbols").fetchone()
    write(writer, "a.py", "from b import target\ndef fresh():\n    target()\n", project)
    assert [c["id"] for c in find_callers(reader, "target")[0]["callers"]] == ["a.py:old"]
    reader.execute("COMMIT")
    assert [c["id"] for c in find_callers(reader, "target")[0]["callers"]] == ["a.py:fresh"]
    assert [c["id"] for c in find_callers(open_state_ro(db), "target")[0]["callers"]] == ["a.py:fresh"]
