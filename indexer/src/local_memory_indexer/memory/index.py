"""The memory index (writer side): LanceDB ``memories`` rows + the SQLite tables of schema.py.

Every change follows the publication protocol of :mod:`local_memory_shared.memory.schema`:
LanceDB first, then one SQLite transaction that records files/links, the FTS5 rows of the changed
records (the searcher's full-text leg) and the new ``published_version`` = ``fts_version``. A
crash between the two leaves LanceDB ahead of what is published; the next writer to open (or
refresh) the index sees ``fts_version`` differ from the table's latest version and rebuilds the
FTS5 rows from that version (:func:`build_fulltext`), as it does for an index made before the
FTS5 table existed. Hit counters change through :meth:`MemoryIndex.set_counters`, an
in-place column update that copies the stored vector: hits never trigger a re-embedding.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import sqlite3
import time
from collections.abc import Iterable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS, Bitmap, BTree, IvfHnswSq
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.errors import StoreError
from local_memory_shared.memory.model import MemoryRecord, utc_now
from local_memory_shared.memory.schema import (
    FTS5_IDS_TABLE,
    FTS5_PROJECTS_TABLE,
    FTS5_TABLE,
    FTS5_VERSION_KEY,
    FTS_COLUMNS,
    MEMORIES_TABLE,
    MEMORY_DDL,
    MEMORY_SCHEMA_VERSION,
    VECTOR_COLUMN,
    MemoryPaths,
    memory_arrow_schema,
    project_docids,
)
from local_memory_shared.memory.uid import UID_RE

log = logging.getLogger(__name__)

KEEP_VERSIONS_FOR = timedelta(minutes=10)
#: Fold unindexed rows into the FTS indices once this many have accumulated.
FOLD_EVERY_ROWS = 200
#: Below this many rows a flat vector scan is exact and fast; above it an IVF_HNSW_SQ index is built
#: (the searcher refines its candidates with exact distances, see ``search.ANN_REFINE_FACTOR``).
ANN_MIN_ROWS = 10_000
_UID_IN_TEXT = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")


def sql_str(value: str) -> str:
    """A SQL string literal for a LanceDB ``where``."""
    return "'" + value.replace("'", "''") + "'"


def open_index_db(path: Path) -> sqlite3.Connection:
    """Open (create) index.db for writing, WAL."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(MEMORY_DDL)
        return conn
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open memory index {path}: {exc}") from exc


def record_row(record: MemoryRecord, file_path: str) -> dict[str, Any]:
    """The LanceDB row of ``record`` without its vector."""
    row = record.to_dict()
    row["meta"] = json.dumps(row["meta"], sort_keys=True, ensure_ascii=False)
    row["tree_labels"] = list(record.tree_labels)
    row["file_path"] = file_path
    row["schema_version"] = MEMORY_SCHEMA_VERSION
    return row


def record_links(record: MemoryRecord) -> list[tuple[str, str, str, str]]:
    """``(source, target, link_type, project)`` rows: frontmatter links plus uids mentioned in the body."""
    out = [(record.id, t, "supersedes", record.project) for t in record.supersedes]
    if record.succeeded_by:
        out.append((record.id, record.succeeded_by, "succeeded_by", record.project))
    out += [(record.id, t, "contradicted_by", record.project) for t in record.contradicted_by]
    out += [(record.id, t, "links", record.project) for t in record.links]
    mentioned = dict.fromkeys(m for m in _UID_IN_TEXT.findall(record.content) if m != record.id)
    out += [(record.id, t, "mentions", record.project) for t in mentioned if UID_RE.match(t)]
    return out


def fulltext_values(row: dict[str, Any]) -> tuple[str, ...]:
    """The FTS5 column values of a record row (``FTS_COLUMNS``; lists joined by spaces)."""
    out = []
    for column in FTS_COLUMNS:
        value = row.get(column)
        out.append(" ".join(value) if isinstance(value, (list, tuple)) else str(value or ""))
    return tuple(out)


_FTS_INSERT = f"INSERT INTO {FTS5_TABLE}(rowid, {', '.join(FTS_COLUMNS)}) VALUES (?{',?' * len(FTS_COLUMNS)})"


