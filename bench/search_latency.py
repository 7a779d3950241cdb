"""Search latency on a large project: p50/p95 per tool and per stage, warm and cold, next to ripgrep.

The corpus is the ``*.py`` files of a dozen packages of this venv (≈ 55k chunks), indexed by the
real pipeline (tree-sitter chunking, FTS, IVF_PQ above 20k rows, publication). Only the document
vectors are cheap: a deterministic feature-hashing encoder stands in for the model so the corpus
builds in minutes, and the index records ``onnx/all-MiniLM-L6-v2/384`` as provenance, so queries
are encoded by the real local model exactly as in production (encoding is timed apart).

    python -m bench.search_latency [--queries 100] [--cold 5] [--json]

Figures: per tool, warm p50/p95 of the whole call with the query vector already cached
("excluding query encoding"), the warm encode time, cold first-call latency in fresh processes
(OS page cache warm), per-stage timings from the envelope, ``search_keyword`` vs ``rg -n`` for
exact identifiers, and the search process's resident memory.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / "cache" / "search-latency"
CORPUS = CACHE / "corpus"
DATA = CACHE / "data"
PACKAGES = (
    "numpy",
    "google",
    "pip",
    "mypy",
    "pyarrow",
    "setuptools",
    "pydantic",
    "_pytest",
    "rich",
    "lancedb",
    "mcp",
    "starlette",
    "httpx",
)
TOOLS = ("search_keyword", "search_semantic", "search_hybrid")
STAGES = ("encode", "semantic", "keyword", "fuse", "rank_total", "total")
DIM = 384
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _hashing_embedder() -> Any:
    from local_memory_shared.embedding.base import Embedder, l2_normalize

    class HashingEmbedder(Embedder):
        """Feature hashing of identifier tokens into 384 signed buckets: cheap, deterministic."""

        backend = "onnx"
        model = "all-MiniLM-L6-v2"

        @property
        def dimension(self) -> int:
            return DIM

        def embed_documents(self, texts: Sequence[str], progress: Any = None) -> np.ndarray:
            out = np.zeros((len(texts), DIM), dtype=np.float32)
            for i, text in enumerate(texts):
                for tok in _TOKEN.findall(text.lower()):
                    h = zlib.crc32(tok.encode())
                    out[i, h % DIM] += 1.0 if h & 0x100000 else -1.0
            out[~out.any(axis=1), 0] = 1.0
            if progress is not None:
                progress(len(texts), len(texts))
            return l2_normalize(out)

    return HashingEmbedder()


def build_corpus() -> None:
    """Copy the packages' .py files once into the bench cache."""
    if CORPUS.is_dir():
        return
    import site

    site_dir = Path(site.getsitepackages()[0])
    tmp = CORPUS.with_name("corpus.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for pkg in PACKAGES:
        src = site_dir / pkg
        for path in src.rglob("*.py"):
            dest = tmp / pkg / path.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
    tmp.rename(CORPUS)


def build_index() -> dict[str, Any]:
    """Index the corpus (incremental after the first run)."""
    from local_memory_indexer.pipeline import index_project
    from local_memory_shared.config import load_settings

    started = time.perf_counter()
    summary = index_project(CORPUS, settings=load_settings(), embedder=_hashing_embedder())
    return {
        "chunks": summary.chunks_total,
        "seconds": round(time.perf_counter() - started, 1),
        "files": summary.files_seen,
    }


def pick_queries(n: int) -> tuple[list[str], list[str]]:
    """Half exact identifiers, half docstring-like prose, drawn from the index itself."""
    from local_memory_shared.paths import project_paths

    db = project_paths(DATA, CORPUS).state_db
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    rng = random.Random(7)
    names = [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT function_name FROM chunks WHERE length(function_name) > 7 AND function_name NOT LIKE '\\_%' ESCAPE '\\'"
        )
    ]
    summaries = [r[0] for r in conn.execute('SELECT summary FROM chunks WHERE summary LIKE \'%"""%\'')]
    conn.close()
    prose = []
    for s in summaries:
        text = s.split('"""', 1)[-1].strip().rstrip('."')
        if 4 <= len(text.split()) <= 12:
            prose.append(text)
    idents = rng.sample(sorted(names), n // 2)
    return idents, rng.sample(sorted(set(prose)), n - n // 2)


def pct(values: list[float], q: float) -> float:
    """q-th percentile (0-100) by linear interpolation."""
    if not values:
        return float("nan")
    return float(np.percentile(np.asarray(values, dtype=float), q))


def summarize(values: list[float]) -> dict[str, float]:
    return {"p50": round(pct(values, 50), 2), "p95": round(pct(values, 95), 2), "n": len(values)}


def rss_mb() -> dict[str, float]:
    """Resident (VmRSS) and peak (VmHWM) memory of this process in MB."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            key, value = line.split(":", 1)
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


def call(tool: str, query: str) -> tuple[float, dict[str, Any]]:
    from local_memory_search.tools import call_tool

    started = time.perf_counter()
    env = call_tool(tool, {"query": query, "project_path": str(CORPUS), "cache_bust": True})
    elapsed = (time.perf_counter() - started) * 1000
    if not env.get("ok"):
        raise RuntimeError(f"{tool} failed: {env}")
    return elapsed, env


def warm(queries: list[str]) -> dict[str, Any]:
    """Every tool over every query twice; the second pass (vector cached) is the warm figure."""
    out: dict[str, Any] = {}
    for tool in TOOLS:
        encode_ms: list[float] = []
        for q in queries:  # pass 1: warms page cache, ANN/FTS index caches and the query-vector cache
            _, env = call(tool, q)
            encode_ms.append(float(env["search"]["timings_ms"].get("encode", 0.0)))
        wall: list[float] = []
        stages: dict[str, list[float]] = {s: [] for s in STAGES}
        warnings: set[str] = set()
        for q in queries:
            ms, env = call(tool, q)
            wall.append(ms)
            for stage in STAGES:
                if stage in env["search"]["timings_ms"]:
                    stages[stage].append(float(env["search"]["timings_ms"][stage]))
            warnings.update(w["code"] for w in env["warnings"])
        out[tool] = {
            "wall_ms": summarize(wall),
            "encode_ms_first_pass": summarize([e for e in encode_ms if e > 0])
            if tool != "search_keyword"
            else None,
            "stages_ms": {s: summarize(v) for s, v in stages.items() if v},
            "legs": env["search"]["legs"],
            "warnings": sorted(warnings),
        }
    return out


def cold_worker(queries: list[str]) -> None:
    """Run in a fresh process: the first call of each tool, with its stages."""
    t0 = time.perf_counter()
    import local_memory_search.tools  # noqa: F401 - import cost is part of a cold start

    result: dict[str, Any] = {"import_ms": round((time.perf_counter() - t0) * 1000, 1)}
    for tool, q in zip(TOOLS, queries, strict=True):
        ms, env = call(tool, q)
        result[tool] = {"wall_ms": ms, "encode_ms": float(env["search"]["timings_ms"].get("encode", 0.0))}
    sys.stdout.write(json.dumps(result) + "\n")


def cold(queries: list[str], runs: int) -> dict[str, Any]:
    """First-call latency in ``runs`` fresh processes (OS page cache stays warm)."""
    samples: list[dict[str, Any]] = []
    for i in range(runs):
        qs = [queries[(3 * i + k) % len(queries)] for k in range(3)]
        proc = subprocess.run(
            [sys.executable, "-m", "bench.search_latency", "--cold-worker", json.dumps(qs)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ},
            timeout=600,
            check=True,
        )
        samples.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    out: dict[str, Any] = {"import_ms": summarize([s["import_ms"] for s in samples])}
    for tool in TOOLS:
        wall = [s[tool]["wall_ms"] for s in samples]
        enc = [s[tool]["encode_ms"] for s in samples]
        out[tool] = {
            "wall_ms": summarize(wall),
            "encode_ms": summarize(enc),
            "wall_minus_encode_ms": summarize([w - e for w, e in zip(wall, enc, strict=True)]),
        }
    return out


def versus_ripgrep(idents: list[str]) -> dict[str, Any]:
    """search_keyword (warm) next to ``rg -n IDENT`` over the same files, same run."""
    rg = shutil.which("rg")
    if rg is None:
        return {"error": "rg not installed"}
    ours: list[float] = []
    theirs: list[float] = []
    found = 0
    for ident in idents:
        call("search_keyword", ident)
        ms, env = call("search_keyword", ident)
        ours.append(ms)
        found += any(
            r.get("function_name") == ident or ident in (r.get("symbol_name") or "")
            for r in env["results"][:3]
        )
        started = time.perf_counter()
        subprocess.run([rg, "-n", "--fixed-strings", ident, str(CORPUS)], capture_output=True, check=False)
        theirs.append((time.perf_counter() - started) * 1000)
    return {
        "search_keyword_ms": summarize(ours),
        "rg_ms": summarize(theirs),
        "ratio_rg_over_search_p50": round(pct(theirs, 50) / pct(ours, 50), 2),
        "definition_in_top3": f"{found}/{len(idents)}",
    }


def main(argv: list[str] | None = None) -> int:
    """Build (or reuse) the corpus and index, then measure and print."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--cold", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cold-worker", help=argparse.SUPPRESS)
    ap.add_argument("--warm-worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(DATA)
    if args.cold_worker:
        cold_worker(json.loads(args.cold_worker))
        return 0
    if args.warm_worker:
        spec = json.loads(args.warm_worker)
        out = {
            "warm": warm(spec["queries"]),
            "vs_ripgrep": versus_ripgrep(spec["idents"]),
            "rss_mb": rss_mb(),
        }
        sys.stdout.write(json.dumps(out) + "\n")
        return 0
    build_corpus()
    index_info = build_index()
    idents, prose = pick_queries(args.queries)
    queries = [q for pair in zip(idents, prose, strict=False) for q in pair]
    load_before = os.getloadavg()
    # A fresh process that only searches, so its memory is the searcher's, not the indexer's.
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.search_latency",
            "--warm-worker",
            json.dumps({"queries": queries, "idents": idents[:20]}),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ},
        timeout=3600,
        check=True,
    )
    measured = json.loads(proc.stdout.strip().splitlines()[-1])
    report = {
        "index": index_info,
        "queries": {"identifiers": len(idents), "prose": len(prose)},
        "warm": measured["warm"],
        "cold": cold(queries, args.cold) if args.cold else None,
        "vs_ripgrep": measured["vs_ripgrep"],
        "rss_mb": measured["rss_mb"],
        "load_average": {"before": load_before, "after": os.getloadavg()},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"corpus: {index_info['files']} files, {index_info['chunks']} chunks (index step {index_info['seconds']}s); "
        f"{len(queries)} queries (half identifiers, half prose); load average {report['load_average']}"
    )
    print("warm (query vector cached, result cache bypassed), ms:")
    for tool, r in report["warm"].items():
        st = r["stages_ms"]
        enc = r["encode_ms_first_pass"]
        print(
            f"  {tool:16s} p50 {r['wall_ms']['p50']:7.2f}  p95 {r['wall_ms']['p95']:7.2f}   legs {r['legs']}"
            + (f"   query encoding p50 {enc['p50']:.1f} p95 {enc['p95']:.1f}" if enc else "")
        )
        print(
            "  "
            + " " * 16
            + "  stages p50/p95: "
            + ", ".join(
                f"{s} {st[s]['p50']:.1f}/{st[s]['p95']:.1f}" for s in STAGES if s in st and s != "encode"
            )
        )
    if report["cold"]:
        print(
            f"cold (first call in a fresh process, {args.cold} processes; import "
            f"{report['cold']['import_ms']['p50']:.0f} ms), ms:"
        )
        for tool in TOOLS:
            r = report["cold"][tool]
            print(
                f"  {tool:16s} p50 {r['wall_ms']['p50']:8.1f}  p95 {r['wall_ms']['p95']:8.1f}   "
                f"of which encoding p50 {r['encode_ms']['p50']:.1f}; without it p50 "
                f"{r['wall_minus_encode_ms']['p50']:.1f} p95 {r['wall_minus_encode_ms']['p95']:.1f}"
            )
    rg = report["vs_ripgrep"]
    if "error" not in rg:
        print(
            f"exact identifiers: search_keyword p50 {rg['search_keyword_ms']['p50']:.1f} ms vs rg -n "
            f"{rg['rg_ms']['p50']:.1f} ms (rg/search = {rg['ratio_rg_over_search_p50']}x); "
            f"definition in top 3: {rg['definition_in_top3']}"
        )
    print(
        f"search-only process memory after the warm run: RSS {report['rss_mb'].get('VmRSS')} MB, peak {report['rss_mb'].get('VmHWM')} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
