"""The fusion alone, A/B: real ``fuse`` inputs replayed in this checkout and in a base checkout.

Whole-call latency on a busy machine mostly measures the retrieval legs and the scheduler; the
ranking step is a pure function, so it can be timed apart. This captures the arguments of every
``fuse`` call that ``search_hybrid`` and ``search_keyword`` make on an indexed project (this
checkout's legs), then replays them in fresh processes of each side, alternating
(new, base, new, base, ...): each case is timed ``--repeat`` times and its fastest run kept
(preemption only ever adds time), and the report gives the median and p95 over cases of those
per-call times, per mode and side, with the ratio and the machine's load averages.

    python -m bench.fuse_replay --base BASE --project PATH --data-root DIR [--queries 80] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .latency import _args, latency_queries
from .rank_latency import base_env

TOOLS = ("search_hybrid", "search_keyword")


def capture(project: Path, data_root: Path, n: int, out: Path) -> int:
    """Run ``n`` queries per tool here and pickle the arguments of each ``fuse`` call to ``out``."""
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(data_root)
    import local_memory_search.hybrid as hybrid
    from local_memory_search.tools import call_tool

    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    real = hybrid.fuse

    def recording(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    hybrid.fuse = recording
    try:
        for tool in TOOLS:
            for q in latency_queries(project, data_root, n):
                call_tool(tool, _args(project, q))
    finally:
        hybrid.fuse = real
    out.write_bytes(pickle.dumps(calls))
    return len(calls)


def replay(path: Path, repeat: int) -> dict[str, list[float]]:
    """Per case, the fastest of ``repeat`` runs of ``fuse`` (ms), grouped by mode."""
    from local_memory_search.fusion import fuse

    calls = pickle.loads(path.read_bytes())  # noqa: S301 - written by capture() in this run
    out: dict[str, list[float]] = {"hybrid": [], "keyword": []}
    for args, kwargs in calls:
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            fuse(*args, **kwargs)
            best = min(best, time.perf_counter() - started)
        out["hybrid" if args[0].mode == "hybrid" else "keyword"].append(best * 1000)
    return out


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "p50": round(ordered[len(ordered) // 2], 3),
        "p95": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 3),
    }


def run(base: Path, project: Path, data_root: Path, n: int, rounds: int, repeat: int) -> dict[str, Any]:
    """Capture once, then replay alternately in this checkout and in ``base``."""
    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        cases = Path(tmp) / "fuse_calls.pickle"
        captured = capture(project, data_root, n, cases)
        sides: dict[str, dict[str, list[dict[str, float]]]] = {"new": {}, "base": {}}
        for _ in range(rounds):
            for side in ("new", "base"):
                env = {**os.environ, **(base_env(base) if side == "base" else {})}
                cmd = [
                    sys.executable,
                    "-m",
                    "bench.fuse_replay",
                    "--replay",
                    str(cases),
                    "--repeat",
                    str(repeat),
                ]
                done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
                for mode, values in json.loads(done.stdout).items():
                    sides[side].setdefault(mode, []).append(_summary(values))
    out: dict[str, Any] = {"captured_calls": captured, "rounds": rounds, "repeat": repeat}
    for mode in ("hybrid", "keyword"):
        new, old = sides["new"][mode], sides["base"][mode]
        out[mode] = {
            "new": new,
            "base": old,
            "p50_ratio": [round(a["p50"] / b["p50"], 3) for a, b in zip(new, old, strict=True)],
        }
    out["load_averages"] = {"before": load_before, "after": [round(x, 2) for x in os.getloadavg()]}
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI: print the A/B as JSON (``--replay FILE`` is the worker)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, help="checkout whose packages are the baseline")
    ap.add_argument("--project", type=Path)
    ap.add_argument("--data-root", type=Path)
    ap.add_argument("--queries", type=int, default=80, help="queries per tool to capture")
    ap.add_argument("--rounds", type=int, default=3, help="replays per side, alternating")
    ap.add_argument("--repeat", type=int, default=30, help="runs per case (the fastest is kept)")
    ap.add_argument("--replay", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.replay:
        json.dump(replay(args.replay, args.repeat), sys.stdout)
        return 0
    if not (args.base and args.project and args.data_root):
        ap.error("--base, --project and --data-root are required")
    result = run(args.base, args.project, args.data_root, args.queries, args.rounds, args.repeat)
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
