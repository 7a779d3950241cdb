"""SQLite state DB: the writer opens it read-write (WAL), the searcher strictly read-only."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .errors import NotIndexed, ProvenanceMismatch, StoreError
from .schema import STATE_DDL


def utc_now() -> str:
    """ISO 8601 UTC timestamp with a Z, second precision; sorts as text."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


#: Stamped into ``PRAGMA user_version``: any change to the DDL changes it, so a state DB written
#: by another build of the schema is detected instead of failing later on a missing column.
STATE_DDL_STAMP = int(hashlib.sha256(STATE_DDL.encode()).hexdigest()[:7], 16)


def open_state_rw(path: Path, *, reset: bool = False) -> sqlite3.Connection:
    """Open (and create) the state DB for writing. Only the indexer calls this.

    ``reset`` drops every table first (``--rebuild``); without it a DB of another schema build
    is refused with the command that rebuilds it.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        stamp = conn.execute("PRAGMA user_version").fetchone()[0]
        if tables and stamp != STATE_DDL_STAMP:
            if not reset:
                conn.close()
                raise ProvenanceMismatch(
                    f"the state DB {path} was written by another schema build; rebuild the index with: "
                    "local-memory-indexer index PROJECT --rebuild",
                    details={"state_stamp": stamp, "expected_stamp": STATE_DDL_STAMP},
                )
        if reset:
            # A rebuild keeps the job log (the running job's own row lives there) unless the
            # schema itself changed.
            # The embedding cache is keyed by model, so it survives any rebuild while its own shape
            # is unchanged: a rebuild after a schema change re-embeds nothing.
            keep = {"jobs"} if stamp == STATE_DDL_STAMP else set()
            cache_cols = [r[1] for r in conn.execute("PRAGMA table_info(embed_cache)")]
            if cache_cols == ["model_key", "text_hash", "vector"]:
                keep.add("embed_cache")
            for name in tables:
                if name not in keep and not name.startswith("sqlite_"):
                    conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        conn.executescript(STATE_DDL)
        conn.execute(f"PRAGMA user_version = {STATE_DDL_STAMP}")
        return conn
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open state DB {path}: {exc}") from exc


def open_state_ro(path: Path) -> sqlite3.Connection:
    """Open the state DB strictly read-only (``mode=ro`` URI + ``PRAGMA query_only``), creating nothing.

    A ``mode=ro`` open of a WAL database creates ``-wal``/``-shm`` files when they are absent.
    Their absence means no writer is connected and the DB is fully checkpointed, so we open it
    ``immutable=1`` instead; keep such connections short-lived (one tool call).
    """
    if not path.is_file():
        raise NotIndexed(f"no index state at {path}")
    wal = path.with_name(path.name + "-wal")
    uri = f"file:{path}?mode=ro" + ("" if wal.exists() else "&immutable=1")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA query_only = ON")
        return conn
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open state DB {path} read-only: {exc}") from exc


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


def read_project_row(conn: sqlite3.Connection, project_path: str) -> ProjectRow | None:
    """The project's row, or None."""
    try:
        row = conn.execute("SELECT * FROM projects WHERE project_path = ?", (project_path,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return ProjectRow(**dict(row)) if row else None
