"""Read-only wrappers over LanceDB: reads pass through, anything else raises ``READONLY_VIOLATION``.

The wrappers work from an allow-list, not a deny-list: a method LanceDB adds in a later
release is refused until someone decides it only reads. ``MUTATING_TABLE_METHODS`` and
``MUTATING_DB_METHODS`` name the writers we know of (tests call every one of them).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from local_memory_shared.errors import ReadOnlyViolation, StoreError
from local_memory_shared.lance_location import LanceLocation

log = logging.getLogger(__name__)

#: Table attributes that only read. ``checkout`` moves this handle's view to an older
#: version; it writes nothing on disk, and it is how the searcher pins the published version.
TABLE_READS: frozenset[str] = frozenset(
    {
        "name",
        "version",
        "schema",
        "count_rows",
        "search",
        "list_indices",
        "index_stats",
        "list_versions",
        "checkout",
        "to_arrow",
        "head",
        "stats",
        "take_offsets",
        "take_row_ids",
        "uri",
        "tokenize",
    }
)

#: Every mutating LanceDB ``Table`` method we know of (all refused; the allow-list refuses new ones too).
MUTATING_TABLE_METHODS: tuple[str, ...] = (
    "add",
    "delete",
    "update",
    "merge",
    "merge_insert",
    "create_index",
    "create_index_async",
    "create_fts_index",
    "create_scalar_index",
    "drop_index",
    "optimize",
    "compact_files",
    "cleanup_old_versions",
    "add_columns",
    "alter_columns",
    "drop_columns",
    "restore",
    "refresh_column",
    "refresh_column_async",
    "update_field_metadata",
    "replace_field_metadata",
    "set_unenforced_primary_key",
    "migrate_v2_manifest_paths",
    "set_lsm_write_spec",
    "unset_lsm_write_spec",
    "checkpoint_lsm",
    "flush_lsm",
    "compact_lsm",
    "close_lsm_writers",
    "checkout_latest",  # would leave the published version
    "tags",  # handle with create/update/delete
    "branches",  # handle with create/delete
    "to_lance",  # raw lance dataset, which has its own writers
)

#: Database-level reads.
DB_READS: frozenset[str] = frozenset({"uri", "list_tables", "table_names", "table_exists"})

#: Every mutating LanceDB connection method we know of.
MUTATING_DB_METHODS: tuple[str, ...] = (
    "create_table",
    "drop_table",
    "drop_table_async",
    "rename_table",
    "clone_table",
    "drop_all_tables",
    "drop_database",
    "create_namespace",
    "drop_namespace",
    "create_view",
    "drop_view",
    "create_materialized_view",
    "drop_materialized_view",
    "create_function",
    "drop_function",
    "create_secret",
    "alter_secret",
    "drop_secret",
)


def _refuse(kind: str, name: str) -> ReadOnlyViolation:
    return ReadOnlyViolation(
        f"the read-only searcher may not call LanceDB {kind}.{name}; only the indexer writes",
        details={"method": f"{kind}.{name}"},
    )


class ReadOnlyTable:
    """A LanceDB table handle that only reads."""

    __slots__ = ("_table",)

    def __init__(self, table: Any):
        object.__setattr__(self, "_table", table)

    def __getattr__(self, name: str) -> Any:
        if name in TABLE_READS:
            return getattr(self._table, name)
        raise _refuse("Table", name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise _refuse("Table", name)

    def __delattr__(self, name: str) -> None:
        raise _refuse("Table", name)

    def __len__(self) -> int:
        return int(self._table.count_rows())

    def __repr__(self) -> str:
        return f"ReadOnlyTable({self._table.name!r}, version={self._table.version})"

    # -- one-round-trip queries ------------------------------------------------------------
    # The sync builders (``search(...).where(...).to_arrow()``) cross to LanceDB's event-loop
    # thread about six times per query (the schema three times, the index list, the query, each
    # batch); on a loaded 2-core machine each crossing costs a scheduler wake-up. These build the
    # same query on LanceDB's async API (mapped as ``AsyncTable._sync_query_to_async`` maps the
    # sync builder's query) and run it there in one crossing.

    def fts_arrow(
        self,
        text: str,
        *,
        column: str,
        columns: Sequence[str],
        limit: int,
        where: str | None = None,
        postfilter: bool = False,
    ) -> Any:
        """BM25 matches of ``text`` in ``column`` (a ``pyarrow.Table`` with ``_score``)."""
        query = self._async_query(columns, limit, where)
        if postfilter:
            query = query.postfilter()
        return _run(query.nearest_to_text(text, [column]).to_arrow())

    def vector_arrow(
        self,
        vector: Any,
        *,
        column: str,
        distance_type: str,
        columns: Sequence[str],
        limit: int,
        where: str | None = None,
        postfilter: bool = False,
        nprobes: int | None = None,
        refine_factor: int | None = None,
        exact: bool = False,
    ) -> Any:
        """Nearest rows to ``vector`` in ``column`` (``exact``: a flat scan, bypassing the ANN index)."""
        query = self._async_query(columns, limit, where).nearest_to(vector).distance_type(distance_type)
        if nprobes is not None:
            query = query.nprobes(nprobes).maximum_nprobes(nprobes)
        if refine_factor is not None:
            query = query.refine_factor(refine_factor)
        query = query.column(column)
        if exact:
            query = query.bypass_vector_index()
        if postfilter:
            query = query.postfilter()
        return _run(query.to_arrow())

    def scan_arrow(self, *, where: str, columns: Sequence[str], limit: int) -> Any:
        """Rows matching ``where`` (a filtered scan)."""
        return _run(self._async_query(columns, limit, where).to_arrow())

    def _async_query(self, columns: Sequence[str], limit: int, where: str | None) -> Any:
        query = self._table._table.query().limit(limit).select(list(columns))
        return query.where(where) if where else query


def _run(coroutine: Any) -> Any:
    """Run ``coroutine`` on LanceDB's background event loop (the one its sync API uses)."""
    from lancedb.background_loop import LOOP

    run: Callable[[Any], Any] = LOOP.run
    return run(coroutine)


