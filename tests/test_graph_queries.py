"""The searcher's graph tools over a real state DB: honest statuses, bounded traversal, qualified names.

The DB is written the way the indexer writes it (``extract_file_graph`` + ``write_file_graph``) and
queried only through a strictly read-only connection (``open_state_ro``).
"""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

import pytest
from local_memory_indexer.graph import extract_file_graph, write_file_graph
from local_memory_indexer.state_db import open_state_rw
from local_memory_indexer.treesitter import language_for_path
from local_memory_search.graph import (
    MAX_AMBIGUOUS,
    W_AMBIGUOUS_EDGES,
    W_DEPTH,
    W_DYNAMIC,
    W_FANOUT,
    W_UNRESOLVED,
    find_callees,
    find_callers,
    get_import_graph,
    trace_path,
)
from local_memory_shared.errors import InvalidArgument
from local_memory_shared.state import open_state_ro

FILES = {
    "app/__init__.py": "",
    "app/core.py": """
        def fact(n):
            return 1 if n < 2 else n * fact(n - 1)

        def is_even(n):
            return True if n == 0 else is_odd(n - 1)

        def is_odd(n):
            return False if n == 0 else is_even(n - 1)

        def lonely():
            return 1

        def plugin_hook():
            return 2

        def dispatch(obj, name):
            getattr(obj, "plugin_hook")()
            return getattr(obj, name)()

        def shout(text):
            return text.upper()

        fact(3)
    """,
    "app/net.py": """
        from app.other import helper

        class Client:
            def send(self, data):
                return self.connect()

            def connect(self):
                return 1

        class Server:
            def send(self, data):
                return data

        def main():
            c = Client()
            c.send(b"x")
            step1()

        def step1():
            step2()

        def step2():
            step3()

        def step3():
            step4()

        def step4():
            Client().connect()
    """,
    "app/other.py": """
        def send(x):
            return x

        def helper():
            return 1
    """,
    "app/more.py": """
        import os
        from app import other

        def helper():
            return os.getcwd()
    """,
}

#: chunks of app/core.py as the pipeline would pass them: module chunk + one per definition
CORE_CHUNKS = [("core-module", 1, 24), ("core-fact", 1, 2), ("core-dispatch", 16, 18)]


def build(
    db: Path, files: dict[str, str], chunks: dict[str, list[tuple[str, int, int]]] | None = None
) -> None:
    conn = open_state_rw(db)
    conn.execute("BEGIN")
    for rel, text in files.items():
        language = language_for_path(rel)
        graph = extract_file_graph(rel, textwrap.dedent(text).lstrip("\n").encode(), language)
        write_file_graph(conn, rel, language, graph, (chunks or {}).get(rel, []), frozenset(files))
    conn.execute("COMMIT")
    conn.close()


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory):
    db = tmp_path_factory.mktemp("graph") / "state.db"
    build(db, FILES, {"app/core.py": CORE_CHUNKS})
    writer = open_state_rw(db)
    # the pipeline's chunk mirror: lets a <module> caller point at the chunk holding its call
    writer.execute(
        "INSERT INTO chunks (chunk_id, file_path, chunk_index, start_line, end_line, text, content_hash, "
        "schema_version) VALUES ('core-module', 'app/core.py', 0, 1, 24, '', 'h', 1)"
    )
    writer.close()
    ro = open_state_ro(db)
    yield ro
    ro.close()


def ids(nodes: list[dict]) -> list[str]:
    return [n["id"] for n in nodes]


def codes(warnings: list[dict[str, str]]) -> set[str]:
    return {w["code"] for w in warnings}


# --- statuses ---------------------------------------------------------------------------------


def test_not_found_no_callers_and_dynamic_are_different_answers(conn: sqlite3.Connection) -> None:
    missing, _ = find_callers(conn, "no_such_function")
    assert missing["status"] == "not_found" and missing["symbol"] is None

    lonely, _ = find_callers(conn, "lonely")
    assert lonely["status"] == "no_callers"
    assert lonely["symbol"]["id"] == "app/core.py:lonely"
    assert "1 dynamic call site" in lonely["message"]  # getattr(obj, name)() might call anything

    hook, warnings = find_callers(conn, "plugin_hook")
    assert hook["status"] == "unresolved_dynamic"
    assert hook["callers"] == []
    assert hook["dynamic_sites"] == [
        {
            "caller": "app/core.py:dispatch",
            "file_path": "app/core.py",
            "line": 17,
            "callee_text": 'getattr(obj,"plugin_hook")',
        }
    ]
    assert W_DYNAMIC in codes(warnings)


