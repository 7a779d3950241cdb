"""``index_status``: what is indexed (files, chunks, languages, model) and how fresh it is.

Freshness is what the next ``local-memory-indexer index`` would do, computed read-only: the
project is walked with the indexer's own rules (:func:`local_memory_shared.discovery.discover`,
one owner), so a file counts as *new* exactly when the indexer would take it, and an indexed
file the rules now skip (deleted, newly ignored, now a secret) counts as *deleted*. Known files
are compared by size and mtime, then by content hash (a touched but unchanged file is not
stale); indexed files whose size and mtime did not move skip the walk's content read.
Every read of a project file is bounded and opens regular files only (:mod:`local_memory_shared.fs`).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local_memory_shared.config import Settings, load_settings
from local_memory_shared.discovery import discover
from local_memory_shared.errors import StoreError
from local_memory_shared.fs import sha256_regular_file

from ..encoder import choose_encoder
from ..store import IndexReader, open_index
from .common import EXAMPLES

log = logging.getLogger(__name__)

FRESHNESS_METHOD = "the indexer's discovery rules (shared), read-only; known files: size+mtime, then sha256"


@dataclass(frozen=True)
class Freshness:
    """How the project tree differs from what the index holds."""

    indexed_files: int
    unchanged: int
    touched: int  # mtime/size moved but the content hash is the same
    changed: tuple[str, ...]
    new: tuple[str, ...]
    deleted: tuple[str, ...]
    seconds: float
    skipped: tuple[tuple[str, int], ...] = ()

    @property
    def stale_files(self) -> int:
        """Files the next index run would touch."""
        return len(self.changed) + len(self.new) + len(self.deleted)

    @property
    def stale_ratio(self) -> float:
        """Stale files over every file of either side (indexed ∪ now present)."""
        universe = self.indexed_files + len(self.new)
        return round(self.stale_files / universe, 4) if universe else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the report."""
        return {
            "indexed_files": self.indexed_files,
            "unchanged": self.unchanged,
            "touched": self.touched,
            "changed": len(self.changed),
            "new": len(self.new),
            "deleted": len(self.deleted),
            "stale_files": self.stale_files,
            "stale_ratio": self.stale_ratio,
            "fresh": self.stale_files == 0,
            "examples": {
                "changed": list(self.changed[:EXAMPLES]),
                "new": list(self.new[:EXAMPLES]),
                "deleted": list(self.deleted[:EXAMPLES]),
            },
            "skipped": dict(self.skipped),
            "method": FRESHNESS_METHOD,
            "elapsed_ms": round(self.seconds * 1000, 1),
        }


def compute_freshness(root: Path, conn: sqlite3.Connection, *, max_file_bytes: int) -> Freshness:
    """Compare the project tree with the ``files`` table (read-only; see the module docstring)."""
    started = time.perf_counter()
    known = {
        r["path"]: (int(r["size"]), float(r["mtime"]), r["content_hash"])
        for r in conn.execute("SELECT path, size, mtime, content_hash FROM files")
    }
    found = discover(
        root, max_file_bytes=max_file_bytes, trusted={p: (s, m) for p, (s, m, _) in known.items()}
    )
    present = {f.path: f for f in found.files}
    changed: list[str] = []
    unchanged = touched = 0
    for rel in sorted(present.keys() & known.keys()):
        f, (size, mtime, digest) = present[rel], known[rel]
        if f.size == size and f.mtime == mtime:
            unchanged += 1
            continue
        try:
            same = sha256_regular_file(f.abs_path, max_file_bytes) == digest
        except OSError as exc:  # vanished, replaced by a FIFO, grew past the cap: not what was indexed
            log.info("cannot hash %s: %s", f.abs_path, exc)
            same = False
        if same:
            touched += 1
        else:
            changed.append(rel)
    return Freshness(
        len(known),
        unchanged,
        touched,
        tuple(changed),
        tuple(sorted(present.keys() - known.keys())),
        tuple(sorted(known.keys() - present.keys())),
        time.perf_counter() - started,
        tuple(sorted(found.skipped.items())),
    )


def index_status(project_path: str | None = None, *, settings: Settings | None = None) -> dict[str, Any]:
    """Counts, languages, model, last index time and freshness of the project's index."""
    settings = settings or load_settings()
    started = time.perf_counter()
    with open_index(project_path, settings) as reader:
        try:
            data = _sqlite_status(reader)
            freshness = compute_freshness(
                reader.paths.project_path, reader.conn, max_file_bytes=settings.max_file_bytes
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read state DB {reader.paths.state_db}: {exc}") from exc
        data.update(_lance_status(reader))
        data["freshness"] = freshness.to_dict()
        data["stale_ratio"] = freshness.stale_ratio
        data["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
        return {"data": data, "warnings": list(reader.warnings)}


def _grouped(conn: sqlite3.Connection, table: str) -> dict[str, int]:
    rows = conn.execute(f"SELECT language, COUNT(*) FROM {table} GROUP BY language ORDER BY 2 DESC, 1")  # noqa: S608
    return {(lang or "unknown"): int(n) for lang, n in rows}


def _sqlite_status(reader: IndexReader) -> dict[str, Any]:
    conn, row = reader.conn, reader.project_row
    return {
        "project_path": reader.project,
        "status": row.status,
        "indexed_files": int(conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]),
        "indexed_chunks": int(conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]),
        "chunks_pending_vectors": reader.pending_vectors,
        "lance_rows": None,
        "chunks_by_language": _grouped(conn, "chunks"),
        "files_by_language": _grouped(conn, "files"),
        "model": None,
        "schema_version": reader.meta.schema_version if reader.meta else None,
        "last_indexed_at": row.last_indexed_at,
        "last_commit_hash": row.last_commit_hash,
        "published_version": row.published_version,
        "lance_state": reader.lance_state,
        "last_job": _last_job(conn, reader.project),
    }


def _lance_status(reader: IndexReader) -> dict[str, Any]:
    lance_rows = None
    if reader.table is not None:
        try:
            lance_rows = int(reader.table.count_rows())
        except Exception as exc:  # reported as unknown rather than failing the status
            log.warning("LanceDB count failed: %s", exc)
    choice, _ = choose_encoder(reader.meta, reader.vector_dim)
    model: dict[str, Any] = {
        "backend": choice.backend if choice else None,
        "model": choice.model if choice else None,
        "dimension": reader.meta.dimension if reader.meta else reader.vector_dim,
        "provenance": "recorded" if reader.meta else ("inferred" if choice else "unknown"),
    }
    return {"lance_rows": lance_rows, "model": model}


def _last_job(conn: sqlite3.Connection, project: str) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT job_id, status, phase, files_done, files_total, chunks_embedded, chunks_total, started_at, "
        "finished_at FROM jobs WHERE project_path = ? ORDER BY started_at DESC LIMIT 1",
        (project,),
    ).fetchone()
    return dict(row) if row else None
