"""Read-only access to the memory index: the LanceDB ``memories`` table pinned at the published
version (through ``readonly.py``) and ``index.db`` opened ``mode=ro`` + ``query_only``.

The table handle checked out at a version is kept across calls (``runtime.RUNTIME`` owns the
cache, keyed by the version's manifest file identity, so a rebuild is never mistaken for the old
snapshot), together with what is cheap to keep per version and costly to recompute per call: the
distinct path patterns, the supersession graph and, up to ``ROWS_IN_MEMORY_MAX`` records, the
result columns of every row (:class:`RowStore`: LanceDB's ``take_row_ids`` of a page of rows cost
20-90 ms of wall time on the loaded 2-core machine at 50,000 records, the same rows from one
in-memory Arrow table 0.5 ms; ~23 MB at 50,000 records, one 0.3 s scan per version). No memory index yet → ``NotIndexed`` whose
message names the command that builds it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from local_memory_shared.config import load_memory_settings
from local_memory_shared.errors import LocalMemoryError, NotIndexed
from local_memory_shared.memory.schema import MEMORIES_TABLE, MemoryPaths, memory_paths, published_version
from local_memory_shared.state import open_state_ro

from ..readonly import ReadOnlyTable, connect_read_only
from ..runtime import BoundedCache, register_cache
from ..store import manifest_signature

BUILD_COMMAND = "local-memory-indexer memory rebuild"
#: Every column a result needs (the vector is read only where near-duplicates are collapsed).
ROW_COLUMNS: tuple[str, ...] = (
    "id", "project", "kind", "status", "title", "content", "tags", "domain", "also", "paths", "severity",
    "confidence", "meta", "created", "updated", "created_by", "valid_from", "valid_to", "expires", "supersedes",
    "succeeded_by", "contradicted_by", "links", "occurrences", "last_seen", "hits", "last_hit", "version",
    "version_hash", "file_path",
)  # fmt: skip


def sql_str(value: str) -> str:
    """A SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    """``column IN (...)``; an empty set is ``FALSE``."""
    vals = list(dict.fromkeys(values))
    return f"{column} IN ({', '.join(sql_str(v) for v in vals)})" if vals else "FALSE"


T = TypeVar("T")
#: Up to this many records a version's result columns are held in memory (:class:`RowStore`).
ROWS_IN_MEMORY_MAX = 100_000


class RowStore:
    """``ROW_COLUMNS`` of every row of one version in one Arrow table, looked up by LanceDB row id."""

    def __init__(self, table: pa.Table):
        self.table = table.combine_chunks()
        row_ids = np.asarray(self.table.column("_rowid").to_numpy(), dtype=np.uint64)
        self._order = np.argsort(row_ids)
        self._sorted = row_ids[self._order]

    @property
    def nbytes(self) -> int:
        return int(self.table.nbytes + self._order.nbytes + self._sorted.nbytes)

    def take(self, row_ids: list[int], columns: list[str]) -> list[dict[str, Any]]:
        """The rows of ``row_ids`` that exist (as ``take_row_ids(...).to_list()`` gives them)."""
        wanted = np.asarray(row_ids, dtype=np.uint64)
        if not len(self._sorted) or not len(wanted):
            return []
        at = np.minimum(np.searchsorted(self._sorted, wanted), len(self._sorted) - 1)
        found = self._order[at[self._sorted[at] == wanted]]
        rows: list[dict[str, Any]] = self.table.select(columns).take(pa.array(found)).to_pylist()
        return rows


@dataclass(frozen=True)
class Succession:
    """The supersession graph of one table version: ``succeeded_by`` per superseded record and
    ``created`` of every record named as a successor."""

    succeeded_by: dict[str, str]
    created: dict[str, str]


class _Opened:
    """A table checked out at one version and the values memoised for that version."""

    def __init__(self, table: ReadOnlyTable):
        self.table = table
        self.has_vector_index = any(tuple(i.columns) == ("vector",) for i in table.list_indices())
        self._memo: dict[str, Any] = {}
        self._lock = threading.Lock()

    def peek(self, name: str) -> Any:
        """The memoised value, or None when not computed yet."""
        with self._lock:
            return self._memo.get(name)

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        with self._lock:
            if name in self._memo:
                return self._memo[name]  # type: ignore[no-any-return]
        value = compute()
        with self._lock:  # two first callers: both keep the first value stored (one object per version)
            return self._memo.setdefault(name, value)  # type: ignore[no-any-return]


def _table_at(lance_dir: Path, version: int) -> _Opened:
    """The memory table checked out at ``version``: one handle per index, the newest version only."""
    key = (str(lance_dir), version, manifest_signature(lance_dir, MEMORIES_TABLE, version))

    def open_table() -> _Opened:
        table = connect_read_only(lance_dir).open_table(MEMORIES_TABLE)
        table.checkout(version)
        return _Opened(table)

    opened = _TABLES.get_or_open(key, open_table)
    # Another version of the same index is stale now (its memos, e.g. the vector matrix, go with
    # it; a call still reading it keeps its own reference until it returns).
    _TABLES.discard(lambda k: k[0] == key[0] and k != key)
    return opened


#: A few data roots at most.
_TABLES: BoundedCache[tuple[Any, ...], _Opened] = register_cache("memory_tables", BoundedCache(4))


