"""The indexing job manager behind start_indexing: real pipeline, real ONNX model, real SQLite/LanceDB."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from local_memory_indexer.jobs import JobManager
from local_memory_indexer.pipeline import writer_lock
from local_memory_indexer.state_db import open_state_rw
from local_memory_shared.config import load_settings
from local_memory_shared.errors import IndexLocked, InvalidArgument, NotFound
from local_memory_shared.paths import project_paths
from local_memory_shared.state import open_state_ro

SMALL = {
    "pkg/db.py": '''
        """Database access."""

        def connect(url, retries=3):
            """Open a connection, retrying on failure."""
            for attempt in range(retries):
                try:
                    return open_socket(url)
                except OSError:
                    continue
            raise ConnectionError(url)

        def open_socket(url):
            return ("socket", url)
        ''',
    "pkg/main.py": """
        from pkg.db import connect

        def main():
            conn = connect("db://local")
            return conn
        """,
    "README.md": """
        # Demo

        A tiny project for the job manager tests.
        """,
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def _many_functions(root: Path, files: int = 20, per_file: int = 10) -> Path:
    """A project big enough that embedding takes a few seconds (to watch and cancel it)."""
    for f in range(files):
        body = []
        for i in range(per_file):
            body.append(
                f"def handler_{f}_{i}(request, retries={i}):\n"
                f'    """Handle request kind {f}-{i}: validate, look up account {i}, answer."""\n'
                f"    value = request.get('field_{i}', {i})\n"
                f"    return {{'kind': '{f}-{i}', 'value': value, 'retries': retries}}\n"
            )
        (root / "svc").mkdir(parents=True, exist_ok=True)
        (root / "svc" / f"module_{f}.py").write_text("\n\n".join(body))
    return root


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory):
    return dataclasses.replace(load_settings(), data_root=tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def small_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write(tmp_path_factory.mktemp("small"), SMALL)


@pytest.fixture(scope="module")
def finished_job(settings, small_project):
    """One completed job on the small project, plus its manager."""
    manager = JobManager(settings)
    t0 = time.monotonic()
    snap, started = manager.start(small_project)
    returned_after = time.monotonic() - t0
    again, started_again = manager.start(str(small_project) + "/")  # same project, other spelling
    final = manager.wait(snap.job_id, timeout=180)
    return manager, snap, started, returned_after, again, started_again, final


def test_start_returns_at_once_and_the_job_completes(finished_job, small_project):
    _, snap, started, returned_after, _, _, final = finished_job
    assert started is True
    assert returned_after < 2.0, "start() must not index in the caller's thread"
    assert snap.status == "running" and snap.project_path == str(small_project.resolve())
    assert final.status == "done" and final.phase == "done"
    assert final.files_total == final.files_done == 3
    assert final.chunks_embedded >= 3
    assert final.progress == 1.0 and final.eta_seconds == 0.0
    assert final.elapsed_seconds > 0 and final.finished_at is not None
    assert final.errors == ()
    assert final.summary is not None and final.summary["chunks_total"] >= 3 and not final.summary["cancelled"]


def test_a_second_start_returns_the_running_job_not_a_second_writer(finished_job, settings, small_project):
    _, snap, _, _, again, started_again, _ = finished_job
    assert started_again is False
    assert again.job_id == snap.job_id
    conn = open_state_ro(project_paths(settings.data_root, small_project).state_db)
    try:
        rows = conn.execute("SELECT job_id FROM jobs").fetchall()
    finally:
        conn.close()
    assert [r["job_id"] for r in rows] == [snap.job_id]


def test_progress_is_persisted_in_the_jobs_table(finished_job, settings, small_project):
    _, snap, _, _, _, _, final = finished_job
    conn = open_state_ro(project_paths(settings.data_root, small_project).state_db)
    try:
        row = conn.execute("SELECT * FROM jobs WHERE job_id = ?", (snap.job_id,)).fetchone()
    finally:
        conn.close()
    assert row["status"] == "done" and row["phase"] == "done"
    assert (row["files_done"], row["files_total"]) == (3, 3)
    assert row["chunks_embedded"] == final.chunks_embedded
    assert row["finished_at"] is not None
    assert json.loads(row["summary"])["summary"]["chunks_total"] == final.summary["chunks_total"]


def test_status_survives_the_manager_through_the_state_db(finished_job, settings, small_project):
    _, snap, _, _, _, _, final = finished_job
    fresh = JobManager(settings)  # a restarted server knows nothing in memory
    by_project = fresh.status(project_path=str(small_project))
    by_id = fresh.status(job_id=snap.job_id)
    for got in (by_project, by_id):
        assert got.source == "state_db"
        assert got.job_id == snap.job_id and got.status == "done"
        assert got.chunks_embedded == final.chunks_embedded


def test_status_argument_errors(settings, small_project):
    manager = JobManager(settings)
    with pytest.raises(InvalidArgument) as err:
        manager.status()
    assert err.value.field == "job_id"
    with pytest.raises(NotFound):
        manager.status(job_id="no-such-job")


def test_index_locked_by_another_writer_is_refused_up_front(settings, tmp_path):
    project = _write(tmp_path / "locked", SMALL)
    paths = project_paths(settings.data_root, project)
    manager = JobManager(settings)
    with writer_lock(paths):  # e.g. a CLI `local-memory-indexer index` holding the project
        with pytest.raises(IndexLocked):
            manager.start(project)
    snap, started = manager.start(project)  # free again
    assert started
    manager.cancel(job_id=snap.job_id, wait=60)
    assert manager.wait(snap.job_id, timeout=60).status in {"cancelled", "done"}


def test_a_running_job_reports_eta_and_can_be_cancelled(settings, tmp_path):
    project = _many_functions(tmp_path / "big")
    manager = JobManager(settings)
    snap, _ = manager.start(project)
    seen_eta = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        cur = manager.status(job_id=snap.job_id)
        assert cur.status == "running", f"job ended before it could be cancelled: {cur}"
        if cur.phase == "embed" and cur.chunks_embedded > 0 and cur.eta_seconds is not None:
            seen_eta = cur
            break
        time.sleep(0.02)
    assert seen_eta is not None, "never saw an embedding job with an ETA"
    assert seen_eta.files_total == 20 and 0 < seen_eta.progress < 1 and seen_eta.eta_seconds > 0

    cancelled, was_running = manager.cancel(project_path=str(project), wait=60)
    assert was_running and cancelled.cancel_requested
    final = manager.wait(snap.job_id, timeout=60)
    assert final.status == "cancelled" and final.summary["cancelled"] is True
    assert final.chunks_embedded < 200, "cancel must stop the embedding early"

    _, was_running = manager.cancel(job_id=snap.job_id)
    assert was_running is False  # cancelling a finished job is a no-op

    # The project lock is free again: a new job starts (and is stopped to keep the test short).
    again, started = manager.start(project)
    assert started and again.job_id != snap.job_id
    manager.shutdown(timeout=60)
    assert manager.status(job_id=again.job_id).status in {"cancelled", "done"}


def test_a_running_row_left_by_a_dead_process_reads_as_interrupted(settings, tmp_path):
    project = _write(tmp_path / "crashed", SMALL)
    paths = project_paths(settings.data_root, project)
    dead = subprocess.Popen(["true"])
    dead.wait()
    conn = open_state_rw(paths.state_db)
    try:
        conn.execute(
            "INSERT INTO jobs(job_id, project_path, status, phase, files_total, files_done, started_at, updated_at, pid) "
            "VALUES ('deadbeef', ?, 'running', 'embed', 10, 4, '2026-01-01T00:00:00Z', '2026-01-01T00:00:09Z', ?)",
            (str(paths.project_path), dead.pid),
        )
    finally:
        conn.close()
    got = JobManager(settings).status(project_path=str(project))
    assert got.job_id == "deadbeef" and got.status == "failed"
    assert any(e.startswith("INTERRUPTED") for e in got.errors)
    assert got.elapsed_seconds == 9.0 and got.progress == 0.4


def test_progress_follows_the_embedding_phase_once_every_row_is_published(tmp_path) -> None:
    from local_memory_indexer.jobs import _Job
    from local_memory_shared.paths import project_paths

    job = _Job("j1", project_paths(tmp_path / "data", tmp_path), full=False)
    job.files_(40, 40)  # phase 1 done: rows and FTS published, no vector yet
    job.chunks_(0, 120)
    assert job.snapshot().progress == 0.0
    job.chunks_(30, 120)
    assert job.snapshot().progress == 0.25
    job.chunks_(120, 120)
    assert job.snapshot().progress == 1.0


def test_a_job_with_a_recorded_outcome_is_not_running_while_its_last_row_is_written(
    settings, small_project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job thread records its outcome, then writes its final row: in between, nothing may call it
    running (list_projects, delete_project_index), and a new start waits for it instead of answering
    'already running' with a finished job."""
    import threading

    from local_memory_indexer import jobs as jobs_module

    real_write, release, writing = jobs_module._write_row, threading.Event(), threading.Event()

    def slow_final_write(job, *, insert=False, close=False):  # noqa: ANN001 - the real signature
        if close and not release.is_set():
            writing.set()
            release.wait(60)
        return real_write(job, insert=insert, close=close)

    monkeypatch.setattr(jobs_module, "_write_row", slow_final_write)
    manager = JobManager(settings)
    snap, started = manager.start(small_project)
    assert started
    assert writing.wait(180), "the job never reached its final write"
    key = str(project_paths(settings.data_root, small_project).project_path)
    assert manager.status(job_id=snap.job_id).status == "done"
    assert manager.running_job_for(key) is None
    threading.Timer(0.5, release.set).start()
    again, started_again = manager.start(small_project)  # waits for the old thread, then starts
    assert started_again and again.job_id != snap.job_id
    assert manager.wait(again.job_id, timeout=180).status == "done"
