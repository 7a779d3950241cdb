"""Keyword answers before vectors: a big run publishes rows and the FTS index, then embeds.

Real tree-sitter, the real ONNX model, real LanceDB and SQLite, the real searcher. A run that
changes more than ``FIRST_BATCH_FILES`` files writes every row with a null vector and publishes
it with the full-text index; the embedding phase then fills vectors a group of files at a time,
each group published. These tests stop that phase part-way (an embedder that dies, a SIGKILL)
and check what a searcher sees, and that the next run finishes only what was left.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from indexing_support import KILLER, DiesAfter, lance_rows, published_version, state_rows, write_modules
from local_memory_indexer import pipeline
from local_memory_indexer.pipeline import index_project
from local_memory_search.store import clear_caches
from local_memory_search.tools import call_tool
from local_memory_shared.embedding import create_embedder
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.errors import EmbeddingError
from local_memory_shared.paths import ProjectPaths, project_paths
from search_support import env

N_FILES = 40
FUNCS = 3
GROUP_CHUNKS = 30  # ten files per embedding group: four groups


def write_project(root: Path) -> Path:
    return write_modules(
        root,
        N_FILES,
        FUNCS,
        lambda i, j: (
            f'def handler_{i}_{j}(event):\n    """Dispatch event kind {j} for queue {i}."""\n'
            f"    return event.payload['field_{i}_{j}'] * {i + j}"
        ),
        folder="svc",
        stem="queue",
    )


def state(paths: ProjectPaths, sql: str) -> list[tuple[Any, ...]]:
    return state_rows(paths.state_db, sql)


def published_rows(paths: ProjectPaths) -> list[dict[str, Any]]:
    return lance_rows(paths, published_version(paths), ["chunk_id", "file_path", "vector"])


def search(project: Path, data: Path, tool: str, query: str, **extra: Any) -> dict[str, Any]:
    clear_caches()
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data)):
        return call_tool(tool, {"query": query, "project_path": str(project), "cache_bust": True, **extra})


@pytest.fixture(scope="module")
def onnx() -> Embedder:
    return create_embedder("onnx")


def test_keyword_answers_while_vectors_are_pending_and_the_next_run_finishes(
    tmp_path: Path, onnx: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    project = write_project(tmp_path / "proj")
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(data))
    monkeypatch.setattr(pipeline, "EMBED_BATCH_CHUNKS", GROUP_CHUNKS)
    paths = project_paths(data, project)
    with pytest.raises(EmbeddingError):
        index_project(
            project, embedder=DiesAfter(onnx, calls_ok=1, per="group")
        )  # one group embedded, then dead

    total = N_FILES * FUNCS
    rows = published_rows(paths)
    assert len(rows) == total  # every row is published ...
    without = {r["chunk_id"] for r in rows if r["vector"] is None}
    assert len(without) == total - GROUP_CHUNKS  # ... one group of them with vectors
    pending_files = {p for (p,) in state(paths, "SELECT path FROM files WHERE vectors_pending = 1")}
    assert pending_files == {r["file_path"] for r in rows if r["vector"] is None}

    # The keyword leg finds a chunk that has no vector yet, and says how much is keyword-only.
    last = f"handler_{N_FILES - 1}_2"
    got = search(project, data, "search_keyword", last)
    assert got["ok"] and got["results"][0]["symbol_name"] == last, got
    (note,) = [w for w in got["warnings"] if w["code"] == "vectors_pending"]
    share = len(without) / total
    assert f"{len(without)} of {total} chunks ({share:.0%})" in note["message"]

    # The vector leg never returns a chunk without a vector; hybrid still ranks it by keyword.
    sem = search(project, data, "search_semantic", f"dispatch event kind 2 for queue {N_FILES - 1}", limit=50)
    assert sem["ok"] and sem["results"], sem
    assert not {r["chunk_id"] for r in sem["results"]} & without
    hyb = search(project, data, "search_hybrid", last)
    assert hyb["results"][0]["symbol_name"] == last
    assert "vectors_pending" in {w["code"] for w in hyb["warnings"]}

    # Status reports it too.
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data)):
        status = call_tool("index_status", {"project_path": str(project)})
    assert status["data"]["chunks_pending_vectors"] == len(without)

    # The next run re-parses nothing and embeds exactly what was left.
    done = index_project(project, embedder=onnx)
    assert done.files_parsed == 0 and done.chunks_embedded == len(without)
    rows = published_rows(paths)
    assert len(rows) == total and all(r["vector"] is not None for r in rows)
    assert state(paths, "SELECT COUNT(*) FROM files WHERE vectors_pending = 1") == [(0,)]
    after = search(
        project, data, "search_semantic", f"dispatch event kind 2 for queue {N_FILES - 1}", limit=50
    )
    assert after["ok"] and not after["warnings"], after["warnings"]
    assert last in {r["symbol_name"] for r in after["results"]}  # now the vector leg can see it


def test_a_small_change_embeds_inline_and_publishes_no_pending_rows(
    tmp_path: Path, onnx: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    project = write_project(tmp_path / "proj")
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(data))
    index_project(project, embedder=onnx)
    target = project / "svc/queue_005.py"
    target.write_text(target.read_text() + "\n\ndef added_later(x):\n    return x\n")
    publications: list[int] = []
    real = pipeline.StateWriter.publish_vectors
    monkeypatch.setattr(
        pipeline.StateWriter,
        "publish_vectors",
        lambda self, files, version: (publications.append(version), real(self, files, version)),
    )
    summary = index_project(project, embedder=onnx)
    assert summary.files_parsed == 1 and summary.chunks_embedded >= 1
    assert publications == []  # no keyword-only publication for a one-file change
    assert all(r["vector"] is not None for r in published_rows(project_paths(data, project)))


def test_a_reindex_publishes_no_version_with_rows_outside_the_full_text_index(
    tmp_path: Path, onnx: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-index of more than ``FIRST_BATCH_FILES`` files (up to ``BATCH_FILES``) publishes its
    rows inside the FTS index (one batch, folded first), then its vectors once, with the final fold: a version
    published with rows the index does not cover (new rows, or rows rewritten when their vectors
    land) makes every keyword query scan them outside the index (the busy searcher's tail at
    100k chunks)."""
    import lancedb
    from indexing_support import current_lance

    data = tmp_path / "data"
    project = write_project(tmp_path / "proj")
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(data))
    monkeypatch.setattr(pipeline, "EMBED_BATCH_CHUNKS", GROUP_CHUNKS)
    index_project(project, embedder=onnx)
    paths = project_paths(data, project)
    changed = pipeline.FIRST_BATCH_FILES + 4  # > FIRST_BATCH_FILES: rows first, then vectors
    for i in range(changed):
        target = project / f"svc/queue_{i:03d}.py"
        target.write_text(target.read_text() + f"\n\ndef rerouted_{i}(event):\n    return event\n")
    published: list[int] = []
    real = pipeline.StateWriter._set_published
    monkeypatch.setattr(
        pipeline.StateWriter,
        "_set_published",
        lambda self, version: (published.append(version), real(self, version))[1],
    )
    summary = index_project(project, embedder=onnx)
    assert summary.files_parsed == changed and summary.chunks_embedded >= changed
    table = lancedb.connect(str(current_lance(paths))).open_table("chunks")
    unindexed = []
    for version in published:
        table.checkout(version)
        (fts,) = [idx.name for idx in table.list_indices() if idx.index_type == "FTS"]
        unindexed.append(table.index_stats(fts).num_unindexed_rows)
    # the batch's rows are folded into the index before they are published, and the vectors are
    # published once, with the final fold: each new version makes a searcher read its indices anew
    assert not any(unindexed), list(zip(published, unindexed, strict=True))
    assert len(set(published)) == 2  # 1 batch (rows + their fold), then vectors + the final fold
    rows = published_rows(paths)
    assert all(r["vector"] is not None for r in rows)
    assert state(paths, "SELECT COUNT(*) FROM files WHERE vectors_pending = 1") == [(0,)]
    got = search(project, data, "search_semantic", "rerouted event", limit=50)
    assert {f"rerouted_{i}" for i in range(changed)} & {r["symbol_name"] for r in got["results"]}


