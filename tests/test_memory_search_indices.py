"""Issue 12 (speed): the memory table's search indices and the ANN leg give the flat scan's answer."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from local_memory_indexer.memory import index as memory_index
from local_memory_indexer.memory.writer import MemoryWriter
from local_memory_search.memory import search as memory_search
from local_memory_search.memory.filters import MemoryFilters
from local_memory_search.memory.reader import MemoryReader, open_reader
from local_memory_search.memory.search import SearchRequest
from local_memory_search.memory.tools import make_encoder
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


@pytest.mark.parametrize(
    ("query", "path"),
    [("sessions cache", None), ("webhook retries", None), ("tasks run twice", "workers/a.py"),
     ("memcached sessions", "src/cache/x.py"), ("index locks table", None)],
)  # fmt: skip
def test_ann_and_flat_scan_agree(scaled, query, path):
    """Same ranked ids, scores, supersession and collapse with the ANN index as with a flat scan."""
    req = SearchRequest(MemoryFilters(project="acme", path=path), fulltext=query, semantic=query, limit=10)
    with open_reader() as reader:
        encode = make_encoder(reader, load_settings())
        assert encode is not None
        ann = memory_search.search(reader, req, encode)
        flat = memory_search.search(_flat(reader), req, encode)
    summary = [(c.id, round(c.final, 6), c.replaces, c.collapsed) for c in ann.hits]
    assert summary and summary == [(c.id, round(c.final, 6), c.replaces, c.collapsed) for c in flat.hits]
    assert ann.superseded == flat.superseded
