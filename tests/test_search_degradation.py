"""Degradation, never an error: each path is exercised by really breaking a copy of a real index."""

from __future__ import annotations

import glob
import shutil
import socket
import sqlite3
import time
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from fakes.ollama_server import FakeOllama
from lancedb.index import FTS, IvfFlat, IvfRq
from local_memory_search import store as search_store
from local_memory_search.store import clear_caches, open_index
from local_memory_search.tools import call_tool
from local_memory_shared.config import load_settings
from local_memory_shared.embedding import OllamaEmbedder, RetryPolicy
from search_support import env, index, project_dir, snapshot, state_rw, write_project


@pytest.fixture(scope="module")
def project(indexed_sample) -> Path:
    return indexed_sample.project


@pytest.fixture(scope="module")
def pristine(indexed_sample) -> Path:
    """The shared healthy index: only ever copied (see ``root``), never broken in place."""
    return indexed_sample.data_root


@pytest.fixture()
def root(pristine, project, tmp_path) -> Path:
    """A private copy of the healthy index, ready to be broken."""
    copy = tmp_path / "data"
    shutil.copytree(pristine, copy)
    clear_caches()
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(copy), LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT=str(project)):
        yield copy
    clear_caches()


def ok(tool: str, **args):
    envelope = call_tool(tool, {"cache_bust": True, **args} if tool.startswith("search") else args)
    assert envelope["ok"], envelope
    return envelope


def codes(envelope) -> list[str]:
    return [w["code"] for w in envelope["warnings"]]


def symbols(envelope) -> list[str]:
    return [r["symbol_name"] for r in envelope["results"]]


def lance_table(root: Path, project: Path):
    return lancedb.connect(str(project_dir(root, project) / "lance")).open_table("chunks")


def publish(root: Path, project: Path, version: int | None = None) -> None:
    """Point projects.published_version at ``version`` (default: the table's latest)."""
    version = version if version is not None else lance_table(root, project).version
    conn = state_rw(root, project)
    conn.execute("UPDATE projects SET published_version = ?", (version,))
    conn.close()


def sql(root: Path, project: Path, statement: str, args: tuple = ()) -> None:
    conn = state_rw(root, project)
    conn.execute(statement, args)
    conn.close()


def test_healthy_baseline(root):
    hybrid = ok("search_hybrid", query="retry the database connection with backoff")
    assert codes(hybrid) == [] and hybrid["search"]["legs"] == {
        "semantic": "lance_flat",
        "keyword": "lance_fts",
    }
    assert symbols(hybrid)[0] == "ConnectionPool.connect"


def test_candidates_the_mirror_lacks_get_their_path_and_names_from_lancedb(root, project):
    """The legs read ids from LanceDB and each candidate's path and names from the SQLite mirror;
    a candidate whose mirror row is gone is read from the table instead, so it is ranked by its
    real path and names, not as a nameless chunk."""
    from local_memory_search.hybrid import RankRequest, rank

    with open_index(str(project)) as reader:
        first = rank(reader, RankRequest("ConnectionPool connect", "hybrid"))
    before = {s.chunk_id: (s.file_path, s.identifier_match, s.updated_at) for s in first.ranked}
    path = first.ranked[0].file_path
    assert path and before[first.ranked[0].chunk_id][1]  # the top hit is named by the query
    sql(root, project, "DELETE FROM chunks WHERE file_path = ?", (path,))
    clear_caches()
    with open_index(str(project)) as reader:
        ranking = rank(reader, RankRequest("ConnectionPool connect", "hybrid"))
    after = {s.chunk_id: (s.file_path, s.identifier_match, s.updated_at) for s in ranking.ranked}
    lost = [cid for cid, (p, *_) in before.items() if p == path and cid in after]
    assert lost and all(after[cid] == before[cid] for cid in lost)


# -- FTS unavailable → SQLite LIKE ---------------------------------------------------------


def test_dropped_fts_index_falls_back_to_sqlite_like(root, project):
    table = lance_table(root, project)
    table.drop_index(next(i.name for i in table.list_indices() if i.index_type == "FTS"))
    publish(root, project)
    keyword = ok("search_keyword", query="initializeDatabase")
    assert "fts_unavailable" in codes(keyword)
    assert keyword["search"]["legs"] == {"keyword": "sqlite_like"}
    assert symbols(keyword)[0] == "initializeDatabase"
    hybrid = ok("search_hybrid", query="retry the database connection with backoff")
    assert hybrid["search"]["legs"] == {"semantic": "lance_flat", "keyword": "sqlite_like"}
    assert symbols(hybrid)[0] == "ConnectionPool.connect"