def test_a_kill_between_the_phases_leaves_a_readable_keyword_complete_index(tmp_path: Path) -> None:
    data = tmp_path / "data"
    project = write_project(tmp_path / "proj")
    env_ = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data)}
    paths = project_paths(data, project)
    # SIGKILL at the first vector publication: rows and FTS are published, no vector is.
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            KILLER,
            "local_memory_indexer.state_writer:StateWriter.publish_vectors",
            "1",
            "index",
            str(project),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env_,
        timeout=600,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    rows = published_rows(paths)
    assert len(rows) == N_FILES * FUNCS and all(r["vector"] is None for r in rows)
    got = search(project, data, "search_keyword", "handler_17_1")
    assert got["ok"] and got["results"][0]["symbol_name"] == "handler_17_1"
    codes = {w["code"] for w in got["warnings"]}
    assert "vectors_pending" in codes and "index_incomplete" in codes
    note = next(w for w in got["warnings"] if w["code"] == "vectors_pending")
    assert f"{N_FILES * FUNCS} of {N_FILES * FUNCS} chunks (100%)" in note["message"]

    done = subprocess.run(
        [sys.executable, "-m", "local_memory_indexer.cli", "index", str(project), "--json"],
        capture_output=True,
        text=True,
        env=env_,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)["data"]
    assert summary["files_parsed"] == 0
    assert summary["chunks_embedded"] + summary["chunks_reused"] == N_FILES * FUNCS
    assert all(r["vector"] is not None for r in published_rows(paths))
    hyb = search(project, data, "search_hybrid", "dispatch event kind 1 for queue 17")
    assert hyb["ok"] and not hyb["warnings"], hyb["warnings"]


