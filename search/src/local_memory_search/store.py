"""Open one project's index strictly read-only, pinned to the version the indexer published.

``open_index`` reads the SQLite state DB (``mode=ro`` + ``query_only``, one read transaction per
tool call so every table is seen at one instant), then opens the LanceDB table ``chunks`` and
checks out ``projects.published_version``. It reports the states an agent must be able to tell
apart: not indexed (``NOT_INDEXED``), first index still running (``index_building``), LanceDB
missing or unreadable (SQLite fallback), and a healthy index.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_memory_shared.config import Settings, load_settings
from local_memory_shared.errors import NotIndexed, StoreError
from local_memory_shared.lance_location import LanceLocation, lance_location
from local_memory_shared.paths import ProjectPaths, project_paths
from local_memory_shared.schema import (
    CHUNK_FIELDS,
    CHUNKS_TABLE,
    FTS_COLUMN,
    SCHEMA_VERSION,
    VECTOR_COLUMN,
    chunk_from_mirror,
)
from local_memory_shared.state_reader import (
    IndexMeta,
    ProjectRow,
    open_state_ro,
    read_index_meta,
    read_pending_vectors,
    read_project_row,
    state_uri,
    writer_alive,
)

from . import degradation as W
from .readonly import ReadOnlyTable, connect_read_only, reset_lance_session
from .runtime import BoundedCache

log = logging.getLogger(__name__)

#: Columns of the SQLite ``chunks`` mirror, in CHUNK_FIELDS order.
MIRROR_COLUMNS = ", ".join(CHUNK_FIELDS)

#: LanceDB handles kept open: a checked-out version is an immutable snapshot, so it is safe to share.
_TABLE_CACHE_SIZE = 8


def resolve_project(project_path: str | os.PathLike[str] | None, settings: Settings) -> ProjectPaths:
    """The index paths of ``project_path``, defaulting to LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT, then cwd."""
    chosen = settings.default_project if project_path is None or project_path == "" else project_path
    return project_paths(settings.data_root, Path(os.fspath(chosen)))


#: What a pooled state-DB connection was opened on: (path, read-only URI, file identity).
StateKey = tuple[str, str, tuple[int, ...]]
#: The key of a connection handed out while the pool is off (closed on release, never looked up).
_UNPOOLED: StateKey = ("", "", ())


def state_key(path: Path) -> StateKey:
    """The key a state-DB connection opened now would have (raises OSError when the file is gone).

    The URI says the mode ``state_uri`` picks (``immutable=1`` without a ``-wal``, WAL read-only
    with one); the identity is the file's device and inode, and for an ``immutable=1`` connection,
    which SQLite never re-reads, also its size, mtime and ctime.
    """
    uri = state_uri(path)
    st = path.stat()
    ident: tuple[int, ...] = (st.st_dev, st.st_ino)
    if "immutable=1" in uri:
        ident += (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return (str(path), uri, ident)


class StatePool:
    """Read-only state-DB connections reused across tool calls (an open costs ~0.6 ms a call).

    ``acquire`` hands out an idle connection only when its :func:`state_key` still matches the
    file: a version the indexer publishes lands in the WAL, which a WAL-mode connection reads at
    its next ``BEGIN``, or changes the file itself (a checkpoint, a new file), which changes the
    key; idle connections under an old key are closed, never reused. ``release`` ends the read
    transaction and keeps at most ``per_db`` idle connections per state DB and ``max_dbs`` DBs.
    """

    def __init__(self, per_db: int = 4, max_dbs: int = 16) -> None:
        #: Off until a process that never writes the state DB turns it on (:meth:`enable`).
        self.enabled = False
        self._idle: dict[str, list[tuple[StateKey, sqlite3.Connection]]] = {}
        self._lock = threading.Lock()
        self._per_db = per_db
        self._max_dbs = max_dbs

    def enable(self, on: bool = True) -> None:
        """Reuse connections from now on (off: every call opens and closes its own).

        Only a process that never writes a state DB may turn this on (the search server; a CLI
        query makes one call, so it has nothing to reuse): SQLite keeps one shared-memory mapping per database file per process, and
        when a read-only connection opened it first, a writer opened later in the same process
        fails with "attempt to write a readonly database". Pooled, that read-only connection
        would outlive the call and catch an in-process writer; unpooled, it is closed first.
        """
        self.enabled = on
        if not on:
            self.clear()

    def acquire(self, path: Path) -> tuple[StateKey, sqlite3.Connection]:
        """A read-only connection to ``path`` and the key to release it under."""
        if not self.enabled:
            return _UNPOOLED, open_state_ro(path)
        try:
            key = state_key(path)
        except OSError as exc:
            raise NotIndexed(f"no index state at {path}") from exc
        stale: list[sqlite3.Connection] = []
        conn: sqlite3.Connection | None = None
        with self._lock:
            idle = self._idle.get(key[0], [])
            stale = [c for k, c in idle if k != key]
            fresh = [(k, c) for k, c in idle if k == key]
            if fresh:
                conn = fresh.pop()[1]
            self._idle[key[0]] = fresh
        for old in stale:
            _close_quietly(old)
        return key, conn if conn is not None else open_state_ro(path, key[1])

    def release(self, key: StateKey, conn: sqlite3.Connection) -> None:
        """Give ``conn`` back (its read transaction ended); closed instead when it cannot be reused."""
        if not self.enabled:
            _close_quietly(conn)
            return
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error:
            _close_quietly(conn)
            return
        evicted: list[sqlite3.Connection] = []
        with self._lock:
            idle = self._idle.setdefault(key[0], [])
            if len(idle) < self._per_db:
                idle.append((key, conn))
            else:
                evicted.append(conn)
            while len(self._idle) > self._max_dbs:
                oldest = next(iter(self._idle))
                evicted.extend(c for _, c in self._idle.pop(oldest))
        for old in evicted:
            _close_quietly(old)

    def clear(self) -> None:
        """Close every idle connection."""
        with self._lock:
            idle = [c for conns in self._idle.values() for _, c in conns]
            self._idle.clear()
        for conn in idle:
            _close_quietly(conn)

    def __len__(self) -> int:
        with self._lock:
            return sum(len(conns) for conns in self._idle.values())


def _close_quietly(conn: sqlite3.Connection) -> None:
    with contextlib.suppress(sqlite3.Error):
        conn.close()


#: The searcher's state-DB connections (``clear_caches`` closes the idle ones).
STATE_POOL = StatePool()


@dataclass(frozen=True)
class _OpenTable:
    table: ReadOnlyTable
    vector_dim: int | None
    has_fts_index: bool
    #: The vector index's kind as LanceDB names it (``IvfSq``, ``IvfPq`` in older indexes), or None.
    vector_index: str | None


def _table_at(lance_dir: LanceLocation, version: int, identity: str = "") -> _OpenTable:
    """The cached handle of the chunks table at ``version``, keyed by the version's manifest identity."""
    # Remote: no cheap manifest stat, so the index's identity (its creation time) stands in.
    signature = identity if lance_dir.remote else manifest_signature(lance_dir.local, CHUNKS_TABLE, version)
    return _TABLES.get_or_open((str(lance_dir), version, signature), lambda: _open_table(lance_dir, version))


