"""Crash safety with real processes: an indexer SIGKILLed at an exact point, then the next run.

Each test reproduces a defect of issue 15 with a real ``local-memory-indexer`` subprocess that
SIGKILLs *itself* at a named point of the publication protocol (a test-only wrapper patches the
one method to call ``os.kill(os.getpid(), SIGKILL)``), real LanceDB and SQLite files, and the
real searcher reading them afterwards.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path
from typing import Any

import indexing_support
import lancedb
import pytest
from indexing_support import current_lance, run_cli, state_rows, summary_of, write_modules
from local_memory_search.store import clear_caches
from local_memory_search.tools import call_tool
from local_memory_shared.paths import ProjectPaths, project_paths
from search_support import env, snapshot

pytestmark = pytest.mark.slow

FUNCS = 4
FILES = 40  # first batch 16 files, then 24: a second batch to kill in


def write_project(root: Path, tag: str, n_files: int = FILES) -> Path:
    return write_modules(
        root,
        n_files,
        FUNCS,
        lambda i, j: (
            f'def task_{i}_{j}(job):\n    """Run job kind {j} of module {i} ({tag})."""\n'
            f"    return job.get('{tag}_{j}') + {i * j}"
        ),
        folder="pkg",
        stem="mod",
    )


def lance_rows(paths: ProjectPaths, version: int) -> list[dict[str, Any]]:
    return indexing_support.lance_rows(paths, version, ["chunk_id", "file_path", "content_hash"])


def state(paths: ProjectPaths, sql: str) -> list[tuple[Any, ...]]:
    return state_rows(paths.state_db, sql)


def assert_consistent(paths: ProjectPaths, n_files: int = FILES) -> None:
    """The published LanceDB version holds exactly the mirror's rows, and every chunk is there."""
    version = state(paths, "SELECT published_version FROM projects")[0][0]
    rows = lance_rows(paths, version)
    mirror = {r[0] for r in state(paths, "SELECT chunk_id FROM chunks")}
    assert len(rows) == len({r["chunk_id"] for r in rows}) == n_files * FUNCS
    assert {r["chunk_id"] for r in rows} == mirror


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, ProjectPaths, dict[str, str]]:
    data = tmp_path / "data"
    project = write_project(tmp_path / "proj", "v1")
    env_ = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data)}
    summary_of(run_cli(env_, "index", str(project), "--json"))
    return project, project_paths(data, project), env_


def test_kill_between_lance_delete_and_publish_in_full_is_repaired_by_a_plain_run(setup) -> None:
    project, paths, env_ = setup
    # --full re-writes every file; die in the second batch after LanceDB deleted its rows and
    # before they were re-added and published.
    killed = run_cli(
        env_,
        "index",
        str(project),
        "--full",
        "--json",
        kill_at=("local_memory_indexer.store:ChunkStore._to_arrow", 2),
    )
    assert killed.returncode == -signal.SIGKILL
    latest = lancedb.connect(str(paths.lance_dir)).open_table("chunks")
    assert latest.count_rows() < FILES * FUNCS  # the defect's precondition: LanceDB lost rows
    assert_consistent(paths)  # the published version is still the good one

    summary = summary_of(run_cli(env_, "index", str(project), "--json"))
    assert summary["files_repaired"] > 0 and "did not finish" in summary["repair_reason"]
    assert_consistent(paths)
    assert state(paths, "SELECT outcome FROM runs ORDER BY run_id") == [("done",), (None,), ("done",)]


def test_a_deleted_lancedb_folder_is_rebuilt_from_the_files(setup) -> None:
    project, paths, env_ = setup
    shutil.rmtree(paths.lance_dir)
    summary = summary_of(run_cli(env_, "index", str(project), "--json"))
    assert summary["files_repaired"] == FILES and summary["chunks_embedded"] == 0  # vectors from the cache
    assert_consistent(paths)
    clear_caches()
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(paths.data_root)):
        got = call_tool(
            "search_semantic", {"query": "run job kind 2 of module 7", "project_path": str(project)}
        )
    assert got["ok"] and got["results"], got
    assert not got["warnings"]


def test_deleted_fts_index_files_are_rebuilt_by_a_plain_run(setup) -> None:
    project, paths, env_ = setup
    for index_dir in (paths.lance_dir / "chunks.lance" / "_indices").iterdir():
        shutil.rmtree(index_dir)
    clear_caches()
    args = {"query": "task_3_1", "project_path": str(project), "cache_bust": True}
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(paths.data_root)):
        before = call_tool("search_keyword", args)
        assert "fts_unavailable" in {w["code"] for w in before["warnings"]}  # the defect
        summary = summary_of(run_cli(env_, "index", str(project), "--json"))
        assert summary["indices_rebuilt"] == ["fts"]
        clear_caches()
        after = call_tool("search_keyword", args)
    assert after["ok"] and not after["warnings"], after["warnings"]
    assert after["results"][0]["symbol_name"] == "task_3_1"