def test_fts_index_with_missing_files_falls_back_to_sqlite_like(root, project):
    table = lance_table(root, project)
    fts = next(i for i in table.list_indices() if i.index_type == "FTS")
    removed = glob.glob(
        str(project_dir(root, project) / "lance" / "chunks.lance" / "_indices" / fts.index_uuid / "*")
    )
    assert removed
    for path in removed:
        Path(path).unlink()
    keyword = ok("search_keyword", query="LruCache")
    assert "fts_unavailable" in codes(keyword)
    assert keyword["search"]["legs"] == {"keyword": "sqlite_like"}
    assert symbols(keyword)[0] == "LruCache"


# -- ANN index unusable → brute-force scan -------------------------------------------------


def test_broken_ann_index_falls_back_to_a_flat_scan(root, project):
    table = lance_table(root, project)
    table.create_index("vector", config=IvfFlat(distance_type="cosine", num_partitions=2))
    publish(root, project)
    healthy = ok("search_semantic", query="evict the least recently used entry")
    assert healthy["search"]["legs"] == {"semantic": "lance_ann"} and codes(healthy) == []
    ann = next(i for i in lance_table(root, project).list_indices() if i.index_type != "FTS")
    files = glob.glob(
        str(project_dir(root, project) / "lance" / "chunks.lance" / "_indices" / ann.index_uuid / "*")
    )
    assert files
    for path in files:
        Path(path).unlink()
    clear_caches()  # as a fresh server process would: nothing of the index is left in memory
    broken = ok("search_semantic", query="evict the least recently used entry")
    assert codes(broken) == ["ann_index_unusable"]
    assert broken["search"]["legs"] == {"semantic": "lance_flat"}
    assert symbols(broken)[:3] == symbols(healthy)[:3]


def test_each_ann_index_kind_answers_as_the_exact_scan_does(root, project):
    """IVF_RQ (what the indexer builds) is asked without a refine, IVF_PQ of older indexes and any
    other kind with one; each names its kind on the reader and finds the exact scan's answer."""
    query = "evict the least recently used entry"
    exact = ok("search_semantic", query=query)
    assert exact["search"]["legs"] == {"semantic": "lance_flat"}
    for config, kind in (
        (IvfRq(distance_type="cosine", num_partitions=2, num_bits=4), "IvfRq"),
        (IvfFlat(distance_type="cosine", num_partitions=2), "IvfFlat"),
    ):
        lance_table(root, project).create_index("vector", config=config, replace=True)
        publish(root, project)
        clear_caches()
        with open_index(project, load_settings()) as reader:
            assert reader.vector_index == kind
        found = ok("search_semantic", query=query)
        assert found["search"]["legs"] == {"semantic": "lance_ann"} and codes(found) == []
        # The same answers as the exact scan: 4-bit RaBitQ codes (random rotation, no refine) may
        # swap two near-tied neighbours, so the exact top hit must be in the first two, and the
        # first five must be the same five (a kind that searched wrongly fails both).
        assert symbols(exact)[0] == "LruCache" and "LruCache" in symbols(found)[:2], symbols(found)
        assert {r["chunk_id"] for r in found["results"][:5]} == {r["chunk_id"] for r in exact["results"][:5]}


# -- LanceDB missing or unreadable → SQLite fallback for everything ------------------------


def test_lance_folder_moved_away_answers_from_sqlite(root, project):
    lance = project_dir(root, project) / "lance"
    lance.rename(lance.with_name("lance.moved"))
    hybrid = ok("search_hybrid", query="retry the database connection with backoff")
    assert {"lance_missing", "vector_leg_unavailable"} <= set(codes(hybrid))
    assert (
        hybrid["search"]["legs"] == {"keyword": "sqlite_like"} and hybrid["search"]["alpha_effective"] == 0.0
    )
    assert "ConnectionPool.connect" in symbols(hybrid)[:3]
    assert symbols(ok("search_keyword", query="initializeDatabase"))[0] == "initializeDatabase"
    semantic = ok("search_semantic", query="LruCache")
    assert semantic["search"]["mode"] == "keyword" and symbols(semantic)[0] == "LruCache"
    cid = semantic["results"][0]["chunk_id"]
    chunk = ok("get_chunk", chunk_id=cid)
    assert chunk["data"]["symbol_name"] == "LruCache" and "lance_missing" in codes(chunk)
    assert ok("read_chunk_neighbors", chunk_id=cid)["data"]["after"]
    similar = ok("search_similar", file_path="src/cache.py", function_name="get")
    assert similar["results"] and "vector_leg_unavailable" in codes(similar)
    explained = ok("explain_match", query="LruCache", result_id=cid)
    assert explained["data"]["rank"] == 1 and explained["data"]["alpha_effective"] == 0.0
    assert not lance.exists()  # the searcher never recreates it


