"""Below the vector-index size the indexer's LanceDB work never loads pylance (issue 14: peak RSS).

``lancedb`` and ``pylance`` each ship their own copy of Lance's native code (185 and 225 MB files);
``table.to_lance()`` loads the second one, and compaction plus FTS folding fault ~125 MB of it in.
``ChunkStore`` folds through LanceDB's own ``optimize`` while there is no vector index, and reads
its keys with a LanceDB scan, so a run of a project below ``ANN_MIN_ROWS`` keeps one copy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parent

PROBE = """
import json, sys
import numpy as np
from indexing_support import function_record
from local_memory_indexer.store import ChunkStore

store = ChunkStore(__import__("pathlib").Path(sys.argv[1]), 8)
rng = np.random.default_rng(1)
for batch in range(6):
    records = [function_record(batch * 200 + i, fts_text=f"word{batch * 200 + i} shared") for i in range(200)]
    store.replace_files([r.file_path for r in records], records, rng.random((200, 8), dtype=np.float32))
    store.refresh_indices(full=False, vectors_complete=False)
keys = store.chunk_keys()
fts = next(i.name for i in store.table.list_indices() if i.index_type == "FTS")
hits = store.table.search("word1111", query_type="fts").limit(5).to_list()
print(json.dumps({
    "pylance": "lance" in sys.modules,
    "files": len(keys), "rows": store.count(),
    "unindexed": store.table.index_stats(fts).num_unindexed_rows,
    "fragments": store.table.stats()["fragment_stats"]["num_fragments"],
    "hit": [h["chunk_id"] for h in hits][:1] == [function_record(1111).chunk_id],
}))
"""


def test_folding_and_reading_keys_below_the_vector_index_size_never_load_pylance(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROBE), str(tmp_path / "lance")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])},
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    # Every row folded into the FTS index and the six appends compacted (2 fragments, as with pylance).
    assert got.pop("fragments") <= 2
    assert got == {"pylance": False, "files": 1200, "rows": 1200, "unindexed": 0, "hit": True}
