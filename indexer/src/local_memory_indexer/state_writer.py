"""Every write the indexer makes to a project's state DB: the only write path besides the job log.

Each public method is one transaction. ``write_batch`` is the publication step of the protocol in
``pipeline``: the mirror, the file table, the graph and ``projects.published_version`` change in
one commit, so a reader never sees a published version whose rows disagree with the mirror.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import astuple, dataclass
from typing import Any

from local_memory_shared.errors import StoreError
from local_memory_shared.schema import SCHEMA_VERSION, ChunkRecord, mirror_insert_sql
from local_memory_shared.state import RunRecord, read_last_run, utc_now

from . import graph


@dataclass(frozen=True)
class FileRow:
    """A ``files`` row: what a file looked like when it was indexed."""

    path: str
    content_hash: str
    size: int
    mtime: float
    language: str
    indexed_at: str
    chunk_count: int
    #: 1 while the file's rows are published without vectors (the embedding phase clears it).
    vectors_pending: int = 0


@dataclass(frozen=True)
class GraphRows:
    """One file's extracted graph and the spans of its chunks (to attribute symbols)."""

    path: str
    language: str
    file_graph: graph.FileGraph
    spans: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class BatchWrite:
    """What one batch publishes: rows replacing ``replaced`` files, and files that are gone."""

    replaced: tuple[str, ...]
    deleted: tuple[str, ...]
    records: tuple[ChunkRecord, ...]
    files: tuple[FileRow, ...]
    graphs: tuple[GraphRows, ...]


