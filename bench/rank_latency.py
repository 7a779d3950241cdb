"""Ranking-stack latency A/B: warm p50/p95 of search tools in this checkout against a base checkout.

Two long-lived search processes on the same index and data root, one importing this checkout's
packages, the other a base checkout's (``--base``, e.g. a ``git worktree`` of ``main``); the
queries alternate between them (A, B, A, B, ...), so machine noise from other work hits both
alike, and every query is distinct and sent with ``cache_bust`` (each call encodes its query).
The figure is the ratio of the two warm p95s (issue 17 asks for at most 1.25).

``--tool`` picks the tools (``search_hybrid`` by default; repeat it for more, their calls
interleave too). ``--exclude-encoding`` sends every measured query once to its side before the
timed pass, so the timed call finds its query vector cached (the result cache is still bypassed):
the figure is then the search without the query model. The machine's load averages before and
after the run are printed beside the figures.

    python -m bench.rank_latency --base /work/wt/rank-base --project PATH --data-root DIR \\
        [--queries 200] [--tool search_hybrid --tool search_keyword] [--exclude-encoding]
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

SIDES = ("new", "base")


def base_env(base: Path) -> dict[str, str]:
    """PYTHONPATH that makes a worker import ``base``'s packages instead of the installed ones."""
    srcs = [str(base / pkg / "src") for pkg in ("shared", "indexer", "search")]
    return {"PYTHONPATH": os.pathsep.join(srcs)}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run(
    base: Path,
    project: Path,
    data_root: Path,
    n: int,
    tools: tuple[str, ...] = ("search_hybrid",),
    exclude_encoding: bool = False,
) -> dict[str, Any]:
    """Interleaved warm timings of ``tools`` in this checkout (``new``) and ``base``."""
    queries = latency_queries(project, data_root, 2 * n * len(tools) + 10)
    warmup, measured = queries[:10], queries[10:]
    # Each query goes to one side and one tool only, alternating: both sides get distinct
    # queries (no query-vector cache hits unless --exclude-encoding put them there) from the same mix.
    plan = [(q, SIDES[i % 2], tools[(i // 2) % len(tools)]) for i, q in enumerate(measured)]
    samples: dict[str, dict[str, list[float]]] = {t: {s: [] for s in SIDES} for t in tools}
    fuse: dict[str, dict[str, list[float]]] = {t: {s: [] for s in SIDES} for t in tools}
    load_before = _load()
    with SearchProcess(data_root) as new, SearchProcess(data_root, env=base_env(base)) as old:
        procs = {"new": new, "base": old}
        for q in warmup:
            for tool in tools:
                for proc in procs.values():
                    proc.call(tool, _args(project, q))
        if exclude_encoding:
            for q, side, tool in plan:
                procs[side].call(tool, _args(project, q))
        for q, side, tool in plan:
            reply = procs[side].call(tool, _args(project, q))
            samples[tool][side].append(reply["ms"])
            if "fuse" in reply["timings"]:
                fuse[tool][side].append(float(reply["timings"]["fuse"]))
    out: dict[str, Any] = {}
    for tool in tools:
        res: dict[str, Any] = {
            side: {"warm": percentiles(samples[tool][side]), "fuse_ms": percentiles(fuse[tool][side])}
            for side in SIDES
        }
        res["p95_ratio"] = round(res["new"]["warm"]["p95"] / res["base"]["warm"]["p95"], 3)
        res["p50_ratio"] = round(res["new"]["warm"]["p50"] / res["base"]["warm"]["p50"], 3)
        out[tool] = res
    if tools == ("search_hybrid",):  # the original report shape
        out = {**out["search_hybrid"]}
    out["queries_per_side"] = n
    out["excluding_encoding"] = exclude_encoding
    out["load_averages"] = {"before": load_before, "after": _load()}
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI: print the A/B as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="checkout whose packages are the baseline")
    ap.add_argument("--project", type=Path, required=True)
    ap.add_argument("--data-root", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=200, help="measured queries per side and tool")
    ap.add_argument("--tool", action="append", help="tool to time (repeatable; default search_hybrid)")
    ap.add_argument(
        "--exclude-encoding", action="store_true", help="pre-encode the measured queries (vector cache)"
    )
    args = ap.parse_args(argv)
    tools = tuple(args.tool or ["search_hybrid"])
    json.dump(
        run(args.base, args.project, args.data_root, args.queries, tools, args.exclude_encoding),
        sys.stdout,
        indent=2,
    )
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
