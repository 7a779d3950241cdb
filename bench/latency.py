"""Search latency per tool, cold and warm, with the searcher's per-stage timings and its RSS.

* **warm**: one long-lived search process; after a few warm-up calls, every query is distinct
  and sent with ``cache_bust=true``, so the result cache never answers.
* **cold**: a fresh search process per sample whose very first call is timed (tables opened,
  the query model loaded on first use). The OS page cache stays warm: this is process-cold, not
  disk-cold.
* **stages** come from the envelope's ``search.timings_ms`` (encode = query embedding,
  semantic = vector leg incl. encode, keyword = BM25 leg, fuse, total).
* **RSS** of the search process after the warm run.

Queries: two thirds natural-language (CoSQA web queries), one third identifiers sampled from
the index itself.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from local_memory_shared.paths import project_paths

from .harness import SEARCH_TOOLS
from .metrics import percentiles
from .quality import cosqa_dir
from .search_worker import SearchProcess

STAGES = ("encode", "semantic", "keyword", "fuse", "total")


def latency_queries(project: Path, data_root: Path, n: int) -> list[str]:
    """``n`` distinct queries: natural language from CoSQA plus identifiers from the index."""
    natural = [
        q["doc"]
        for split in ("dev", "test")
        for q in json.loads((cosqa_dir() / f"cosqa-retrieval-{split}-500.json").read_text())
    ]
    names = index_identifiers(project_paths(data_root, project).state_db)
    step = max(1, len(names) // max(1, n // 3))
    idents = names[::step][: n // 3]
    out = idents + natural[: n - len(idents)]
    # Interleave so both kinds spread over the run.
    out.sort(key=lambda q: hash_order(q))
    return out


def index_identifiers(state_db: Path) -> list[str]:
    """The distinct function names longer than five characters in an index, sorted (identifier queries)."""
    conn = sqlite3.connect(f"file:{state_db}?mode=ro", uri=True)
    try:
        return sorted(
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT function_name FROM chunks WHERE function_name IS NOT NULL AND length(function_name) > 5"
            )
        )
    finally:
        conn.close()


def hash_order(text: str) -> str:
    """A stable, content-derived shuffle key."""
    import hashlib

    return hashlib.sha1(text.encode()).hexdigest()


def _args(project: Path, query: str) -> dict[str, Any]:
    return {"project_path": str(project), "query": query, "limit": 10, "cache_bust": True}


def measure_tier(project: Path, data_root: Path, *, n_warm: int, cold_samples: int) -> dict[str, Any]:
    """Cold and warm latency of every search tool on one indexed project."""
    # Every measured call gets a query no other call used: the searcher caches query vectors, so a
    # repeated query would skip encoding and flatter the figures.
    n_tools = len(SEARCH_TOOLS)
    queries = latency_queries(project, data_root, n_warm * n_tools + 5 + cold_samples * n_tools)
    out: dict[str, Any] = {"queries": n_warm, "cold_samples": cold_samples, "tools": {}}
    warmup = queries[n_warm * n_tools : n_warm * n_tools + 5]
    cold_queries = iter(queries[n_warm * n_tools + 5 :])
    spawn: list[float] = []
    for tool in SEARCH_TOOLS:
        cold: list[float] = []
        for _ in range(cold_samples):
            with SearchProcess(data_root) as proc:
                spawn.append(proc.spawn_ms)
                cold.append(proc.call(tool, _args(project, next(cold_queries)))["ms"])
        out["tools"][tool] = {"cold": percentiles(cold)}
    out["process_spawn_ms"] = percentiles(spawn)
    with SearchProcess(data_root) as proc:
        for tool in SEARCH_TOOLS:
            for q in warmup:
                proc.call(tool, _args(project, q))
        for slot, tool in enumerate(SEARCH_TOOLS):
            samples: list[float] = []
            stages: dict[str, list[float]] = {s: [] for s in STAGES}
            results, started = 0, time.perf_counter()
            for q in queries[slot * n_warm : (slot + 1) * n_warm]:
                reply = proc.call(tool, _args(project, q))
                samples.append(reply["ms"])
                results += reply["n"]
                for stage in STAGES:
                    if stage in reply["timings"]:
                        stages[stage].append(float(reply["timings"][stage]))
            out["tools"][tool]["warm"] = percentiles(samples)
            out["tools"][tool]["stages_ms"] = {s: percentiles(v) for s, v in stages.items() if v}
            out["tools"][tool]["mean_results"] = round(results / max(1, n_warm), 1)
            out["tools"][tool]["qps_single_client"] = round(n_warm / (time.perf_counter() - started), 1)
        out["rss_mb"] = proc.rss_mb()
    return out