def manifest_signature(lance_dir: Path, table: str, version: int) -> tuple[int, int, int] | None:
    """The identity of ``table``'s manifest file for ``version`` (None when it is not there).

    A rebuild recreates the table and restarts its version numbers, so the version number alone
    could name a different snapshot; the manifest file's identity cannot.
    """
    versions = lance_dir / f"{table}.lance" / "_versions"
    for name in (f"{(1 << 64) - 1 - version}.manifest", f"{version}.manifest"):
        try:
            st = (versions / name).stat()
        except OSError:
            continue
        return (st.st_ino, st.st_size, st.st_mtime_ns)
    return None


def _open_table(lance_dir: LanceLocation, version: int) -> _OpenTable:
    db = connect_read_only(lance_dir)
    try:
        table = db.open_table(CHUNKS_TABLE)
        table.checkout(version)
        field_type = table.schema.field(VECTOR_COLUMN).type
        vector_dim = int(getattr(field_type, "list_size", 0) or 0) or None
        indices = list(table.list_indices())
    except Exception as exc:  # lancedb raises ValueError/RuntimeError/OSError/lance errors alike
        raise StoreError(f"cannot open LanceDB table {CHUNKS_TABLE!r} at version {version}: {exc}") from exc
    has_fts = any(FTS_COLUMN in idx.columns and str(idx.index_type).upper() == "FTS" for idx in indices)
    vector_index = next((str(idx.index_type) for idx in indices if VECTOR_COLUMN in idx.columns), None)
    return _OpenTable(table, vector_dim, has_fts, vector_index)


