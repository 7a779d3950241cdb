"""One writer per project, and a SIGKILL mid-run: shown with real `local-memory-indexer` processes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from indexing_support import lance_rows, state_rows, write_modules
from local_memory_indexer.pipeline import BATCH_FILES
from local_memory_shared.paths import ProjectPaths, project_paths

pytestmark = pytest.mark.slow

FUNCS = 6
#: Functions per file of the kill-mid-run test, whose project needs more than BATCH_FILES files.
SAFETY_FUNCS = 2


def write_project(root: Path, n_files: int, tag: str, funcs: int = FUNCS) -> Path:
    return write_modules(
        root,
        n_files,
        funcs,
        lambda i, j: (
            f'def handler_{i}_{j}(request):\n    """Handle request kind {j} of module {i} ({tag})."""\n'
            f"    value = request.get('{tag}_{j}')\n    return value * {j + i}"
        ),
        folder="pkg",
        stem="mod",
    )


def cli(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "local_memory_indexer.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def published(state_db: Path) -> tuple[str | None, int | None]:
    if not state_db.exists():
        return None, None
    try:
        rows = state_rows(state_db, "SELECT status, published_version FROM projects")
    except sqlite3.Error:
        return None, None
    return (rows[0][0], rows[0][1]) if rows else (None, None)


def wait_mid_run(
    proc: subprocess.Popen[str], state_db: Path, after_version: int | None, timeout: float = 120
) -> int:
    """Block until the run is 'indexing' and has published a batch beyond ``after_version``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the run ended before we could catch it mid-run: {proc.communicate()}"
        status, version = published(state_db)
        if status == "indexing" and version is not None and version != after_version:
            return version
        time.sleep(0.05)
    raise AssertionError("the run never reached mid-run")


def table_rows(paths: ProjectPaths, version: int | None) -> list[dict]:
    return lance_rows(paths, version, ["chunk_id", "file_path", "text"])


def mirror_ids(state_db: Path) -> set[str]:
    return {r[0] for r in state_rows(state_db, "SELECT chunk_id FROM chunks")}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    # One ONNX thread makes the run slow enough to catch mid-way on any machine.
    return {
        **os.environ,
        "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(tmp_path / "data"),
        "LOCAL_MEMORY_EMBED_THREADS": "1",
    }


def test_second_writer_is_refused_and_first_run_is_unharmed(tmp_path: Path, env: dict[str, str]) -> None:
    project = write_project(tmp_path / "proj", 60, "v1")
    paths = project_paths(Path(env["LOCAL_VECTOR_SEARCH_DATA_ROOT"]), project)
    first = cli("index", str(project), "--json", env=env)
    wait_mid_run(first, paths.state_db, None)
    second = cli("index", str(project), "--json", env=env)
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 1
    assert json.loads(out)["error"]["code"] == "INDEX_LOCKED"
    out, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    summary = json.loads(out)["data"]
    assert summary["files_parsed"] == 60 and summary["chunks_total"] == 60 * FUNCS
    assert len(table_rows(paths, summary["published_version"])) == 60 * FUNCS


def test_sigkill_mid_run_keeps_the_previous_index_and_the_next_run_completes(
    tmp_path: Path, env: dict[str, str]
) -> None:
    # A re-index of up to BATCH_FILES files is one batch (folded before it is published); more
    # files take several batches, the first of FIRST_BATCH_FILES.
    n_files = BATCH_FILES + 30
    project = write_project(tmp_path / "proj", n_files, "v1", SAFETY_FUNCS)
    paths = project_paths(Path(env["LOCAL_VECTOR_SEARCH_DATA_ROOT"]), project)
    good = cli("index", str(project), "--json", env=env)
    out, err = good.communicate(timeout=600)
    assert good.returncode == 0, err
    good_version = json.loads(out)["data"]["published_version"]
    good_files = {r["file_path"] for r in table_rows(paths, good_version)}

    write_project(project, n_files, "v2", SAFETY_FUNCS)  # every file changes: several batches
    run = cli("index", str(project), "--json", env=env)
    wait_mid_run(run, paths.state_db, good_version)
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=30)  # reaps it and closes both pipes
    assert run.returncode == -signal.SIGKILL

    # The index still opens at its published version; every file is there, each either old or new,
    # and the SQLite mirror agrees row for row.
    status, version = published(paths.state_db)
    rows = table_rows(paths, version)
    assert {r["file_path"] for r in rows} == good_files
    assert {r["chunk_id"] for r in rows} == mirror_ids(paths.state_db)
    texts = [r["text"] for r in rows]
    assert any("(v1)" in t for t in texts) and any("(v2)" in t for t in texts)

    again = cli("index", str(project), "--json", env=env)
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    summary = json.loads(out)["data"]
    assert 0 < summary["files_parsed"] < n_files  # only what the killed run had not published
    final = table_rows(paths, summary["published_version"])
    assert len(final) == n_files * SAFETY_FUNCS and all("(v2)" in r["text"] for r in final)
    assert published(paths.state_db)[0] == "ready"
