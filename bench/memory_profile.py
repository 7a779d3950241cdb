"""Where one hybrid ``memory_search`` spends its time: wall and thread CPU per stage.

    nice -n 10 .venv/bin/python -m bench.memory_profile --data DIR [--rounds 1]

``DIR`` is an index ``bench.memory_latency_ab --data DIR`` built (its ``scaled`` root is used).
The stages are the library functions of ``local_memory_search.memory`` wrapped with timers (the
full-text leg and its row take run in the worker thread, so their thread CPU is the Python part
only; LanceDB's own threads show in the process CPU of the whole call). Prints p50/p95 per stage
and the load average: on this shared machine a figure means little without it.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

STAGES = {
    "search": ("compile_filters", "_fts_leg", "_run_vector", "_finish", "_fold_superseded", "_collapse"),
    "tools": ("open_reader", "page", "search"),
}


def pct(xs: list[float], p: float) -> float:
    return round(sorted(xs)[int(p * (len(xs) - 1))], 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(a.data / "scaled")
    os.environ.pop("LOCAL_MEMORY_VAULT", None)
    import local_memory_search.memory.search as S
    import local_memory_search.memory.tools as T
    from local_memory_search.encoder import ENCODER
    from local_memory_search.memory.reader import MemoryReader
    from local_memory_search.tools import call_tool

    from bench.memory_bench import generate
    from bench.memory_latency_ab import query_args

    stats: dict[str, list[tuple[float, float]]] = defaultdict(list)

    def timed(owner: Any, name: str, label: str) -> None:
        fn: Callable[..., Any] = getattr(owner, name)

        def wrapper(*args: Any, **kw: Any) -> Any:
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                return fn(*args, **kw)
            finally:
                stats[label].append(((time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000))

        setattr(owner, name, wrapper)

    for name in STAGES["search"]:
        timed(S, name, name)
    for name in STAGES["tools"]:
        timed(T, name, "search (all)" if name == "search" else name)
    timed(MemoryReader, "take", "take (rows by row id)")
    timed(ENCODER, "encode", "encode (query; LRU-cached)")
    queries = [q for q in generate(2000, a.seed).queries if "q" in q]
    for q in queries[:10]:  # warm the table handle, the matrix and the masks
        call_tool("memory_search", query_args(q))
    stats.clear()
    total: list[tuple[float, float]] = []
    for _ in range(a.rounds):
        for q in queries:
            t0, c0 = time.perf_counter(), time.process_time()
            call_tool("memory_search", query_args(q))
            total.append(((time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000))
    lines = [
        f"load average (1 min) {os.getloadavg()[0]:.2f}; {len(total)} queries; threads {threading.active_count()}"
    ]
    rows = [("call_tool (process CPU)", total), *stats.items()]
    for label, xs in rows:
        wall, cpu = [x[0] for x in xs], [x[1] for x in xs]
        lines.append(f"{label:28s} wall p50 {pct(wall, 0.5):7} p95 {pct(wall, 0.95):7} | cpu p50 {pct(cpu, 0.5):6} p95 {pct(cpu, 0.95):6}  n={len(xs)}")  # fmt: skip
    print("\n".join(lines))  # noqa: T201 - a bench script's report goes to stdout
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
