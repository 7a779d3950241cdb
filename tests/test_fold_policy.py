"""How a re-index's folds treat an indexed table (issue 14: re-index isolation).

A fold used to compact every fragment under Lance's 1M-row target (the whole table, each time)
and to fold indices with nothing to fold; each rewrite makes a search read every index
page again. Now big fragments stay put until enough small ones pile up, and an index with
nothing to fold is left as it is. Real LanceDB on a temp dir.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from indexing_support import function_record
from local_memory_indexer import store as store_mod
from local_memory_indexer.store import ChunkStore

DIM = 16


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ChunkStore:
    monkeypatch.setenv("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
    monkeypatch.setattr(store_mod, "ANN_MIN_ROWS", 2000)
    monkeypatch.setattr(store_mod, "SETTLED_FRAGMENT_ROWS", 1000)
    monkeypatch.setattr(store_mod, "VECTOR_INDEX_IN_CHILD", False)
    built = ChunkStore(tmp_path / "lance", DIM)
    add(built, 0, 3000)
    built.refresh_indices(full=False)
    return built


def add(store: ChunkStore, start: int, count: int, fts_text: str | None = None) -> None:
    records = [function_record(n, fts_text=fts_text) for n in range(start, start + count)]
    vectors = np.random.default_rng(start).random((count, DIM), dtype=np.float32)
    store.replace_files([r.file_path for r in records], records, vectors)


def delete(store: ChunkStore, file_paths: list[str]) -> None:
    store.replace_files(file_paths, [], np.zeros((0, DIM), dtype=np.float32))


def fragments(store: ChunkStore) -> dict[int, int]:
    return {int(f.fragment_id): int(f.metadata.physical_rows) for f in store.table.to_lance().get_fragments()}


def index_ids(store: ChunkStore) -> dict[str, str]:
    return {i.name: str(i.index_uuid) for i in store.table.list_indices()}


def unindexed(store: ChunkStore, name: str) -> int:
    stats = store.table.index_stats(name)
    assert stats is not None
    return int(stats.num_unindexed_rows)


def test_small_fragments_are_merged_only_once_enough_pile_up_and_big_ones_stay(store: ChunkStore) -> None:
    (big,) = fragments(store).items()
    assert big[1] == 3000
    for n in range(store_mod.COMPACT_AT_FRAGMENTS - 1):
        add(store, 10_000 + n * 50, 50)
        store.refresh_indices(full=False)
        have = fragments(store)
        assert have[big[0]] == 3000 and len(have) == n + 2  # nothing compacted yet
    add(store, 20_000, 50)  # the eighth small fragment: they are merged, the big one is not
    store.refresh_indices(full=False)
    have = fragments(store)
    assert (
        have[big[0]] == 3000 and len(have) <= 4 and sum(have.values()) == 3400
    )  # 9 before; Lance bins the small ones
    assert store.count() == 3400 and unindexed(store, "fts_text_idx") == unindexed(store, "vector_idx") == 0
    assert store.vector_segments() <= 2  # one delta at most (MERGE_VECTOR_SEGMENTS_FROM)


def test_a_big_fragment_with_a_tenth_of_its_rows_deleted_is_rewritten(store: ChunkStore) -> None:
    (big,) = fragments(store)
    delete(store, [f"m{n}.py" for n in range(400)])  # over a tenth of the big fragment
    add(store, 10_000, 50)
    for n in range(1, store_mod.COMPACT_AT_FRAGMENTS - 1):  # the rewritten fragment counts as unsettled
        add(store, 10_000 + n * 50, 50)
    store.refresh_indices(full=False)
    assert big not in fragments(store) and sum(fragments(store).values()) == store.count() == 2950


def test_a_fold_with_nothing_to_fold_leaves_both_indices_as_they_are(store: ChunkStore) -> None:
    before = index_ids(store)
    store.refresh_indices(full=False)
    assert index_ids(store) == before
    delete(store, ["m7.py"])  # deletions are masked at query time: no fold either
    store.refresh_indices(full=False)
    assert index_ids(store) == before
    add(store, 10_000, 5)
    store.refresh_indices(full=False)
    after = index_ids(store)
    assert after["fts_text_idx"] != before["fts_text_idx"]  # new rows: folded
    assert unindexed(store, "fts_text_idx") == unindexed(store, "vector_idx") == 0