def test_unreadable_published_version_answers_from_sqlite(root, project):
    publish(root, project, 9999)
    keyword = ok("search_keyword", query="ComputeChecksum")
    assert "lance_unavailable" in codes(keyword)
    assert keyword["search"]["legs"] == {"keyword": "sqlite_like"}
    assert symbols(keyword)[0] == "ComputeChecksum"


# -- query encoder from provenance ---------------------------------------------------------


def test_wrong_dimension_in_index_meta_fails_only_the_semantic_leg(root, project):
    sql(root, project, "UPDATE index_meta SET dimension = 512")
    hybrid = ok("search_hybrid", query="retry the database connection with backoff")
    assert "query_dimension_mismatch" in codes(hybrid)
    assert hybrid["search"]["legs"] == {"keyword": "lance_fts"} and hybrid["search"]["alpha_effective"] == 0.0
    assert "ConnectionPool.connect" in symbols(hybrid)[:3]
    semantic = ok("search_semantic", query="LruCache")
    assert "query_dimension_mismatch" in codes(semantic) and symbols(semantic)[0] == "LruCache"


def test_missing_index_meta_infers_the_encoder_from_the_dimension(root, project):
    healthy = symbols(ok("search_semantic", query="evict the least recently used entry"))
    sql(root, project, "DELETE FROM index_meta")
    inferred = ok("search_semantic", query="evict the least recently used entry")
    assert codes(inferred) == ["index_provenance_inferred"]
    assert "onnx" in inferred["warnings"][0]["message"]
    assert inferred["search"]["legs"] == {"semantic": "lance_flat"}
    assert symbols(inferred) == healthy


def test_unknown_dimension_without_provenance_skips_the_semantic_leg(root, project):
    table = lance_table(root, project)
    data = table.to_arrow()
    rng = np.random.default_rng(1)
    odd = rng.normal(size=(data.num_rows, 16)).astype(np.float32)
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(odd.reshape(-1)), 16)
    data = data.set_column(data.schema.get_field_index("vector"), "vector", vectors)
    db = lancedb.connect(str(project_dir(root, project) / "lance"))
    rebuilt = db.create_table("chunks", data=data, mode="overwrite")
    rebuilt.create_index("fts_text", config=FTS(base_tokenizer="simple"))
    publish(root, project, rebuilt.version)
    sql(root, project, "DELETE FROM index_meta")
    hybrid = ok("search_hybrid", query="initializeDatabase")
    assert "index_provenance_unknown" in codes(hybrid)
    assert hybrid["search"]["legs"] == {"keyword": "lance_fts"}
    assert symbols(hybrid)[0] == "initializeDatabase"


# -- index states ---------------------------------------------------------------------------


def running_writer(root, project):
    """Hold the real writer lock, as a live indexer does: liveness comes from the lock."""
    from local_memory_indexer.pipeline import writer_lock
    from local_memory_shared.paths import project_paths

    return writer_lock(project_paths(root, project))


def test_first_index_still_running_says_so(root, project):
    sql(
        root,
        project,
        "UPDATE projects SET status = 'indexing', published_version = NULL, last_indexed_at = NULL",
    )
    with running_writer(root, project):
        envelope = ok("search_hybrid", query="LruCache")
    assert envelope["results"] == [] and codes(envelope) == ["index_building"]


def test_first_index_with_published_batches_returns_them_with_a_warning(root, project, monkeypatch):
    monkeypatch.setattr(search_store, "WRITER_CHECK_SECONDS", 0)  # every call looks at the lock
    sql(root, project, "UPDATE projects SET status = 'indexing', last_indexed_at = NULL")
    with running_writer(root, project):
        envelope = ok("search_keyword", query="LruCache")
        assert symbols(envelope)[0] == "LruCache" and codes(envelope) == ["index_building"]
        sql(root, project, "UPDATE projects SET last_indexed_at = '2026-01-01T00:00:00Z'")
        assert codes(ok("search_keyword", query="LruCache")) == ["index_updating"]
    # The same state with no process holding the lock is a killed run: it says so.
    assert codes(ok("search_keyword", query="LruCache")) == ["index_incomplete"]


