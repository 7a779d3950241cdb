"""One tool layer for both servers and both CLIs: the same mistake answers the same code everywhere.

Each case is sent four ways — the in-process registry call, the CLI (``local-memory-search tool``
as a real subprocess), an in-memory MCP client session, and a real stdio MCP subprocess — and
all four must answer the same error code and field. Also: the result type, the strict base
model and the one "not blank" rule, and the runtime that owns every process-wide cache.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from typing import Any

import pytest
from local_memory_indexer.jobs import JobManager
from local_memory_indexer.server import REGISTRY as INDEXER_REGISTRY
from local_memory_indexer.server import build_server as build_indexer_server
from local_memory_search.server import build_server as build_search_server
from local_memory_search.tools import REGISTRY, call_tool
from local_memory_shared.config import load_settings
from local_memory_shared.errors import InvalidArgument
from local_memory_shared.tooling import NotBlank, Paging, StrictModel, ToolRegistry, ToolResult, ToolSpec
from mcp_harness import BIN, INDEXER_CMD, SEARCH_CMD, memory_session, server_env, stdio_session

#: (tool, arguments, expected code, expected field): one mistake of each kind.
SEARCH_MISTAKES: list[tuple[str, Any, str, str]] = [
    ("no_such_tool", {}, "INVALID_ARGUMENT", "name"),
    ("search_hybrid", {"query": "x", "colour": "red"}, "INVALID_ARGUMENT", "colour"),
    ("search_hybrid", {"query": "   "}, "INVALID_ARGUMENT", "query"),
    ("search_hybrid", {"query": "x", "limit": "10"}, "INVALID_ARGUMENT", "limit"),
    (
        "search_keyword",
        {"query": "x", "filters": {"file_path": "a.py"}},
        "INVALID_ARGUMENT",
        "filters.file_path",
    ),
    ("find_callers", {"symbol_name": " "}, "INVALID_ARGUMENT", "symbol_name"),
    ("get_chunk", {}, "INVALID_ARGUMENT", "chunk_id"),
]


def _code(envelope: dict[str, Any]) -> tuple[str, str | None]:
    assert envelope["ok"] is False, envelope
    return envelope["error"]["code"], envelope["error"].get("field")


def _cli(tool: str, args: Any, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [str(BIN / "local-memory-search"), "tool", tool, "--args", json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def search_stdio(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stdio")
    with (
        open(tmp / "stderr.log", "w") as errlog,
        stdio_session(SEARCH_CMD, server_env(tmp / "data"), errlog) as s,
    ):
        yield s


def test_the_same_mistake_gets_the_same_code_in_process_cli_and_mcp(tmp_path, monkeypatch, search_stdio):
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(tmp_path / "data"))
    env = {**os.environ, **server_env(tmp_path / "data")}
    with memory_session(build_search_server()) as memory:
        for tool, args, code, field in SEARCH_MISTAKES:
            expected = (code, field)
            assert _code(call_tool(tool, args)) == expected, (tool, args)
            assert _code(_cli(tool, args, env)) == expected, (tool, args, "cli")
            assert _code(memory.call(tool, args)) == expected, (tool, args, "in-memory MCP")
            assert _code(search_stdio.call(tool, args)) == expected, (tool, args, "stdio MCP")


def test_the_indexer_answers_an_unknown_tool_with_the_same_code(tmp_path):
    settings = dataclasses.replace(load_settings(), data_root=tmp_path / "data")
    jobs = JobManager(settings)
    try:
        with memory_session(build_indexer_server(jobs)) as session:
            assert _code(session.call("no_such_tool", {})) == ("INVALID_ARGUMENT", "name")
            assert _code(session.call("start_indexing", {"project_path": "/tmp", "full": "yes"})) == (
                "INVALID_ARGUMENT",
                "full",
            )
        direct = INDEXER_REGISTRY.call("no_such_tool", {}, lambda: jobs)
        assert _code(direct) == ("INVALID_ARGUMENT", "name")
    finally:
        jobs.shutdown()


def test_indexer_stdio_answers_an_unknown_tool_with_the_same_code(tmp_path):
    with (
        open(tmp_path / "err.log", "w") as errlog,
        stdio_session(INDEXER_CMD, server_env(tmp_path / "data"), errlog) as session,
    ):
        assert _code(session.call("no_such_tool", {})) == ("INVALID_ARGUMENT", "name")


class _Args(StrictModel):
    name: NotBlank
    count: int = 1


def test_registry_boundary_validation_result_type_and_catch_all():
    seen: list[Any] = []

    def body(params: _Args, context: str) -> ToolResult:
        seen.append((params, context))
        if params.name == "boom":
            raise RuntimeError("bug")
        rows = [{"i": i} for i in range(params.count)]
        return ToolResult(results=rows[:2], paging=Paging(0, 2, len(rows)), extra={"note": context})

    registry: ToolRegistry[str] = ToolRegistry([ToolSpec("t", body, _Args, "a test tool")])
    with pytest.raises(ValueError):
        registry.register(ToolSpec("t", body, _Args, "again"))
    good = registry.call("t", {"name": "x", "count": 3}, lambda: "ctx")
    assert good == {
        "ok": True,
        "results": [{"i": 0}, {"i": 1}],
        "offset": 0,
        "limit": 2,
        "total": 3,
        "has_more": True,
        "next_offset": 2,
        "note": "ctx",
        "warnings": [],
    }
    assert registry.call("t", {"name": "x", "count": "3"}, lambda: "ctx")["error"]["field"] == "count"
    assert registry.call("t", {"name": "\t "}, lambda: "ctx")["error"]["field"] == "name"
    crashed = registry.call("t", {"name": "boom"}, lambda: "ctx")
    assert crashed["error"]["code"] == "INTERNAL" and "RuntimeError" in crashed["error"]["message"]
    with pytest.raises(InvalidArgument):
        registry.get("nope")
    assert len(seen) == 2  # bad arguments never reached the body


def test_search_api_keeps_the_tooloutput_alias():
    from local_memory_search.api import ToolOutput

    out = ToolOutput(results=[], data=None, warnings=[{"code": "c", "message": "m"}], extra={"x": 1})
    assert out.envelope() == {"ok": True, "results": [], "x": 1, "warnings": [{"code": "c", "message": "m"}]}
    assert ToolOutput is ToolResult


def test_every_search_tool_is_read_only_and_listed_in_registry_order():
    with memory_session(build_search_server()) as session:
        listed = session.list_tools()
    assert [t["name"] for t in listed] == list(REGISTRY.specs)
    assert all(t["annotations"]["readOnlyHint"] for t in listed)