class ReadOnlyDB:
    """A LanceDB connection that only opens tables, wrapped read-only."""

    __slots__ = ("_db",)

    def __init__(self, db: Any):
        object.__setattr__(self, "_db", db)

    def open_table(self, name: str) -> ReadOnlyTable:
        """Open ``name`` wrapped in :class:`ReadOnlyTable`."""
        return ReadOnlyTable(self._db.open_table(name))

    def __getattr__(self, name: str) -> Any:
        if name in DB_READS:
            return getattr(self._db, name)
        raise _refuse("DBConnection", name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise _refuse("DBConnection", name)

    def __getitem__(self, name: str) -> ReadOnlyTable:
        return self.open_table(name)


#: Bounds of the one LanceDB session every read-only connection of this process shares. Lance's
#: defaults (a 6 GiB index cache, a 1 GiB metadata cache, per connection) let a long-running
#: server grow with every version and project it ever opened; these hold the FTS/ANN index
#: pages and manifests of the few projects an agent works on at once.
INDEX_CACHE_BYTES = 128 * 2**20
METADATA_CACHE_BYTES = 32 * 2**20
_session_lock = threading.Lock()
_session: Any = None


def lance_session() -> Any:
    """The process-wide, size-bounded LanceDB session (created on first use)."""
    global _session
    import lancedb

    with _session_lock:
        if _session is None:
            _session = lancedb.Session(
                index_cache_size_bytes=INDEX_CACHE_BYTES, metadata_cache_size_bytes=METADATA_CACHE_BYTES
            )
        return _session


def reset_lance_session() -> None:
    """Start a new session: connections opened from now on read index files and manifests afresh."""
    global _session
    with _session_lock:
        _session = None


def connect_read_only(lance_dir: Path | LanceLocation) -> ReadOnlyDB:
    """Connect to an existing LanceDB folder (never creating it, as ``lancedb.connect`` would) or
    to a database on an object store (where connecting creates nothing)."""
    if isinstance(lance_dir, Path):
        lance_dir = LanceLocation(lance_dir)
    if not lance_dir.remote and not lance_dir.local.is_dir():
        raise StoreError(f"LanceDB folder {lance_dir} does not exist")
    try:
        return ReadOnlyDB(lance_dir.connect(read_consistency_interval=None, session=lance_session()))
    except Exception as exc:  # lancedb raises many unrelated types; map them at the boundary
        raise StoreError(f"cannot open LanceDB at {lance_dir}: {exc}") from exc
