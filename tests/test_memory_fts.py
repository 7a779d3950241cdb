"""Issue 12 (latency): the memory full-text leg on SQLite FTS5 in index.db, against the real writer
(LanceDB, SQLite, ONNX model, git vault) and the searcher's real tool registry."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from local_memory_indexer.memory import index as memory_index
from local_memory_indexer.memory.sync import rebuild, sync_vault
from local_memory_indexer.memory.writer import MemoryWriter
from local_memory_search.memory import fts
from local_memory_search.memory.filters import MemoryFilters, compile_filters
from local_memory_search.memory.reader import open_reader
from local_memory_search.runtime import RUNTIME
from local_memory_shared.config import load_memory_settings, load_settings
from local_memory_shared.embedding import embedder_from_settings
from local_memory_shared.errors import StoreError
from local_memory_shared.memory import published_version
from local_memory_shared.memory.query import parse_fulltext
from local_memory_shared.memory.schema import FTS5_TABLE, FTS5_VERSION_KEY
from memory_support import ids_of
from memory_support import memory_search as search


@pytest.fixture(scope="module")
def onnx():
    return embedder_from_settings(load_settings())


@pytest.fixture
def root(monkeypatch):
    path = Path(tempfile.mkdtemp(prefix="lmf", dir="/tmp"))  # short: the hit socket lives here
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(path))
    monkeypatch.delenv("LOCAL_MEMORY_VAULT", raising=False)
    RUNTIME.clear()
    yield path
    RUNTIME.clear()
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def writer(root, onnx):
    w = MemoryWriter(load_memory_settings(), embedder=onnx, commit_delay=3600)
    yield w
    w.close()


def note(title, content, project="acme", **kw):
    return {"project": project, "kind": kw.pop("kind", "note"), "title": title, "content": content, **kw}


def codes(out):
    return [w["code"] for w in out["warnings"]]


def assert_mirrors_published(w: MemoryWriter) -> None:
    """The FTS5 rows are exactly the latest LanceDB rows' text, stamped with the published version."""
    w.index.refresh()
    conn = w.index.conn
    version = published_version(conn)
    assert version == w.index.table.version
    assert conn.execute("SELECT value FROM memory_meta WHERE key = ?", (FTS5_VERSION_KEY,)).fetchone()[
        0
    ] == str(version)
    lance = {
        r["id"]: memory_index.fulltext_values(r) for r in w.index.table.search().limit(100_000).to_list()
    }
    cols = "title, content, tags, domain, also"
    mirrored = {
        r[0]: tuple(r[1:])
        for r in conn.execute(
            f"SELECT i.id, {cols} FROM {FTS5_TABLE} f JOIN memory_fts_ids i ON i.docid = f.rowid"
        )
    }
    assert mirrored == lance


def test_fts_rows_follow_writes_edits_supersession_malformed_files_and_deletes(writer, root):
    a = writer.write(
        note("Stripe retries webhooks", "Dedupe on the event id.", tags=["stripe"], domain="/acme/pay")
    )
    b = writer.write(note("Redis cache for sessions", "Sessions live in redis.", also=["memorystore"]))
    assert_mirrors_published(writer)
    writer.edit(a.record.id, append="Retries arrive for three days.")
    assert_mirrors_published(writer)
    writer.supersede(b.record.id, {"title": "Valkey replaces redis", "content": "Sessions moved to valkey."})
    assert_mirrors_published(writer)
    vault = writer.paths.vault
    (vault / b.path).write_text("---\nnot: [valid\n---\nbody\n")  # a hand edit that breaks the file
    assert sync_vault(writer)["malformed"]
    assert_mirrors_published(writer)
    assert b.record.id not in {r[0] for r in writer.index.conn.execute("SELECT id FROM memory_fts_ids")}
    (vault / a.path).unlink()
    assert sync_vault(writer)["removed"] == 1
    assert_mirrors_published(writer)
    assert ids_of(search(fulltext="valkey")) and not ids_of(search(fulltext="stripe"))
    rebuild(writer)
    assert_mirrors_published(writer)
    assert not codes(search(fulltext="valkey"))


def test_a_pinned_reader_ranks_its_own_versions_rows_during_a_concurrent_write(writer):
    rec = writer.write(note("Kafka consumer rebalances", "Slow polls trigger a rebalance storm."))
    where = None
    with open_reader() as pinned:
        where = compile_filters(pinned, MemoryFilters(project="acme"))
        # a write publishes a new version that rewrites the record's text and adds another record
        writer.edit(rec.record.id, set_fields={"content": "Heartbeats stall under GC pauses."})
        writer.write(note("Storm drains", "A rebalance storm of a different kind."))
        rows, reason = fts.fts5_leg(pinned, parse_fulltext("rebalance storm"), where, 10)
        assert reason is None and [r["id"] for r in rows] == [rec.record.id]
        rows, _ = fts.fts5_leg(pinned, parse_fulltext("heartbeats"), where, 10)
        assert rows == []
    with open_reader() as fresh:
        rows, _ = fts.fts5_leg(fresh, parse_fulltext("heartbeats"), where, 10)
        assert [r["id"] for r in rows] == [rec.record.id]


