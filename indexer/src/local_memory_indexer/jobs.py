"""Background indexing jobs for the indexer's MCP server.

One thread per job runs :func:`local_memory_indexer.indexing.index_project`; its progress is
kept in memory (what ``indexing_status`` answers first) and written to the project's ``jobs``
table at most about twice a second by a small flusher thread, so a status survives the server
and the pipeline never waits on a status write. One project never has two running jobs in this
process: a second ``start`` answers the running job. Another process holding the writer lock
is reported as ``INDEX_LOCKED`` up front.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from local_memory_shared.config import Settings, load_settings
from local_memory_shared.errors import InvalidArgument, LocalMemoryError, NotFound, StoreError
from local_memory_shared.paths import ProjectPaths, iter_project_dirs, project_paths
from local_memory_shared.state import open_state_ro, utc_now
from local_memory_shared.state_reader import pid_alive

from .state_db import open_state_rw

log = logging.getLogger(__name__)

#: Minimum seconds between two writes of one job's row (the in-memory state is always current).
FLUSH_INTERVAL = 0.5
#: Files per pipeline batch, used only to spread the embedding progress of a batch over files.
_BATCH_FILES_HINT = 200

RUNNING, DONE, FAILED, CANCELLED = "running", "done", "failed", "cancelled"
FINISHED = frozenset({DONE, FAILED, CANCELLED})

#: The indexing entry point: ``index_project(path, settings=, full=, progress=, cancel=) -> IndexSummary``.
IndexFn = Callable[..., Any]


@dataclass(frozen=True)
class JobSnapshot:
    """What ``indexing_status`` reports about one job at one moment."""

    job_id: str
    project_path: str
    status: str  # running | done | failed | cancelled
    phase: str  # queued | check | walk | parse | graph | embed | write | index | done | failed | cancelled
    full: bool
    files_done: int
    files_total: int
    chunks_embedded: int
    chunks_total: int
    started_at: str
    updated_at: str
    finished_at: str | None
    elapsed_seconds: float
    eta_seconds: float | None
    progress: float  # 0..1, best estimate
    cancel_requested: bool
    errors: tuple[str, ...]
    summary: dict[str, Any] | None
    source: str  # "memory" (this server runs it) | "state_db" (recorded by an earlier/other process)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        out = asdict(self)
        out["errors"] = list(self.errors)
        return out


class _Job:
    """Mutable state of one running job; every access holds ``lock``."""

    def __init__(self, job_id: str, paths: ProjectPaths, full: bool):
        self.job_id = job_id
        self.paths = paths
        self.project_path = str(paths.project_path)
        self.full = full
        self.lock = threading.Lock()
        self.cancel = threading.Event()
        self.finished = threading.Event()
        self.stop_flush = threading.Event()
        self.status = RUNNING
        self.phase = "queued"
        self.files_done = 0
        self.files_total = 0
        self.chunks_embedded = 0
        self.chunks_total = 0
        self.started_at = utc_now()
        self.started_mono = time.monotonic()
        self.work_started_mono: float | None = None
        self.finished_mono: float | None = None
        self.finished_at: str | None = None
        self.updated_at = self.started_at
        self.errors: list[str] = []
        self.summary: dict[str, Any] | None = None
        self.batch_base_embedded = 0  # chunks embedded when the current batch began
        self.dirty = True
        self.thread: threading.Thread | None = None
        self.conn: sqlite3.Connection | None = None  # the jobs-table writer, see _write_row

    # -- ProgressSink (called from the pipeline thread) -----------------------------------------
    def phase_(self, name: str) -> None:
        with self.lock:
            self.phase = name
            self._touch()

    def files_(self, done: int, total: int) -> None:
        with self.lock:
            if self.work_started_mono is None:
                self.work_started_mono = time.monotonic()
            self.files_done, self.files_total = done, total
            self.batch_base_embedded = self.chunks_embedded
            self._touch()

    def chunks_(self, embedded: int, total: int) -> None:
        with self.lock:
            self.chunks_embedded, self.chunks_total = embedded, total
            self._touch()

    def _touch(self) -> None:
        self.updated_at = utc_now()
        self.dirty = True

    # -- reporting ------------------------------------------------------------------------------
    def _fraction(self) -> float:
        if self.status == DONE:
            return 1.0
        if self.files_total <= 0:
            return 0.0
        if self.files_done >= self.files_total and 0 <= self.chunks_embedded < self.chunks_total:
            # Every row is published; the run is embedding them (``pipeline._embed_pending``).
            return min(0.99, self.chunks_embedded / self.chunks_total)
        # Files advance a batch at a time; inside a batch, embedding progress says how far it is.
        in_batch = min(_BATCH_FILES_HINT, self.files_total - self.files_done)
        batch_chunks = self.chunks_total - self.batch_base_embedded
        batch_frac = (
            (self.chunks_embedded - self.batch_base_embedded) / batch_chunks if batch_chunks > 0 else 0.0
        )
        return max(
            0.0, min(1.0, (self.files_done + in_batch * max(0.0, min(1.0, batch_frac))) / self.files_total)
        )

    def snapshot(self) -> JobSnapshot:
        with self.lock:
            now = time.monotonic()
            end = self.finished_mono if self.finished_mono is not None else now
            fraction = self._fraction()
            eta: float | None = None
            if self.status == RUNNING and self.work_started_mono is not None and fraction >= 0.01:
                worked = now - self.work_started_mono
                eta = round(worked * (1.0 - fraction) / fraction, 1)
            elif self.status in FINISHED:
                eta = 0.0
            return JobSnapshot(
                job_id=self.job_id,
                project_path=self.project_path,
                status=self.status,
                phase=self.phase,
                full=self.full,
                files_done=self.files_done,
                files_total=self.files_total,
                chunks_embedded=self.chunks_embedded,
                chunks_total=self.chunks_total,
                started_at=self.started_at,
                updated_at=self.updated_at,
                finished_at=self.finished_at,
                elapsed_seconds=round(end - self.started_mono, 2),
                eta_seconds=eta,
                progress=round(fraction, 4),
                cancel_requested=self.cancel.is_set(),
                errors=tuple(self.errors),
                summary=self.summary,
                source="memory",
            )


class _Sink:
    """The pipeline's ProgressSink protocol, forwarding to a job."""

    def __init__(self, job: _Job):
        self._job = job

    def phase(self, name: str) -> None:
        self._job.phase_(name)

    def files(self, done: int, total: int) -> None:
        self._job.files_(done, total)

    def chunks(self, embedded: int, total: int) -> None:
        self._job.chunks_(embedded, total)