def test_a_name_defined_twice_is_ambiguous_with_candidates(conn: sqlite3.Connection) -> None:
    data, _ = find_callers(conn, "send")
    assert data["status"] == "ambiguous"
    assert sorted(ids(data["candidates"])) == [
        "app/net.py:Client.send",
        "app/net.py:Server.send",
        "app/other.py:send",
    ]
    assert "qualified name" in data["message"]
    helper, _ = find_callees(conn, "helper")
    assert helper["status"] == "ambiguous"
    assert sorted(ids(helper["candidates"])) == ["app/more.py:helper", "app/other.py:helper"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("Client.send", "app/net.py:Client.send"),
        ("app/net.py:Server.send", "app/net.py:Server.send"),
        ("net.py:Client.send", "app/net.py:Client.send"),
        ("app/other.py:send", "app/other.py:send"),
        ("more.py:helper", "app/more.py:helper"),
        ("Client::send", "app/net.py:Client.send"),
    ],
)
def test_qualified_names_disambiguate(conn: sqlite3.Connection, spec: str, expected: str) -> None:
    data, _ = find_callers(conn, spec)
    assert data["symbol"]["id"] == expected


def test_callers_are_resolved_by_receiver_type_not_merged(conn: sqlite3.Connection) -> None:
    client, _ = find_callers(conn, "Client.send")
    assert client["status"] == "ok"
    assert ids(client["callers"]) == ["app/net.py:main"]
    assert client["edges"][0]["resolution"] == "typed"
    server, _ = find_callers(conn, "Server.send")
    assert server["status"] == "no_callers"


def test_every_node_carries_location_and_chunk(conn: sqlite3.Connection) -> None:
    data, _ = find_callers(conn, "fact")
    by_id = {n["id"]: n for n in data["callers"]}
    assert by_id["app/core.py:<module>"] == {
        "id": "app/core.py:<module>",
        "file_path": "app/core.py",
        "line": 23,
        "end_line": 23,
        "qualified_name": "<module>",
        "name": "<module>",
        "kind": "module",
        "chunk_id": "core-module",
        "depth": 1,
    }
    assert data["symbol"]["chunk_id"] == "core-fact"  # the tightest chunk holding its first line
    assert set(data["symbol"]) >= {"file_path", "line", "qualified_name", "kind", "chunk_id"}


# --- bounded traversal --------------------------------------------------------------------------


def test_direct_recursion_is_reported_and_never_loops(conn: sqlite3.Connection) -> None:
    data, _ = find_callers(conn, "fact", depth=3)
    assert sorted(ids(data["callers"])) == ["app/core.py:<module>", "app/core.py:fact"]
    assert [n for n in data["callers"] if n.get("recursive")] == [
        {**data["symbol"], "depth": 1, "recursive": True}
    ]
    callees, _ = find_callees(conn, "fact", depth=3)
    assert ids(callees["callees"]) == ["app/core.py:fact"]


def test_mutual_recursion_terminates(conn: sqlite3.Connection) -> None:
    data, warnings = find_callers(conn, "is_even", depth=3)
    assert ids(data["callers"]) == ["app/core.py:is_odd"]
    assert W_DEPTH not in codes(warnings)  # the cycle is closed: nothing new lies deeper
    there, _ = trace_path(conn, "is_even", "is_odd")
    back, _ = trace_path(conn, "is_odd", "is_even")
    assert ids(there["path"]) == ["app/core.py:is_even", "app/core.py:is_odd"]
    assert ids(back["path"]) == ["app/core.py:is_odd", "app/core.py:is_even"]


def test_depth_cut_is_reported(conn: sqlite3.Connection) -> None:
    one, warnings = find_callers(conn, "step4", depth=1)
    assert ids(one["callers"]) == ["app/net.py:step3"]
    assert W_DEPTH in codes(warnings)
    three, warnings = find_callers(conn, "step4", depth=3)
    assert [(n["id"], n["depth"]) for n in three["callers"]] == [
        ("app/net.py:step3", 1),
        ("app/net.py:step2", 2),
        ("app/net.py:step1", 3),
    ]
    assert W_DEPTH in codes(warnings)  # main still calls step1
    whole, warnings = find_callers(conn, "step2", depth=3)
    assert ids(whole["callers"]) == ["app/net.py:step1", "app/net.py:main"]
    assert W_DEPTH not in codes(warnings)


