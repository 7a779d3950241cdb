"""Context-pack and diagnostics latency: ``retrieve_context_pack`` p95 (no re-rank), and
``health_check`` / ``index_status`` / ``doctor_index`` on a 3,000-file project.

Usage::

    python -m bench.context_bench [--files 3000] [--queries 100] [--corpus-root bench/cache/data] [--out FILE]

1. A synthetic project of ``--files`` small source files (Python, TypeScript, Markdown; one or two
   short chunks each, since embedding is the slow part) is generated in a temp dir and indexed
   with the real pipeline and the local ONNX model.
2. On it: ``health_check`` (cold: first call in the process, which loads the query model; then
   warm), ``health_check(verbose)``, ``index_status`` on a fresh tree and after editing 100 files,
   ``doctor_index``, and ``retrieve_context_pack`` with seed 003's defaults over distinct queries.
3. On every ready project indexed under ``--corpus-root`` (the searcher's benchmark corpora, if
   built by ``bench.run``), ``retrieve_context_pack`` p95 with that corpus's benchmark questions.

Every call goes through ``tools.call_tool``, the function the MCP server calls. Goals: pack p95
< 150 ms; health_check and index_status < 1 s each at 3,000 files.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .metrics import percentiles

BENCH_DIR = Path(__file__).resolve().parent
GOALS_MS = {"retrieve_context_pack_p95": 150.0, "health_check": 1000.0, "index_status": 1000.0}

WORDS = (
    "invoice payment retry backoff cache session token parser config loader render widget queue "
    "worker schedule report export import upload download account ledger balance audit user role "
    "permission router handler request response stream buffer encode decode compress archive "
    "metric counter timer alert notify email template search index shard replica snapshot"
).split()


def _ident(rng: random.Random, n: int = 2) -> str:
    return "_".join(rng.sample(WORDS, n))


def _camel(rng: random.Random) -> str:
    a, b = rng.sample(WORDS, 2)
    return a + b.capitalize()


def generate_project(root: Path, files: int, seed: int = 11) -> dict[str, int]:
    """Write ``files`` small source files under ``root``; returns counts per language."""
    rng = random.Random(seed)
    counts = {"python": 0, "typescript": 0, "markdown": 0}
    (root / ".gitignore").parent.mkdir(parents=True, exist_ok=True)
    (root / ".gitignore").write_text("build/\n*.log\n")
    for i in range(files):
        pkg = f"pkg{i % 30:02d}/sub{(i // 30) % 10}"
        kind = rng.random()
        if kind < 0.7:
            name = _ident(rng)
            other = _ident(rng)
            text = (
                f'"""Module {i}: {" ".join(rng.sample(WORDS, 4))}."""\n\n\n'
                f"def {name}(items, limit={rng.randint(1, 9)}):\n"
                f'    """{" ".join(rng.sample(WORDS, 6)).capitalize()}."""\n'
                f"    return [{other}(x) for x in items[:limit]]\n"
            )
            if rng.random() < 0.3:
                cls = "".join(w.capitalize() for w in rng.sample(WORDS, 2))
                text += (
                    f'\n\nclass {cls}:\n    """{" ".join(rng.sample(WORDS, 5))}."""\n\n'
                    f"    def run(self, value):\n        return {name}([value])\n"
                )
            path, counts["python"] = root / pkg / f"mod{i}.py", counts["python"] + 1
        elif kind < 0.9:
            fn = _camel(rng)
            text = (
                f"export function {fn}(input: string): string {{\n"
                f"  // {' '.join(rng.sample(WORDS, 5))}\n"
                f"  return {_camel(rng)}(input);\n}}\n"
            )
            path, counts["typescript"] = root / pkg / f"view{i}.ts", counts["typescript"] + 1
        else:
            text = f"# {' '.join(rng.sample(WORDS, 3)).title()}\n\n{' '.join(rng.sample(WORDS, 12))}.\n"
            path, counts["markdown"] = root / pkg / f"note{i}.md", counts["markdown"] + 1
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return counts


def _timed(fn: Any, *args: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    out = fn(*args)
    return (time.perf_counter() - started) * 1000, out


def _call(tool: str, args: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    from local_memory_search.tools import call_tool

    ms, out = _timed(call_tool, tool, args)
    if not out.get("ok"):
        raise RuntimeError(f"{tool} failed: {out.get('error')}")
    return ms, out


def pack_latency(project: Path, queries: list[str], warmup: int = 5) -> dict[str, Any]:
    """p50/p95 of retrieve_context_pack (seed defaults, no re-rank) over distinct queries.

    ``search_hybrid_ms`` times the plain search (limit 10, cache bypassed) on the same queries,
    interleaved, as the reference: the pack runs that same ranking, so on a busy machine both
    move together and their difference is the pack's own cost.
    """
    for q in queries[:warmup]:
        _call("retrieve_context_pack", {"project_path": str(project), "query": q})
        _call("search_hybrid", {"project_path": str(project), "query": q + " warm", "cache_bust": True})
    totals, ranks, packs, chars, searches = [], [], [], [], []
    for q in queries[warmup:]:
        ms, out = _call("retrieve_context_pack", {"project_path": str(project), "query": q})
        totals.append(ms)
        ranks.append(out["data"]["timings_ms"]["rank"])
        packs.append(out["data"]["timings_ms"]["pack"])
        chars.append(out["data"]["chars"])
        # A different query text, so the encoder's query-vector cache cannot serve it.
        search_ms, _ = _call(
            "search_hybrid", {"project_path": str(project), "query": q + " ref", "cache_bust": True}
        )
        searches.append(search_ms)
    return {
        "total_ms": percentiles(totals),
        "rank_ms": percentiles(ranks),
        "pack_ms": percentiles(packs),
        "search_hybrid_ms": percentiles(searches),
        "chars_mean": round(sum(chars) / max(1, len(chars))),
        "queries": len(totals),
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def _repeat(tool: str, args: dict[str, Any], n: int) -> tuple[dict[str, float], dict[str, Any]]:
    samples, last = [], {}
    for _ in range(n):
        ms, last = _call(tool, args)
        samples.append(ms)
    return percentiles(samples), last


def synthetic(files: int, n_queries: int, keep: Path | None) -> dict[str, Any]:
    """Generate, index and measure the synthetic project."""
    from local_memory_indexer.pipeline import index_project

    base = keep or Path(tempfile.mkdtemp(prefix="context-bench-"))
    project, data = base / "proj", base / "data"
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(data)
    os.environ.setdefault(
        "OLLAMA_BASE_URL", "http://127.0.0.1:9"
    )  # no Ollama here: verbose probe refused at once
    out: dict[str, Any] = {"files": files, "dir": str(base)}
    if not project.exists():
        out["languages"] = generate_project(project, files)
    started = time.perf_counter()
    summary = index_project(project)
    out["index_seconds"] = round(time.perf_counter() - started, 1)
    out["chunks"] = summary.chunks_total
    args = {"project_path": str(project)}

    cold_ms, cold = _call("health_check", args)
    out["health_check"] = {"cold_ms": round(cold_ms, 1), "status": cold["data"]["status"]}
    out["health_check"]["warm_ms"], _ = _repeat("health_check", args, 10)
    out["health_check_verbose"], _ = _repeat("health_check", {**args, "verbose": True}, 5)
    status_ms, status = _repeat("index_status", args, 10)
    out["index_status"] = {"fresh_tree_ms": status_ms, "stale_ratio": status["data"]["stale_ratio"]}

    rng = random.Random(5)
    edited = rng.sample(sorted(p for p in project.rglob("*.py")), 100)
    for p in edited[:50]:
        p.write_text(p.read_text() + "\n# edited\n")  # changed: size differs, hash read
    for p in edited[50:]:
        os.utime(p, (time.time() + 60, time.time() + 60))  # touched: mtime differs, same hash
    (project / "pkg00" / "brand_new.py").write_text("def brand_new():\n    return 1\n")
    stale_ms, stale = _repeat("index_status", args, 5)
    fresh = stale["data"]["freshness"]
    out["index_status"]["after_edits_ms"] = stale_ms
    out["index_status"]["after_edits"] = {
        k: fresh[k] for k in ("changed", "touched", "new", "deleted", "stale_ratio")
    }
    out["doctor_index"], doctor = _repeat("doctor_index", args, 3)
    out["doctor_index"]["healthy"] = doctor["data"]["healthy"]

    queries = [" ".join(rng.sample(WORDS, rng.randint(2, 4))) for _ in range(n_queries + 5)]
    out["retrieve_context_pack"] = pack_latency(project, list(dict.fromkeys(queries)))
    return out


def corpus_latency(corpus_root: Path, n_queries: int) -> dict[str, Any]:
    """retrieve_context_pack on every ready project indexed under ``corpus_root``."""
    results: dict[str, Any] = {}
    projects_dir = corpus_root / "projects"
    if not projects_dir.is_dir():
        return results
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(corpus_root)
    for state in sorted(projects_dir.glob("*/state.db")):
        conn = sqlite3.connect(f"file:{state}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT project_path, status, published_version FROM projects").fetchone()
            chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        finally:
            conn.close()
        if row is None or row[1] != "ready" or row[2] is None or not Path(row[0]).is_dir():
            continue
        project = Path(row[0])
        name = project.name.rsplit("-", 1)[0]
        questions_file = BENCH_DIR / "questions" / f"{name}.jsonl"
        queries = []
        if questions_file.is_file():
            queries = [
                json.loads(line)["question"]
                for line in questions_file.read_text().splitlines()
                if line.strip()
            ]
        rng = random.Random(3)
        while len(queries) < n_queries + 5:  # top up with word mixes so every corpus gets n samples
            queries.append(" ".join(rng.sample(WORDS, 3)))
        results[project.name] = {"chunks": chunks, **pack_latency(project, queries[: n_queries + 5])}
    return results


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print (and optionally write) a JSON report."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--corpus-root", type=Path, default=BENCH_DIR / "cache" / "data")
    parser.add_argument(
        "--keep", type=Path, default=None, help="reuse/keep the synthetic project in this folder"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    report: dict[str, Any] = {"cpus": os.cpu_count(), "load_average_start": os.getloadavg()[0]}
    report["synthetic"] = synthetic(args.files, args.queries, args.keep)
    report["corpora"] = corpus_latency(args.corpus_root, args.queries)
    syn = report["synthetic"]
    p95s = [syn["retrieve_context_pack"]["total_ms"]["p95"]] + [
        c["total_ms"]["p95"] for c in report["corpora"].values()
    ]
    report["goals"] = {
        "retrieve_context_pack_p95_ms": {"worst": max(p95s), "goal": GOALS_MS["retrieve_context_pack_p95"]},
        "health_check_warm_p95_ms": {
            "value": syn["health_check"]["warm_ms"]["p95"],
            "goal": GOALS_MS["health_check"],
        },
        "health_check_cold_ms": {"value": syn["health_check"]["cold_ms"], "goal": GOALS_MS["health_check"]},
        "index_status_p95_ms": {
            "value": max(
                syn["index_status"]["fresh_tree_ms"]["p95"], syn["index_status"]["after_edits_ms"]["p95"]
            ),
            "goal": GOALS_MS["index_status"],
        },
    }
    for goal in report["goals"].values():
        goal["met"] = goal.get("value", goal.get("worst", 0)) < goal["goal"]
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