def _index_tables(data: Path, project: Path) -> dict[str, list[tuple[Any, ...]]]:
    paths = project_paths(data, project)
    return {
        "chunks": state(paths, "SELECT * FROM chunks ORDER BY chunk_id"),
        "files": state(paths, "SELECT path, content_hash, chunk_count FROM files ORDER BY path"),
        "symbols": state(
            paths,
            "SELECT file_path, name, qualified_name, kind, start_line, chunk_id FROM symbols "
            "ORDER BY 1, 5, 3",
        ),
        "calls": state(
            paths, "SELECT file_path, caller_qualified, callee_name, line FROM call_edges ORDER BY 1, 4, 3"
        ),
    }


def test_parsing_in_worker_processes_gives_the_same_index_as_in_process(
    tmp_path: Path, onnx: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = write_project(tmp_path / "proj")
    (project / "svc/broken.py").write_text(
        "def broken(:\n    return 1\n\nclass Ok:\n    def fine(self):\n        return 2\n"
    )
    pools: list[str] = []
    real_pool = pipeline.parse_pool

    @contextlib.contextmanager
    def recording_pool(files: int) -> Iterator[Any]:
        with real_pool(files) as pool:
            pools.append(type(pool).__name__)
            yield pool

    monkeypatch.setattr(pipeline, "parse_pool", recording_pool)
    monkeypatch.setattr(pipeline, "PARSE_POOL_MIN_FILES", 10**9)
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(tmp_path / "serial"))
    serial = index_project(project, embedder=onnx)
    monkeypatch.setattr(pipeline, "PARSE_POOL_MIN_FILES", 1)
    monkeypatch.setattr(pipeline, "BATCH_FILES", 5)  # several batches go through the workers
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(tmp_path / "pooled"))
    pooled = index_project(project, embedder=onnx)
    assert pools == ["NoneType", "ProcessPoolExecutor"]  # in process, then in worker processes
    assert serial.files_parsed == pooled.files_parsed == N_FILES + 1
    assert serial.chunks_total == pooled.chunks_total and serial.errors == pooled.errors
    assert _index_tables(tmp_path / "serial", project) == _index_tables(tmp_path / "pooled", project)


def test_a_fold_in_a_child_process_runs_while_the_model_session_is_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 14: the indexer only waits while a fold runs in a child process, so its model session
    (~125 MB resident with MiniLM) goes first and comes back for the next group; the fills' folds
    in a child fold the FTS index without compacting, and the table is compacted once, before the
    vector index is trained. Every vector still arrives and the keyword leg finds every row."""
    from local_memory_indexer import store as store_mod

    data = tmp_path / "data"
    project = write_project(tmp_path / "proj")
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(data))
    monkeypatch.setattr(pipeline, "EMBED_BATCH_CHUNKS", GROUP_CHUNKS)
    monkeypatch.setattr(pipeline, "FOLD_EVERY_ROWS", GROUP_CHUNKS)
    monkeypatch.setattr(store_mod, "FOLD_IN_CHILD_MIN_ROWS", 50)
    onnx = create_embedder("onnx")
    seen: list[tuple[bool, bool]] = []  # (folds in a child, session loaded) at each fill's fold
    refresh = store_mod.ChunkStore.refresh_indices

    def watch(self: store_mod.ChunkStore, **kwargs: Any) -> None:
        if kwargs.get("vectors_complete") is False:
            seen.append((self.folds_in_child(), onnx.loaded))  # type: ignore[attr-defined]
        return refresh(self, **kwargs)

    monkeypatch.setattr(store_mod.ChunkStore, "refresh_indices", watch)
    done = index_project(project, embedder=onnx)
    total = N_FILES * FUNCS
    assert done.chunks_embedded == total
    fills = seen[-3:]  # four groups: a fold after each of the first three
    assert len(fills) == 3 and all(child and not loaded for child, loaded in fills), seen
    paths = project_paths(data, project)
    rows = published_rows(paths)
    assert len(rows) == total and all(r["vector"] is not None for r in rows)
    last = f"handler_{N_FILES - 1}_2"
    got = search(project, data, "search_keyword", last)
    assert got["ok"] and got["results"][0]["symbol_name"] == last and not got["warnings"], got