@pytest.mark.parametrize("depth", [0, 4, -1, "2", 2.0, True, None])
def test_depth_is_validated(conn: sqlite3.Connection, depth: object) -> None:
    for tool in (find_callers, find_callees):
        with pytest.raises(InvalidArgument) as info:
            tool(conn, "main", depth=depth)  # type: ignore[arg-type]
        assert info.value.field == "depth" and info.value.code == "INVALID_ARGUMENT"


@pytest.mark.parametrize("name", ["", "   ", None, 3])
def test_symbol_name_is_validated(conn: sqlite3.Connection, name: object) -> None:
    with pytest.raises(InvalidArgument) as info:
        find_callers(conn, name)  # type: ignore[arg-type]
    assert info.value.field == "symbol_name"
    with pytest.raises(InvalidArgument) as info:
        trace_path(conn, "main", name)  # type: ignore[arg-type]
    assert info.value.field == "target_symbol"


def test_fan_out_cap_is_reported(tmp_path: Path) -> None:
    callers = "\n".join(f"def caller_{i}():\n    hub()\n" for i in range(30))
    db = tmp_path / "state.db"
    build(db, {"hub.py": "def hub():\n    pass\n", "many.py": "from hub import hub\n" + callers})
    ro = open_state_ro(db)
    capped, warnings = find_callers(ro, "hub", max_nodes=10)
    assert len(capped["callers"]) == 10 and capped["truncated"] is True
    assert W_FANOUT in codes(warnings)
    full, warnings = find_callers(ro, "hub")
    assert len(full["callers"]) == 30 and full["truncated"] is False
    assert W_FANOUT not in codes(warnings)


# --- callees ----------------------------------------------------------------------------------


def test_callees_with_depth_external_and_dynamic(conn: sqlite3.Connection) -> None:
    data, _ = find_callees(conn, "main", depth=3)
    assert [(n["id"], n["depth"]) for n in data["callees"]] == [
        ("app/net.py:Client", 1),
        ("app/net.py:Client.send", 1),
        ("app/net.py:step1", 1),
        ("app/net.py:Client.connect", 2),
        ("app/net.py:step2", 2),
        ("app/net.py:step3", 3),
    ]
    dispatch, warnings = find_callees(conn, "dispatch")
    assert dispatch["status"] == "unresolved_dynamic"
    assert sorted(s["named"] or "" for s in dispatch["dynamic_sites"]) == ["", "plugin_hook"]
    assert W_DYNAMIC in codes(warnings)
    shout, _ = find_callees(conn, "shout")
    assert shout["status"] == "external_only"
    assert [e["callee_text"] for e in shout["external"]] == ["text.upper"]
    lonely, _ = find_callees(conn, "lonely")
    assert lonely["status"] == "no_callees"


def test_module_level_code_can_be_asked_for(conn: sqlite3.Connection) -> None:
    data, _ = find_callees(conn, "app/core.py:<module>")
    assert ids(data["callees"]) == ["app/core.py:fact"]


# --- trace_path -------------------------------------------------------------------------------


def test_trace_finds_the_shortest_chain(conn: sqlite3.Connection) -> None:
    data, _ = trace_path(conn, "main", "Client.connect")
    assert data["status"] == "ok" and data["length"] == 2
    assert ids(data["path"]) == ["app/net.py:main", "app/net.py:Client.send", "app/net.py:Client.connect"]
    assert [(h["caller"], h["callee"], h["line"]) for h in data["hops"]] == [
        ("app/net.py:main", "app/net.py:Client.send", 16),
        ("app/net.py:Client.send", "app/net.py:Client.connect", 5),
    ]


def test_no_path_says_how_deep_it_looked(conn: sqlite3.Connection) -> None:
    short, _ = trace_path(conn, "step1", "Client.connect", max_depth=3)
    assert short["status"] == "no_path" and short["max_depth"] == 3
    assert "up to 3 hop(s)" in short["message"]
    found, _ = trace_path(conn, "step1", "Client.connect", max_depth=4)
    assert found["length"] == 4
    backwards, _ = trace_path(conn, "Client.connect", "main")
    assert backwards["status"] == "no_path" and backwards["truncated"] is False


def test_trace_reports_which_end_is_unknown_or_ambiguous(conn: sqlite3.Connection) -> None:
    data, _ = trace_path(conn, "main", "nowhere")
    assert (data["status"], data["side"]) == ("not_found", "target")
    data, _ = trace_path(conn, "send", "main")
    assert (data["status"], data["side"]) == ("ambiguous", "source")
    same, _ = trace_path(conn, "main", "app/net.py:main")
    assert same["status"] == "ok" and same["length"] == 0
    with pytest.raises(InvalidArgument) as info:
        trace_path(conn, "main", "step4", max_depth=0)
    assert info.value.field == "max_depth"