class JobManager:
    """Starts, tracks and cancels indexing jobs; one running job per project."""

    def __init__(self, settings: Settings | None = None, index_fn: IndexFn | None = None):
        self._settings = settings
        self._index_fn = index_fn
        self._lock = threading.Lock()
        self._jobs: dict[str, _Job] = {}
        self._running_by_project: dict[str, _Job] = {}

    @property
    def settings(self) -> Settings:
        """The settings given at construction, else the environment now."""
        return self._settings or load_settings()

    # -- commands -------------------------------------------------------------------------------
    def start(self, project_path: str | Path, *, full: bool = False) -> tuple[JobSnapshot, bool]:
        """Start indexing ``project_path`` in the background; returns (job, started_now)."""
        paths = project_paths(self.settings.data_root, project_path)
        key = str(paths.project_path)
        while True:
            with self._lock:
                running = self._running_by_project.get(key)
                if running is None:
                    break
                snap = running.snapshot()
                if snap.status == RUNNING:
                    return snap, False
            # Its outcome is recorded and its thread is only writing the final row: wait, then start.
            running.finished.wait(30)
        with self._lock:
            if key in self._running_by_project:  # another caller started one meanwhile
                return self._running_by_project[key].snapshot(), False
            _ensure_unlocked(paths)
            job = _Job(uuid.uuid4().hex[:16], paths, full)
            self._jobs[job.job_id] = job
            self._running_by_project[key] = job
        _write_row(job, insert=True)
        job.thread = threading.Thread(target=self._run, args=(job,), name=f"index-{job.job_id}", daemon=True)
        job.thread.start()
        log.info("job %s: indexing %s (full=%s)", job.job_id, key, full)
        return job.snapshot(), True

    def status(self, *, job_id: str | None = None, project_path: str | None = None) -> JobSnapshot:
        """The job by id, or the latest job of a project (this process first, then the state DB)."""
        job = self._find(job_id=job_id, project_path=project_path)
        if job is not None:
            return job.snapshot()
        if job_id:
            found = self._stored_job(job_id=job_id)
        else:
            found = self._stored_job(project_path=project_path)
        if found is None:
            what = f"job {job_id!r}" if job_id else f"an indexing job for {project_path}"
            raise NotFound(f"no record of {what}", field="job_id" if job_id else "project_path")
        return found

    def cancel(
        self, *, job_id: str | None = None, project_path: str | None = None, wait: float = 0.0
    ) -> tuple[JobSnapshot, bool]:
        """Ask a running job to stop at its next checkpoint; returns (job, was_running)."""
        job = self._find(job_id=job_id, project_path=project_path)
        if job is None:
            return self.status(job_id=job_id, project_path=project_path), False
        was_running = not job.finished.is_set()
        if was_running:
            job.cancel.set()
            job.finished.wait(wait)
        return job.snapshot(), was_running

    def running_job_for(self, project_path: str) -> JobSnapshot | None:
        """The job this process is running for a resolved project path, if any."""
        with self._lock:
            job = self._running_by_project.get(project_path)
        snap = job.snapshot() if job is not None else None
        # A job whose outcome is recorded is not running, even while its thread writes the last row.
        return snap if snap is not None and snap.status == RUNNING else None

    def wait(self, job_id: str, timeout: float | None = None) -> JobSnapshot:
        """Block until a job of this process finishes (or ``timeout``); returns its state."""
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise NotFound(f"no job {job_id!r} in this process", field="job_id")
        job.finished.wait(timeout)
        return job.snapshot()

    def shutdown(self, timeout: float = 10.0) -> None:
        """Cancel every running job and wait for their threads (server exit)."""
        with self._lock:
            jobs = list(self._running_by_project.values())
        for job in jobs:
            job.cancel.set()
        deadline = time.monotonic() + timeout
        for job in jobs:
            job.finished.wait(max(0.0, deadline - time.monotonic()))

    # -- internals ------------------------------------------------------------------------------
    def _find(self, *, job_id: str | None, project_path: str | None) -> _Job | None:
        if not job_id and not project_path:
            raise InvalidArgument("give job_id or project_path", field="job_id")
        with self._lock:
            if job_id:
                return self._jobs.get(job_id)
            key = str(project_paths(self.settings.data_root, str(project_path)).project_path)
            mine = [j for j in self._jobs.values() if j.project_path == key]
        return max(mine, key=lambda j: j.started_mono) if mine else None

    def _run(self, job: _Job) -> None:
        flusher = threading.Thread(
            target=_flush_loop, args=(job,), name=f"jobflush-{job.job_id}", daemon=True
        )
        flusher.start()
        try:
            index_fn = self._index_fn or _pipeline_index_fn()
            summary = index_fn(
                job.project_path,
                settings=self.settings,
                full=job.full,
                progress=_Sink(job),
                cancel=job.cancel,
            )
            data = summary.to_dict() if hasattr(summary, "to_dict") else dict(summary)
            with job.lock:
                job.summary = data
                job.errors.extend(str(e) for e in data.get("errors", ()))
                cancelled = bool(data.get("cancelled"))
                job.status = CANCELLED if cancelled else DONE
                job.phase = job.status
        except LocalMemoryError as exc:
            log.warning("job %s failed: [%s] %s", job.job_id, exc.code, exc.message)
            with job.lock:
                job.errors.append(f"{exc.code}: {exc.message}")
                job.status = job.phase = FAILED
        except Exception as exc:  # a job thread must record every failure, never die silently
            log.exception("job %s crashed", job.job_id)
            with job.lock:
                job.errors.append(f"INTERNAL: {type(exc).__name__}: {exc}")
                job.status = job.phase = FAILED
        finally:
            with job.lock:
                job.finished_at = utc_now()
                job.finished_mono = time.monotonic()
                job._touch()
            job.stop_flush.set()
            flusher.join(timeout=5)
            # The final row is written before anyone is told the job finished, so a waiter
            # reads it from the state DB too.
            _write_row(job, close=True)
            with self._lock:
                if self._running_by_project.get(job.project_path) is job:
                    del self._running_by_project[job.project_path]
            job.finished.set()
            log.info("job %s: %s after %.1fs", job.job_id, job.status, job.finished_mono - job.started_mono)

    def _stored_job(
        self, *, job_id: str | None = None, project_path: str | None = None
    ) -> JobSnapshot | None:
        if project_path:
            folders = [project_paths(self.settings.data_root, project_path).dir]
        else:
            folders = iter_project_dirs(self.settings.data_root)
        best: sqlite3.Row | None = None
        for folder in folders:
            db = folder / "state.db"
            if not db.is_file():
                continue
            try:
                conn = open_state_ro(db)
            except LocalMemoryError:
                continue
            try:
                if job_id:
                    row = conn.execute("SELECT * FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
                else:
                    row = conn.execute(
                        "SELECT * FROM jobs ORDER BY started_at DESC, rowid DESC LIMIT 1"
                    ).fetchone()
            except sqlite3.Error:
                row = None
            finally:
                conn.close()
            if row is not None and (best is None or row["started_at"] > best["started_at"]):
                best = row
            if row is not None and job_id:
                break
        return _snapshot_from_row(best) if best is not None else None


def _pipeline_index_fn() -> IndexFn:
    # Imported on first use: the pipeline pulls in LanceDB and the models, and the server
    # should answer tools/list without waiting for them.
    from .indexing import index_project

    return index_project


def _ensure_unlocked(paths: ProjectPaths) -> None:
    """Fail fast with INDEX_LOCKED when another process (a CLI run) is writing this project."""
    if not paths.lock_file.exists():
        return
    from .plan import writer_lock

    with writer_lock(paths):
        pass


def _flush_loop(job: _Job) -> None:
    while not job.stop_flush.wait(FLUSH_INTERVAL):
        if job.dirty:
            _write_row(job)


def _write_row(job: _Job, *, insert: bool = False, close: bool = False) -> None:
    """Persist a job's state; a failed status write is logged, never fatal for the job.

    Callers are serialised (insert before the threads start, the flusher, then the final write
    after the flusher stopped), so the job's one connection is never used concurrently.
    """
    snap = job.snapshot()
    with job.lock:
        job.dirty = False
    if job.conn is None:
        if not insert:
            return  # never re-create a state DB that was deleted after the job's first write
        try:
            job.conn = open_state_rw(job.paths.state_db)
        except StoreError as exc:
            log.warning("job %s: cannot record status: %s", job.job_id, exc)
            return
    conn = job.conn
    try:
        values = (
            snap.status, snap.phase, snap.files_total, snap.files_done, snap.chunks_total, snap.chunks_embedded,
            snap.updated_at, snap.finished_at, json.dumps(list(snap.errors)),
            json.dumps({"full": snap.full, "summary": snap.summary}), snap.job_id,
        )  # fmt: skip
        if insert:
            conn.execute(
                "INSERT INTO jobs(job_id, project_path, status, phase, started_at, updated_at, pid) VALUES (?,?,?,?,?,?,?)",
                (
                    snap.job_id,
                    snap.project_path,
                    snap.status,
                    snap.phase,
                    snap.started_at,
                    snap.updated_at,
                    os.getpid(),
                ),
            )
        conn.execute(
            "UPDATE jobs SET status=?, phase=?, files_total=?, files_done=?, chunks_total=?, chunks_embedded=?, "
            "updated_at=?, finished_at=?, errors=?, summary=? WHERE job_id=?",
            values,
        )
    except sqlite3.Error as exc:
        log.warning("job %s: cannot record status: %s", job.job_id, exc)
    finally:
        if close:
            conn.close()
            job.conn = None


def _pid_alive(pid: int | None) -> bool:
    return pid == os.getpid() or pid_alive(pid)


def _snapshot_from_row(row: sqlite3.Row) -> JobSnapshot:
    """A job recorded in a state DB; 'running' rows whose process is gone are reported failed."""
    status = row["status"]
    errors = list(json.loads(row["errors"] or "[]"))
    extra = json.loads(row["summary"]) if row["summary"] else {}
    # A row still 'running' can only be live in this process (then it was in memory) or in another one.
    if status == RUNNING and (row["pid"] == os.getpid() or not _pid_alive(row["pid"])):
        status = FAILED
        errors.append("INTERRUPTED: the indexer process that ran this job exited before it finished")
    files_total, files_done = row["files_total"], row["files_done"]
    return JobSnapshot(
        job_id=row["job_id"],
        project_path=row["project_path"],
        status=status,
        phase=row["phase"] if status == row["status"] else status,
        full=bool(extra.get("full", False)),
        files_done=files_done,
        files_total=files_total,
        chunks_embedded=row["chunks_embedded"],
        chunks_total=row["chunks_total"],
        started_at=row["started_at"],
        updated_at=row["updated_at"],
        finished_at=row["finished_at"],
        elapsed_seconds=_seconds_between(row["started_at"], row["finished_at"] or row["updated_at"]),
        eta_seconds=0.0 if status in FINISHED else None,
        progress=1.0 if status == DONE else (round(files_done / files_total, 4) if files_total else 0.0),
        cancel_requested=status == CANCELLED,
        errors=tuple(errors),
        summary=extra.get("summary"),
        source="state_db",
    )


def _seconds_between(start: str, end: str) -> float:
    from datetime import datetime

    try:
        fmt = "%Y-%m-%dT%H:%M:%SZ"
        return max(0.0, (datetime.strptime(end, fmt) - datetime.strptime(start, fmt)).total_seconds())
    except (TypeError, ValueError):
        return 0.0