_TABLES: BoundedCache[tuple[Any, ...], _OpenTable] = BoundedCache(_TABLE_CACHE_SIZE)


#: How long (seconds) a search process reuses its last look at a project's writer lock (0: never).
#: The look reads ``/proc/locks``, and the kernel answers that read only after an RCU grace period
#: (fs/locks.c takes its file-lock semaphore for writing): about 8 ms here, idle machine or not,
#: once the reads are more than a few milliseconds apart. A search reads it only while the status
#: row says ``indexing``, so during a re-index at 100k chunks every call paid it: 7.7 / 16.3 ms
#: (p50 / p95) of a 58 / 85 ms ``search_hybrid`` call (``python -m bench.busy_calls``, before this
#: memo). Only the ``index_updating`` / ``index_incomplete`` warnings depend on the answer, so a
#: killed writer is reported at most this late.
WRITER_CHECK_SECONDS = 5.0
_WRITER_SEEN: BoundedCache[tuple[str, int], bool | None] = BoundedCache(16)
#: Chunks in a published version, for the ``vectors_pending`` warning's fraction: summing
#: ``files.chunk_count`` scans the files table (2-3 ms at 100k chunks, on every call while vectors
#: are pending), and the total only changes with a new published version.
_PUBLISHED_TOTALS: BoundedCache[tuple[str, int], int] = BoundedCache(16)


def clear_caches() -> None:
    """Forget every open LanceDB handle, the session's cached index pages and manifests, and the
    idle state-DB connections."""
    _TABLES.clear()
    _WRITER_SEEN.clear()
    _PUBLISHED_TOTALS.clear()
    reset_lance_session()
    STATE_POOL.clear()


