"""The memory full-text leg alone, SQLite FTS5 vs LanceDB FTS, interleaved on one index.

    nice -n 10 .venv/bin/python -m bench.memory_fts_leg --data DIR [--rounds 3] [--common 15] [--json OUT]

``DIR`` is an index ``bench.memory_latency_ab --data DIR`` built (its ``scaled`` root, 50,000 rows
by default, FTS5 rows included). Queries: the bench's labelled queries (with their project,
``path`` and ``asOf`` filters, as ``memory_latency_ab`` sends them) plus the ``--common`` most
frequent words of the index alone and all of them ORed into one query — the worst cases, where
almost every record matches. The new side is the searcher's leg as it runs (FTS5, or LanceDB for a query ``fts.too_wide``
for FTS5; how many is reported). Each query runs through both legs alternately (new, old; old, new)
at the depth a ``limit 10`` hybrid search uses (30), after one warm-up pass that builds the
per-version matrix, masks and docid map. Prints p50/p95/max per leg, the slowest queries of each,
the top-30 overlap of the two legs and the load average beside every figure.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import emit


def pct(xs: list[float], p: float) -> float:
    return round(sorted(xs)[int(p * (len(xs) - 1))], 2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--common", type=int, default=15)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(a.data / "scaled")
    os.environ.pop("LOCAL_MEMORY_VAULT", None)
    from local_memory_search.memory import fts
    from local_memory_search.memory import search as S
    from local_memory_search.memory.filters import MemoryFilters, compile_filters
    from local_memory_search.memory.reader import open_reader
    from local_memory_shared.memory.query import parse_fulltext

    from bench.memory_bench import generate

    v = generate(2000, a.seed)
    queries: list[tuple[str, MemoryFilters]] = []
    for q in v.queries:
        if "q" in q:
            queries.append(
                (q["q"], MemoryFilters(project=q["project"], path=q.get("path"), as_of=q.get("asOf")))
            )
    words = Counter(
        w.lower() for r in v.records for w in re.findall(r"[A-Za-z]{3,}", f"{r['title']} {r['content']}")
    )
    common = [w for w, _ in words.most_common(a.common)]
    project = v.queries[0]["project"]
    queries += [(w, MemoryFilters(project=project)) for w in common]
    queries.append((" ".join(common), MemoryFilters(project=project)))
    queries.append((" ".join(common), MemoryFilters(project=None)))
    depth = S.DEFAULT_CANDIDATES
    ms: dict[str, list[float]] = {"fts5": [], "lance": []}
    per_query: dict[str, dict[str, list[float]]] = {"fts5": {}, "lance": {}}
    overlap: list[float] = []
    load: list[float] = []
    with open_reader() as reader:
        compiled = [(text, parse_fulltext(text), compile_filters(reader, f)) for text, f in queries]
        wide = sum(
            fts.too_wide(
                reader, fts.without_common_words(reader, q), fts._docid_range(reader, w[1].project) or (0, 0)
            )
            for _, q, w in compiled
        )

        def run(leg: str, q: Any, where: Any) -> tuple[float, list[str]]:
            t0 = time.perf_counter()
            if leg == "fts5":  # the searcher's leg: FTS5, or LanceDB for a query too wide for it
                rows, warnings = S._fts_leg(reader, q, where, depth)
                assert not warnings, warnings
            else:
                rows, _ = S._lance_fts_leg(reader, q, where[0], depth)
            return (time.perf_counter() - t0) * 1000, [r["id"] for r in rows]

        for _, q, where in compiled:  # warm: matrix, masks, docid map, LanceDB caches
            run("fts5", q, where)
            run("lance", q, where)
        n = 0
        for _ in range(a.rounds):
            for text, q, where in compiled:
                order = ("fts5", "lance") if n % 2 == 0 else ("lance", "fts5")
                found = {}
                for leg in order:
                    t, found[leg] = run(leg, q, where)
                    ms[leg].append(t)
                    per_query[leg].setdefault(text, []).append(t)
                if found["lance"]:
                    overlap.append(len(set(found["fts5"]) & set(found["lance"])) / len(found["lance"]))
                n += 1
                if n % 25 == 0:
                    load.append(os.getloadavg()[0])
    slowest = {
        leg: sorted(
            ((round(statistics.median(t), 2), text[:60]) for text, t in per_query[leg].items()), reverse=True
        )[:5]
        for leg in ms
    }
    result = {
        "command": " ".join([sys.executable, "-m", "bench.memory_fts_leg", *(argv or sys.argv[1:])]),
        "rows": None,
        "queries": len(compiled),
        "calls_per_leg": len(ms["fts5"]),
        "depth": depth,
        "load_avg_1m": {"min": min(load, default=0.0), "max": max(load, default=0.0)},
        **{leg: {"p50": pct(x, 0.5), "p95": pct(x, 0.95), "max": round(max(x), 2)} for leg, x in ms.items()},
        "ratio_fts5_over_lance": {
            "p50": round(pct(ms["fts5"], 0.5) / pct(ms["lance"], 0.5), 2),
            "p95": round(pct(ms["fts5"], 0.95) / pct(ms["lance"], 0.95), 2),
        },
        "slowest_median_ms": slowest,
        "queries_too_wide_for_fts5": wide,
        "top30_overlap_mean": round(statistics.fmean(overlap), 3) if overlap else None,
        "common_words": common,
    }
    with open_reader() as reader:
        result["rows"] = reader.row_count()
    emit(result, a.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
