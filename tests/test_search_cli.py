"""The ``local-memory-search`` CLI, run as a real subprocess against a real index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from local_memory_search.tools import call_tool
from search_support import env

SCRIPT = Path(sys.executable).with_name("local-memory-search")


@pytest.fixture(scope="module")
def indexed(indexed_sample):
    return indexed_sample.data_root, indexed_sample.project


def run(indexed, *args: str) -> subprocess.CompletedProcess[str]:
    root, _ = indexed
    environ = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(root)}
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, env=environ, timeout=180, check=False
    )


def in_process(indexed, tool: str, args: dict) -> dict:
    root, _ = indexed
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(root)):
        return call_tool(tool, args)


def without_timings(envelope: dict) -> dict:
    envelope = json.loads(json.dumps(envelope))
    envelope.get("search", {}).pop("timings_ms", None)
    return envelope


def test_tool_prints_exactly_the_envelope(indexed):
    _, project = indexed
    args = {"query": "LruCache", "project_path": str(project), "cache_bust": True}
    out = run(indexed, "tool", "search_keyword", "--args", json.dumps(args))
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    assert without_timings(printed) == without_timings(in_process(indexed, "search_keyword", args))
    chunk_args = {"chunk_id": printed["results"][0]["chunk_id"], "project_path": str(project)}
    got = run(indexed, "tool", "get_chunk", "--args", json.dumps(chunk_args), "--json")
    assert json.loads(got.stdout) == in_process(indexed, "get_chunk", chunk_args)


def test_tool_errors_are_envelopes_with_exit_code_1(indexed):
    bad = run(indexed, "tool", "search_hybrid", "--args", '{"query": "x", "filters": {"chunk_kind": "f"}}')
    assert bad.returncode == 1
    envelope = json.loads(bad.stdout)
    assert envelope["ok"] is False and envelope["error"]["field"] == "filters.chunk_kind"
    not_json = run(indexed, "tool", "search_hybrid", "--args", "{nope")
    assert not_json.returncode == 1 and json.loads(not_json.stdout)["error"]["field"] == "args"


def test_query_prints_readable_hits_and_json(indexed):
    _, project = indexed
    out = run(
        indexed,
        "query",
        "retry the database connection with backoff",
        "--project",
        str(project),
        "--limit",
        "3",
    )
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert "src/db.py:" in first and "ConnectionPool.connect" in first and "score" in first
    assert "def connect" in out.stdout  # a snippet follows each hit
    assert "hits (hybrid" in out.stderr
    as_json = run(indexed, "query", "LruCache", "--project", str(project), "--mode", "keyword", "--json")
    envelope = json.loads(as_json.stdout)
    assert envelope["ok"] and envelope["search"]["mode"] == "keyword"
    assert envelope["results"][0]["symbol_name"] == "LruCache"


def test_tools_lists_the_registry(indexed):
    out = run(indexed, "tools", "--json")
    names = {t["name"] for t in json.loads(out.stdout)}
    assert {
        "search_hybrid",
        "search_semantic",
        "search_keyword",
        "get_chunk",
        "read_chunk_neighbors",
        "search_similar",
        "explain_match",
    } <= names
