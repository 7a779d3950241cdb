"""Issue 12 (speed): the memory table's search indices and the ANN leg give the flat scan's answer."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from local_memory_indexer.memory import index as memory_index
from local_memory_indexer.memory.writer import MemoryWriter
from local_memory_search.memory import search as memory_search
from local_memory_search.memory import vectors
from local_memory_search.memory.filters import MemoryFilters, compile_filters
from local_memory_search.memory.reader import MemoryReader, open_reader
from local_memory_search.memory.search import SearchRequest
from local_memory_search.memory.tools import make_encoder
from local_memory_search.runtime import RUNTIME
from local_memory_shared.config import load_memory_settings, load_settings
from local_memory_shared.embedding import embedder_from_settings

from bench.memory_bench import scale_index

TOPICS = [
    ("Redis cache for sessions", "Sessions live in redis with a one hour ttl.", "src/cache/**"),
    ("Stripe retries webhooks", "Dedupe on the event id; retries arrive for three days.", "src/billing/**"),
    ("Celery tasks must be idempotent", "Celery re-runs tasks when a worker dies.", "workers/**"),
    ("Postgres index builds lock", "Build indexes concurrently or the table locks.", "db/migrations/**"),
    ("Kafka consumers rebalance", "Slow polls past max poll interval trigger a rebalance.", "consumers/**"),
]


@pytest.fixture(scope="module")
def scaled():
    """A small real index replicated to 1,200 rows with the indices the writer builds at scale."""
    src = Path(tempfile.mkdtemp(prefix="lmsidx", dir="/tmp"))
    dest = Path(tempfile.mkdtemp(prefix="lmsidx-big", dir="/tmp"))
    shutil.rmtree(dest)
    dest.mkdir()
    mp = pytest.MonkeyPatch()
    mp.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(src))
    mp.delenv("LOCAL_MEMORY_VAULT", raising=False)
    mp.setattr(memory_index, "ANN_MIN_ROWS", 1000)
    w = MemoryWriter(
        load_memory_settings(), embedder=embedder_from_settings(load_settings()), commit_delay=3600
    )
    old = w.write({"project": "acme", "kind": "decision", "title": "Use memcached for sessions",
                   "content": "Sessions live in memcached.", "paths": ["src/cache/**"]}).record.id  # fmt: skip
    for title, content, path in TOPICS:
        w.write({"project": "acme", "kind": "trap", "title": title, "content": content, "paths": [path]})
    for n, expires in enumerate(("2030-06-01T00:00:00Z", "2031-06-01T00:00:00Z")):
        w.write({"project": "acme", "kind": "note", "title": f"Session cache note {n}", "expires": expires,
                 "content": "Sessions expire from the cache.", "paths": ["src/cache/**"]})  # fmt: skip
    w.supersede(
        old,
        {
            "title": "Redis replaces memcached for sessions",
            "content": "Sessions moved to redis.",
            "paths": ["src/cache/**"],
        },
    )
    w.close()
    rows = scale_index(src, dest, 1200, seed=3)
    mp.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(dest))
    yield rows
    mp.undo()
    shutil.rmtree(src, ignore_errors=True)
    shutil.rmtree(dest, ignore_errors=True)


def test_writer_indices_exist_at_scale(scaled):
    with open_reader() as reader:
        kinds = {tuple(i.columns): i.index_type for i in reader.table.list_indices()}
        assert reader.has_vector_index
    assert scaled == 1200
    assert kinds[("id",)] == "BTree"
    assert all(kinds[(c,)] == "Bitmap" for c in memory_index.BITMAP_COLUMNS)
    assert kinds[("vector",)] == "IvfHnswSq"


def _flat(reader: MemoryReader) -> MemoryReader:
    flat = MemoryReader(reader.paths, reader.table, reader.conn, reader.meta)
    flat.__dict__["has_vector_index"] = False  # the cached_property, forced to the flat scan
    return flat


@pytest.mark.parametrize("leg", ["exact", "ann"])
@pytest.mark.parametrize(
    ("query", "path"),
    [("sessions cache", None), ("webhook retries", None), ("tasks run twice", "workers/a.py"),
     ("memcached sessions", "src/cache/x.py"), ("index locks table", None)],
)  # fmt: skip
def test_vector_legs_and_flat_scan_agree(scaled, query, path, leg, monkeypatch):
    """Same ranked ids, scores, supersession and collapse with the in-memory exact leg (and with
    the ANN index, used above ``EXACT_MAX_ROWS``) as with LanceDB's flat scan."""
    if leg == "ann":
        monkeypatch.setattr(vectors, "EXACT_MAX_ROWS", 100)
        RUNTIME.clear()  # start without this version's matrix
    req = SearchRequest(MemoryFilters(project="acme", path=path), fulltext=query, semantic=query, limit=10)
    with open_reader() as reader:
        encode = make_encoder(reader, load_settings())
        assert encode is not None
        fast = memory_search.search(reader, req, encode)
        built = reader.opened is not None and "vector_index" in reader.opened._memo
        assert built == (leg == "exact")
        flat = memory_search.search(_flat(reader), req, encode)
    summary = [(c.id, round(c.final, 6), c.replaces, c.collapsed) for c in fast.hits]
    assert summary and summary == [(c.id, round(c.final, 6), c.replaces, c.collapsed) for c in flat.hits]
    assert fast.superseded == flat.superseded


