"""The IVF_RQ index is trained in a child process: the same index, and the child dies with the indexer.

Training adds ~300 MB for minutes at 80k rows; in a child process that memory goes with it. The
index must be the one an in-process build makes, and a killed indexer must not leave the child
running (it would commit to a table whose writer lock is gone).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from indexing_support import function_record
from local_memory_indexer import store as store_mod
from local_memory_indexer.store import ChunkStore

DIM = 16


def build(lance_dir: Path, rows: int) -> ChunkStore:
    rng = np.random.default_rng(3)
    store = ChunkStore(lance_dir, DIM)
    records = [function_record(n) for n in range(rows)]
    store.replace_files([r.file_path for r in records], records, rng.random((rows, DIM), dtype=np.float32))
    store.refresh_indices(full=False)
    return store


def index_shape(store: ChunkStore) -> tuple[str, list[int], int]:
    stats = store.table.to_lance().stats.index_stats("vector_idx")
    parts = [int(segment["num_partitions"]) for segment in stats["indices"]]
    bits = int(stats["indices"][0]["sub_index"]["num_bits"])
    return str(stats["index_type"]), parts, bits


def test_the_vector_index_is_trained_in_a_child_and_matches_an_in_process_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
    monkeypatch.setattr(store_mod, "ANN_MIN_ROWS", 2000)
    caplog.set_level(logging.INFO, logger="local_memory_indexer.store")
    child = build(tmp_path / "child", 6000)
    assert any("vector index built in a child process" in r.getMessage() for r in caplog.records)
    assert child.has_vector_index()  # this process reads the version the child committed
    monkeypatch.setattr(store_mod, "VECTOR_INDEX_IN_CHILD", False)
    here = build(tmp_path / "here", 6000)
    assert index_shape(child) == index_shape(here)
    kind, parts, bits = index_shape(child)
    assert kind == "IVF_RQ" and parts == [max(16, min(int(6000**0.5), 6000 // 256))] and bits == 4
    assert child.vector_index_type() == store_mod.VECTOR_INDEX_TYPE == "IvfRq"
    probe = np.random.default_rng(3).random((1, DIM), dtype=np.float32)[0]  # row 0's own vector
    # Uniform random vectors crowd one orthant, where quantized codes alone may rank a neighbour
    # first: probe every partition and re-rank the best 100 by exact distance.
    found = child.table.search(probe).nprobes(parts[0]).refine_factor(100).limit(1).to_list()
    assert found[0]["chunk_id"] == function_record(0).chunk_id


_PARENT = r"""
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(__import__("os").getpid())])
print(child.pid, flush=True)
child.wait()
"""

_CHILD = r"""
import sys, time
from local_memory_shared.heap import die_with_parent
die_with_parent(int(sys.argv[1]))
print("armed", flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_child_that_asked_to_die_with_its_parent_does(tmp_path: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, _CHILD], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    assert parent.stdout is not None
    child_pid = int(parent.stdout.readline())
    assert parent.stdout.readline().strip() == "armed"
    assert _alive(child_pid)
    os.kill(parent.pid, signal.SIGKILL)  # as a killed indexer
    parent.wait()
    deadline = time.monotonic() + 60  # the kernel signals at once; the wait only absorbs a loaded machine
    while _alive(child_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    survived = _alive(child_pid)
    if survived:
        os.kill(child_pid, signal.SIGKILL)
    assert not survived


def test_a_retrain_compacts_the_whole_table_in_a_child_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A retrain (``--full``, a kind change, too many segments) compacts every fragment first,
    through pylance; in the indexer that took a --full re-index of 104k rows to 658 MB, so from
    ``FOLD_IN_CHILD_MIN_ROWS`` rows it runs in a child of its own, before the training's."""
    monkeypatch.setenv("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
    monkeypatch.setattr(store_mod, "ANN_MIN_ROWS", 2000)
    monkeypatch.setattr(store_mod, "FOLD_IN_CHILD_MIN_ROWS", 2000)
    store = build(tmp_path / "lance", 6000)
    rng = np.random.default_rng(4)
    extra = [function_record(n) for n in range(6000, 6300)]
    store.replace_files([r.file_path for r in extra], extra, rng.random((300, DIM), dtype=np.float32))
    caplog.set_level(logging.INFO, logger="local_memory_indexer.store")
    store.refresh_indices(full=True)
    said = [r.getMessage() for r in caplog.records]
    assert [m.split(" in a child")[0] for m in said if " in a child process" in m] == [
        "folded",
        "vector index built",
    ]
    stats = store.table.index_stats("vector_idx")
    assert stats is not None and stats.num_unindexed_rows == 0 and stats.num_indices == 1
    assert store.count() == 6300 and store.vector_index_type() == "IvfRq"
