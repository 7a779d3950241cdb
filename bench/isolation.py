"""Read-only isolation: ``search_hybrid`` latency while the writer works, as a ratio to idle.

Three phases against the same search process (warm, distinct queries, ``cache_bust=true``):
idle; while a separate ``local-memory-indexer index`` process fully indexes *another* project
(fresh copy, so it really embeds); and while that process re-indexes *this* project with
``--full`` (every file re-parsed and re-written, embeddings from the cache, FTS rebuilt, a new
version published). The searcher reads only the published LanceDB version, so it must keep
answering; what contention costs on 2 shared cores is the ratio. Every search answer during the
busy phases is also checked to be ``ok`` with results.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .latency import latency_queries
from .metrics import percentiles
from .search_worker import SearchProcess

MAX_BUSY_SECONDS = 600


def _indexer_cmd(project: Path, *, full: bool) -> list[str]:
    cmd = [sys.executable, "-m", "local_memory_indexer.cli", "index", str(project), "--quiet"]
    return cmd + (["--full"] if full else [])


def _search_while(
    proc: SearchProcess,
    project: Path,
    queries: list[str],
    writer: subprocess.Popen[bytes] | None,
    n_idle: int,
) -> dict[str, Any]:
    samples, failures, empty, i = [], 0, 0, 0
    started = time.perf_counter()
    while True:
        if writer is None and i >= n_idle:
            break
        if writer is not None and (
            writer.poll() is not None or time.perf_counter() - started > MAX_BUSY_SECONDS
        ):
            break
        q = queries[i % len(queries)]
        i += 1
        reply = proc.request(
            {
                "op": "call",
                "tool": "search_hybrid",
                "args": {"project_path": str(project), "query": q, "limit": 10, "cache_bust": True},
            }
        )
        if not reply.get("ok"):
            failures += 1
            continue
        if reply["n"] == 0:
            empty += 1
        samples.append(reply["ms"])
    out = percentiles(samples)
    out.update(
        {"failures": failures, "empty_answers": empty, "seconds": round(time.perf_counter() - started, 1)}
    )
    return out


def run_isolation(project: Path, other_project: Path, data_root: Path, *, n_idle: int) -> dict[str, Any]:
    """Idle vs. busy ``search_hybrid`` latency on ``project`` (already indexed)."""
    queries = latency_queries(project, data_root, max(n_idle, 200))
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    out: dict[str, Any] = {}
    with SearchProcess(data_root) as proc:
        for q in queries[:5]:
            proc.call("search_hybrid", {"project_path": str(project), "query": q, "cache_bust": True})
        out["idle"] = _search_while(proc, project, queries, None, n_idle)
        for phase, target, full in (
            ("other_project_full_index", other_project, False),
            ("same_project_reindex", project, True),
        ):
            t0 = time.perf_counter()
            writer = subprocess.Popen(
                _indexer_cmd(target, full=full), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            res = _search_while(proc, project, queries, writer, n_idle)
            res["indexer_finished"] = writer.poll() is not None
            if not res["indexer_finished"]:
                # The measuring window is over; stop our own indexer rather than wait unboundedly.
                writer.terminate()
            _, err = writer.communicate(timeout=120)
            res["indexer_seconds"] = round(time.perf_counter() - t0, 1)
            res["indexer_exit"] = writer.returncode
            if writer.returncode and res["indexer_finished"]:
                res["indexer_stderr"] = err.decode(errors="replace")[-500:]
            idle_p95 = out["idle"].get("p95") or 0
            res["p95_ratio_to_idle"] = (
                round(res["p95"] / idle_p95, 2) if idle_p95 and res.get("p95") else None
            )
            res["p50_ratio_to_idle"] = (
                round(res["p50"] / out["idle"]["p50"], 2)
                if out["idle"].get("p50") and res.get("p50")
                else None
            )
            out[phase] = res
    return out
