"""The trained IVF partitions survive index maintenance: each fold's delta segment is merged back
into one segment with the trained partitions, and the new rows are found through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from indexing_support import function_record
from local_memory_indexer import store as store_mod
from local_memory_indexer.store import ChunkStore
from local_memory_shared.schema import ChunkRecord

DIM = 16


def record(n: int) -> ChunkRecord:
    return function_record(n)


def add(store: ChunkStore, start: int, count: int, rng: np.random.Generator) -> None:
    records = [record(n) for n in range(start, start + count)]
    store.replace_files([r.file_path for r in records], records, rng.random((count, DIM), dtype=np.float32))


def partitions(store: ChunkStore) -> list[int]:
    stats = store.table.to_lance().stats.index_stats("vector_idx")
    return [int(segment["num_partitions"]) for segment in stats["indices"]]


def test_ivf_partitions_survive_folds_and_deltas_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
    monkeypatch.setattr(store_mod, "ANN_MIN_ROWS", 2000)
    monkeypatch.setattr(store_mod, "MAX_VECTOR_SEGMENTS", 3)
    rng = np.random.default_rng(7)
    store = ChunkStore(tmp_path / "lance", DIM)
    add(store, 0, 6000, rng)
    store.refresh_indices(full=False)
    trained = partitions(store)
    assert len(trained) == 1 and trained[0] >= 16  # max(16, min(sqrt, rows/256)) requested, not merged away
    for batch in range(3):  # each run folds its vectors into a delta; the second delta is merged
        add(store, 6000 + batch * 300, 300, rng)
        store.refresh_indices(full=False)
        segments = 2 if batch % 2 == 0 else 1  # MERGE_VECTOR_SEGMENTS_FROM = 3: one delta is kept
        assert store.vector_segments() == segments
        assert partitions(store) == trained * segments  # the trained partitions kept in each
    assert store.count() == 6900
    # the rows of the last fold answer through the merged index, probing one partition at a time
    last = record(6000 + 2 * 300 + 17)
    vector = store.table.search().where(f"chunk_id = '{last.chunk_id}'").limit(1).to_list()[0]["vector"]
    found = store.table.search(vector).nprobes(trained[0]).refine_factor(50).limit(1).to_list()
    assert found[0]["chunk_id"] == last.chunk_id


def test_a_merge_that_changes_the_partitions_is_replaced_by_a_retrain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Should a Lance release re-partition on merge (as its merge with new rows does), the index
    is retrained rather than left degenerate."""
    from lance.dataset import DatasetOptimizer

    monkeypatch.setenv("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
    monkeypatch.setattr(store_mod, "ANN_MIN_ROWS", 2000)
    monkeypatch.setattr(store_mod, "VECTOR_INDEX_IN_CHILD", False)
    monkeypatch.setattr(store_mod, "MERGE_VECTOR_SEGMENTS_FROM", 2)  # merge the first delta
    rng = np.random.default_rng(11)
    store = ChunkStore(tmp_path / "lance", DIM)
    add(store, 0, 6000, rng)
    store.refresh_indices(full=False)
    trained = partitions(store)
    real = DatasetOptimizer.optimize_indices

    def merge_with_a_new_row(self: Any, **kwargs: Any) -> None:
        if kwargs.get("num_indices_to_merge"):  # the merge: sneak in an unindexed row first
            add(store, 9000, 1, rng)
            self._dataset = store.table.to_lance()
            real(self, index_names=kwargs["index_names"])  # Lance's default merge, new row included
            return
        real(self, **kwargs)

    monkeypatch.setattr(DatasetOptimizer, "optimize_indices", merge_with_a_new_row)
    add(store, 6000, 300, rng)
    with caplog.at_level("WARNING", logger="local_memory_indexer.store"):
        store.refresh_indices(full=False)
    assert any("retraining" in r.getMessage() for r in caplog.records)
    rows = store.count()  # 6,301: the sneaked row too
    assert store.vector_segments() == 1 and trained == [max(16, min(int(6000**0.5), 6000 // 256))]
    assert partitions(store) == [max(16, min(int(rows**0.5), rows // 256))]  # retrained, not the merge's 1


def test_an_index_of_an_older_kind_is_retrained_as_ivf_rq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Indexes built before IVF_RQ carry an IVF_PQ index: the next run that maintains indices
    retrains it (the searcher asks each kind with its own probes meanwhile)."""
    from lancedb.index import IvfPq

    monkeypatch.setenv("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
    monkeypatch.setattr(store_mod, "ANN_MIN_ROWS", 2000)
    monkeypatch.setattr(store_mod, "VECTOR_INDEX_IN_CHILD", False)
    rng = np.random.default_rng(5)
    store = ChunkStore(tmp_path / "lance", DIM)
    add(store, 0, 6000, rng)
    store.table.create_index(
        "vector", config=IvfPq(distance_type="cosine", num_partitions=16, num_sub_vectors=4), replace=True
    )
    assert store.vector_index_type() == "IvfPq"
    add(store, 6000, 300, rng)
    store.refresh_indices(full=False)
    assert store.vector_index_type() == store_mod.VECTOR_INDEX_TYPE == "IvfRq"
    assert store.vector_segments() == 1
    assert partitions(store) == [max(16, min(int(6300**0.5), 6300 // 256))]
    stats = store.table.index_stats("vector_idx")
    assert stats is not None and stats.num_unindexed_rows == 0
    add(store, 6300, 300, rng)  # an index of the current kind is folded into, not retrained
    store.refresh_indices(full=False)
    assert store.vector_index_type() == "IvfRq"
    assert partitions(store) == [24, 24]  # a delta on 6,300 rows' partitions (a retrain at 6,600 makes 25)