def test_the_writer_lock_is_read_once_per_window_and_a_killed_writer_shows_after_it(
    root, project, monkeypatch
):
    """Reading /proc/locks costs an RCU grace period (~8 ms): calls within WRITER_CHECK_SECONDS
    reuse the last look, and a writer gone is reported once the window has passed."""
    reads = []
    real = search_store.writer_alive

    def counted(lock_file):
        reads.append(lock_file)
        return real(lock_file)

    monkeypatch.setattr(search_store, "writer_alive", counted)
    monkeypatch.setattr(search_store, "WRITER_CHECK_SECONDS", 2.0)
    sql(root, project, "UPDATE projects SET status = 'indexing', last_indexed_at = '2026-01-01T00:00:00Z'")
    with running_writer(root, project):
        time.sleep(2.0 - time.monotonic() % 2.0)  # start of a window
        for _ in range(3):
            assert codes(ok("search_keyword", query="LruCache")) == ["index_updating"]
        assert len(reads) == 1
    time.sleep(2.05)
    assert codes(ok("search_keyword", query="LruCache")) == ["index_incomplete"]
    assert len(reads) == 2


def test_a_dead_indexer_job_is_not_reported_as_building(root, project):
    sql(root, project, "UPDATE projects SET status = 'indexing', last_indexed_at = '2026-01-01T00:00:00Z'")
    sql(
        root,
        project,
        "INSERT INTO jobs(job_id, project_path, status, phase, started_at, updated_at, pid) "
        "VALUES ('j1', ?, 'running', 'embed', 'x', 'x', 2147483000)",
        (str(project),),
    )
    assert codes(ok("search_keyword", query="LruCache")) == ["index_incomplete"]


def test_failed_first_index_is_not_indexed(root, project):
    sql(root, project, "UPDATE projects SET status = 'failed', published_version = NULL")
    envelope = call_tool("search_hybrid", {"query": "LruCache"})
    assert envelope["ok"] is False and envelope["error"]["code"] == "NOT_INDEXED"
    assert "failed" in envelope["error"]["message"]


def test_state_db_is_opened_read_only_and_creates_no_files(root, project):
    before = snapshot(root)
    with open_index(project, load_settings()) as reader:
        with pytest.raises(sqlite3.OperationalError):
            reader.conn.execute("DELETE FROM chunks")
        assert reader.conn.execute("PRAGMA query_only").fetchone()[0] == 1
        assert reader.mirror_count() > 0
    assert snapshot(root) == before


# -- embedding backend down → keyword-only -------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_embedding_backend_down_degrades_to_keyword_only(tmp_path_factory):
    project = write_project(tmp_path_factory.mktemp("ollama-proj"), git=False)
    data = tmp_path_factory.mktemp("ollama-data")
    with FakeOllama(dimension=8) as fake:
        embedder = OllamaEmbedder(
            "qwen3-embedding:4b",
            base_url=fake.url,
            dimension=8,
            retry=RetryPolicy(attempts=1, base_delay=0.0),
        )
        index(project, data, embedder=embedder)
        with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data), OLLAMA_BASE_URL=fake.url):
            up = ok("search_hybrid", query="LruCache", project_path=str(project))
            assert codes(up) == [] and set(up["search"]["legs"]) == {"semantic", "keyword"}
            assert any("LruCache" in r.body.get("input", [""])[0] for r in fake.requests_to("/api/embed"))
    closed = f"http://127.0.0.1:{_closed_port()}"
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data), OLLAMA_BASE_URL=closed):
        started = time.perf_counter()
        down = ok("search_hybrid", query="LruCache", project_path=str(project))
        assert time.perf_counter() - started < 10
        assert codes(down) == ["embedding_unavailable"]
        assert down["search"]["legs"] == {"keyword": "lance_fts"} and down["search"]["alpha_effective"] == 0.0
        assert symbols(down)[0] == "LruCache"
        semantic = ok("search_semantic", query="LruCache", project_path=str(project))
        assert codes(semantic) == ["embedding_unavailable"] and symbols(semantic)[0] == "LruCache"


@pytest.mark.parametrize(
    ("backend", "model"), [("gemini", "gemini-embedding-2"), ("openrouter", "google/gemini-x")]
)
def test_gemini_provenance_without_a_key_degrades_to_keyword_only(root, project, tmp_path, backend, model):
    sql(root, project, "UPDATE index_meta SET backend = ?, model = ?", (backend, model))
    with env(GEMINI_API_KEY=None, GOOGLE_API_KEY=None, GOOGLE_API_KEY_FILE=str(tmp_path / "no.key")):
        hybrid = ok("search_hybrid", query="initializeDatabase")
    assert codes(hybrid) == ["embedding_unavailable"]
    assert "no.key" in hybrid["warnings"][0]["message"]  # says which key file it looked for
    assert hybrid["search"]["legs"] == {"keyword": "lance_fts"} and symbols(hybrid)[0] == "initializeDatabase"