def test_a_crash_between_the_lance_write_and_its_publication_keeps_the_last_good_version(writer, onnx):
    good = writer.write(note("Celery tasks must be idempotent", "Celery re-runs tasks when a worker dies."))
    before = published_version(writer.index.conn)

    def crash(*_args, **_kw):
        raise sqlite3.OperationalError("disk I/O error (simulated crash mid-publish)")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(memory_index, "put_fulltext", crash)
        with pytest.raises((sqlite3.OperationalError, StoreError)):
            writer.write(note("Zeppelin hangar doors", "The hangar doors stick in winter."))
    assert published_version(writer.index.conn) == before < writer.index.table.version  # LanceDB is ahead
    out = search(fulltext="celery idempotent")
    assert ids_of(out) == [good.record.id] and not codes(out)  # the last good version, from FTS5
    assert not ids_of(search(fulltext="zeppelin hangar"))  # the unpublished write is invisible
    writer.close()
    again = MemoryWriter(load_memory_settings(), embedder=onnx, commit_delay=3600)  # the next writer repairs
    try:
        assert_mirrors_published(again)
        out = search(fulltext="zeppelin hangar")
        assert len(ids_of(out)) == 1 and not codes(out)
    finally:
        again.close()


def test_missing_or_stale_fts_table_falls_back_to_lancedb_with_a_warning_until_the_writer_rebuilds(
    writer, onnx
):
    rec = writer.write(note("Postgres index builds lock", "Build indexes concurrently or the table locks."))
    assert not codes(search(fulltext="postgres locks"))
    writer.close()
    db = sqlite3.connect(writer.paths.index_db, isolation_level=None)
    db.execute(f"DROP TABLE {FTS5_TABLE}")  # an index.db made before the FTS5 table existed
    db.execute("DELETE FROM memory_meta WHERE key = ?", (FTS5_VERSION_KEY,))
    db.close()
    out = search(fulltext="postgres locks")
    assert ids_of(out) == [rec.record.id] and codes(out) == ["fts_unavailable"]
    assert "FTS5" in out["warnings"][0]["message"]
    again = MemoryWriter(load_memory_settings(), embedder=onnx, commit_delay=3600)
    try:
        out = search(fulltext="postgres locks")
        assert ids_of(out) == [rec.record.id] and not codes(out)

        def older_publish(cur, version):  # a writer that predates the FTS5 table
            cur.execute("INSERT OR REPLACE INTO memory_meta VALUES ('published_version', ?)", (str(version),))

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(memory_index, "publish", older_publish)
            mp.setattr(memory_index, "put_fulltext", lambda cur, rows: None)
            newer = again.write(note("Postgres vacuum locks", "Autovacuum takes locks too.")).record.id
    finally:
        again.close()
    out = search(fulltext="postgres locks")
    assert set(ids_of(out)) == {rec.record.id, newer} and codes(out) == ["fts_unavailable"]


def test_fulltext_semantics_through_fts5(writer):
    w = writer.write
    # the same length and one "zebra" each: only the column weights (title 1.5 > content 1.0) rank
    # the title match first (the leg orders a tie by docid: the body record, written first)
    body = w(note("Quarterly budget", "Zebra spending review today.")).record.id
    title = w(note("Zebra stripes", "Painted lines on asphalt.")).record.id
    phrase = w(note("Event ids", "Dedupe on the event id before retrying webhooks.")).record.id
    apart = w(note("Ids of events", "The id of every event is logged; webhook retries stop.")).record.id
    with open_reader() as reader:
        rows, reason = fts.fts5_leg(
            reader, parse_fulltext("zebra"), compile_filters(reader, MemoryFilters()), 5
        )
        assert reason is None and [r["id"] for r in rows] == [title, body]
        assert rows[0]["_score"] > rows[1]["_score"] > 0  # FTS_BOOSTS as bm25() weights, higher = better
    out = search(fulltext="zebra", mode="fulltext")
    assert ids_of(out)[:2] == [title, body] and not codes(out)
    assert set(ids_of(search(fulltext='"event id"'))) == {phrase}  # a quoted phrase stays a phrase
    assert set(ids_of(search(fulltext="event id"))) == {phrase, apart}  # words: OR
    assert set(ids_of(search(fulltext="retried webhook"))) == {phrase, apart}  # porter: retrying, webhooks
    assert set(ids_of(search(fulltext="event AND logged"))) == {apart}
    assert set(ids_of(search(fulltext="event NOT logged"))) == {phrase}
    assert set(ids_of(search(fulltext="zebra OR logged"))) == {title, body, apart}
    out = search(fulltext='how do "event id" (dedupe)* ^webhooks: work? NOT" zzqx')  # special characters
    assert phrase in ids_of(out) and not codes(out)
    assert ids_of(search(fulltext="does the zebra stripe unknownword exist"))[:2] == [title, body]


