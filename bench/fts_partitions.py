"""Does a full-text index built up by incremental folds search slower, and does a rebuild help?

Lance's inverted index gains a posting-list partition (``part_N_*`` files) with every fold of
new rows (``optimize_indices``) and never consolidates them (lance-format/lance#6292), while a
fresh build of 100k rows has one or two. This bench takes a hard-link copy of the real 100k
project's table (its files are immutable; the copy writes new ones), then per round rewrites
``--rows`` rows (what a re-index of changed files does) and folds them the way the indexer does
(``compact_files`` + ``optimize_indices`` on the FTS index), and times the keyword leg's query
(``nearest_to_text``, limit 50) on the copy against the untouched original, interleaved query by
query (ratios: the machine is shared). Last, it rebuilds the copy's FTS index and times that.

    python -m bench.fts_partitions --rounds 6 --rows 300 --queries 150
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from local_memory_indexer.store import fts_index_config
from local_memory_shared.schema import FTS_COLUMN

from bench.common import emit
from bench.index_state import fts_partition_count, published_table
from bench.metrics import percentiles

os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
CACHE = Path(__file__).resolve().parent / "cache" / "fts-partitions"


def _time(tables: dict[str, Any], queries: list[str]) -> dict[str, list[float]]:
    """Per table, each query's wall ms; both tables are freshly opened and warmed by a first,
    untimed pass over the same queries (a warm searcher's caches hold their posting lists)."""
    import asyncio

    out: dict[str, list[float]] = {k: [] for k in tables}
    for q in queries:
        for table in tables.values():
            asyncio.run(
                table.query().nearest_to_text(q, [FTS_COLUMN]).select(["chunk_id"]).limit(50).to_arrow()
            )
    for n, q in enumerate(queries):
        order = list(tables) if n % 2 == 0 else list(reversed(tables))
        for name in order:
            started = time.perf_counter()
            asyncio.run(
                tables[name]
                .query()
                .nearest_to_text(q, [FTS_COLUMN])
                .select(["chunk_id"])
                .limit(50)
                .to_arrow()
            )
            out[name].append((time.perf_counter() - started) * 1000)
    return out


def main(argv: list[str] | None = None) -> int:
    import lance
    import lancedb
    import pyarrow.compute as pc

    from bench.real100k import DATA, PROJECT, query_pool

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--rows", type=int, default=300)
    ap.add_argument("--queries", type=int, default=150)
    ns = ap.parse_args(argv)

    table_dir, version = published_table(PROJECT, DATA)
    lance_dir = table_dir.parent
    shutil.rmtree(CACHE, ignore_errors=True)
    CACHE.mkdir(parents=True)
    subprocess.run(["cp", "-al", str(lance_dir), str(CACHE / "lance")], check=True)
    copy_dir = CACHE / "lance" / "chunks.lance"
    ds = lance.dataset(str(copy_dir))
    if ds.version != version:  # the copy starts from the published version
        ds = lance.dataset(str(copy_dir), version=version)
        ds.restore()
    queries = query_pool(ns.queries)

    async def open_table(folder: Path) -> Any:
        db = await lancedb.connect_async(str(folder))
        return await db.open_table("chunks")

    import asyncio

    result: dict[str, Any] = {
        "command": "python -m bench.fts_partitions " + " ".join(argv or []),
        "rounds": [],
    }
    ids = ds.to_table(columns=["chunk_id"]).column("chunk_id").to_pylist()

    def measure(label: int | str, **extra: float) -> None:
        """Time both tables, freshly opened, and record the copy's partitions and the ratios."""
        original = asyncio.run(open_table(lance_dir))
        asyncio.run(original.checkout(version))
        copy = asyncio.run(open_table(CACHE / "lance"))
        times = _time({"original": original, "copy": copy}, queries)
        mine, theirs = percentiles(times["copy"]), percentiles(times["original"])
        fts = next(i for i in ds.list_indices() if i["type"] == "Inverted")
        entry = {
            "round": label,
            "fts_partitions": fts_partition_count(copy_dir, fts["uuid"]),
            **extra,
            "original_ms": theirs,
            "copy_ms": mine,
            "ratio_p50": round(mine["p50"] / theirs["p50"], 3),
            "ratio_mean": round(mine["mean"] / theirs["mean"], 3),
        }
        result["rounds"].append(entry)
        print(json.dumps(entry), flush=True)

    for r in range(ns.rounds + 1):
        if r:
            # Rewrite ``rows`` rows as a re-index of changed files does (delete + insert), then fold.
            pick = ids[(r * 7919) % len(ids) :][: ns.rows]
            rows = ds.to_table(filter=pc.field("chunk_id").isin(pick))
            ds.delete(pc.field("chunk_id").isin(pick))
            ds = lance.write_dataset(rows, str(copy_dir), mode="append")
            started = time.perf_counter()
            ds.optimize.compact_files()
            ds.optimize.optimize_indices(
                index_names=[i["name"] for i in ds.list_indices() if i["type"] == "Inverted"]
            )
            ds = lance.dataset(str(copy_dir))
            fold_s = time.perf_counter() - started
        else:
            fold_s = 0.0
        measure(r, fold_s=round(fold_s, 2))
    started = time.perf_counter()
    tbl = lancedb.connect(str(CACHE / "lance")).open_table("chunks")
    tbl.create_index(FTS_COLUMN, config=fts_index_config(), replace=True)  # the indexer's own settings
    ds = lance.dataset(str(copy_dir))
    measure("rebuilt", rebuild_s=round(time.perf_counter() - started, 2))
    out = (
        Path(__file__).resolve().parent / "results" / f"fts_partitions-{time.strftime('%Y%m%d-%H%M%S')}.json"
    )
    emit(result, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
