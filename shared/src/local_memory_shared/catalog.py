"""The catalogue of indexed projects and their indexing jobs, read strictly read-only.

One owner for "which projects are under the data root, how big, how fresh, and what is the indexer
doing now": the indexer's ``list_projects`` tool and the searcher's status monitor both read it here.
Every connection is opened with :func:`local_memory_shared.state.open_state_ro`, so reading the
catalogue never writes a file.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .paths import iter_project_dirs
from .state_reader import open_state_ro, pid_alive, read_pending_vectors

#: Job states the indexer writes to the ``jobs`` table.
RUNNING = "running"


@dataclass(frozen=True)
class JobProgress:
    """One indexing job as the indexer last published it, with derived rate and ETA."""

    job_id: str
    project_path: str
    status: str
    phase: str
    files_done: int
    files_total: int
    chunks_embedded: int
    chunks_total: int
    started_at: str
    updated_at: str
    finished_at: str | None
    alive: bool
    progress: float
    chunks_per_second: float | None
    eta_seconds: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def list_projects(data_root: Path) -> list[dict[str, Any]]:
    """Every indexed project with file and chunk counts, model, dimension and last indexed time."""
    out: list[dict[str, Any]] = []
    for folder in iter_project_dirs(data_root):
        out.extend(_read_project(folder / "state.db"))
    return sorted(out, key=lambda p: p["project_path"])


#: A writer closing its connection checkpoints and removes the WAL; a reader opening at that instant
#: can see a transient error. A few short retries separate that from a really unreadable project.
READ_ATTEMPTS = 4
RETRY_SECONDS = 0.05


def _read_project(state_db: Path) -> list[dict[str, Any]]:
    """The project rows of one state DB; an unreadable project yields none (it must not hide the others)."""
    for attempt in range(READ_ATTEMPTS):
        try:
            conn = open_state_ro(state_db)
        except Exception:
            time.sleep(RETRY_SECONDS * (attempt + 1))
            continue
        try:
            return _project_rows(conn)
        except sqlite3.Error:
            time.sleep(RETRY_SECONDS * (attempt + 1))
        finally:
            conn.close()
    return []


def _project_rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = []
    files = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
    chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    pending = read_pending_vectors(conn)
    for proj in conn.execute("SELECT * FROM projects").fetchall():
        meta = conn.execute(
            "SELECT backend, model, dimension, schema_version FROM index_meta WHERE project_path = ?",
            (proj["project_path"],),
        ).fetchone()
        rows.append(
            {
                "project_path": proj["project_path"],
                "key": proj["key"],
                "status": proj["status"],
                "files": files,
                "chunks": chunks,
                "chunks_pending_vectors": pending,
                "semantic_coverage": round(1.0 - pending / chunks, 4) if chunks else 1.0,
                "backend": meta["backend"] if meta else None,
                "model": meta["model"] if meta else None,
                "dimension": meta["dimension"] if meta else None,
                "schema_version": meta["schema_version"] if meta else None,
                "last_indexed_at": proj["last_indexed_at"],
                "published_version": proj["published_version"],
                "exists_on_disk": Path(proj["project_path"]).is_dir(),
            }
        )
    return rows


def list_jobs(data_root: Path, *, project_path: str | None = None, limit: int = 20) -> list[JobProgress]:
    """The newest indexing jobs (running first), across projects or for one project."""
    jobs: list[JobProgress] = []
    for folder in iter_project_dirs(data_root):
        try:
            conn = open_state_ro(folder / "state.db")
        except Exception:
            continue
        try:
            sql = "SELECT * FROM jobs"
            args: tuple[str, ...] = ()
            if project_path is not None:
                sql, args = sql + " WHERE project_path = ?", (project_path,)
            rows = conn.execute(sql + " ORDER BY started_at DESC LIMIT ?", (*args, limit)).fetchall()
            jobs.extend(job_progress(dict(r)) for r in rows)
        except sqlite3.Error:
            continue
        finally:
            conn.close()
    jobs.sort(key=lambda j: (j.status != RUNNING or not j.alive, _neg_time(j.started_at)))
    return jobs[:limit]


def job_progress(row: dict[str, Any], *, now: datetime | None = None) -> JobProgress:
    """Derive progress, rate and ETA from one ``jobs`` row (pure: tested without an indexer)."""
    now = now or datetime.now(UTC)
    files_done, files_total = int(row.get("files_done") or 0), int(row.get("files_total") or 0)
    embedded, chunks_total = int(row.get("chunks_embedded") or 0), int(row.get("chunks_total") or 0)
    status = str(row.get("status") or "")
    alive = status == RUNNING and pid_alive(row.get("pid"))
    end = _parse_time(row.get("finished_at")) or (now if alive else _parse_time(row.get("updated_at")))
    start = _parse_time(row.get("started_at"))
    elapsed = (end - start).total_seconds() if (end and start) else 0.0
    rate = embedded / elapsed if elapsed > 0 and embedded > 0 else None
    eta = (chunks_total - embedded) / rate if (rate and alive and chunks_total > embedded) else None
    if status != RUNNING:
        progress = 1.0 if status == "done" else (files_done / files_total if files_total else 0.0)
    else:
        progress = files_done / files_total if files_total else 0.0
    return JobProgress(
        job_id=str(row.get("job_id")),
        project_path=str(row.get("project_path")),
        status=status,
        phase=str(row.get("phase") or ""),
        files_done=files_done,
        files_total=files_total,
        chunks_embedded=embedded,
        chunks_total=chunks_total,
        started_at=str(row.get("started_at") or ""),
        updated_at=str(row.get("updated_at") or ""),
        finished_at=row.get("finished_at"),
        alive=alive,
        progress=round(min(max(progress, 0.0), 1.0), 4),
        chunks_per_second=round(rate, 2) if rate else None,
        eta_seconds=round(eta, 1) if eta is not None else None,
    )


def job_errors(row: dict[str, Any]) -> list[str]:
    """The JSON ``errors`` column of a job row as a list (malformed text is returned as one entry)."""
    raw = row.get("errors") or "[]"
    try:
        value = json.loads(raw)
    except ValueError:
        return [str(raw)]
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _neg_time(value: str) -> float:
    parsed = _parse_time(value)
    return -parsed.timestamp() if parsed else 0.0
