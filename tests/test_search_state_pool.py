"""The searcher's state-DB connection pool: connections are reused, and never past a new version.

``open_index`` takes its read-only state-DB connection from ``store.STATE_POOL``; a connection
may only come back while the file is the one (and, for ``immutable=1`` connections, the content)
it was opened on. Real indexer runs publish the versions here. The pool is on only in processes
that never write a state DB (the search server turns it on); off, nothing outlives a call.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_memory_search import api
from local_memory_search.params import SearchKeywordParams
from local_memory_search.runtime import RUNTIME
from local_memory_search.store import STATE_POOL, open_index, state_key
from local_memory_shared.config import load_settings
from search_support import env, index, project_dir, state_rw, write_project

FILES = {
    "src/alpha.py": 'def parse_alpha(text):\n    """Parse the alpha format."""\n    return text.split(",")\n'
}


def _published(data_root: Path, project: Path) -> int:
    conn = state_rw(data_root, project)
    try:
        return int(conn.execute("SELECT published_version FROM projects").fetchone()[0])
    finally:
        conn.close()


def _indexed(tmp_path: Path) -> tuple[Path, Path]:
    """A project of ``FILES`` indexed by a real indexer run, and its data root (caches cleared)."""
    project = write_project(tmp_path / "p", FILES)
    data_root = tmp_path / "data"
    index(project, data_root)
    RUNTIME.clear()
    return project, data_root


def _keyword_paths(project: Path, query: str) -> list[str]:
    out = api.search_keyword(SearchKeywordParams(query=query, project_path=str(project), cache_bust=True))
    return [r["file_path"] for r in out.results]


@pytest.fixture()
def pooled() -> Iterator[None]:
    """The pool on, as the search server runs it."""
    STATE_POOL.enable()
    try:
        yield
    finally:
        STATE_POOL.enable(False)


def test_the_pool_is_off_by_default_so_an_in_process_writer_can_follow_a_read(tmp_path: Path):
    """A library caller that searches, then indexes the same project in the same process (the
    regression that took the pool out in session 9): no read-only connection is left open."""
    assert not STATE_POOL.enabled
    project, data_root = _indexed(tmp_path)
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data_root)):
        with open_index(project, load_settings()) as reader:
            conn = reader.conn
        assert len(STATE_POOL) == 0
        with pytest.raises(Exception, match="closed"):
            conn.execute("SELECT 1")
        (project / "src" / "beta.py").write_text("def beta_after_read():\n    return 2\n")
        index(project, data_root)
        assert _keyword_paths(project, "beta_after_read")[0] == "src/beta.py"
    RUNTIME.clear()


@pytest.mark.usefixtures("pooled")
def test_connection_is_reused_between_calls_and_left_without_a_transaction(tmp_path: Path):
    project, data_root = _indexed(tmp_path)
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data_root)):
        settings = load_settings()
        with open_index(project, settings) as reader:
            first = reader.conn
            assert first.in_transaction
        assert len(STATE_POOL) == 1 and not first.in_transaction
        with open_index(project, settings) as reader:
            assert reader.conn is first
    RUNTIME.clear()
    assert len(STATE_POOL) == 0


@pytest.mark.usefixtures("pooled")
def test_a_new_published_version_is_seen_through_the_pool(tmp_path: Path):
    project, data_root = _indexed(tmp_path)
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data_root)):
        settings = load_settings()
        with open_index(project, settings) as reader:
            old_version = reader.version
            old_key = state_key(reader.paths.state_db)
        assert "src/beta.py" not in _keyword_paths(project, "beta_format_reader")
        (project / "src" / "beta.py").write_text(
            'def beta_format_reader(path):\n    """Read the beta format."""\n    return open(path).read()\n'
        )
        index(project, data_root)  # publishes a new version while the pool holds the old connection
        new_version = _published(data_root, project)
        assert new_version != old_version
        with open_index(project, settings) as reader:
            assert reader.version == new_version
            assert state_key(reader.paths.state_db) != old_key
        assert _keyword_paths(project, "beta_format_reader")[0] == "src/beta.py"
    RUNTIME.clear()


@pytest.mark.usefixtures("pooled")
def test_a_recreated_state_db_is_never_read_through_an_old_connection(tmp_path: Path):
    project, data_root = _indexed(tmp_path)
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data_root)):
        settings = load_settings()
        with open_index(project, settings) as reader:
            assert reader.version is not None
        # The project's data is deleted and indexed again from nothing (a new state DB file).
        shutil.rmtree(project_dir(data_root, project))
        (project / "src" / "alpha.py").unlink()
        (project / "src" / "gamma.py").write_text("def gamma_only_symbol():\n    return 3\n")
        index(project, data_root)
        with open_index(project, settings) as reader:  # the SQLite mirror is the new file's
            assert reader.file_chunks("src/gamma.py") and not reader.file_chunks("src/alpha.py")
        assert _keyword_paths(project, "gamma_only_symbol")[0] == "src/gamma.py"
        assert "src/alpha.py" not in _keyword_paths(project, "parse_alpha")
    RUNTIME.clear()