# --- imports ----------------------------------------------------------------------------------


def test_import_graph_of_one_file_both_directions(conn: sqlite3.Connection) -> None:
    data, _ = get_import_graph(conn, "app/other.py")
    assert data["status"] == "ok"
    assert data["imports"] == []
    assert [(i["source"], i["module"], i["target"]) for i in data["imported_by"]] == [
        ("app/more.py", "app", "app/other.py"),  # from app import other: the submodule
        ("app/net.py", "app.other", "app/other.py"),
    ]
    more, _ = get_import_graph(conn, "app/more.py")
    assert [(i["module"], i["target"]) for i in more["imports"]] == [("os", None), ("app", "app/other.py")]


def test_project_import_graph_and_unknown_file(conn: sqlite3.Connection) -> None:
    data, _ = get_import_graph(conn)
    assert [(e["source"], e["target"]) for e in data["edges"]] == [
        ("app/more.py", "app/other.py"),
        ("app/net.py", "app/other.py"),
    ]
    assert data["external_modules"] == [{"module": "os", "importers": 1}]
    missing, _ = get_import_graph(conn, "app/nope.py")
    assert missing["status"] == "not_found"
    with pytest.raises(InvalidArgument) as info:
        get_import_graph(conn, "  ")
    assert info.value.field == "file_path"


def test_ambiguous_calls_are_flagged_not_guessed(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    build(
        db,
        {
            "a.py": "class A:\n    def run(self):\n        pass\n",
            "b.py": "class B:\n    def run(self):\n        pass\n",
            "c.py": "def go(x):\n    x.run()\n",
        },
    )
    ro = open_state_ro(db)
    data, warnings = find_callers(ro, "A.run")
    assert ids(data["callers"]) == ["c.py:go"]
    assert data["edges"][0]["resolution"] == "ambiguous"
    assert W_AMBIGUOUS_EDGES in codes(warnings)


def test_queries_never_write(conn: sqlite3.Connection) -> None:
    before = conn.total_changes
    find_callers(conn, "step4", depth=3)
    find_callees(conn, "main", depth=3)
    trace_path(conn, "main", "Client.connect")
    get_import_graph(conn)
    assert conn.total_changes == before
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("DELETE FROM symbols")


# --- resolution rules that keep precision on real code -------------------------------------------

RESOLUTION_FILES = {
    "lib/__init__.py": "from .impl import make\nfrom .errors import Boom as LibBoom\n",
    "lib/impl.py": """
        import copy
        import numpy as np
        from .errors import Boom as LibBoom

        class Store:
            def get(self, key):
                return key

            def close(self):
                self.conn.close()

        class Cache(Store):
            def update(self, other):
                super().update(other)
                self.get(1)

        def make():
            headers = {}
            headers.get("a")
            copy.copy(headers)
            np.array([1])
            raise LibBoom()
    """,
    "lib/errors.py": "class Boom(Exception):\n    pass\n",
    "app.py": """
        import lib
        from lib import make

        def run():
            lib.make()
            make()
    """,
    "tests/test_impl.py": "def make():\n    pass\n\ndef test_it():\n    make()\n",
}


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory):
    db = tmp_path_factory.mktemp("rules") / "state.db"
    build(db, RESOLUTION_FILES)
    ro = open_state_ro(db)
    yield ro
    ro.close()


def test_reexports_and_aliases_are_followed(rules: sqlite3.Connection) -> None:
    data, _ = find_callers(rules, "lib/impl.py:make")
    assert sorted((e["caller"], e["callee_text"], e["resolution"]) for e in data["edges"]) == [
        ("app.py:run", "lib.make", "imported"),  # lib/__init__ re-exports make from .impl
        ("app.py:run", "make", "imported"),
    ]
    boom, _ = find_callers(rules, "Boom")
    assert [(e["caller"], e["callee_text"]) for e in boom["edges"]] == [("lib/impl.py:make", "LibBoom")]


def test_library_code_never_resolves_into_tests(rules: sqlite3.Connection) -> None:
    test_helper, _ = find_callers(rules, "tests/test_impl.py:make")
    assert [c["id"] for c in test_helper["callers"]] == ["tests/test_impl.py:test_it"]


def test_builtin_and_external_receivers_stay_external(rules: sqlite3.Connection) -> None:
    data, _ = find_callees(rules, "lib/impl.py:make")
    assert sorted(e["callee_text"] for e in data["external"]) == ["copy.copy", "headers.get", "np.array"]
    assert [c["id"] for c in data["callees"]] == ["lib/errors.py:Boom"]


