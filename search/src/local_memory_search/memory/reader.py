"""Read-only access to the memory index: the LanceDB ``memories`` table pinned at the published
version (through ``readonly.py``) and ``index.db`` opened ``mode=ro`` + ``query_only``.

No memory index yet → ``NotIndexed`` whose message names the command that builds it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from local_memory_shared.config import load_memory_settings
from local_memory_shared.errors import LocalMemoryError, NotIndexed
from local_memory_shared.memory.schema import MEMORIES_TABLE, MemoryPaths, memory_paths, published_version
from local_memory_shared.state import open_state_ro

from ..readonly import ReadOnlyTable, connect_read_only

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


@dataclass
class MemoryReader:
    """One read-only view of the memory index (open per call; cheap)."""

    paths: MemoryPaths
    table: ReadOnlyTable
    conn: sqlite3.Connection
    meta: dict[str, str]

    @cached_property
    def has_vector_index(self) -> bool:
        """True when the pinned table version carries an ANN index on ``vector``."""
        return any(tuple(i.columns) == ("vector",) for i in self.table.list_indices())

    def close(self) -> None:
        """Close the SQLite connection."""
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
        version = published_version(conn)
        meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM memory_meta")}
        if version is None:
            raise NotIndexed(hint, details={"command": BUILD_COMMAND})
        db = connect_read_only(paths.lance_dir)
        table = db.open_table(MEMORIES_TABLE)
        table.checkout(version)
    except (LocalMemoryError, sqlite3.Error, ValueError, FileNotFoundError) as exc:
        conn.close()
        if isinstance(exc, NotIndexed):
            raise
        raise NotIndexed(f"{hint} ({exc})", details={"command": BUILD_COMMAND}) from exc
    return MemoryReader(paths, table, conn, meta)