def test_filters_apply_before_ranking_even_when_they_exclude_the_top_bm25_hits(writer):
    for n in range(24):  # better BM25 matches (short, repeated term) in another project and path
        writer.write(note(f"Kafka kafka {n}", "kafka kafka kafka", project="noise", paths=["noise/**"]))
        if n < 6:
            writer.write(note(f"Kafka lag {n}", "kafka kafka kafka", paths=["elsewhere/**"]))
    keep = [
        writer.write(
            note("Consumer lag runbook", f"When kafka lag grows, check {w}.", paths=["svc/**"])
        ).record.id
        for w in ("partitions", "consumers")
    ]
    with open_reader() as reader:
        where = compile_filters(reader, MemoryFilters(project="acme", path="svc/a.py"))
        rows, reason = fts.fts5_leg(reader, parse_fulltext("kafka"), where, 2)
        assert reason is None and sorted(r["id"] for r in rows) == sorted(keep)
        everywhere = compile_filters(reader, MemoryFilters(project=None))
        top, _ = fts.fts5_leg(reader, parse_fulltext("kafka"), everywhere, 4)
        assert not set(keep) & {r["id"] for r in top}  # unfiltered, they are far from the top
    out = search(fulltext="kafka", mode="fulltext", path="svc/a.py", limit=2, candidateLimit=2)
    assert sorted(ids_of(out)) == sorted(keep)


def test_common_words_are_left_out_only_while_rarer_words_match(writer, monkeypatch):
    """From ``COMMON_MIN_ROWS`` records (forced to 0 here), a plain query's words found in more than
    ``COMMON_SHARE`` of the records rank nothing by themselves; with no rarer match the full query answers."""
    monkeypatch.setattr(fts, "COMMON_MIN_ROWS", 0)
    filler = [writer.write(note(f"The note {n}", f"The text of the note {n}.")).record.id for n in range(4)]
    rare = writer.write(note("Zeppelin hangar", "The hangar doors stick.")).record.id
    writer.write(note("Airship museum", "Tours every day.", project="other"))
    with open_reader() as reader:
        where = compile_filters(reader, MemoryFilters(project="acme"))
        assert (
            fts.without_common_words(reader, parse_fulltext("the zeppelin")).terms
            == parse_fulltext("zeppelin").terms
        )
        rows, _ = fts.fts5_leg(reader, parse_fulltext("the zeppelin"), where, 10)
        assert [r["id"] for r in rows] == [rare]  # the records matching only "the" are out
        monkeypatch.setattr(fts, "COMMON_MIN_ROWS", 10**9)
        rows, _ = fts.fts5_leg(reader, parse_fulltext("the zeppelin"), where, 10)
        assert rows[0]["id"] == rare and set(filler) <= {r["id"] for r in rows}  # below the size: every word
        monkeypatch.setattr(fts, "COMMON_MIN_ROWS", 0)
        only_other = compile_filters(reader, MemoryFilters(project="acme", kinds=("note",)))
        rows, _ = fts.fts5_leg(reader, parse_fulltext("the museum"), only_other, 10)
        assert set(filler) | {rare} == {r["id"] for r in rows}  # "museum" passes no filter: all words answer
    assert ids_of(search(fulltext="the zeppelin", mode="fulltext")) == [rare]


def test_a_query_too_wide_for_fts5_is_ranked_by_lancedb_without_a_warning(writer, monkeypatch):
    """Past ``MAX_FTS5_WORK`` (estimated match x phrase pairs; forced low here) LanceDB's FTS,
    which skips records that cannot reach the top, ranks the query: same records, no warning."""
    monkeypatch.setattr(fts, "COMMON_MIN_ROWS", 0)
    texts = (
        "Consumers fall behind the brokers.",
        "Lag alerts page the on-call.",
        "Rebalances stall every poll.",
    )
    ids = {writer.write(note(f"Kafka lag {n}", t)).record.id for n, t in enumerate(texts)}
    with open_reader() as reader:
        where = compile_filters(reader, MemoryFilters(project="acme"))
        assert fts.fts5_leg(reader, parse_fulltext("kafka lag"), where, 10)[1] is None
        assert fts.fts5_leg(reader, parse_fulltext("kafka lag"), where, 10)[0] is not None
        monkeypatch.setattr(fts, "MAX_FTS5_WORK", 1)
        assert fts.fts5_leg(reader, parse_fulltext("kafka lag"), where, 10) == (None, None)
    out = search(fulltext="kafka lag", mode="fulltext")
    assert set(ids_of(out)) == ids and not codes(out)
