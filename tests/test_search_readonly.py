"""The read-only wrappers refuse every LanceDB writer on a real table, and the table stays intact."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from lancedb.index import FTS, IvfFlat
from local_memory_search.readonly import (
    MUTATING_DB_METHODS,
    MUTATING_TABLE_METHODS,
    ReadOnlyDB,
    ReadOnlyTable,
    connect_read_only,
)
from local_memory_shared.errors import ReadOnlyViolation, StoreError
from local_memory_shared.schema import chunk_arrow_schema

DIM = 8


def _rows(n: int) -> pa.Table:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [
        {
            "chunk_id": f"c{i}",
            "project_path": "/p",
            "schema_version": 1,
            "file_path": f"src/f{i % 3}.py",
            "language": "python",
            "file_extension": "py",
            "chunk_kind": "function",
            "symbol_name": f"fn{i}",
            "class_name": "",
            "function_name": f"fn{i}",
            "chunk_index": i,
            "start_line": i,
            "end_line": i + 1,
            "text": f"def fn{i}(): pass",
            "summary": "",
            "fts_text": f"fn{i} parse config",
            "tags": ["function"],
            "updated_at": "2026-01-01T00:00:00Z",
            "last_commit_hash": "",
            "content_hash": str(i),
            "vector": vectors[i].tolist(),
        }
        for i in range(n)
    ]
    return pa.Table.from_pylist(rows, schema=chunk_arrow_schema(DIM))


def _snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    return {
        str(p.relative_to(root)): (
            p.stat().st_size,
            p.stat().st_mtime_ns,
            hashlib.sha256(p.read_bytes()).hexdigest(),
        )
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture()
def lance_dir(tmp_path: Path) -> Path:
    path = tmp_path / "lance"
    db = lancedb.connect(str(path))
    table = db.create_table("chunks", data=_rows(12))
    table.create_index("fts_text", config=FTS(base_tokenizer="simple"))
    return path


# Plausible arguments, so a refusal is the wrapper's doing and not a TypeError of LanceDB.
TABLE_CALLS: dict[str, tuple[tuple, dict]] = {
    "add": ((_rows(1),), {}),
    "delete": (("chunk_id = 'c1'",), {}),
    "update": ((), {"where": "chunk_id = 'c1'", "values": {"text": "x"}}),
    "merge": ((_rows(1), "chunk_id"), {}),
    "merge_insert": (("chunk_id",), {}),
    "create_index": ((), {"metric": "cosine", "vector_column_name": "vector"}),
    "create_index_async": ((), {"vector_column_name": "vector"}),
    "create_fts_index": (("text",), {}),
    "create_scalar_index": (("chunk_id",), {}),
    "drop_index": (("fts_text_idx",), {}),
    "optimize": ((), {"cleanup_older_than": timedelta(0)}),
    "compact_files": ((), {}),
    "cleanup_old_versions": ((timedelta(0),), {}),
    "add_columns": (({"extra": "'x'"},), {}),
    "alter_columns": (({"path": "text", "rename": "body"},), {}),
    "drop_columns": ((["summary"],), {}),
    "restore": ((1,), {}),
    "refresh_column": (("text",), {}),
    "refresh_column_async": (("text",), {}),
    "update_field_metadata": (("text", {"k": "v"}), {}),
    "replace_field_metadata": (("text", {"k": "v"}), {}),
    "set_unenforced_primary_key": (("chunk_id",), {}),
    "migrate_v2_manifest_paths": ((), {}),
    "set_lsm_write_spec": ((None,), {}),
    "unset_lsm_write_spec": ((), {}),
    "checkpoint_lsm": ((), {}),
    "flush_lsm": ((), {}),
    "compact_lsm": ((), {}),
    "close_lsm_writers": ((), {}),
    "checkout_latest": ((), {}),
    "tags": ((), {}),
    "branches": ((), {}),
    "to_lance": ((), {}),
}


def test_every_known_mutating_table_method_has_a_call_here():
    assert set(TABLE_CALLS) == set(MUTATING_TABLE_METHODS)


@pytest.mark.parametrize("method", MUTATING_TABLE_METHODS)
def test_every_mutating_table_method_raises_readonly_violation(lance_dir: Path, method: str):
    before = _snapshot(lance_dir)
    table = connect_read_only(lance_dir).open_table("chunks")
    args, kwargs = TABLE_CALLS[method]
    with pytest.raises(ReadOnlyViolation) as info:
        getattr(table, method)(*args, **kwargs)
    assert info.value.code == "READONLY_VIOLATION"
    assert method in info.value.message
    # Nothing reached the disk: the raw table is at the same version with the same rows.
    raw = lancedb.connect(str(lance_dir)).open_table("chunks")
    assert raw.version == table.version and raw.count_rows() == 12
    assert _snapshot(lance_dir) == before


@pytest.mark.parametrize("method", MUTATING_DB_METHODS)
def test_every_mutating_db_method_raises_readonly_violation(lance_dir: Path, method: str):
    before = _snapshot(lance_dir)
    db = connect_read_only(lance_dir)
    with pytest.raises(ReadOnlyViolation) as info:
        getattr(db, method)("chunks", _rows(1))
    assert info.value.code == "READONLY_VIOLATION"
    assert lancedb.connect(str(lance_dir)).list_tables().tables == ["chunks"]
    assert _snapshot(lance_dir) == before


def test_unknown_attributes_and_assignment_are_refused(lance_dir: Path):
    table = connect_read_only(lance_dir).open_table("chunks")
    with pytest.raises(ReadOnlyViolation):
        table.some_future_writer  # noqa: B018 - the attribute access itself must be refused
    with pytest.raises(ReadOnlyViolation):
        table._table = None  # type: ignore[misc]
    with pytest.raises(ReadOnlyViolation):
        connect_read_only(lance_dir).anything_new  # noqa: B018


def test_reads_pass_through_and_checkout_pins_a_version(lance_dir: Path):
    writer = lancedb.connect(str(lance_dir)).open_table("chunks")
    pinned = writer.version
    writer.add(_rows(15).slice(12, 3))  # a later version the reader must not see
    table = connect_read_only(lance_dir).open_table("chunks")
    assert isinstance(table, ReadOnlyTable)
    assert table.count_rows() == 15
    table.checkout(pinned)
    assert table.count_rows() == 12 and len(table) == 12
    hits = table.search(np.ones(DIM, dtype=np.float32)).limit(3).select(["chunk_id", "_distance"]).to_arrow()
    assert hits.num_rows == 3
    fts = table.search("config", query_type="fts", fts_columns="fts_text").limit(5).to_arrow()
    assert fts.num_rows == 5
    assert any(idx.index_type == "FTS" for idx in table.list_indices())
    assert table.schema.field("vector").type.list_size == DIM


def test_connect_never_creates_a_missing_folder(tmp_path: Path):
    missing = tmp_path / "nowhere" / "lance"
    with pytest.raises(StoreError):
        connect_read_only(missing)
    assert not missing.exists() and not missing.parent.exists()


def test_db_wrapper_lists_tables(lance_dir: Path):
    db = connect_read_only(lance_dir)
    assert isinstance(db, ReadOnlyDB)
    assert db.list_tables().tables == ["chunks"]
    assert isinstance(db["chunks"], ReadOnlyTable)


def test_every_read_only_connection_shares_one_size_bounded_lance_session(indexed_sample) -> None:
    from local_memory_search import readonly
    from local_memory_search.store import clear_caches
    from local_memory_search.tools import call_tool
    from search_support import env

    clear_caches()  # also starts a new session (a damaged index is then read afresh)
    session = readonly.lance_session()
    assert readonly.lance_session() is session
    before = session.size_bytes
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(indexed_sample.data_root)):
        got = call_tool(
            "search_keyword",
            {"query": "retry", "project_path": str(indexed_sample.project), "cache_bust": True},
        )
    assert got["ok"] and got["results"]
    assert session.size_bytes > before  # the search's manifests and index pages went into this session
    assert session.size_bytes <= readonly.INDEX_CACHE_BYTES + readonly.METADATA_CACHE_BYTES
    clear_caches()
    assert readonly.lance_session() is not session


# -- one-round-trip queries: the same rows as LanceDB's sync builders --------------------------


@pytest.fixture()
def ivf_dir(tmp_path: Path) -> Path:
    """300 rows with an IVF_FLAT index of 4 partitions (so a single probe misses rows) and FTS."""
    path = tmp_path / "lance-ivf"
    table = lancedb.connect(str(path)).create_table("chunks", data=_rows(300))
    table.create_index("vector", config=IvfFlat(distance_type="cosine", num_partitions=4))
    table.create_index("fts_text", config=FTS(base_tokenizer="simple"))
    return path


COLUMNS = ["chunk_id", "file_path", "symbol_name"]


def test_fts_arrow_returns_what_the_sync_builder_returns(ivf_dir: Path):
    table = connect_read_only(ivf_dir).open_table("chunks")
    for where, prefilter in (
        (None, True),
        ("file_path = 'src/f1.py'", True),
        ("file_path = 'src/f2.py'", False),
    ):
        sync = table.search("fn7 parse", query_type="fts", fts_columns="fts_text")
        if where:
            sync = sync.where(where, prefilter=prefilter)
        expected = sync.limit(20).select([*COLUMNS, "_score"]).to_arrow().to_pylist()
        got = table.fts_arrow(
            "fn7 parse",
            column="fts_text",
            columns=[*COLUMNS, "_score"],
            limit=20,
            where=where,
            postfilter=not prefilter,
        ).to_pylist()
        assert got == expected and got


def test_vector_arrow_returns_what_the_sync_builder_returns(ivf_dir: Path):
    table = connect_read_only(ivf_dir).open_table("chunks")
    rng = np.random.default_rng(3)
    ann_differs_from_flat = False
    for _ in range(8):
        vector = rng.normal(size=DIM).astype(np.float32)
        for where, exact in ((None, False), (None, True), ("file_path = 'src/f0.py'", False)):

            def sync(v: np.ndarray = vector, w: str | None = where, x: bool = exact) -> list[dict]:
                query = table.search(v, vector_column_name="vector", query_type="vector").distance_type(
                    "cosine"
                )
                if w:
                    query = query.where(w, prefilter=False)
                query = query.limit(10).select([*COLUMNS, "_distance"])
                query = query.bypass_vector_index() if x else query.nprobes(1).refine_factor(2)
                return list(query.to_arrow().to_pylist())

            got = table.vector_arrow(
                vector,
                column="vector",
                distance_type="cosine",
                columns=[*COLUMNS, "_distance"],
                limit=10,
                where=where,
                postfilter=bool(where),
                nprobes=None if exact else 1,
                refine_factor=None if exact else 2,
                exact=exact,
            ).to_pylist()
            assert got == sync()
        flat = [r["chunk_id"] for r in sync(vector, None, True)]
        ann = [r["chunk_id"] for r in sync(vector, None, False)]
        ann_differs_from_flat |= flat != ann
    assert ann_differs_from_flat  # one probe of four partitions really is an approximate search


def test_scan_arrow_filters_rows(lance_dir: Path):
    table = connect_read_only(lance_dir).open_table("chunks")
    rows = table.scan_arrow(where="chunk_id IN ('c1', 'c5')", columns=["chunk_id"], limit=5).to_pylist()
    assert sorted(r["chunk_id"] for r in rows) == ["c1", "c5"]
