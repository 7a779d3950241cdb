"""Two projects in one data root: no query of one ever returns the other's chunks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from local_memory_search.tools import call_tool
from search_support import FILES, env, index, project_dir, write_project

OTHER = {
    # Same path and class name as project A, different code: a leak would be easy to miss.
    "src/cache.py": '''class LruCache:
    """Project B's cache: a ring buffer pretending to be an LRU."""

    def get(self, key):
        return self.ring[hash(key) % 8]
''',
    "billing/invoice.py": '''def computeInvoiceTotal(lines, tax_rate):
    """Sum invoice lines and add tax."""
    return sum(lines) * (1 + tax_rate)
''',
}


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    a = write_project(tmp_path_factory.mktemp("a"), FILES, git=False)
    b = write_project(tmp_path_factory.mktemp("b"), OTHER, git=False)
    root = tmp_path_factory.mktemp("data")
    index(a, root)
    index(b, root)
    return root, a, b


def chunk_keys(root: Path, project: Path) -> set[tuple[str, str]]:
    # chunk ids are stable per (path, symbol, ordinal), so two projects may share one; with the
    # content hash a row is unique to its project here.
    conn = sqlite3.connect(f"file:{project_dir(root, project) / 'state.db'}?mode=ro", uri=True)
    try:
        return {(r[0], r[1]) for r in conn.execute("SELECT chunk_id, content_hash FROM chunks")}
    finally:
        conn.close()


QUERIES = [
    "LruCache",
    "computeInvoiceTotal",
    "ring buffer cache",
    "sum invoice lines and add tax",
    "retry the database connection",
    "get",
]


@pytest.mark.parametrize("tool", ["search_hybrid", "search_semantic", "search_keyword"])
def test_no_query_returns_the_other_projects_chunks(projects, tool):
    root, a, b = projects
    ids = {a: chunk_keys(root, a), b: chunk_keys(root, b)}
    assert ids[a] and ids[b] and not ids[a] & ids[b]
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(root)):
        for project in (a, b):
            for query in QUERIES:
                envelope = call_tool(
                    tool, {"query": query, "project_path": str(project), "limit": 50, "gap_threshold": 0.0}
                )
                assert envelope["ok"], envelope
                got = {(r["chunk_id"], r["content_hash"]) for r in envelope["results"]}
                assert got <= ids[project], (tool, project, query)


def test_same_path_and_symbol_resolve_per_project(projects):
    root, a, b = projects
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(root)):
        in_a = call_tool("search_keyword", {"query": "LruCache", "project_path": str(a)})["results"][0]
        in_b = call_tool("search_keyword", {"query": "LruCache", "project_path": str(b)})["results"][0]
        assert in_a["file_path"] == in_b["file_path"] == "src/cache.py"
        assert "least recently used" in in_a["text"] and "ring buffer" in in_b["text"]
        only_b = next(
            r
            for r in call_tool("search_keyword", {"query": "computeInvoiceTotal", "project_path": str(b)})[
                "results"
            ]
        )
        missing = call_tool("get_chunk", {"chunk_id": only_b["chunk_id"], "project_path": str(a)})
        assert missing["error"]["code"] == "NOT_FOUND"
        same_id = call_tool("get_chunk", {"chunk_id": in_b["chunk_id"], "project_path": str(a)})["data"]
        assert "ring buffer" not in same_id["text"]
        in_a_only = call_tool("search_keyword", {"query": "computeInvoiceTotal", "project_path": str(a)})[
            "results"
        ]
        assert all(
            r["symbol_name"] != "computeInvoiceTotal" for r in in_a_only
        )  # "compute" may match A's code
        none = call_tool("search_keyword", {"query": "invoice", "project_path": str(a)})
        assert none["results"] == [] and none["warnings"][0]["code"] == "no_matches"


def test_default_project_comes_from_the_environment(projects, monkeypatch):
    root, a, b = projects
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(root), LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT=str(b)):
        hit = call_tool("search_keyword", {"query": "computeInvoiceTotal"})["results"][0]
        assert hit["symbol_name"] == "computeInvoiceTotal"
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(root), LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT=None):
        monkeypatch.chdir(a)
        hit = call_tool("search_keyword", {"query": "initializeDatabase"})["results"][0]
        assert hit["symbol_name"] == "initializeDatabase"
