"""The vector leg's ANN settings on a large index: latency against recall, one process, interleaved.

The semantic leg asks LanceDB's IVF index with ``nprobes`` partitions and a ``refine_factor``
(``legs.ANN_SETTINGS``, per index kind; the refine re-ranks ``depth × factor`` quantized
candidates by their exact vectors). This times the leg's own LanceDB query (the same
``vector_arrow`` call, columns and depth the leg uses, query vectors encoded once beforehand)
for each setting, rotating the settings' order query by query so machine noise hits all alike,
and scores each setting's answers against the exact flat scan (``bypass_vector_index``) of the
same query: recall@10 and recall@``depth`` (the share of the exact top-k the ANN answer holds)
and how often the first hit is the exact first hit.

    python -m bench.ann_sweep --project bench/cache/real100k/project \\
        --data-root bench/cache/real100k/data --queries 200 \\
        --setting 20:5 --setting 10:5 --setting 20:2 --setting 40:1 [--json OUT]

Queries: ``bench.latency.latency_queries`` (CoSQA's natural-language queries plus identifiers
from the index). Prints p50/p95 per setting with the ratio to the first setting and the load
averages before and after.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from .common import emit
from .latency import latency_queries
from .metrics import percentiles


def _setting(spec: str) -> tuple[int, int | None]:
    probes, _, refine = spec.partition(":")
    return int(probes), (int(refine) if refine and refine != "none" else None)


def _label(setting: tuple[int, int | None]) -> str:
    return f"nprobes={setting[0]} refine={setting[1] if setting[1] is not None else 'none'}"


def run(
    project: Path, data_root: Path, n: int, settings: list[tuple[int, int | None]], depth: int
) -> dict[str, Any]:
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(data_root)
    from local_memory_search.encoder import ENCODER, choose_encoder
    from local_memory_search.legs import LEG_COLUMNS
    from local_memory_search.store import open_index
    from local_memory_shared.schema import VECTOR_COLUMN

    queries = latency_queries(project, data_root, n)
    load_before = [round(x, 2) for x in os.getloadavg()]
    columns = [*LEG_COLUMNS, "_distance"]
    times: dict[str, list[float]] = {_label(s): [] for s in settings}
    recall10: dict[str, list[float]] = {_label(s): [] for s in settings}
    recall_depth: dict[str, list[float]] = {_label(s): [] for s in settings}
    first_same: dict[str, list[float]] = {_label(s): [] for s in settings}
    exact_ms: list[float] = []
    with open_index(str(project)) as reader:
        if reader.table is None or not reader.has_vector_index:
            raise SystemExit(f"{project}: no published table with a vector index to sweep")
        rows = int(reader.table.count_rows())
        choice, _ = choose_encoder(reader.meta, reader.vector_dim)
        vectors = [ENCODER.encode(choice, q, reader.vector_dim, reader.settings) for q in queries]

        def ask(vector: Any, **ann: Any) -> list[str]:
            table = reader.table
            assert table is not None
            out = table.vector_arrow(
                vector, column=VECTOR_COLUMN, distance_type="cosine", columns=columns, limit=depth, **ann
            )
            return [str(c) for c in out.column("chunk_id").to_pylist()]

        for vector in vectors[:5]:  # warm-up: index pages and partitions in the session cache
            for s in settings:
                ask(vector, nprobes=s[0], refine_factor=s[1])
        for i, vector in enumerate(vectors):
            t = time.perf_counter()
            exact = ask(vector, exact=True)
            exact_ms.append((time.perf_counter() - t) * 1000)
            order = settings[i % len(settings) :] + settings[: i % len(settings)]
            for s in order:
                label = _label(s)
                t = time.perf_counter()
                got = ask(vector, nprobes=s[0], refine_factor=s[1])
                times[label].append((time.perf_counter() - t) * 1000)
                top = set(exact[:10])
                recall10[label].append(len(top & set(got[:10])) / max(1, len(top)))
                recall_depth[label].append(len(set(exact) & set(got)) / max(1, len(exact)))
                first_same[label].append(float(bool(got) and bool(exact) and got[0] == exact[0]))
    first = _label(settings[0])
    base_p = percentiles(times[first])
    out: dict[str, Any] = {
        "command": "python -m bench.ann_sweep " + " ".join(sys.argv[1:]),
        "rows": rows,
        "queries": len(queries),
        "depth": depth,
        "exact_scan_ms": percentiles(exact_ms),
        "settings": {},
        "load_averages": {"before": load_before, "after": [round(x, 2) for x in os.getloadavg()]},
    }
    for s in settings:
        label = _label(s)
        p = percentiles(times[label])
        out["settings"][label] = {
            "ms": p,
            "p50_ratio": round(p["p50"] / base_p["p50"], 3),
            "p95_ratio": round(p["p95"] / base_p["p95"], 3),
            "recall@10": round(sum(recall10[label]) / len(recall10[label]), 4),
            f"recall@{depth}": round(sum(recall_depth[label]) / len(recall_depth[label]), 4),
            "first_hit_same": round(sum(first_same[label]) / len(first_same[label]), 4),
        }
        print(
            f"{label:24s} p50 {p['p50']:7.2f} p95 {p['p95']:7.2f} ms (×{out['settings'][label]['p95_ratio']:.2f} p95)"
            f"  recall@10 {out['settings'][label]['recall@10']:.4f}  recall@{depth} "
            f"{out['settings'][label][f'recall@{depth}']:.4f}  first {out['settings'][label]['first_hit_same']:.3f}",
            file=sys.stderr,
            flush=True,
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", type=Path, required=True)
    ap.add_argument("--data-root", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--depth", type=int, default=100, help="candidates per query (the leg's depth)")
    ap.add_argument(
        "--setting", action="append", help="NPROBES:REFINE (REFINE 'none' = no refine); first = baseline"
    )
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args(argv)
    settings = [_setting(s) for s in (args.setting or ["20:5", "10:5", "20:2", "20:none"])]
    out = run(args.project.resolve(), args.data_root.resolve(), args.queries, settings, args.depth)
    emit(out, Path(args.json) if args.json else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