@dataclass
class IndexReader:
    """One project's index, opened read-only for the duration of one tool call."""

    settings: Settings
    paths: ProjectPaths
    project: str
    conn: sqlite3.Connection
    project_row: ProjectRow
    meta: IndexMeta | None
    table: ReadOnlyTable | None = None
    version: int | None = None
    vector_dim: int | None = None
    has_fts_index: bool = False
    #: The vector index's kind (``IvfSq``, ``IvfPq``), None without one: the leg then scans exactly.
    vector_index: str | None = None
    #: ok | missing | unavailable | unpublished
    lance_state: str = "unpublished"
    #: Chunks of the published version that have no vector yet (keyword-only until embedded).
    pending_vectors: int = 0
    warnings: list[dict[str, str]] = field(default_factory=list)

    @property
    def has_vector_index(self) -> bool:
        return self.vector_index is not None

    @property
    def lance_dir(self) -> Path:
        """The LanceDB folder the published version lives in (a ``--rebuild`` builds a new one)."""
        return self.paths.dir / Path(self.project_row.lance_dir or "lance").name

    @property
    def lance_location(self) -> LanceLocation:
        """Where the published LanceDB database is: that folder, or on the object store."""
        return lance_location(self.paths.dir, self.lance_dir.name, self.settings.lance_uri)

    @property
    def lance_ok(self) -> bool:
        """True when searches can use LanceDB (vectors and BM25)."""
        return self.table is not None

    @property
    def cache_token(self) -> tuple[Any, ...]:
        """What identifies the snapshot a cached answer was computed from."""
        return (str(self.paths.data_root), self.project, self.version, self.lance_state)

    # -- chunk rows from the SQLite mirror (same snapshot as published_version) ------------
    def mirror_count(self) -> int:
        """Chunks in the published index (from ``files``: one row per file, no mirror scan)."""
        total = self.conn.execute("SELECT SUM(chunk_count) FROM files").fetchone()[0]
        if total is None:
            total = self.conn.execute(
                "SELECT COUNT(*) FROM chunks WHERE schema_version = ?", (SCHEMA_VERSION,)
            ).fetchone()[0]
        return int(total)

    def fetch_chunks(self, chunk_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Full chunk rows by id (mirror first, LanceDB for any the mirror lacks)."""
        return {cid: chunk_from_mirror(row) for cid, row in self.rows_by_id(chunk_ids, CHUNK_FIELDS).items()}

    def rows_by_id(self, chunk_ids: Iterable[str], columns: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``columns`` (``chunk_id`` among them) of chunks by id: the SQLite mirror, published in
        the same commit as the version, then LanceDB for any id the mirror lacks (or all of them
        when the mirror cannot be read); an id found in neither is left out."""
        ids = list(dict.fromkeys(chunk_ids))
        names = list(columns)
        out: dict[str, dict[str, Any]] = {}
        select = f"SELECT {', '.join(names)} FROM chunks WHERE chunk_id IN "  # noqa: S608 - fixed columns
        try:
            for i in range(0, len(ids), 500):
                part = ids[i : i + 500]
                cursor = self.conn.cursor()
                cursor.row_factory = None  # plain tuples: no sqlite3.Row per chunk
                cursor.execute(select + f"({','.join('?' * len(part))})", part)
                for values in cursor:
                    row = dict(zip(names, values, strict=True))
                    out[row["chunk_id"]] = row
        except sqlite3.Error as exc:  # the mirror copies the table's columns: read the table instead
            log.warning("mirror look-up of %d chunks failed: %s", len(ids), exc)
        missing = [i for i in ids if i not in out]
        if missing and self.table is not None:
            out.update(self._lance_rows(missing, names))
        return out

    def _lance_rows(self, chunk_ids: list[str], columns: list[str]) -> dict[str, dict[str, Any]]:
        assert self.table is not None
        where = f"chunk_id IN ({', '.join(sql_str(c) for c in chunk_ids)})"
        try:
            rows = self.table.scan_arrow(where=where, columns=columns, limit=len(chunk_ids)).to_pylist()
        except Exception as exc:  # only costs these chunks
            log.warning("LanceDB row fetch failed: %s", exc)
            return {}
        return {r["chunk_id"]: {k: r.get(k) for k in columns} for r in rows}

    def file_chunks(self, file_path: str) -> list[dict[str, Any]]:
        """Every chunk of one file, in file order."""
        rows = self.conn.execute(
            f"SELECT {MIRROR_COLUMNS} FROM chunks WHERE file_path = ? AND schema_version = ? "  # noqa: S608
            "ORDER BY chunk_index, start_line",
            (file_path, SCHEMA_VERSION),
        )
        return [mirror_row(r) for r in rows]


def mirror_row(row: sqlite3.Row) -> dict[str, Any]:
    """A mirror row as a chunk dict (tags decoded from JSON): ``schema.chunk_from_mirror``."""
    return chunk_from_mirror(row)


def sql_str(value: str) -> str:
    """A SQL string literal (LanceDB filters take SQL text, not parameters)."""
    return "'" + str(value).replace("'", "''") + "'"


def _job_alive(conn: sqlite3.Connection, project: str) -> bool | None:
    """True/False when a running job row names a live/dead pid; None when no job row says."""
    try:
        rows = conn.execute(
            "SELECT pid FROM jobs WHERE project_path = ? AND status = 'running'", (project,)
        ).fetchall()
    except sqlite3.Error:
        return None
    pids = [r["pid"] for r in rows if r["pid"]]
    if not rows:
        return None
    if not pids:
        return True
    for pid in pids:
        try:
            os.kill(int(pid), 0)  # signal 0 only checks existence
            return True
        except PermissionError:
            return True
        except (OSError, ValueError):
            continue
    return False


def _job_progress(conn: sqlite3.Connection, project: str) -> str:
    try:
        row = conn.execute(
            "SELECT phase, files_done, files_total, chunks_embedded, chunks_total FROM jobs "
            "WHERE project_path = ? AND status = 'running' ORDER BY started_at DESC LIMIT 1",
            (project,),
        ).fetchone()
    except sqlite3.Error:
        return ""
    if row is None:
        return ""
    return (
        f"(phase {row['phase']}: {row['files_done']}/{row['files_total']} files, "
        f"{row['chunks_embedded']}/{row['chunks_total']} chunks embedded)"
    )


@contextlib.contextmanager
def open_index(
    project_path: str | os.PathLike[str] | None = None, settings: Settings | None = None
) -> Iterator[IndexReader]:
    """Open ``project_path``'s index read-only; raises NOT_INDEXED when there is none to read."""
    settings = settings or load_settings()
    paths = resolve_project(project_path, settings)
    project = str(paths.project_path)
    if not paths.state_db.is_file():
        raise NotIndexed(
            f"{project} is not indexed (nothing under {paths.dir}); index it with: local-memory-indexer index {project}",
            details={"project_path": project, "data_root": str(paths.data_root)},
        )
    key, conn = STATE_POOL.acquire(paths.state_db)
    reader: IndexReader | None = None
    try:
        try:
            conn.execute("BEGIN")  # one snapshot of published_version, mirror and graph for this call
            row = read_project_row(conn, project)
            meta = read_index_meta(conn, project)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read state DB {paths.state_db}: {exc}") from exc
        if row is None:
            raise NotIndexed(
                f"{project} has no index record; index it with: local-memory-indexer index {project}",
                details={"project_path": project},
            )
        reader = IndexReader(
            settings=settings, paths=paths, project=project, conn=conn, project_row=row, meta=meta
        )
        _check_status(reader)
        _open_lance(reader)
        _check_vectors(reader)
        if meta is not None and meta.schema_version != SCHEMA_VERSION:
            reader.warnings.append(
                W.warn(
                    W.SCHEMA_VERSION_MISMATCH,
                    f"index has {meta.schema_version}, searcher reads {SCHEMA_VERSION}.",
                )
            )
        yield reader
    finally:
        STATE_POOL.release(key, conn)


def _writer_running(reader: IndexReader) -> bool:
    """Liveness from the writer itself: its ``flock`` (kernel, looked at once per
    :data:`WRITER_CHECK_SECONDS`), else the running job's pid."""
    lock_file = reader.paths.lock_file
    if WRITER_CHECK_SECONDS > 0:
        tick = int(time.monotonic() / WRITER_CHECK_SECONDS)
        alive = _WRITER_SEEN.get_or_open((str(lock_file), tick), lambda: writer_alive(lock_file))
    else:
        alive = writer_alive(lock_file)
    if alive is None:
        return _job_alive(reader.conn, reader.project) is not False
    return alive


def _check_status(reader: IndexReader) -> None:
    row = reader.project_row
    running = row.status == "indexing" and _writer_running(reader)
    progress = _job_progress(reader.conn, reader.project) if running else ""
    if row.status == "indexing" and not running and row.published_version is not None:
        first = "its first index" if row.last_indexed_at is None else "a re-index"
        reader.warnings.append(
            W.warn(
                W.INDEX_INCOMPLETE,
                f"{first} was interrupted; run: local-memory-indexer index {reader.project}",
            )
        )
    if row.published_version is None:
        if running:
            reader.warnings.append(
                W.warn(
                    W.INDEX_BUILDING, f"Nothing is published yet, so nothing can match. {progress}".strip()
                )
            )
            return
        detail = "its first index failed" if row.status == "failed" else "no index run has finished"
        raise NotIndexed(
            f"{reader.project} is not indexed ({detail}); index it with: local-memory-indexer index {reader.project}",
            details={"project_path": reader.project, "status": row.status},
        )
    if running:
        code = W.INDEX_BUILDING if row.last_indexed_at is None else W.INDEX_UPDATING
        reader.warnings.append(W.warn(code, progress))


def _check_vectors(reader: IndexReader) -> None:
    """Warn with the fraction of the project the semantic leg cannot see yet (rows without vectors)."""
    if reader.project_row.published_version is None:
        return
    try:
        pending = read_pending_vectors(reader.conn)
        version = int(reader.project_row.published_version)
        key = (str(reader.paths.state_db), version)
        total = _PUBLISHED_TOTALS.get_or_open(key, reader.mirror_count) if pending else 0
    except sqlite3.Error:
        return
    reader.pending_vectors = pending
    if pending and total:
        reader.warnings.append(
            W.warn(
                W.VECTORS_PENDING,
                f"{pending} of {total} chunks ({pending / total:.0%}) are not yet semantically searchable.",
            )
        )


def _open_lance(reader: IndexReader) -> None:
    version = reader.project_row.published_version
    if version is None:
        reader.lance_state = "unpublished"
        return
    reader.version = int(version)
    location = reader.lance_location
    if not location.remote and not reader.lance_dir.is_dir():
        reader.lance_state = "missing"
        reader.warnings.append(W.warn(W.LANCE_MISSING, f"Expected {reader.lance_dir}."))
        return
    try:
        opened = _table_at(location, reader.version, reader.project_row.created_at)
    except StoreError as exc:
        reader.lance_state = "unavailable"
        reader.warnings.append(W.warn(W.LANCE_UNAVAILABLE, str(exc)))
        return
    reader.table = opened.table
    reader.vector_dim = opened.vector_dim
    reader.has_fts_index = opened.has_fts_index
    reader.vector_index = opened.vector_index
    reader.lance_state = "ok"
