"""The text composed for the legs: the path is embedded, and an index of an older text build is
re-chunked in place on its next run (real pipeline, tree-sitter, ONNX model, LanceDB, SQLite)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from local_memory_indexer.pipeline import CHUNK_TEXT_VERSION, embed_text
from local_memory_shared.paths import project_paths
from local_memory_search.tools import call_tool
from search_support import env, index, write_project

#: Two files with the same code: only their paths tell them apart.
BODY = "def run(item):\n    return item.apply()\n"
FILES = {
    "src/billing/invoice_renderer.py": BODY,
    "src/network/socket_pool.py": BODY,
    "src/cli.py": 'def main():\n    """Parse the command line."""\n    return 0\n',
}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    project = write_project(tmp_path_factory.mktemp("text-project"), FILES, git=False)
    root = tmp_path_factory.mktemp("text-data")
    summary = index(project, root)
    assert not summary.errors
    return project, root


def text_version(project: Path, root: Path) -> int:
    conn = sqlite3.connect(project_paths(root, project).state_db)
    try:
        return int(conn.execute("SELECT text_version FROM index_meta").fetchone()[0])
    finally:
        conn.close()


def test_the_embedded_text_starts_with_the_relative_path_then_the_symbol() -> None:
    text = embed_text({"file_path": "src/a/b.py", "symbol_name": "Cls.meth", "text": "pass"})
    assert text == "src/a/b.py\nCls.meth\npass"
    assert embed_text({"file_path": "x.py", "symbol_name": "", "text": "pass"}) == "x.py\npass"


@pytest.mark.parametrize(
    ("query", "wanted"),
    [("invoice renderer", "src/billing/invoice_renderer.py"), ("network socket pool", "src/network/socket_pool.py")],
)
def test_the_semantic_leg_tells_identical_code_apart_by_its_path(indexed, query: str, wanted: str) -> None:
    project, root = indexed
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(root)):
        out = call_tool(
            "search_semantic",
            {"query": query, "project_path": str(project), "limit": 3, "cache_bust": True, "gap_threshold": 0.0},
        )
    assert out["ok"], out
    assert out["results"][0]["file_path"] == wanted


def test_an_index_of_an_older_text_build_is_rechunked_in_place_reusing_cached_vectors(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", FILES, git=False)
    root = tmp_path / "data"
    first = index(project, root)
    assert first.files_parsed == len(FILES)
    assert text_version(project, root) == CHUNK_TEXT_VERSION
    assert index(project, root).files_parsed == 0  # current text build: nothing to do

    conn = sqlite3.connect(project_paths(root, project).state_db)
    conn.execute("UPDATE index_meta SET text_version = 0")  # as if composed by the previous build
    conn.commit()
    conn.close()
    again = index(project, root)
    assert again.files_parsed == len(FILES) and not again.errors
    assert again.chunks_embedded == 0 and again.chunks_reused == first.chunks_embedded + first.chunks_reused
    assert again.chunks_total == first.chunks_total
    assert text_version(project, root) == CHUNK_TEXT_VERSION
    assert index(project, root).files_parsed == 0