@pytest.mark.parametrize("way", ["no_change_fast_path", "full_pipeline"])
def test_a_run_killed_before_it_publishes_never_loses_the_published_version(setup, way: str) -> None:
    project, paths, env_ = setup
    published = state(paths, "SELECT published_version FROM projects")[0][0]
    if way == "full_pipeline":
        # The run that does not trust the record (here: none) goes the full way, as any run did
        # before the fast path; the fast path's own kill is the other case.
        (paths.dir / "intact.json").unlink()
    # No change at all; with no grace period, the old optimize-then-publish order deleted the
    # published version before the new one was published.
    killed = run_cli(
        {**env_, "TEST_NO_GRACE": "1"},
        "index",
        str(project),
        "--json",
        kill_at=("local_memory_indexer.state_writer:StateWriter.publish", 1),
    )
    assert killed.returncode == -signal.SIGKILL
    assert state(paths, "SELECT published_version FROM projects")[0][0] == published
    assert len(lance_rows(paths, published)) == FILES * FUNCS
    # The killed run left its journal row open: the next run goes the full way and checks for drift.
    summary = summary_of(run_cli(env_, "index", str(project), "--json"))
    assert summary["repair_reason"] == "the previous run did not finish" and summary["files_repaired"] == 0
    assert_consistent(paths)


def test_after_a_killed_first_index_status_tells_the_truth_and_readers_write_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    project = write_project(tmp_path / "proj", "v1")
    env_ = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data)}
    paths = project_paths(data, project)
    # Die in the second batch's publish: the first batch (16 files) is published, nothing else.
    killed = run_cli(
        env_,
        "index",
        str(project),
        "--json",
        kill_at=("local_memory_indexer.state_writer:StateWriter.write_batch", 2),
    )
    assert killed.returncode == -signal.SIGKILL
    assert paths.state_db.with_name("state.db-shm").exists()  # the crash left WAL + shm behind
    before = snapshot(paths.dir)
    clear_caches()
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data)):
        for tool, args in [
            ("search_keyword", {"query": "task_3_1"}),
            ("search_hybrid", {"query": "run job kind 1"}),
            ("index_status", {}),
        ]:
            got = call_tool(tool, {**args, "project_path": str(project)})
            assert got["ok"], got
            if tool.startswith("search"):
                codes = {w["code"] for w in got["warnings"]}
                assert "index_incomplete" in codes and "index_building" not in codes, codes
                assert got["results"]
    assert snapshot(paths.dir) == before  # not even state.db-shm changed

    summary = summary_of(run_cli(env_, "index", str(project), "--json"))
    assert summary["files_parsed"] == FILES - 16
    assert_consistent(paths)


@pytest.mark.parametrize(
    "kill_at",
    [
        ("local_memory_indexer.store:ChunkStore._to_arrow", 2),  # mid-build: one batch written
        ("local_memory_indexer.state_writer:StateWriter.publish", 2),  # built, not swapped yet
    ],
    ids=["mid_build", "before_swap"],
)
def test_a_killed_rebuild_leaves_the_previous_index_searchable(setup, kill_at) -> None:
    project, paths, env_ = setup
    write_project(project, "v2")  # the rebuild would index new text: the old must still answer
    killed = run_cli(env_, "index", str(project), "--rebuild", "--json", kill_at=kill_at)
    assert killed.returncode == -signal.SIGKILL
    assert (paths.dir / "state.next.db").exists() and (paths.dir / "lance.1").is_dir()  # built beside
    assert current_lance(paths) == paths.lance_dir
    assert_consistent(paths)
    clear_caches()
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(paths.data_root)):
        for tool in ("search_keyword", "search_hybrid"):
            got = call_tool(tool, {"query": "task_3_1", "project_path": str(project), "cache_bust": True})
            assert got["ok"] and got["results"], got
            top = got["results"][0]
            assert top["symbol_name"] == "task_3_1" and "v1_1" in top["text"], top

    summary = summary_of(run_cli(env_, "index", str(project), "--json"))  # cleans up, then updates
    assert summary["files_parsed"] == FILES
    assert not (paths.dir / "state.next.db").exists() and not (paths.dir / "lance.1").exists()
    assert_consistent(paths)


def test_a_finished_rebuild_swaps_in_a_new_folder_and_the_old_goes_after_the_grace(setup) -> None:
    project, paths, env_ = setup
    write_project(project, "v2")
    summary = summary_of(run_cli(env_, "index", str(project), "--rebuild", "--json"))
    assert summary["files_parsed"] == FILES
    assert current_lance(paths) == paths.dir / "lance.1"
    assert paths.lance_dir.is_dir()  # retired, kept for readers that may still hold it
    assert not (paths.dir / "state.next.db").exists()
    assert_consistent(paths)
    assert state(paths, "SELECT outcome FROM runs ORDER BY run_id") == [("done",), ("done",)]
    clear_caches()
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(paths.data_root)):
        got = call_tool("search_keyword", {"query": "task_3_1", "project_path": str(project)})
    assert got["ok"] and "v2_1" in got["results"][0]["text"] and not got["warnings"], got
    run_cli(
        {**env_, "TEST_NO_GRACE": "1"},
        "index",
        str(project),
        kill_at=("local_memory_indexer.state_writer:StateWriter.publish", 0),
    )
    assert not paths.lance_dir.exists() and current_lance(paths).is_dir()
    assert_consistent(paths)