def _new_docid(cur: sqlite3.Connection, project: str) -> int:
    """The next docid of ``project``'s rowid range (a new project gets the next slot)."""
    found = cur.execute(f"SELECT slot FROM {FTS5_PROJECTS_TABLE} WHERE project = ?", (project,)).fetchone()
    if found is None:
        slot = int(
            cur.execute(f"INSERT INTO {FTS5_PROJECTS_TABLE}(project) VALUES (?)", (project,)).lastrowid or 0
        )
    else:
        slot = int(found[0])
    lo, hi = project_docids(slot)
    last = cur.execute(
        f"SELECT max(docid) FROM {FTS5_IDS_TABLE} WHERE docid BETWEEN ? AND ?", (lo, hi)
    ).fetchone()
    return lo if last[0] is None else int(last[0]) + 1


def put_fulltext(cur: sqlite3.Connection, rows: Iterable[dict[str, Any]]) -> None:
    """Insert or replace the FTS5 rows of ``rows`` (each keeps its docid while it exists)."""
    for row in rows:
        found = cur.execute(f"SELECT docid FROM {FTS5_IDS_TABLE} WHERE id = ?", (row["id"],)).fetchone()
        if found is None:
            docid = _new_docid(cur, row["project"])
            cur.execute(f"INSERT INTO {FTS5_IDS_TABLE}(docid, id) VALUES (?, ?)", (docid, row["id"]))
        else:
            docid = found[0]
            cur.execute(f"DELETE FROM {FTS5_TABLE} WHERE rowid = ?", (docid,))
        cur.execute(_FTS_INSERT, (docid, *fulltext_values(row)))


def delete_fulltext(cur: sqlite3.Connection, ids: Iterable[str]) -> None:
    """Drop the FTS5 rows of ``ids``."""
    for record_id in ids:
        found = cur.execute(f"SELECT docid FROM {FTS5_IDS_TABLE} WHERE id = ?", (record_id,)).fetchone()
        if found is not None:
            cur.execute(f"DELETE FROM {FTS5_TABLE} WHERE rowid = ?", (found[0],))
            cur.execute(f"DELETE FROM {FTS5_IDS_TABLE} WHERE docid = ?", (found[0],))


def clear_fulltext(cur: sqlite3.Connection) -> None:
    """Empty the FTS5 table; it mirrors no version until the next publish."""
    cur.execute(f"DELETE FROM {FTS5_TABLE}")
    cur.execute(f"DELETE FROM {FTS5_IDS_TABLE}")
    cur.execute(f"DELETE FROM {FTS5_PROJECTS_TABLE}")
    cur.execute("DELETE FROM memory_meta WHERE key = ?", (FTS5_VERSION_KEY,))


def build_fulltext(cur: sqlite3.Connection, table: Any) -> int:
    """Refill the FTS5 table from ``table`` (its checked-out version) inside ``cur``'s
    transaction; the caller publishes. Returns the rows written."""
    clear_fulltext(cur)
    rows = table.count_rows()
    if not rows:
        return 0
    scan = table.search().select(["id", "project", *FTS_COLUMNS]).limit(rows + 1).to_arrow()
    batch = sorted(scan.to_pylist(), key=lambda r: (r["project"], r["id"]))
    docids: list[int] = []
    for project in dict.fromkeys(r["project"] for r in batch):
        slot = int(
            cur.execute(f"INSERT INTO {FTS5_PROJECTS_TABLE}(project) VALUES (?)", (project,)).lastrowid or 0
        )
        first = project_docids(slot)[0]
        docids += [first + n for n in range(sum(1 for r in batch if r["project"] == project))]
    cur.executemany(
        f"INSERT INTO {FTS5_IDS_TABLE}(docid, id) VALUES (?, ?)",
        zip(docids, (r["id"] for r in batch), strict=True),
    )
    cur.executemany(_FTS_INSERT, ((d, *fulltext_values(r)) for d, r in zip(docids, batch, strict=True)))
    return len(batch)


def publish(cur: sqlite3.Connection, version: int) -> None:
    """Make ``version`` the one readers check out, with the FTS5 rows now in ``cur`` mirroring it."""
    cur.executemany(
        "INSERT OR REPLACE INTO memory_meta(key, value) VALUES (?, ?)",
        [("published_version", str(int(version))), (FTS5_VERSION_KEY, str(int(version)))],
    )


#: Low-cardinality columns of every search prefilter get a BITMAP index (cheaper ``where``).
BITMAP_COLUMNS: tuple[str, ...] = ("project", "kind", "status")


