"""Read-only access to a project's state DB: the one place both packages read shared state from.

Readers never write a byte next to the DB, not even SQLite's shared-memory file:

* no ``-wal`` file: no writer is connected and the DB is fully checkpointed, so it is opened
  ``immutable=1`` (keep such connections short-lived: one tool call);
* a ``-wal`` file (a writer is running, or one was killed): ``mode=ro&readonly_shm=1`` maps the
  existing ``-shm`` read-only, so a reader after a SIGKILLed writer reads the committed WAL
  frames without recovering the index into ``-shm``;
* a ``-wal`` without its ``-shm`` (someone deleted it by hand): plain ``mode=ro``, which has
  to create the ``-shm``. It is the only case where a reader creates a file.

Writer liveness comes from the writer itself: the indexer holds an exclusive ``flock`` on
``writer.lock`` for the whole run, and the kernel drops it when the process dies, so
``writer_alive`` asks the kernel (``/proc/locks``), never a status column a killed run left behind.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import NotIndexed, StoreError

#: Kernel table of file locks (Linux). Elsewhere liveness falls back to the job row's pid.
PROC_LOCKS = Path("/proc/locks")


def state_uri(path: Path) -> str:
    """The read-only SQLite URI for ``path`` (see the module docstring for the three cases)."""
    wal = path.with_name(path.name + "-wal")
    shm = path.with_name(path.name + "-shm")
    if not wal.exists():
        return f"file:{path}?mode=ro&immutable=1"
    if shm.exists():
        return f"file:{path}?mode=ro&readonly_shm=1"
    return f"file:{path}?mode=ro"


#: A writer checkpointing (and removing its WAL) while a reader opens can fail that one open; a few
#: short retries tell that apart from a really unreadable state DB.
OPEN_ATTEMPTS = 4
OPEN_RETRY_SECONDS = 0.05


def open_state_ro(path: Path, uri: str | None = None) -> sqlite3.Connection:
    """Open the state DB strictly read-only (URI ``mode=ro`` + ``PRAGMA query_only``), writing nothing.

    ``uri``: one :func:`state_uri` already chose for ``path`` (a caller that keys connections by it).
    """
    if not path.is_file():
        raise NotIndexed(f"no index state at {path}")
    for attempt in range(OPEN_ATTEMPTS):
        try:
            conn = sqlite3.connect(
                uri or state_uri(path), uri=True, timeout=30, check_same_thread=False, isolation_level=None
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA query_only = ON")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the open really works
            return conn
        except sqlite3.Error as exc:
            if attempt == OPEN_ATTEMPTS - 1:
                raise StoreError(f"cannot open state DB {path} read-only: {exc}") from exc
            time.sleep(OPEN_RETRY_SECONDS * (attempt + 1))
    raise StoreError(f"cannot open state DB {path} read-only")  # unreachable: the loop returns or raises


def pid_alive(pid: object) -> bool:
    """True when ``pid`` names a live process (signal 0; a process we may not signal counts as alive)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def writer_alive(lock_file: Path) -> bool | None:
    """True when a live process holds the writer ``flock`` on ``lock_file``; None when unknowable."""
    try:
        st = lock_file.stat()
    except OSError:
        return False  # no lock file: no writer ever ran here
    try:
        table = PROC_LOCKS.read_text()
    except OSError:
        return None
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 00:2f:5678 0 EOF" ("->" marks a waiter)
        if "FLOCK" in parts and parts[-3] == wanted:
            return True
    return False


@dataclass(frozen=True)
class IndexMeta:
    """Provenance of an index: what produced its vectors."""

    backend: str
    model: str
    dimension: int
    schema_version: int
    created_at: str
    updated_at: str


def read_index_meta(conn: sqlite3.Connection, project_path: str) -> IndexMeta | None:
    """The provenance row for ``project_path``, or None when none was recorded."""
    try:
        row = conn.execute(
            "SELECT backend, model, dimension, schema_version, created_at, updated_at "
            "FROM index_meta WHERE project_path = ?",
            (project_path,),
        ).fetchone()
    except sqlite3.OperationalError:
        return None
    if row is None:
        return None
    return IndexMeta(**dict(row))


@dataclass(frozen=True)
class ProjectRow:
    """The ``projects`` row: publication state of the index."""

    project_path: str
    key: str
    created_at: str
    last_indexed_at: str | None
    last_commit_hash: str | None
    published_version: int | None
    status: str
    #: The LanceDB folder (in the project dir) that ``published_version`` belongs to.
    lance_dir: str = "lance"


def read_pending_vectors(conn: sqlite3.Connection) -> int:
    """Chunks published without their vectors yet (keyword-searchable, not yet semantically).

    A first index publishes every row and the full-text index before it embeds; the embedding
    phase then clears ``files.vectors_pending`` batch by batch (``pipeline`` in the indexer).
    """
    try:
        row = conn.execute(
            "SELECT COALESCE(SUM(chunk_count), 0) FROM files WHERE vectors_pending = 1"
        ).fetchone()
    except sqlite3.OperationalError:
        return 0
    return int(row[0])


def read_project_row(conn: sqlite3.Connection, project_path: str) -> ProjectRow | None:
    """The project's row, or None."""
    try:
        row = conn.execute("SELECT * FROM projects WHERE project_path = ?", (project_path,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return ProjectRow(**dict(row)) if row else None


@dataclass(frozen=True)
class RunRecord:
    """One index run from the run journal; ``outcome`` is None while it runs or after it was killed."""

    run_id: int
    kind: str
    pid: int
    started_at: str
    finished_at: str | None
    outcome: str | None


def read_last_run(conn: sqlite3.Connection) -> RunRecord | None:
    """The newest run in the journal, or None before the first run."""
    try:
        row = conn.execute("SELECT * FROM runs ORDER BY run_id DESC LIMIT 1").fetchone()
    except sqlite3.OperationalError:
        return None
    return RunRecord(**dict(row)) if row else None
