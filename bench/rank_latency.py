"""Ranking-stack latency A/B: ``search_hybrid`` warm p50/p95 of this checkout against a base checkout.

Two long-lived search processes on the same index and data root, one importing this checkout's
packages, the other a base checkout's (``--base``, e.g. a ``git worktree`` of ``main``); the
queries alternate between them (A, B, A, B, ...), so machine noise from other work hits both
alike, and every query is distinct and sent with ``cache_bust`` (each call encodes its query).
The figure is the ratio of the two warm p95s (issue 17 asks for at most 1.25).

    python -m bench.rank_latency --base /work/wt/rank-base --project PATH --data-root DIR [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from .latency import _args, latency_queries
from .metrics import percentiles
from .search_worker import SearchProcess


def base_env(base: Path) -> dict[str, str]:
    """PYTHONPATH that makes a worker import ``base``'s packages instead of the installed ones."""
    srcs = [str(base / pkg / "src") for pkg in ("shared", "indexer", "search")]
    return {"PYTHONPATH": os.pathsep.join(srcs)}


def run(base: Path, project: Path, data_root: Path, n: int) -> dict[str, Any]:
    """Interleaved warm ``search_hybrid`` timings of this checkout (``new``) and ``base``."""
    queries = latency_queries(project, data_root, 2 * n + 10)
    warmup, measured = queries[:10], queries[10:]
    samples: dict[str, list[float]] = {"new": [], "base": []}
    fuse: dict[str, list[float]] = {"new": [], "base": []}
    with SearchProcess(data_root) as new, SearchProcess(data_root, env=base_env(base)) as old:
        procs = {"new": new, "base": old}
        for q in warmup:
            for proc in procs.values():
                proc.call("search_hybrid", _args(project, q))
        for i, q in enumerate(measured):
            # Each query goes to one side only, alternating: both sides get distinct queries
            # (no query-vector cache hits) from the same mix.
            side = "new" if i % 2 == 0 else "base"
            reply = procs[side].call("search_hybrid", _args(project, q))
            samples[side].append(reply["ms"])
            if "fuse" in reply["timings"]:
                fuse[side].append(float(reply["timings"]["fuse"]))
    out: dict[str, Any] = {
        side: {"warm": percentiles(v), "fuse_ms": percentiles(fuse[side])} for side, v in samples.items()
    }
    out["p95_ratio"] = round(out["new"]["warm"]["p95"] / out["base"]["warm"]["p95"], 3)
    out["p50_ratio"] = round(out["new"]["warm"]["p50"] / out["base"]["warm"]["p50"], 3)
    out["queries_per_side"] = n
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI: print the A/B as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="checkout whose packages are the baseline")
    ap.add_argument("--project", type=Path, required=True)
    ap.add_argument("--data-root", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=200, help="measured queries per side")
    args = ap.parse_args(argv)
    json.dump(run(args.base, args.project, args.data_root, args.queries), sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
