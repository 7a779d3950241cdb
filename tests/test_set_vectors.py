"""Filling vectors of published rows (``ChunkStore.set_vectors``): the right rows, bounded memory.

A first index publishes every row without a vector, then fills them batch by batch. Each fill
must touch only its files' rows, keep their other columns, and cost memory in proportion to
those rows, not to the table: a partial-schema ``merge_insert`` (key + vector) made Lance collect
every column of every row into its hash join, several hundred MB per fill on a 50k-chunk project.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from indexing_support import function_record
from local_memory_indexer.store import ChunkStore
from local_memory_shared.schema import VECTOR_COLUMN

DIM = 8


def test_set_vectors_fills_only_the_named_files_and_keeps_their_columns(tmp_path: Path) -> None:
    store = ChunkStore(tmp_path / "lance", DIM)
    records = [function_record(n) for n in range(40)]
    store.replace_files(
        [r.file_path for r in records],
        records,
        np.zeros((40, DIM), dtype=np.float32),
        missing=np.ones(40, dtype=bool),
    )
    before = store.version
    picked = records[5:15]
    vectors = np.arange(10 * DIM, dtype=np.float32).reshape(10, DIM) + 1
    # Given in another order than the table's: each vector must land on its own chunk id.
    store.set_vectors([r.file_path for r in picked][::-1], [r.chunk_id for r in picked][::-1], vectors[::-1])
    assert store.version == before + 1  # one commit
    rows = {r["chunk_id"]: r for r in store.table.search().limit(None).to_list()}
    assert len(rows) == 40
    for i, r in enumerate(picked):
        assert rows[r.chunk_id][VECTOR_COLUMN] == list(vectors[i])
        assert rows[r.chunk_id]["text"] == r.text and rows[r.chunk_id]["fts_text"] == r.fts_text
        assert list(rows[r.chunk_id]["tags"]) == list(r.tags)
    others = [r for r in records if r not in picked]
    assert all(rows[r.chunk_id][VECTOR_COLUMN] is None for r in others)


def test_only_rows_without_a_vector_are_written_and_a_row_the_fill_does_not_name_keeps_its_own(
    tmp_path: Path,
) -> None:
    """A pending file's rows that got their vectors from the cache when written are not rewritten
    (each rewrite is a row the full-text index must fold again)."""
    store = ChunkStore(tmp_path / "lance", DIM)
    records = [function_record(n) for n in range(4)]
    missing = np.array([False, True, True, False])
    store.replace_files([r.file_path for r in records], records, np.ones((4, DIM), dtype=np.float32), missing)
    before = store.version
    files = [r.file_path for r in records[:3]]
    written = store.set_vectors(files, [r.chunk_id for r in records[:2]], np.zeros((2, DIM)))
    rows = {r["chunk_id"]: r[VECTOR_COLUMN] for r in store.table.search().limit(None).to_list()}
    assert written == 1 and store.version == before + 1
    assert rows[records[0].chunk_id] == [1.0] * DIM  # had a vector: kept, not rewritten
    assert rows[records[1].chunk_id] == [0.0] * DIM  # had none: filled
    assert rows[records[2].chunk_id] is None  # not named: still waiting
    assert store.set_vectors(files, [records[0].chunk_id], np.zeros((1, DIM))) == 0
    assert store.version == before + 1  # nothing to write, no commit


# A child process: build a table of wide rows without vectors, then measure the RSS a 512-row
# fill adds (sampled every 2 ms around the call).
_CHILD = r"""
import json, sys, threading, time
from dataclasses import replace
import numpy as np
sys.path.insert(0, sys.argv[3])
from indexing_support import function_record
from local_memory_indexer.store import ChunkStore
from local_memory_shared.heap import trim_heap

rows, dim = int(sys.argv[2]), 8
store = ChunkStore(__import__("pathlib").Path(sys.argv[1]), dim)
rng = np.random.default_rng(0)
words = np.array([f"w{i:05d}" for i in range(20000)])
recs = []
for n in range(rows):
    text = " ".join(rng.choice(words, 700))  # ~4 kB of text, twice (text and fts_text)
    recs.append(replace(function_record(n), text=text, fts_text=text))
store.replace_files([], recs, np.zeros((rows, dim), dtype=np.float32), np.ones(rows, dtype=bool))
del recs
trim_heap()

def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096

picked = [function_record(n) for n in range(0, rows, rows // 512)][:512]
base, peak, stop = rss(), [0], threading.Event()
def sample():
    while not stop.is_set():
        peak[0] = max(peak[0], rss())
        time.sleep(0.002)
t = threading.Thread(target=sample)
t.start()
store.set_vectors([r.file_path for r in picked], [r.chunk_id for r in picked], np.ones((len(picked), dim)))
stop.set()
t.join()
filled = store.table.count_rows("vector IS NOT NULL")
print(json.dumps({"added_mb": (peak[0] - base) / 2**20, "filled": filled}))
"""


def test_a_fill_costs_memory_for_its_rows_not_for_the_table(tmp_path: Path) -> None:
    rows = 12_000  # ~100 MB of text columns; the 512 rows filled hold ~4 MB of it
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path / "lance"), str(rows), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=600,
    )
    result = json.loads(child.stdout.strip().splitlines()[-1])
    assert result["filled"] == 512
    # Measured: +56 MB filling 512 rows; a partial-schema merge, collecting the whole table,
    # +364 MB.
    assert result["added_mb"] < 150, result