def ensure_search_indices(table: Any) -> None:
    """BTREE on ``id`` (uid look-ups), BITMAPs on the prefilter columns and, from ``ANN_MIN_ROWS``
    rows, the ANN index on the vector (missing ones only; ``optimize`` folds new rows into them)."""
    have = {tuple(i.columns): i.index_type for i in table.list_indices()}
    rows = table.count_rows()
    if not rows:
        return
    if ("id",) not in have:
        table.create_index("id", config=BTree(), replace=True)
    for column in BITMAP_COLUMNS:
        if (column,) not in have:
            table.create_index(column, config=Bitmap(), replace=True)
    if (VECTOR_COLUMN,) not in have and rows >= ANN_MIN_ROWS:
        parts = max(16, min(int(math.sqrt(rows)), rows // 256))
        table.create_index(VECTOR_COLUMN, config=IvfHnswSq(distance_type="cosine", num_partitions=parts))


class MemoryIndex:
    """LanceDB table + index.db of one data root, opened for writing (hold the writer lock)."""

    def __init__(self, paths: MemoryPaths, embedder: Embedder):
        self.paths = paths
        self.embedder = embedder
        self.dimension = embedder.dimension
        self.conn = open_index_db(paths.index_db)
        self.cache = sqlite3.connect(str(paths.dir / "embed_cache.db"), timeout=30, isolation_level=None)
        self.cache.execute("PRAGMA journal_mode=WAL")
        self.cache.execute("PRAGMA synchronous=NORMAL")
        self.cache.execute(
            "CREATE TABLE IF NOT EXISTS embed_cache (model_key TEXT, text_hash TEXT, vector BLOB,"
            " PRIMARY KEY (model_key, text_hash))"
        )
        try:
            paths.lance_dir.mkdir(parents=True, exist_ok=True)
            self.db = lancedb.connect(str(paths.lance_dir))
            if MEMORIES_TABLE in self.db.list_tables().tables:
                self.table = self.db.open_table(MEMORIES_TABLE)
            else:
                self.table = self.db.create_table(MEMORIES_TABLE, schema=memory_arrow_schema(self.dimension))
                self.create_fts()
        except Exception as exc:  # lancedb raises many types; map them at the boundary
            raise StoreError(f"cannot open LanceDB at {paths.lance_dir}: {exc}") from exc
        self._write_meta()
        self.ensure_fulltext()

    def refresh(self) -> None:
        """See writes of other processes (call after taking the writer lock)."""
        self.table.checkout_latest()  # type: ignore[no-untyped-call]  # lancedb leaves it unannotated
        self.ensure_fulltext()

    def ensure_fulltext(self) -> bool:
        """Rebuild the FTS5 rows from the table's latest version and publish it when they do not
        mirror it (an index made before the FTS5 table, a write by an older writer, a crash between
        the LanceDB write and its publication). True when it rebuilt."""
        version = str(int(self.table.version))
        meta = dict(
            self.conn.execute(
                "SELECT key, value FROM memory_meta WHERE key IN ('published_version', ?)",
                (FTS5_VERSION_KEY,),
            ).fetchall()
        )
        if meta.get(FTS5_VERSION_KEY) == version == meta.get("published_version"):
            return False
        if "published_version" not in meta and not self.table.count_rows():
            return False  # nothing written yet: the first write publishes
        started = time.perf_counter()
        with self._tx() as cur:
            rows = build_fulltext(cur, self.table)
            self._publish(cur)
        log.info(
            "memory FTS5 table rebuilt at version %s: %d rows in %.2f s",
            version,
            rows,
            time.perf_counter() - started,
        )
        return True

    def _write_meta(self) -> None:
        meta = {
            "backend": self.embedder.backend,
            "model": self.embedder.model,
            "dimension": str(self.dimension),
            "schema_version": str(MEMORY_SCHEMA_VERSION),
        }
        self.conn.executemany("INSERT OR REPLACE INTO memory_meta(key, value) VALUES (?, ?)", meta.items())

    def create_fts(self) -> None:
        """(Re)create the per-column FTS indices."""
        for column in FTS_COLUMNS:
            self.table.create_index(
                column,
                config=FTS(base_tokenizer="simple", stem=True, remove_stop_words=False, max_token_length=64),
                replace=True,
            )

    # -- embedding ------------------------------------------------------------------------------

    def embed(self, records: Sequence[MemoryRecord]) -> np.ndarray:
        """Vectors for ``records`` (cached by text hash, so rebuilds re-embed only new text)."""
        texts = [r.embed_text() for r in records]
        hashes = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        key = self.embedder.model_key
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(hashes), 500):
            part = hashes[i : i + 500]
            sql = "SELECT text_hash, vector FROM embed_cache WHERE model_key = ? AND text_hash IN ({})"
            for h, blob in self.cache.execute(sql.format(",".join("?" * len(part))), [key, *part]):
                found[h] = np.frombuffer(blob, dtype=np.float32)
        todo = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in found}.items())
        if todo:
            vectors = self.embedder.check_dimension(self.embedder.embed_documents([t for _, t in todo]))
            self.cache.execute("BEGIN")
            for (h, _), vec in zip(todo, vectors, strict=True):
                found[h] = np.asarray(vec, dtype=np.float32)
                self.cache.execute(
                    "INSERT OR REPLACE INTO embed_cache VALUES (?,?,?)", (key, h, found[h].tobytes())
                )
            self.cache.execute("COMMIT")
        out = np.zeros((len(records), self.dimension), dtype=np.float32)
        for i, h in enumerate(hashes):
            out[i] = found[h]
        return out

    # -- writes ---------------------------------------------------------------------------------

    def upsert(
        self, items: Sequence[tuple[MemoryRecord, str, str, float, int]], *, fold: bool = True
    ) -> None:
        """Index ``(record, file_path, content_hash, mtime, size)`` items and publish."""
        if not items:
            return
        records = [it[0] for it in items]
        vectors = self.embed(records)
        rows = [record_row(r, it[1]) for r, it in zip(records, items, strict=True)]
        try:
            if fold:
                self._delete_ids([r.id for r in records])
            self.table.add(self._arrow(rows, vectors))
        except Exception as exc:
            raise StoreError(f"LanceDB write failed: {exc}") from exc
        if fold:
            self._maybe_fold()
        with self._tx() as cur:
            for rec, path, digest, mtime, size in items:
                cur.execute("DELETE FROM memory_files WHERE path = ? OR id = ?", (path, rec.id))
                cur.execute(
                    "INSERT INTO memory_files(path, id, project, kind, content_hash, mtime, size, version,"
                    " indexed_at) VALUES (?,?,?,?,?,?,?,?,?)",
                    (path, rec.id, rec.project, rec.kind, digest, mtime, size, rec.version, utc_now()),
                )
                cur.execute("DELETE FROM memory_links WHERE source_id = ?", (rec.id,))
                cur.executemany("INSERT OR IGNORE INTO memory_links VALUES (?,?,?,?)", record_links(rec))
            put_fulltext(cur, rows)
            self._publish(cur)

    def record_malformed(
        self,
        path: str,
        project: str,
        kind: str,
        digest: str,
        mtime: float,
        size: int,
        message: str,
        line: int,
    ) -> None:
        """Remember a malformed vault file (its last good row, if any, is removed from search)."""
        old = self.conn.execute("SELECT id FROM memory_files WHERE path = ?", (path,)).fetchone()
        if old and old["id"]:
            self._delete_ids([old["id"]])
        with self._tx() as cur:
            if old and old["id"]:
                delete_fulltext(cur, [old["id"]])
            cur.execute("DELETE FROM memory_files WHERE path = ?", (path,))
            cur.execute(
                "INSERT INTO memory_files(path, id, project, kind, content_hash, mtime, size, indexed_at, error,"
                " error_line) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (path, None, project, kind, digest, mtime, size, utc_now(), message, line),
            )
            self._publish(cur)

    def remove_paths(self, paths: Iterable[str]) -> None:
        """Forget files that left the vault."""
        paths = list(paths)
        if not paths:
            return
        marks = ",".join("?" * len(paths))
        ids = [
            r[0]
            for r in self.conn.execute(f"SELECT id FROM memory_files WHERE path IN ({marks})", paths)
            if r[0]
        ]
        self._delete_ids(ids)
        with self._tx() as cur:
            cur.execute(f"DELETE FROM memory_files WHERE path IN ({marks})", paths)
            delete_fulltext(cur, ids)
            if ids:
                cur.execute(f"DELETE FROM memory_links WHERE source_id IN ({','.join('?' * len(ids))})", ids)
            self._publish(cur)

    def set_counters(self, record_id: str, values: dict[str, Any]) -> None:
        """Update counter columns in place (no re-embedding) and publish."""
        sets = {
            k: (sql_str(v) if isinstance(v, str) else "NULL" if v is None else str(int(v)))
            for k, v in values.items()
        }
        try:
            self.table.update(where=f"id = {sql_str(record_id)}", values_sql=sets)
        except Exception as exc:
            raise StoreError(f"LanceDB update failed: {exc}") from exc
        with self._tx() as cur:
            self._publish(cur)

    def touch_file(self, path: str, digest: str, mtime: float, size: int) -> None:
        """Record new file bytes that changed only counters (no re-index)."""
        self.conn.execute(
            "UPDATE memory_files SET content_hash = ?, mtime = ?, size = ? WHERE path = ?",
            (digest, mtime, size, path),
        )

    def _delete_ids(self, ids: list[str]) -> None:
        for i in range(0, len(ids), 500):
            self.table.delete(f"id IN ({', '.join(sql_str(x) for x in ids[i : i + 500])})")

    def _arrow(self, rows: list[dict[str, Any]], vectors: np.ndarray) -> pa.Table:
        schema = memory_arrow_schema(self.dimension)
        cols: dict[str, Any] = {n: [r[n] for r in rows] for n in schema.names if n != VECTOR_COLUMN}
        flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
        cols[VECTOR_COLUMN] = pa.FixedSizeListArray.from_arrays(flat, self.dimension)
        return pa.Table.from_pydict(cols, schema=schema)

    def _maybe_fold(self) -> None:
        stats = self.table.index_stats(f"{FTS_COLUMNS[0]}_idx")
        if stats is not None and stats.num_unindexed_rows >= FOLD_EVERY_ROWS:
            self.optimize()

    def optimize(self) -> None:
        """Fold new rows into the indices (creating the id/ANN ones when due) and prune old versions."""
        try:
            ensure_search_indices(self.table)
            self.table.optimize(cleanup_older_than=KEEP_VERSIONS_FOR)
        except Exception as exc:
            raise StoreError(f"LanceDB optimize failed: {exc}") from exc

    def _tx(self) -> _Tx:
        return _Tx(self.conn)

    def _publish(self, cur: sqlite3.Connection) -> None:
        publish(cur, self.table.version)

    # -- reads (writer's own) -------------------------------------------------------------------

    def similar(self, record: MemoryRecord, vector: np.ndarray, limit: int = 3) -> list[dict[str, Any]]:
        """The most similar other records of the same project (cosine similarity, highest first)."""
        where = f"project = {sql_str(record.project)} AND id != {sql_str(record.id)}"
        try:
            query: Any = self.table.search(vector, vector_column_name=VECTOR_COLUMN)
            rows = (
                query.distance_type("cosine")
                .where(where, prefilter=True)
                .select(["id", "title", "kind", "status", "_distance"])
                .limit(limit)
                .to_list()
            )
        except Exception as exc:
            raise StoreError(f"LanceDB search failed: {exc}") from exc
        return [
            {
                "id": r["id"],
                "title": r["title"],
                "kind": r["kind"],
                "status": r["status"],
                "similarity": round(1.0 - float(r["_distance"]), 4),
            }
            for r in rows
        ]

    def file_states(self) -> dict[str, tuple[str, float, int]]:
        """``path -> (content_hash, mtime, size)`` of every indexed vault file."""
        return {
            r[0]: (r[1], r[2], r[3])
            for r in self.conn.execute("SELECT path, content_hash, mtime, size FROM memory_files")
        }

    def path_of(self, record_id: str) -> str | None:
        row = self.conn.execute("SELECT path FROM memory_files WHERE id = ?", (record_id,)).fetchone()
        return row[0] if row else None

    def close(self) -> None:
        self.conn.close()
        self.cache.close()


class _Tx:
    """``with _Tx(conn) as cur:`` — BEGIN IMMEDIATE … COMMIT (ROLLBACK on error)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        for attempt in range(50):
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                return self.conn
            except sqlite3.OperationalError:
                time.sleep(0.05 * (attempt + 1))
        raise StoreError("memory index.db is locked")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
