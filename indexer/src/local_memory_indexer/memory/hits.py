"""Hit accounting (seed 000) on the writer side.

``record_hits`` bumps the live counters in SQLite at once: only hit-eligible kinds count,
unknown ids are ignored, and with a ``session_id`` each record counts at most once per
session (rows kept :data:`SESSION_TTL`). ``flush_hits`` writes ``hits``/``last_hit`` into the
records' frontmatter in one batch (one git commit) and into the LanceDB counter columns in
place: counters are not part of the embedded text, so no re-embedding ever happens.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from local_memory_shared.errors import InvalidArgument, MalformedRecord
from local_memory_shared.memory.frontmatter import serialise_record
from local_memory_shared.memory.model import HIT_ELIGIBLE_KINDS, TIME_FORMAT, utc_now
from local_memory_shared.memory.uid import is_uid

from .index import sql_str
from .vault import file_digest

if TYPE_CHECKING:
    from .writer import MemoryWriter

log = logging.getLogger(__name__)
SESSION_TTL = timedelta(days=7)
MAX_IDS = 1000


def record_hits(writer: MemoryWriter, ids: list[str], session_id: str | None) -> dict[str, Any]:
    """Count one retrieval hit for each eligible id (de-duped per session); returns what counted."""
    if not isinstance(ids, list) or len(ids) > MAX_IDS or not all(isinstance(i, str) for i in ids):
        raise InvalidArgument(f"ids must be a list of at most {MAX_IDS} record ids", field="ids")
    if session_id is not None and (not isinstance(session_id, str) or len(session_id) > 200):
        raise InvalidArgument("session_id must be a string of at most 200 characters", field="session_id")
    wanted = list(dict.fromkeys(i.strip().upper() for i in ids if is_uid(i)))
    now = utc_now()
    recorded: list[str] = []
    conn = writer.index.conn
    with writer.index._tx() as cur:
        cutoff = (datetime.now(UTC) - SESSION_TTL).strftime(TIME_FORMAT)
        cur.execute("DELETE FROM hit_sessions WHERE seen_at < ?", (cutoff,))
        for rid in wanted:
            row = conn.execute("SELECT kind FROM memory_files WHERE id = ?", (rid,)).fetchone()
            if row is None or row[0] not in HIT_ELIGIBLE_KINDS:
                continue
            if session_id:
                seen = conn.execute(
                    "SELECT 1 FROM hit_sessions WHERE session_id = ? AND id = ?", (session_id, rid)
                )
                if seen.fetchone():
                    continue
                cur.execute("INSERT INTO hit_sessions VALUES (?, ?, ?)", (session_id, rid, now))
            if conn.execute("SELECT 1 FROM memory_hits WHERE id = ?", (rid,)).fetchone() is None:
                base = _indexed_hits(writer, rid)
                cur.execute("INSERT INTO memory_hits VALUES (?, ?, NULL, ?)", (rid, base, base))
            cur.execute("UPDATE memory_hits SET hits = hits + 1, last_hit = ? WHERE id = ?", (now, rid))
            recorded.append(rid)
    return {"recorded": recorded, "ignored": [i for i in ids if i.strip().upper() not in recorded]}


def _indexed_hits(writer: MemoryWriter, rid: str) -> int:
    rows = writer.index.table.search().where(f"id = {sql_str(rid)}").select(["hits"]).limit(1).to_list()
    return int(rows[0]["hits"]) if rows else 0


def flush_hits(writer: MemoryWriter) -> int:
    """Write pending counters into frontmatter + LanceDB; returns how many records were written."""
    conn = writer.index.conn
    pending = conn.execute("SELECT id, hits, last_hit FROM memory_hits WHERE hits != flushed_hits").fetchall()
    if not pending:
        return 0
    written = 0
    with writer.lock.hold():
        writer.index.refresh()
        for rid, hits, last_hit in pending:
            try:
                written += _flush_one(writer, rid, hits, last_hit)
            except MalformedRecord:
                log.warning("hits of %s not written: its file is malformed (kept in SQLite)", rid)
    if written:
        writer.git.request(written)
    return written


def _flush_one(writer: MemoryWriter, rid: str, hits: int, last_hit: str | None) -> int:
    from .sync import sync_file

    rel = writer.index.path_of(rid)
    raw = writer.vault.read(rel) if rel else None
    if rel is None or raw is None:
        writer.index.conn.execute("DELETE FROM memory_hits WHERE id = ?", (rid,))
        return 0
    record = sync_file(writer, rel, raw)  # picks up a pending hand edit first
    raw = writer.vault.read(rel) or b""
    updated = record.with_changes(hits=max(hits, record.hits), last_hit=last_hit or record.last_hit)
    text = serialise_record(updated)
    if writer.vault.read(rel) != raw:
        return 0  # an editor saved meanwhile: the next flush retries
    writer.vault.write_atomic(rel, text)
    mtime, size = writer.vault.stat(rel)
    writer.index.touch_file(rel, file_digest(text.encode()), mtime, size)
    writer.index.set_counters(rid, {"hits": updated.hits, "last_hit": updated.last_hit})
    writer.index.conn.execute("UPDATE memory_hits SET flushed_hits = ? WHERE id = ?", (hits, rid))
    return 1