class StateWriter:
    """The state DB of one project, opened read-write by the run that holds ``writer.lock``."""

    def __init__(self, conn: sqlite3.Connection, project: str, key: str):
        self.conn = conn
        self.project = project
        self.key = key

    @contextlib.contextmanager
    def txn(self) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction, rolled back on any exception."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- project, provenance and the run journal ---------------------------------------------
    def register(self, backend: str, model: str, dimension: int) -> None:
        """Mark the project as indexing and record (or refresh) its provenance row."""
        now = utc_now()
        with self.txn():
            self.conn.execute(
                "INSERT INTO projects(project_path, key, created_at, status) VALUES (?,?,?,'indexing') "
                "ON CONFLICT(project_path) DO UPDATE SET status='indexing'",
                (self.project, self.key, now),
            )
            self.conn.execute(
                "INSERT INTO index_meta(project_path, backend, model, dimension, schema_version, created_at, "
                "updated_at) VALUES (?,?,?,?,?,?,?) ON CONFLICT(project_path) DO UPDATE SET "
                "updated_at=excluded.updated_at, schema_version=excluded.schema_version",
                (self.project, backend, model, dimension, SCHEMA_VERSION, now, now),
            )

    def last_run(self) -> RunRecord | None:
        """The journal's newest run (read before ``begin_run`` to learn how the last one ended)."""
        return read_last_run(self.conn)

    def begin_run(self, kind: str) -> int:
        """Open a journal row for this run; it stays open if the process is killed."""
        with self.txn():
            cur = self.conn.execute(
                "INSERT INTO runs(kind, pid, started_at) VALUES (?,?,?)", (kind, os.getpid(), utc_now())
            )
        return int(cur.lastrowid or 0)

    def end_run(self, run_id: int, outcome: str) -> None:
        """Close this run's journal row with ``outcome`` (done | cancelled | failed)."""
        with self.txn():
            self.conn.execute(
                "UPDATE runs SET finished_at = ?, outcome = ? WHERE run_id = ?", (utc_now(), outcome, run_id)
            )

    # -- reads the run needs -------------------------------------------------------------------
    def known_files(self) -> dict[str, sqlite3.Row]:
        """The ``files`` table by path."""
        return {
            row["path"]: row for row in self.conn.execute("SELECT path, content_hash, size, mtime FROM files")
        }

    def mirror_keys(self) -> dict[str, list[tuple[str, str]]]:
        """Per file, the sorted ``(chunk_id, content_hash)`` of its mirror rows."""
        out: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for path, cid, digest in self.conn.execute("SELECT file_path, chunk_id, content_hash FROM chunks"):
            out[path].append((cid, digest))
        return {path: sorted(keys) for path, keys in out.items()}

    def mirror_total(self) -> int:
        """Rows the ``files`` table says the index holds."""
        return int(self.conn.execute("SELECT COALESCE(SUM(chunk_count), 0) FROM files").fetchone()[0])

    def in_batches(
        self, sql: str, values: Sequence[str], prefix: tuple[Any, ...] = ()
    ) -> Iterator[sqlite3.Row]:
        """Run ``sql`` (with one ``IN ({marks})``) over ``values`` in slices SQLite's variable limit allows."""
        for i in range(0, len(values), 500):
            part = list(values[i : i + 500])
            yield from self.conn.execute(sql.format(marks=",".join("?" * len(part))), [*prefix, *part])

    def previous_chunks(self, file_paths: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``chunk_id → (content_hash, updated_at)`` of the files' current mirror rows."""
        sql = "SELECT chunk_id, content_hash, updated_at FROM chunks WHERE file_path IN ({marks})"
        return {
            row["chunk_id"]: (row["content_hash"], row["updated_at"])
            for row in self.in_batches(sql, file_paths)
        }

    def count_chunks(self, file_paths: Sequence[str]) -> int:
        """Mirror rows of ``file_paths``."""
        sql = "SELECT COUNT(*) FROM chunks WHERE file_path IN ({marks})"
        return sum(int(row[0]) for row in self.in_batches(sql, file_paths))

    def chunk_total(self) -> int:
        """Mirror rows."""
        return int(self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def chunk_stats(self) -> tuple[int, dict[str, int]]:
        """Total mirror rows and rows per language, most first."""
        total = self.chunk_total()
        langs = self.conn.execute("SELECT language, COUNT(*) FROM chunks GROUP BY language ORDER BY 2 DESC")
        return total, dict(langs.fetchall())

    # -- writes --------------------------------------------------------------------------------
    def touch_mtimes(self, touched: Sequence[tuple[float, str]]) -> None:
        """Record new mtimes of files whose content did not change."""
        if touched:
            with self.txn():
                self.conn.executemany("UPDATE files SET mtime = ? WHERE path = ?", touched)

    def write_batch(self, batch: BatchWrite, project_files: frozenset[str], version: int) -> None:
        """Publish ``version`` together with the batch's mirror, file and graph rows (one commit)."""
        with self.txn():
            for _ in self.in_batches("DELETE FROM chunks WHERE file_path IN ({marks})", batch.replaced):
                pass  # a DELETE yields no rows; iterating runs each slice
            if batch.deleted:
                self.conn.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in batch.deleted])
            self.conn.executemany(mirror_insert_sql(), [r.mirror_values() for r in batch.records])
            self.conn.executemany(
                "INSERT INTO files(path, content_hash, size, mtime, language, indexed_at, chunk_count, "
                "vectors_pending) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(path) DO UPDATE SET "
                "content_hash=excluded.content_hash, size=excluded.size, mtime=excluded.mtime, "
                "language=excluded.language, indexed_at=excluded.indexed_at, chunk_count=excluded.chunk_count, "
                "vectors_pending=excluded.vectors_pending",
                [astuple(f) for f in batch.files],
            )
            for path in batch.replaced:
                graph.delete_file_graph(self.conn, path)
            for g in batch.graphs:
                graph.write_file_graph(
                    self.conn, g.path, g.language, g.file_graph, list(g.spans), project_files
                )
            self._set_published(version)

    def pending_files(self) -> list[tuple[str, int]]:
        """Files published without vectors, with their chunk counts, in path order."""
        rows = self.conn.execute(
            "SELECT path, chunk_count FROM files WHERE vectors_pending = 1 ORDER BY path"
        ).fetchall()
        return [(str(r[0]), int(r[1])) for r in rows]

    def embed_inputs(self, file_paths: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(chunk_id, symbol_name, text)`` of the files' mirror rows, what the embedder needs."""
        sql = "SELECT chunk_id, symbol_name, text FROM chunks WHERE file_path IN ({marks})"
        return [(r[0], r[1] or "", r[2]) for r in self.in_batches(sql, file_paths)]

    def publish_vectors(self, file_paths: Sequence[str], version: int) -> None:
        """Publish ``version``, whose rows of ``file_paths`` now carry vectors (one commit)."""
        with self.txn():
            for i in range(0, len(file_paths), 500):
                part = list(file_paths[i : i + 500])
                self.conn.execute(
                    f"UPDATE files SET vectors_pending = 0 WHERE path IN ({','.join('?' * len(part))})",  # noqa: S608
                    part,
                )
            self._set_published(version)

    def reresolve_imports(self, project_files: frozenset[str]) -> None:
        """Re-resolve imports after files appeared or vanished."""
        with self.txn():
            graph.reresolve_imports(self.conn, project_files)

    def publish(self, version: int, *, finished: bool = False, commit: str = "") -> None:
        """Point readers at ``version``; ``finished`` also marks the project ready."""
        with self.txn():
            self._set_published(version)
            if finished:
                self.conn.execute(
                    "UPDATE projects SET status = 'ready', last_indexed_at = ?, last_commit_hash = ? "
                    "WHERE project_path = ?",
                    (utc_now(), commit or None, self.project),
                )

    def _set_published(self, version: int) -> None:
        self.conn.execute(
            "UPDATE projects SET published_version = ? WHERE project_path = ?", (version, self.project)
        )
        self.conn.execute(
            "INSERT INTO publications(version, published_at) VALUES (?, ?) "
            "ON CONFLICT(version) DO UPDATE SET published_at = excluded.published_at",
            (version, time.time()),
        )

    def parse_fingerprint(self) -> str | None:
        """The fingerprint of the parser that built this state (``parse_identity``), if recorded."""
        row = self.conn.execute("SELECT fingerprint FROM parser WHERE id = 1").fetchone()
        return str(row[0]) if row else None

    def set_parse_fingerprint(self, fingerprint: str) -> None:
        """Record that every file of this state was parsed by ``fingerprint``'s parser."""
        with self.txn():
            self.conn.execute(
                "INSERT INTO parser(id, fingerprint) VALUES (1, ?) "
                "ON CONFLICT(id) DO UPDATE SET fingerprint = excluded.fingerprint",
                (fingerprint,),
            )

    def forget_publications(self) -> None:
        """The LanceDB table was recreated: its version numbers start over."""
        with self.txn():
            self.conn.execute("DELETE FROM publications")

    def prune_floor(self, grace_seconds: float) -> int | None:
        """Oldest LanceDB version a reader may still hold; older publications are forgotten.

        A version stops being published when the next one is; readers hold one for a tool call,
        so every version that was still the published one ``grace_seconds`` ago is kept.
        """
        cutoff = time.time() - grace_seconds
        rows = self.conn.execute(
            "SELECT version, published_at FROM publications ORDER BY published_at"
        ).fetchall()
        if not rows:
            return None
        floor = rows[0]["version"]
        for row in rows:
            if row["published_at"] <= cutoff:
                floor = row["version"]  # the one published at the cutoff instant
        with self.txn():
            self.conn.execute("DELETE FROM publications WHERE version < ?", (floor,))
        return int(floor)

    def published(self) -> int | None:
        """The published LanceDB version, or None before the first publish."""
        row = self.conn.execute(
            "SELECT published_version FROM projects WHERE project_path = ?", (self.project,)
        ).fetchone()
        return row[0] if row else None

    def lance_name(self) -> str:
        """The LanceDB folder name (in the project dir) the published version lives in."""
        row = self.conn.execute(
            "SELECT lance_dir FROM projects WHERE project_path = ?", (self.project,)
        ).fetchone()
        return str(row[0]) if row and row[0] else "lance"

    def set_status(self, status: str) -> None:
        """Record the project's status (ready | failed | new)."""
        try:
            with self.txn():
                self.conn.execute(
                    "UPDATE projects SET status = ? WHERE project_path = ?", (status, self.project)
                )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot record status: {exc}") from exc
