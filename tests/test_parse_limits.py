"""A parse that runs past its time limit fails, and the file is still indexed, as line windows.

A grammar can loop for good on some input (tree-sitter-languages 1.10.2's Lua grammar did on a
file holding ``f(a)``); ``treesitter.PARSE_TIMEOUT_BASE_US`` bounds every parse. The limit is
shrunk here so that an ordinary file runs past it: real tree-sitter, real pipeline and stores.
"""

from __future__ import annotations

import logging

import pytest
from local_memory_indexer import treesitter
from local_memory_indexer.chunking import chunk_file
from search_support import index, state_rw, write_project

BIG = (
    "\n\n".join(f"def handler_{i}(event):\n    return event.get('k{i}', {i}) * 2" for i in range(3000)) + "\n"
)


@pytest.fixture
def tiny_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(treesitter, "PARSE_TIMEOUT_BASE_US", 1)
    monkeypatch.setattr(treesitter, "PARSE_TIMEOUT_PER_BYTE_US", 0)
    treesitter.forget_last_tree()


def test_the_limit_grows_with_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    # the defaults: 5 s, and 10 s more for a 1 MB file
    assert treesitter.PARSE_TIMEOUT_BASE_US == 5_000_000
    assert treesitter.PARSE_TIMEOUT_PER_BYTE_US * 1_000_000 == 10_000_000
    # no time of its own: a parse of BIG gets only what its size earns it, and that is enough
    monkeypatch.setattr(treesitter, "PARSE_TIMEOUT_BASE_US", 1)
    monkeypatch.setattr(treesitter, "PARSE_TIMEOUT_PER_BYTE_US", 1_000)
    treesitter.forget_last_tree()
    assert not treesitter.parse("python", BIG.encode()).root_node.has_error


def test_a_parse_past_its_limit_raises_and_the_file_becomes_windows(tiny_limit, caplog) -> None:
    with pytest.raises(ValueError):
        treesitter.parse("python", BIG.encode())
    with caplog.at_level(logging.WARNING):
        chunks = chunk_file("app/handlers.py", BIG.encode(), "python")
    assert chunks and {c.chunk_kind for c in chunks} == {"window"}
    assert "chunking it as line windows" in caplog.text
    assert chunks[0].text.startswith("def handler_0(event):")


def test_an_index_run_goes_on_past_a_file_too_slow_to_parse(tiny_limit, tmp_path) -> None:
    project = write_project(tmp_path / "proj", {"app/handlers.py": BIG, "README.md": "# Handlers\n"})
    summary = index(project, tmp_path / "data")
    conn = state_rw(tmp_path / "data", project)
    try:
        kinds = {
            r[0] for r in conn.execute("SELECT chunk_kind FROM chunks WHERE file_path = 'app/handlers.py'")
        }
        files = {r[0] for r in conn.execute("SELECT path FROM files")}
    finally:
        conn.close()
    assert files == {"app/handlers.py", "README.md"}
    assert kinds == {"window"}
    # the graph extractor hit the same limit: reported per file, not a failed run
    assert summary.files_parsed == 2
