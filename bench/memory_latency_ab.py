"""Memory search latency, before/after in one run: two searcher processes, interleaved, same index.

    nice -n 10 .venv/bin/python -m bench.memory_latency_ab --baseline REV [--rows 50000] [--rounds 2]
        [--data DIR] [--json OUT]

``REV`` is a git revision of this repository: its ``search/src`` and ``shared/src`` are exported
(``git archive``) to a temp folder and a worker process imports them from there (``PYTHONPATH``
comes before the editable installs); the other worker runs the working tree. Both answer the same
labelled queries of ``bench.memory_bench`` (hybrid mode, ``limit`` 10) over one index of ``--rows``
rows (the bench's 2,000-record vault replicated, as ``memory_bench --scale`` builds it); ``--data``
keeps that index for the next run. Queries alternate between the workers (A then B, B then A on the
next), so the shared machine's load hits both alike. Reported per side: p50/p95 of the time spent in
``call_tool`` inside the worker and of the process CPU it used, the ratios new/old, the load
average, and whether every answer is identical (ids, order, scores).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import emit, export_ref

REPO = Path(__file__).resolve().parent.parent


def _worker() -> None:
    """Answer ``{"args": ...}`` lines with the call's time and its ranked (id, score) pairs."""
    from local_memory_search.tools import call_tool

    sys.stdout.write(
        json.dumps({"ready": True, "module": sys.modules["local_memory_search"].__file__}) + "\n"
    )
    sys.stdout.flush()
    for line in sys.stdin:
        req = json.loads(line)
        t0, c0 = time.perf_counter(), time.process_time()
        env = call_tool("memory_search", req["args"])
        ms, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
        hits = [[h["id"], h.get("score")] for h in env.get("results") or []]
        sys.stdout.write(json.dumps({"ms": ms, "cpu_ms": cpu, "ok": env["ok"], "hits": hits}) + "\n")
        sys.stdout.flush()


class Worker:
    def __init__(self, data_root: Path, pythonpath: str | None):
        env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
        env.pop("LOCAL_MEMORY_VAULT", None)
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.memory_latency_ab", "--worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=REPO,
        )  # fmt: skip
        self.module = self._read()["module"]

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("worker died")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def call(self, args: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"args": args}) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def build_index(data: Path, rows: int, seed: int) -> list[dict[str, Any]]:
    """The bench vault (reused when ``data`` already holds it) and its ranked queries."""
    from bench.memory_bench import generate, scale_index, write_vault

    v = generate(2000, seed)
    marker = data / f"ab-{rows}-{seed}.done"
    if not marker.exists():
        shutil.rmtree(data, ignore_errors=True)
        src = data / "src"
        os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(src)
        os.environ.pop("LOCAL_MEMORY_VAULT", None)
        from local_memory_indexer.memory.sync import rebuild
        from local_memory_indexer.memory.writer import MemoryWriter

        write_vault(v, src / "vault")
        w = MemoryWriter(commit_delay=3600)
        rebuild(w)
        w.close()
        scale_index(src, data / "scaled", rows, seed)
        marker.write_text("ok\n")
    return [q for q in v.queries if "q" in q]


def query_args(q: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {"projectId": q["project"], "limit": 10, "query": q["q"], "mode": "hybrid"}
    for key in ("path", "asOf"):
        if key in q:
            args[key] = q[key]
    return args


def pct(xs: list[float], p: float) -> float:
    return round(sorted(xs)[int(p * (len(xs) - 1))], 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--baseline", default="HEAD", help="git revision to compare against (default HEAD)")
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--data", type=Path, help="keep the built index here (reused when present)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    if a.worker:
        _worker()
        return 0
    data = a.data or Path(tempfile.mkdtemp(prefix="gmemab", dir="/tmp"))
    old_src = Path(tempfile.mkdtemp(prefix="gmemab-old", dir="/tmp"))
    try:
        queries = build_index(data, a.rows, a.seed)
        export_ref(a.baseline, old_src, ["search/src", "shared/src"])
        old = Worker(data / "scaled", f"{old_src}/search/src:{old_src}/shared/src")
        new = Worker(data / "scaled", None)
        assert old.module.startswith(str(old_src)) and not new.module.startswith(str(old_src)), (
            old.module,
            new.module,
        )
        for q in queries[:10]:  # warm the encoder, the table handles and the page cache on both sides
            old.call(query_args(q))
            new.call(query_args(q))
        ms: dict[str, list[float]] = {"old": [], "new": []}
        cpu: dict[str, list[float]] = {"old": [], "new": []}
        mismatches: list[dict[str, Any]] = []
        load: list[float] = []
        n = n_diff = 0
        for _ in range(a.rounds):
            for q in queries:
                args = query_args(q)
                order = (("old", old), ("new", new)) if n % 2 == 0 else (("new", new), ("old", old))
                replies = {}
                for name, w in order:
                    replies[name] = w.call(args)
                    ms[name].append(replies[name]["ms"])
                    cpu[name].append(replies[name]["cpu_ms"])
                if replies["old"]["hits"] != replies["new"]["hits"]:
                    n_diff += 1
                if replies["old"]["hits"] != replies["new"]["hits"] and len(mismatches) < 3:
                    mismatches.append(
                        {"args": args, "old": replies["old"]["hits"], "new": replies["new"]["hits"]}
                    )
                n += 1
                if n % 50 == 0:
                    load.append(os.getloadavg()[0])
        old.close()
        new.close()
    finally:
        shutil.rmtree(old_src, ignore_errors=True)
        if a.data is None:
            shutil.rmtree(data, ignore_errors=True)
    result: dict[str, Any] = {
        "rows": a.rows,
        "baseline": a.baseline,
        "queries": n,
        "load_avg_1m": {"min": min(load, default=0.0), "max": max(load, default=0.0)},
        **{side: {"p50": pct(x, 0.5), "p95": pct(x, 0.95), "mean": round(statistics.fmean(x), 1)} for side, x in ms.items()},
        "ratio_new_over_old": {
            "p50": round(pct(ms["new"], 0.5) / pct(ms["old"], 0.5), 2),
            "p95": round(pct(ms["new"], 0.95) / pct(ms["old"], 0.95), 2),
        },
        # process CPU of the call (every thread, LanceDB's and ONNX's too): far less bent by the
        # machine's load than wall time
        "cpu_ms": {side: {"p50": pct(x, 0.5), "p95": pct(x, 0.95)} for side, x in cpu.items()},
        "cpu_ratio_new_over_old": {
            "p50": round(pct(cpu["new"], 0.5) / max(pct(cpu["old"], 0.5), 0.1), 2),
            "p95": round(pct(cpu["new"], 0.95) / max(pct(cpu["old"], 0.95), 0.1), 2),
        },
        "different_answers": n_diff,
        "mismatches": mismatches,
    }  # fmt: skip
    emit(result, a.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
