"""A big first index folds, trains and prunes in child processes (one per job), never folds after training,
never loads pylance.

Issue 14 (indexer peak RSS): once the vector fills of a big first index have deleted a tenth of
the compacted table's rows, each fold rewrites the whole table and remaps the FTS index (+200-260 MB
at 40k rows). From ``FOLD_IN_CHILD_MIN_ROWS`` rows that fold runs in a child process, and the last
fold runs in one too, just before the vector index is trained (in another child) over the compacted
rows, so nothing is folded after training (which loaded pylance in the indexer: a vector index
existed by then). Pruning old versions goes through pylance too, so from that size it runs in a
child as well.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
from indexing_support import function_record
from local_memory_indexer.store import ChunkStore

TESTS = Path(__file__).resolve().parent

PROBE = """
import json, logging, sys
from pathlib import Path
import numpy as np
from indexing_support import function_record
from local_memory_indexer import store as store_mod
from local_memory_indexer.store import ChunkStore

messages = []
class Keep(logging.Handler):
    def emit(self, record):
        messages.append(record.getMessage())
store_mod.log.addHandler(Keep())
store_mod.log.setLevel(logging.INFO)
store_mod.ANN_MIN_ROWS = 1000
store_mod.FOLD_IN_CHILD_MIN_ROWS = 1000

store = ChunkStore(Path(sys.argv[1]), 8)
rows = 1200
records = [function_record(n, fts_text=f"word{n} shared") for n in range(rows)]
# As a big first index: every row published without a vector, then filled a group at a time.
store.replace_files(
    [r.file_path for r in records], records, np.zeros((rows, 8), np.float32), np.ones(rows, bool)
)
store.refresh_indices(full=False, vectors_complete=False)
rng = np.random.default_rng(5)
for lo in range(0, rows, 300):
    group = records[lo : lo + 300]
    store.set_vectors([r.file_path for r in group], [r.chunk_id for r in group], rng.random((300, 8), np.float32))
    store.refresh_indices(full=False, vectors_complete=False)
store.refresh_indices(full=False)
indices = {i.index_type: i.name for i in store.table.list_indices()}
fts, vector = indices["FTS"], next(name for kind, name in indices.items() if kind != "FTS")
hits = store.table.search("word1111", query_type="fts").limit(5).to_list()
folds_and_training = [m for m in messages if "in a child process" in m]
versions = len(store.table.list_versions())
store.prune(store.version)
print(json.dumps({
    "pruned_in_child": sum("pruned in a child process" in m for m in messages),
    "versions_pruned": len(store.table.list_versions()) < versions,
    "pylance": "lance" in sys.modules,
    "children": len(folds_and_training),
    "vector_built_in_child": sum("vector index built in a child process" in m for m in messages),
    "pids": [m.split("(pid ")[1].split(",")[0] for m in folds_and_training],
    "rows": store.count(),
    "filled": store.table.count_rows("vector IS NOT NULL"),
    "fts_unindexed": store.table.index_stats(fts).num_unindexed_rows,
    "vector_unindexed": store.table.index_stats(vector).num_unindexed_rows,
    "fragments": store.table.stats()["fragment_stats"]["num_fragments"],
    "hit": [h["chunk_id"] for h in hits][:1] == [function_record(1111).chunk_id],
}))
"""


def test_a_big_first_index_folds_and_trains_in_children_without_pylance(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROBE), str(tmp_path / "lance")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])},
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    # One fold after the rows, one after each of the 4 fills, then the last fold, then the training:
    # each in a child of its own, so the child's peak is the larger of fold and training, not
    # what the allocator kept of both (the last fold and the training shared one child before).
    assert got.pop("children") == 7
    pids = got.pop("pids")
    assert len(set(pids)) == 7, pids
    assert got.pop("fragments") == 1  # trained over the compacted table, nothing appended after
    assert got == {
        "pylance": False,  # pruning through pylance happened in a child too
        "pruned_in_child": 1,
        "versions_pruned": True,
        "vector_built_in_child": 1,
        "rows": 1200,
        "filled": 1200,
        "fts_unindexed": 0,
        "vector_unindexed": 0,
        "hit": True,
    }


def die_outside(table: object, parent: int, marker: str) -> None:
    """A job that kills the child process it runs in, and leaves ``marker`` when run in ``parent``."""
    if os.getpid() != parent:
        os._exit(3)
    Path(marker).write_text("ran here")


def test_a_child_that_dies_is_replaced_by_running_its_jobs_here(tmp_path: Path) -> None:
    store = ChunkStore(tmp_path / "lance", 8)
    record = function_record(1)
    store.replace_files([record.file_path], [record], np.zeros((1, 8), np.float32))
    marker = tmp_path / "marker"
    assert store._in_child([(die_outside, (os.getpid(), str(marker)))], "a test job") is None
    assert marker.read_text() == "ran here"
    assert store.count() == 1
