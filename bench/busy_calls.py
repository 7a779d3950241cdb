"""Where a search call spends its time while the same project is re-indexed (issue 14, item 5).

One in-process searcher on the real 100k project (``bench.real100k``): each phase times the whole
``search_hybrid`` tool call and, with plain timers wrapped around them, the parts of
``store.open_index`` that run before ranking (state DB, status and writer check, vectors check,
LanceDB handle) and ``api.search`` itself. Idle phases alternate with busy ones, in which
``--edit-files`` Python files each gain a function and a separate ``local-memory-indexer index``
re-indexes the project (niceness ``--writer-nice``). Edits are undone and re-indexed at the end.

    python -m bench.busy_calls --rounds 2 --edit-files 100

Prints p50 / p95 (ms) per part and phase, and writes them as JSON (``--json``).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PARTS = (
    "resolve_project",
    "open_state_ro",  # a state-DB connection opened (the pool's misses: the server pools them)
    "read_project_row",
    "read_index_meta",
    "_check_status",
    "_open_lance",
    "_check_vectors",
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--idle", type=int, default=80, help="calls per idle phase")
    ap.add_argument("--edit-files", type=int, default=100)
    ap.add_argument("--writer-nice", default="10")
    ap.add_argument("--json", type=Path)
    ns = ap.parse_args(argv)

    from bench import real100k as R
    from bench.metrics import percentiles

    os.environ.update(R._env())
    from bench.search_worker import start_like_the_server

    start_like_the_server()
    from local_memory_search import api, store
    from local_memory_search.tools import call_tool

    times: dict[str, list[float]] = collections.defaultdict(list)

    def timed(mod: Any, name: str) -> None:
        fn: Callable[..., Any] = getattr(mod, name)

        def inner(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                times[name].append((time.perf_counter() - t) * 1000)

        setattr(mod, name, inner)

    for part in PARTS:
        timed(store, part)
    timed(api, "search")
    pool = iter(R.query_pool(30 + ns.rounds * (ns.idle + 600)))

    def call() -> None:
        t = time.perf_counter()
        call_tool("search_hybrid", R._args(next(pool)))
        times["call"].append((time.perf_counter() - t) * 1000)

    for _ in range(30):  # warm-up
        call()
    out: dict[str, Any] = {"phases": []}

    def phase(label: str, writer: subprocess.Popen[bytes] | None) -> None:
        times.clear()
        k = 0
        while (writer is None and k < ns.idle) or (writer is not None and (k < 3 or writer.poll() is None)):
            time.sleep(R.THINK_SECONDS)
            call()
            k += 1
        row = {"phase": label, **{name: percentiles(v) for name, v in sorted(times.items())}}
        out["phases"].append(row)
        cells = "  ".join(f"{n} {v['p50']}/{v['p95']}" for n, v in row.items() if isinstance(v, dict))
        print(f"{label:7s} {cells}", flush=True)

    originals = R._original_texts(ns.edit_files)
    env = {**R._env(), "LOCAL_MEMORY_INDEX_NICE": ns.writer_nice}
    cmd = [sys.executable, "-m", "local_memory_indexer.cli", "index", str(R.PROJECT), "--json"]
    try:
        for r in range(ns.rounds):
            phase(f"idle{r}", None)
            R.edit_round(originals, 700 + r)
            writer = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            phase(f"busy{r}", writer)
    finally:
        for path, data in originals.items():
            R._replace(path, data)
        subprocess.run(cmd, env=R._env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    out["command"] = "python -m bench.busy_calls " + " ".join(argv if argv is not None else sys.argv[1:])
    if ns.json:
        ns.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
