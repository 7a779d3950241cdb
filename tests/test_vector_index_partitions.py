"""The trained IVF partitions survive index maintenance; delta segments are bounded by retraining."""

from __future__ import annotations

from pathlib import Path

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
    for batch in range(3):  # each run that adds vectors folds them into a delta with the same centroids
        add(store, 6000 + batch * 300, 300, rng)
        store.refresh_indices(full=False)
        assert partitions(store) == trained * (batch + 2)
        assert store.vector_segments() == batch + 2
    add(store, 7000, 300, rng)  # over MAX_VECTOR_SEGMENTS: retrained into one segment
    store.refresh_indices(full=False)
    assert store.vector_segments() == 1 and partitions(store)[0] >= 16
    assert store.count() == 7200
