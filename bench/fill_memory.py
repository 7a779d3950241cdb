"""RSS a vector fill and a fold add on a big table without vectors (issue 14 goal 1, the fill phase).

A first index of more than ``FIRST_BATCH_FILES`` files publishes every row without a vector, then
fills the vectors a group of files at a time (``ChunkStore.set_vectors``) and folds every
``FOLD_EVERY_ROWS`` (compaction + FTS). This builds such a table (``--rows`` rows of ~3 kB text,
twice: ``text`` and ``fts_text``; one FTS index; compacted), then in this one process:

- ``fill``: ``--steps`` fills of 512 rows each, by ``set_vectors`` (a full-schema merge of the
  files' rows) or, with ``--partial``, by the partial-schema merge it replaced (key + vector);
  peak RSS above the level before, and seconds per fill;
- ``compact``: one pylance ``compact_files`` with ``--compact-options`` (a Python dict literal),
  e.g. ``"dict(materialize_deletions=False)"``, and the fragments before/after.

    python -m bench.fill_memory --rows 40000 --steps 6
    python -m bench.fill_memory --rows 40000 --steps 6 --partial
    python -m bench.fill_memory --rows 40000 --steps 8 --compact-options "dict(materialize_deletions=False)"

Each variant wants a fresh process (the allocator keeps what a previous one freed).
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import emit, peak_rss


def _peak_above(fn: Callable[[], Any]) -> tuple[Any, int, float]:
    """``fn()``'s result, the RSS it added at its peak (MB, sampled every 10 ms) and its seconds."""
    from local_memory_shared.heap import trim_heap

    trim_heap()
    started = time.perf_counter()
    out, base, peak = peak_rss(fn, 0.01)
    return out, max(0, round(peak - base)), time.perf_counter() - started


def _fragments(store: Any) -> int:
    """Fragments of the table at its latest version (LanceDB's own statistics: no pylance)."""
    stats = store.table.stats()
    frag = stats["fragment_stats"] if isinstance(stats, dict) else stats.fragment_stats
    return int(frag["num_fragments"] if isinstance(frag, dict) else frag.num_fragments)


def _table(store: Any, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    from lancedb.index import FTS
    from local_memory_shared.schema import FTS_COLUMN, VECTOR_COLUMN, chunk_arrow_schema

    rng = random.Random(1)
    words = ["".join(rng.choice("abcdefghij") for _ in range(6)) for _ in range(5000)]
    schema = chunk_arrow_schema(store.dimension)
    for lo in range(0, rows, 2000):
        n = min(rows, lo + 2000) - lo
        text = [" ".join(rng.choices(words, k=200)) for _ in range(n)]
        ids = range(lo, lo + n)
        cols: dict[str, Any] = {
            "chunk_id": [f"c{i}" for i in ids],
            "project_path": ["/p"] * n,
            "schema_version": [1] * n,
            "file_path": [f"f{i // 8}.py" for i in ids],  # 8 chunks a file
            "language": ["python"] * n,
            "file_extension": ["py"] * n,
            "chunk_kind": ["function"] * n,
            "symbol_name": [f"s{i}" for i in ids],
            "class_name": [""] * n,
            "function_name": [""] * n,
            "chunk_index": [0] * n,
            "start_line": [1] * n,
            "end_line": [10] * n,
            "text": text,
            "summary": [""] * n,
            FTS_COLUMN: [t + " " + t[:600] for t in text],
            "tags": [["function"]] * n,
            "updated_at": [""] * n,
            "last_commit_hash": [""] * n,
            "content_hash": [""] * n,
        }
        flat = pa.array(np.zeros(n * store.dimension, dtype=np.float32))
        mask = pa.array(np.ones(n, dtype=bool))
        cols[VECTOR_COLUMN] = pa.FixedSizeListArray.from_arrays(flat, store.dimension, mask=mask)
        store.table.add(pa.Table.from_pydict(cols, schema=schema))
    store.table.create_index(
        FTS_COLUMN,
        config=FTS(base_tokenizer="simple", stem=True, remove_stop_words=False, max_token_length=64),
    )
    store.table.optimize()


def run(ns: argparse.Namespace) -> dict[str, Any]:
    import numpy as np
    import pyarrow as pa
    from local_memory_indexer.store import ChunkStore
    from local_memory_shared.schema import VECTOR_COLUMN

    root = Path(tempfile.mkdtemp(prefix="fill-memory-"))
    try:
        store = ChunkStore(root / "lance", 384)
        _table(store, ns.rows)

        def fill() -> None:
            for step in range(ns.steps):
                lo = step * 512
                ids = [f"c{i}" for i in range(lo, lo + 512)]
                files = sorted({f"f{i // 8}.py" for i in range(lo, lo + 512)})
                vectors = np.random.default_rng(lo).standard_normal((512, 384)).astype(np.float32)
                if ns.partial:
                    update = pa.table(
                        {"chunk_id": pa.array(ids), VECTOR_COLUMN: store._vector_array(vectors)}
                    )
                    store.table.merge_insert("chunk_id").when_matched_update_all().execute(update)
                else:
                    store.set_vectors(files, ids, vectors)

        _, fill_mb, fill_s = _peak_above(fill)
        out: dict[str, Any] = {
            "fragments_after_fills": _fragments(store),
            "rows": ns.rows,
            "fill": "partial-schema merge_insert" if ns.partial else "set_vectors (full-schema merge_insert)",
            "fill_added_mb": fill_mb,
            "fill_seconds_per_512": round(fill_s / max(1, ns.steps), 2),
            "filled": store.table.count_rows(f"{VECTOR_COLUMN} IS NOT NULL"),
        }
        if ns.fold:
            # What the pipeline does every ``FOLD_EVERY_ROWS`` filled rows (``refresh_indices``
            # with vectors incomplete: compaction and the FTS fold, by this checkout's store).
            _, mb, seconds = _peak_above(lambda: store.refresh_indices(full=False, vectors_complete=False))
            out["fold"] = {
                "added_mb": mb,
                "seconds": round(seconds, 1),
                "fragments_after": _fragments(store),
                "pylance_loaded": "lance" in sys.modules,
            }
        if ns.compact_options is not None:
            options = ast.literal_eval(ns.compact_options) if ns.compact_options.startswith("{") else None
            if options is None:  # "dict(a=1)" form
                call = ast.parse(ns.compact_options, mode="eval").body
                assert isinstance(call, ast.Call)
                options = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
            dataset = store.table.to_lance()
            before = len(dataset.get_fragments())
            metrics, mb, seconds = _peak_above(lambda: dataset.optimize.compact_files(**options))
            out["compact"] = {
                "options": options,
                "added_mb": mb,
                "seconds": round(seconds, 1),
                "fragments_before": before,
                "fragments_removed": metrics.fragments_removed,
                "fragments_added": metrics.fragments_added,
            }
        out["load"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--steps", type=int, default=6, help="fills of 512 rows")
    parser.add_argument(
        "--partial", action="store_true", help="the partial-schema merge set_vectors replaced"
    )
    parser.add_argument(
        "--compact-options", help='then compact_files with these, e.g. "dict(materialize_deletions=False)"'
    )
    parser.add_argument(
        "--fold",
        action="store_true",
        help="then the pipeline's mid-fill fold (ChunkStore.refresh_indices, vectors incomplete)",
    )
    parser.add_argument("--out", type=Path)
    ns = parser.parse_args(argv)
    emit(run(ns), ns.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