@dataclass
class MemoryReader:
    """One read-only view of the memory index (open per call; the table handle is shared)."""

    paths: MemoryPaths
    table: ReadOnlyTable
    conn: sqlite3.Connection
    meta: dict[str, str]
    opened: _Opened | None = field(default=None, repr=False)
    has_vector_index: bool = False

    def _memo(self, name: str, compute: Callable[[], T]) -> T:
        return compute() if self.opened is None else self.opened.memo(name, compute)

    def row_count(self) -> int:
        """Rows in this version (memoised)."""
        return self._memo("row_count", lambda: int(self.table.count_rows()))

    def path_patterns(self) -> list[str]:
        """Every distinct path pattern stored in this version (sorted)."""

        def compute() -> list[str]:
            column = self.table.search().select(["paths"]).limit(10_000_000).to_arrow()["paths"]
            return sorted(p for p in pc.unique(pc.list_flatten(column)).to_pylist() if p)

        return self._memo("path_patterns", compute)

    def succession(self) -> Succession:
        """The supersession graph of this version (two small scans, then memoised)."""

        def compute() -> Succession:
            rows = self.rows("succeeded_by IS NOT NULL", ("id", "succeeded_by"))
            succ = {str(r["id"]): str(r["succeeded_by"]) for r in rows if r["succeeded_by"]}
            created = {
                i: str(r["created"])
                for i, r in self.by_ids(set(succ.values()), None, ("id", "created")).items()
            }
            return Succession(succ, created)

        return self._memo("succession", compute)

    def take(self, row_ids: Iterable[int], columns: Iterable[str]) -> list[dict[str, Any]]:
        """Rows by LanceDB row id (ids a query of this same version returned): from the version's
        :class:`RowStore` when it has at most ``ROWS_IN_MEMORY_MAX`` records and the columns are
        result columns, else from LanceDB."""
        ids, cols = list(row_ids), list(columns)
        if not ids:
            return []
        if (
            self.opened is not None
            and set(cols) <= set(ROW_COLUMNS)
            and self.row_count() <= ROWS_IN_MEMORY_MAX
        ):
            return self.row_store().take(ids, cols)
        rows: list[dict[str, Any]] = self.table.take_row_ids(ids).select(cols).to_list()
        return rows

    def row_store(self) -> RowStore:
        """This version's :class:`RowStore` (one scan, then memoised)."""

        def compute() -> RowStore:
            scan = self.table.search().select(list(ROW_COLUMNS)).with_row_id(True)
            store = RowStore(scan.limit(ROWS_IN_MEMORY_MAX + 1).to_arrow())
            pa.default_memory_pool().release_unused()  # the scan's chunks, copied into one
            return store

        return self._memo("row_store", compute)

    def close(self) -> None:
        """End the read transaction and close the SQLite connection."""
        self.conn.close()

    def __enter__(self) -> MemoryReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def rows(
        self, where: str | None, columns: Iterable[str] = ROW_COLUMNS, limit: int = 10_000_000
    ) -> list[dict[str, Any]]:
        """Rows matching ``where`` (no ranking)."""
        q = self.table.search()
        if where:
            q = q.where(where)
        rows: list[dict[str, Any]] = q.select(list(columns)).limit(limit).to_list()
        return rows

    def by_ids(
        self, ids: Iterable[str], where: str | None = None, columns: Iterable[str] = ROW_COLUMNS
    ) -> dict[str, dict[str, Any]]:
        """Rows by id (optionally only those matching ``where``)."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        clause = sql_in("id", ids) + (f" AND ({where})" if where else "")
        return {r["id"]: r for r in self.rows(clause, columns)}

    def live_hits(self, ids: Iterable[str]) -> dict[str, tuple[int, str | None]]:
        """Live hit counters from SQLite (fresher than the LanceDB copy between flushes)."""
        ids = list(ids)
        out: dict[str, tuple[int, str | None]] = {}
        for start in range(0, len(ids), 900):
            part = ids[start : start + 900]
            marks = ",".join("?" * len(part))
            for row in self.conn.execute(
                f"SELECT id, hits, last_hit FROM memory_hits WHERE id IN ({marks})", part
            ):
                out[row[0]] = (int(row[1]), row[2])
        return out

    def mentions_of(self, uid: str) -> list[str]:
        """Records whose body mentions ``uid`` (the writer's ``mentions`` links)."""
        sql = "SELECT source_id FROM memory_links WHERE target_id = ? AND link_type = 'mentions' ORDER BY source_id"
        return [r[0] for r in self.conn.execute(sql, (uid,))]


def open_reader(data_root: Any = None) -> MemoryReader:
    """Open the memory index of the data root read-only; ``NotIndexed`` names the build command."""
    settings = load_memory_settings()
    paths = memory_paths(data_root or settings.data_root, settings.vault)
    hint = f"no memory index under {paths.dir}; build it with `{BUILD_COMMAND}` (or write a memory)"
    if not paths.index_db.is_file() or not paths.lance_dir.is_dir():
        raise NotIndexed(hint, details={"command": BUILD_COMMAND})
    conn = open_state_ro(paths.index_db)
    try:
        # One read transaction for the whole call: the FTS5 rows, links and hit counters read
        # later are those of the snapshot that named this version (see ``fts``).
        conn.execute("BEGIN")
        version = published_version(conn)
        meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM memory_meta")}
        if version is None:
            raise NotIndexed(hint, details={"command": BUILD_COMMAND})
        opened = _table_at(paths.lance_dir, version)
    except (LocalMemoryError, sqlite3.Error, ValueError, FileNotFoundError) as exc:
        conn.close()
        if isinstance(exc, NotIndexed):
            raise
        raise NotIndexed(f"{hint} ({exc})", details={"command": BUILD_COMMAND}) from exc
    return MemoryReader(paths, opened.table, conn, meta, opened, opened.has_vector_index)
