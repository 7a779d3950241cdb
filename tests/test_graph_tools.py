"""The four graph tools through the registry: real index, envelopes, argument errors naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from local_memory_search.tools import call_tool
from search_support import env, index, write_project

FILES = {
    "app/main.py": "from app.db import initialize\n\n\ndef main():\n    initialize()\n",
    "app/db.py": (
        "def connect(url):\n    return url\n\n\n"
        "def initialize():\n    return connect('x')\n\n\n"
        "def ping():\n    return connect('y')\n"
    ),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    root = tmp_path_factory.mktemp("graphtools")
    proj = write_project(root / "proj", FILES, git=False)
    index(proj, root / "data")
    return str(proj), root / "data"


def call(project: tuple[str, Path], tool: str, **args: object) -> dict:
    proj, data = project
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data)):
        return call_tool(tool, {"project_path": proj, **args})


def names(obj: object) -> set[str]:
    """Every qualified_name anywhere in an answer."""
    out: set[str] = set()
    if isinstance(obj, dict):
        if "qualified_name" in obj:
            out.add(obj["qualified_name"])
        for v in obj.values():
            out |= names(v)
    elif isinstance(obj, list):
        for v in obj:
            out |= names(v)
    return out


def test_find_callers_depth_two_reaches_main(project: tuple[str, Path]) -> None:
    one = call(project, "find_callers", symbol_name="connect")
    assert one["ok"] and {"initialize", "ping"} <= names(one["data"]) and "main" not in names(one["data"])
    two = call(project, "find_callers", symbol_name="connect", depth=2)
    assert "main" in names(two["data"])


def test_find_callees_trace_path_and_imports(project: tuple[str, Path]) -> None:
    callees = call(project, "find_callees", symbol_name="main", depth=2)
    assert {"initialize", "connect"} <= names(callees["data"])
    path = call(project, "trace_path", source_symbol="main", target_symbol="connect")
    assert path["ok"] and {"main", "initialize", "connect"} <= names(path["data"])
    none = call(project, "trace_path", source_symbol="ping", target_symbol="main")
    assert none["ok"] and none["data"]["status"] == "no_path"
    graph = call(project, "get_import_graph")
    assert "app/db.py" in str(graph["data"]) and "app/main.py" in str(graph["data"])


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("find_callers", {"symbol_name": "connect", "depth": 4}, "depth"),
        ("find_callees", {"symbol_name": "", "depth": 1}, "symbol_name"),
        ("trace_path", {"source_symbol": "main"}, "target_symbol"),
        ("get_import_graph", {"file_path": 3}, "file_path"),
    ],
)
def test_bad_arguments_name_the_field(project: tuple[str, Path], tool: str, args: dict, field: str) -> None:
    answer = call(project, tool, **args)
    assert not answer["ok"]
    assert answer["error"]["code"] == "INVALID_ARGUMENT" and answer["error"]["field"] == field
