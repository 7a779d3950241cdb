"""The indexer's LanceDB caches stay within the writer session's bounds however many versions it writes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from indexing_support import function_record
from local_memory_indexer import store as store_mod
from local_memory_indexer.store import ChunkStore
from local_memory_shared.schema import ChunkRecord

DIM = 8


def record(n: int) -> ChunkRecord:
    return function_record(n, fts_text=f"m{n} py f{n} word{n % 97} shared words")


def write_versions(lance_dir: Path) -> ChunkStore:
    """Many versions (one per batch), FTS folds and a final index refresh, as a long run does."""
    store = ChunkStore(lance_dir, DIM)
    rng = np.random.default_rng(1)
    for batch in range(12):
        records = [record(batch * 250 + i) for i in range(250)]
        store.replace_files([r.file_path for r in records], records, rng.random((250, DIM), dtype=np.float32))
        store.refresh_indices(full=False, vectors_complete=False)
    fresh = [replace(record(i), content_hash=f"x{i}") for i in range(0, 3000, 7)]
    store.set_vectors(
        [r.file_path for r in fresh],
        [r.chunk_id for r in fresh],
        rng.random((len(fresh), DIM), dtype=np.float32),
    )
    store.refresh_indices(full=False)
    assert store.count() == 3000
    return store


def test_the_writer_session_caps_lances_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cap = 32 * 1024
    unbounded = write_versions(tmp_path / "unbounded")
    # Lance's caches evict approximately (a few entries over the weight for a while), so the
    # bounds below leave room: measured ~1 MB unbounded, ~93 kB with two 32 kB caps.
    assert unbounded.session.size_bytes > 8 * cap  # the workload fills unbounded caches...
    monkeypatch.setattr(store_mod, "WRITER_INDEX_CACHE_BYTES", cap)
    monkeypatch.setattr(store_mod, "WRITER_METADATA_CACHE_BYTES", cap)
    bounded = write_versions(tmp_path / "bounded")
    assert bounded.session.size_bytes <= 4 * cap  # ...and the writer's session keeps them near the caps