def test_delegation_and_super_do_not_resolve_to_the_caller(rules: sqlite3.Connection) -> None:
    close, _ = find_callees(rules, "Store.close")
    assert close["status"] == "external_only"  # self.conn.close() delegates; it is not recursion
    update, _ = find_callees(rules, "Cache.update")
    assert [(c["id"], c["depth"]) for c in update["callees"]] == [("lib/impl.py:Store.get", 1)]  # inherited
    assert [e["callee_text"] for e in update["external"]] == ["super", "super().update"]


def test_a_call_matching_too_many_definitions_is_counted_not_listed(tmp_path: Path) -> None:
    classes = "\n".join(
        f"class Job{i}:\n    def run(self):\n        pass\n" for i in range(MAX_AMBIGUOUS + 2)
    )
    db = tmp_path / "state.db"
    build(db, {"jobs.py": classes, "runner.py": "def go(job):\n    job.run()\n"})
    ro = open_state_ro(db)
    callers, warnings = find_callers(ro, "Job3.run")
    assert callers["status"] == "unresolved_ambiguous" and callers["callers"] == []
    assert callers["unresolved_sites"] == 1
    assert [s["caller"] for s in callers["ambiguous_sites"]] == ["runner.py:go"]
    assert W_UNRESOLVED in codes(warnings)
    callees, _ = find_callees(ro, "go")
    assert callees["status"] == "unresolved_ambiguous"
    assert [(s["name"], s["definitions"]) for s in callees["ambiguous_sites"]] == [("run", MAX_AMBIGUOUS + 2)]
    assert trace_path(ro, "go", "Job3.run")[0]["status"] == "no_path"  # never walked through


# --- the library shape ------------------------------------------------------------------------


def test_plain_queries_answer_one_frozen_shape_and_the_old_names_wrap_them(conn: sqlite3.Connection) -> None:
    """``callers``/``callees``/``trace``/``imports`` take frozen queries and answer a frozen GraphResult."""
    import dataclasses

    from local_memory_search.graph import (
        CallQuery,
        GraphResult,
        ImportQuery,
        TraceQuery,
        callees,
        callers,
        imports,
        trace,
    )

    answers = {
        "callers": (callers(conn, CallQuery("fact", depth=2)), find_callers(conn, "fact", 2)),
        "callees": (callees(conn, CallQuery("is_even")), find_callees(conn, "is_even")),
        "trace": (trace(conn, TraceQuery("is_even", "is_odd")), trace_path(conn, "is_even", "is_odd")),
        "imports": (imports(conn, ImportQuery("app/core.py")), get_import_graph(conn, "app/core.py")),
    }
    for name, (answer, legacy) in answers.items():
        assert isinstance(answer, GraphResult), name
        assert answer.as_tuple() == legacy, name
        assert answer.data["status"] == "ok", name
        with pytest.raises(dataclasses.FrozenInstanceError):
            answer.data = {}  # type: ignore[misc]
    with pytest.raises(InvalidArgument) as err:
        callers(conn, CallQuery("fact", depth=9))
    assert err.value.field == "depth"


def test_the_graph_cache_is_an_object_with_clear(tmp_path: Path) -> None:
    """Resolutions are memoised per graph version in GRAPH_CACHES; clear() forgets them, answers stay equal."""
    from local_memory_search.graph import GRAPH_CACHES, GraphCaches

    db = tmp_path / "state.db"
    build(
        db, {"hub.py": "def hub():\n    pass\n", "use.py": "from hub import hub\n\ndef user():\n    hub()\n"}
    )
    ro = open_state_ro(db)
    GRAPH_CACHES.clear()
    assert len(GRAPH_CACHES) == 0
    first = find_callers(ro, "hub")
    assert len(GRAPH_CACHES) == 1
    cache = GRAPH_CACHES.for_connection(ro)
    assert cache.resolved  # the call site's resolution was kept for the next query
    GRAPH_CACHES.clear()
    assert len(GRAPH_CACHES) == 0 and GRAPH_CACHES.for_connection(ro) is not cache
    assert find_callers(ro, "hub") == first
    ro.close()

    small = GraphCaches(capacity=1)
    dbs = []
    for i in range(2):
        path = tmp_path / f"s{i}.db"
        build(path, {"a.py": "def a():\n    pass\n"})
        dbs.append(open_state_ro(path))
    small.for_connection(dbs[0])
    small.for_connection(dbs[1])
    assert len(small) == 1  # least recently used version dropped
    for c in dbs:
        c.close()
