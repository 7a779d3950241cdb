"""Read-only isolation: ``search_hybrid`` latency while the writer works, as a ratio to idle.

Three phases against the same search process (warm, distinct queries, ``cache_bust=true``):
idle; while a separate ``local-memory-indexer index`` process fully indexes *another* project
(fresh copy, so it really embeds); while that process re-indexes *this* project with
``--full`` (every file re-parsed and re-written, embeddings from the cache, FTS rebuilt, a new
version published); and while it re-indexes *this* project after 200 of its files were edited
(each gains a new function, so chunks are really embedded). The searcher reads only the published LanceDB version, so it must keep
answering; what contention costs on 2 shared cores is the ratio. Every search answer during the
busy phases is also checked to be ``ok`` with results.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .latency import latency_queries
from .metrics import percentiles
from .search_worker import SearchProcess

MAX_BUSY_SECONDS = 600
THINK_SECONDS = 0.05
#: Files edited before the third busy phase (each gains one new function to embed).
EDITED_FILES = 200


def edit_files(project: Path, limit: int) -> int:
    """Append a distinct new function to up to ``limit`` Python files (so the re-index really embeds)."""
    files = sorted(p for p in project.rglob("*.py") if p.stat().st_size > 2000)[:limit]
    for n, path in enumerate(files):
        text = path.read_text(encoding="utf-8", errors="replace")
        # Replace, never write through, the file: the tree is hard-linked to the pinned sources.
        path.unlink()
        path.write_text(
            text + f"\n\ndef _bench_edit_{n}(items):\n"
            f'    """Return how many of the items mention edit number {n} (benchmark edit)."""\n'
            f"    return sum(1 for item in items if '{n}' in str(item))\n",
            encoding="utf-8",
        )
    return len(files)


def _indexer_cmd(project: Path, *, full: bool) -> list[str]:
    cmd = [sys.executable, "-m", "local_memory_indexer.cli", "index", str(project), "--quiet"]
    return cmd + (["--full"] if full else [])


class _QueryStream:
    """Queries in a fixed order, continued across phases, so none repeats within the searcher's
    512-entry query-vector cache (a repeat would skip encoding and flatter the busy phases)."""

    def __init__(self, queries: list[str]):
        self.queries = queries
        self.i = 0

    def next(self) -> str:
        q = self.queries[self.i % len(self.queries)]
        self.i += 1
        return q


def _search_while(
    proc: SearchProcess,
    project: Path,
    stream: _QueryStream,
    writer: subprocess.Popen[bytes] | None,
    n_idle: int,
) -> dict[str, Any]:
    samples: list[float] = []
    failures, empty, i = 0, 0, 0
    errors: list[Any] = []
    started = time.perf_counter()
    while True:
        if writer is None and i >= n_idle:
            break
        # At least a few searches per busy phase, even when the writer is quick.
        if (
            writer is not None
            and i >= 3
            and (writer.poll() is not None or time.perf_counter() - started > MAX_BUSY_SECONDS)
        ):
            break
        q = stream.next()
        i += 1
        # An agent pauses between searches; a closed loop at full speed would also starve the writer.
        time.sleep(THINK_SECONDS)
        reply = proc.request(
            {
                "op": "call",
                "tool": "search_hybrid",
                "args": {"project_path": str(project), "query": q, "limit": 10, "cache_bust": True},
            }
        )
        if not reply.get("ok"):
            failures += 1
            errors.append(reply.get("error"))
            continue
        if reply["n"] == 0:
            empty += 1
        samples.append(reply["ms"])
    out = percentiles(samples)
    out.update(
        {
            "failures": failures,
            "failure_errors": errors[:5],
            "empty_answers": empty,
            "seconds": round(time.perf_counter() - started, 1),
        }
    )
    return out


def run_isolation(project: Path, other_project: Path, data_root: Path, *, n_idle: int) -> dict[str, Any]:
    """Idle vs. busy ``search_hybrid`` latency on ``project`` (already indexed)."""
    stream = _QueryStream(latency_queries(project, data_root, 1200))
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    out: dict[str, Any] = {"think_seconds": THINK_SECONDS}
    with SearchProcess(data_root) as proc:
        for _ in range(5):
            proc.call(
                "search_hybrid", {"project_path": str(project), "query": stream.next(), "cache_bust": True}
            )
        out["idle"] = _search_while(proc, project, stream, None, n_idle)
        for phase, target, full in (
            ("other_project_full_index", other_project, False),
            ("same_project_reindex", project, True),
            ("same_project_edits_reindex", project, False),
        ):
            if phase == "same_project_edits_reindex":
                out["edited_files"] = edit_files(project, EDITED_FILES)
            t0 = time.perf_counter()
            # stderr to a file, not a pipe: a pipe nobody reads could fill and stall the indexer.
            err_file = tempfile.TemporaryFile()
            writer = subprocess.Popen(
                _indexer_cmd(target, full=full), env=env, stdout=subprocess.DEVNULL, stderr=err_file
            )
            res = _search_while(proc, project, stream, writer, n_idle)
            res["indexer_finished"] = writer.poll() is not None
            if not res["indexer_finished"]:
                # The measuring window is over; stop our own indexer rather than wait unboundedly.
                writer.terminate()
            writer.wait(timeout=120)
            err_file.seek(0)
            err = err_file.read()
            err_file.close()
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
