"""Hand edits and rebuilds: the vault is the truth, the index follows it.

:func:`sync_file` is called for every record a write operation touches and by :func:`sync_vault`
(the watcher and ``memory sync``): a file whose bytes differ from what was indexed was edited by
hand; it is validated (a malformed one is recorded with path and line, keeps its content on disk,
and drops out of search until fixed) and re-indexed, and if its meaning changed without a version
bump the writer bumps ``version`` in the file. :func:`rebuild` recreates the whole index.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from local_memory_shared.errors import MalformedRecord
from local_memory_shared.memory.frontmatter import location_of, parse_record, serialise_record
from local_memory_shared.memory.model import MemoryRecord, utc_now
from local_memory_shared.memory.schema import MEMORIES_TABLE, memory_arrow_schema

from .index import clear_fulltext, sql_str
from .vault import file_digest

if TYPE_CHECKING:
    from .writer import MemoryWriter

log = logging.getLogger(__name__)
REBUILD_BATCH = 256


def sync_file(writer: MemoryWriter, rel: str, raw: bytes) -> MemoryRecord:
    """Parse ``rel`` (bytes ``raw``); index it if it changed since last indexed. Hold the writer lock."""
    digest = file_digest(raw)
    known = writer.index.conn.execute(
        "SELECT content_hash, id FROM memory_files WHERE path = ?", (rel,)
    ).fetchone()
    try:
        record = parse_record(raw.decode("utf-8", errors="replace"), rel)
    except MalformedRecord as exc:
        if known is None or known["content_hash"] != digest:
            project, kind = _where(rel)
            mtime, size = writer.vault.stat(rel)
            writer.index.record_malformed(
                rel, project, kind, digest, mtime, size, exc.message, int(exc.details.get("line", 0))
            )
        raise
    if known is not None and known["content_hash"] == digest:
        return record
    old = _indexed(writer, record.id)
    if old is not None and old["version_hash"] != record.version_hash and record.version <= old["version"]:
        record = record.with_changes(version=old["version"] + 1, updated=max(utc_now(), record.updated))
        text = serialise_record(record)
        if writer.vault.read(rel) == raw:  # compare-and-swap: an editor saving again wins
            writer.vault.write_atomic(rel, text)
            raw, digest = text.encode(), file_digest(text.encode())
    mtime, size = writer.vault.stat(rel)
    writer.index.upsert([(record, rel, digest, mtime, size)])
    writer.refresh_view(record.project, record.kind)
    writer.git.request()
    return record


def _where(rel: str) -> tuple[str, str]:
    try:
        return location_of(rel)
    except MalformedRecord:
        parts = rel.split("/")
        return (parts[1] if len(parts) > 1 else "?"), (parts[2] if len(parts) > 2 else "?")


def _indexed(writer: MemoryWriter, record_id: str) -> dict[str, Any] | None:
    rows = (
        writer.index.table.search()
        .where(f"id = {sql_str(record_id)}")
        .select(["version", "version_hash"])
        .limit(1)
        .to_list()
    )
    return rows[0] if rows else None


def sync_vault(writer: MemoryWriter) -> dict[str, Any]:
    """Pick up every hand edit, new file and deletion in the vault; report malformed files."""
    report: dict[str, Any] = {"indexed": 0, "unchanged": 0, "removed": 0, "malformed": []}
    with writer.lock.hold():
        writer.index.refresh()
        known = writer.index.file_states()
        on_disk = writer.vault.record_files()
        for rel in on_disk:
            mtime, size = writer.vault.stat(rel)
            state = known.get(rel)
            if state is not None and state[1] == mtime and state[2] == size:
                report["unchanged"] += 1
                continue
            raw = writer.vault.read(rel)
            if raw is None:
                continue
            if state is not None and state[0] == file_digest(raw):
                report["unchanged"] += 1
                continue
            try:
                sync_file(writer, rel, raw)
                report["indexed"] += 1
            except MalformedRecord as exc:
                report["malformed"].append(
                    {"path": rel, "line": exc.details.get("line"), "message": exc.message}
                )
        gone = sorted(set(known) - set(on_disk))
        writer.index.remove_paths(gone)
        report["removed"] = len(gone)
    report["malformed"] += [
        m for m in malformed_files(writer) if m["path"] not in {x["path"] for x in report["malformed"]}
    ]
    return report


def malformed_files(writer: MemoryWriter) -> list[dict[str, Any]]:
    """Every vault file currently recorded as malformed (for health checks)."""
    rows = writer.index.conn.execute(
        "SELECT path, error_line, error FROM memory_files WHERE error IS NOT NULL ORDER BY path"
    )
    return [{"path": r[0], "line": r[1], "message": r[2]} for r in rows]


def rebuild(writer: MemoryWriter) -> dict[str, Any]:
    """Recreate the LanceDB table and the SQLite projection from the vault alone."""
    from .hits import flush_hits

    started = time.perf_counter()
    flush_hits(writer)
    idx = writer.index
    with writer.lock.hold():
        if MEMORIES_TABLE in idx.db.list_tables().tables:
            idx.db.drop_table(MEMORIES_TABLE)
        idx.table = idx.db.create_table(MEMORIES_TABLE, schema=memory_arrow_schema(idx.dimension))
        with idx._tx() as cur:
            for table in ("memory_files", "memory_links", "memory_hits"):
                cur.execute(f"DELETE FROM {table}")
            clear_fulltext(cur)
        malformed: list[dict[str, Any]] = []
        batch: list[tuple[MemoryRecord, str, str, float, int]] = []
        files = writer.vault.record_files()
        for rel in files:
            raw = writer.vault.read(rel) or b""
            mtime, size = writer.vault.stat(rel)
            try:
                record = parse_record(raw.decode("utf-8", errors="replace"), rel)
            except MalformedRecord as exc:
                project, kind = _where(rel)
                idx.record_malformed(
                    rel,
                    project,
                    kind,
                    file_digest(raw),
                    mtime,
                    size,
                    exc.message,
                    int(exc.details.get("line", 0)),
                )
                malformed.append({"path": rel, "line": exc.details.get("line"), "message": exc.message})
                continue
            batch.append((record, rel, file_digest(raw), mtime, size))
            if len(batch) >= REBUILD_BATCH:
                idx.upsert(batch, fold=False)
                batch = []
        idx.upsert(batch, fold=False)
        idx.create_fts()
        idx.optimize()
        with idx._tx() as cur:
            idx._publish(cur)
            cur.execute(
                "INSERT OR REPLACE INTO memory_meta(key, value) VALUES ('rebuilt_at', ?)", (utc_now(),)
            )
        projects = {
            (r[0], r[1])
            for r in idx.conn.execute("SELECT DISTINCT project, kind FROM memory_files WHERE error IS NULL")
        }
        for project, kind in sorted(projects):
            writer.refresh_view(project, kind)
    return {
        "indexed": idx.table.count_rows(),
        "files": len(files),
        "malformed": malformed,
        "seconds": round(time.perf_counter() - started, 3),
    }