@pytest.mark.parametrize(
    "filters",
    [{}, {"project": None}, {"kinds": ("note",)}, {"path": "src/cache/a.py"}, {"path": "nowhere/x"},
     {"as_of": "2031-01-01T00:00:00Z"}, {"as_of": "2031-01-01T00:00:00Z", "include_expired": True},
     {"now": "2030-12-01T00:00:00Z"}, {"tags": ("nope",)}, {"status": "superseded"}],
)  # fmt: skip
def test_exact_leg_filters_like_the_sql_where(scaled, filters):
    """The in-memory leg's cached mask + per-call filters (asOf, expiry, path) keep exactly the
    rows LanceDB's prefiltered flat scan keeps, in the same order with the same distances."""
    f = MemoryFilters(**{"project": "acme", **filters})
    with open_reader() as reader:
        vec = make_encoder(reader, load_settings())("when do cached sessions expire")
        where, vf = compile_filters(reader, f)
        for depth in (5, 60, 5000):
            exact = vectors.exact_top(reader, vec, vf, depth)
            flat = _flat(reader).table.search(vec.tolist(), vector_column_name="vector").distance_type(
                "cosine").where(where, prefilter=True).select(["id", "_distance"]).limit(depth).bypass_vector_index().to_list()  # fmt: skip
            assert exact is not None and [r["id"] for r in exact] == [r["id"] for r in flat]
            assert all(abs(a["_distance"] - b["_distance"]) < 1e-5 for a, b in zip(exact, flat, strict=True))
        moment = filters.get("as_of") or filters.get("now")
        if moment:  # the notes expired by then are really out (and back with include_expired)
            expired = {r["id"] for r in reader.rows(f"expires <= '{moment}'", ("id",))}
            assert expired and bool(expired & {r["id"] for r in exact}) == bool(
                filters.get("include_expired")
            )
        if filters.get("path") == "nowhere/x" or filters.get("tags"):
            assert exact == []
        index = reader.opened._memo["vector_index"]
        assert 0 < len(index.matrix(reader)) <= index.matrix(reader).nbytes // 1536


def test_successor_outside_the_candidates_resolved_from_the_matrix_like_sql(scaled):
    """A superseded hit whose successor is no candidate: the exact leg's mask decides that the
    successor passes the filters (no query) and gives the same answer as the SQL path."""
    f = MemoryFilters(project="acme")
    req = SearchRequest(f, fulltext='"live in memcached"', candidate_limit=1, limit=1)
    with open_reader() as reader:
        encode = make_encoder(reader, load_settings())
        memory_search.search(reader, SearchRequest(f, semantic="sessions"), encode)  # builds the mask
        fast = memory_search.search(reader, req, encode)
        assert vectors.exact_scope(reader, compile_filters(reader, req.filters)[1]) is not None
        flat = memory_search.search(_flat(reader), req, encode)
    took_over = [c for c in fast.hits if c.match_source == "successor"]
    assert took_over and took_over[0].replaces and took_over[0].final > 0
    summary = [(c.id, round(c.final, 6), c.replaces, c.collapsed, c.match_source) for c in fast.hits]
    assert summary == [(c.id, round(c.final, 6), c.replaces, c.collapsed, c.match_source) for c in flat.hits]
    assert fast.superseded == flat.superseded
