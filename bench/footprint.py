"""Footprint and time to first answer (issue 14), measured in one run so ratios survive a busy machine.

Sections (each in its own fresh processes):

- ``index``: peak RSS and embedding rate of a full index of a real repository, with the
  embedder as it was ("today": 32 texts per run, no token bound, ONNX Runtime's default arena
  and memory patterns) and as it is now ("new": the ``OnnxEmbedder`` defaults), interleaved
  ``--repeats`` times; plus the real ``local-memory-indexer index`` under ``/usr/bin/time -v``.
- ``first``: wall time from spawning a fresh search process to its first ``search_hybrid``
  answer on that index, through the CLI and through the MCP stdio server with a real client.
- ``serve``: search-process RSS after ``--queries`` mixed queries, with a stage-by-stage
  breakdown (RSS deltas, tracemalloc by package, Arrow's pool) for both embedder profiles.

Corpora come from ``../shared/bench-data/semble/corpora`` (unpacked into ``bench/cache/footprint``)::

    nice -n 10 .venv/bin/python -m bench.footprint [--corpus tokio] [--repeats 2] [--queries 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import emit

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "bench" / "cache" / "footprint"
SEMBLE = REPO.parent / "shared" / "bench-data" / "semble" / "corpora"
BIN = Path(sys.executable).parent

#: Embedder settings per profile; "today" is the embedder before issue 14.
PROFILES: dict[str, dict[str, Any]] = {
    "today": {"batch_size": 32, "max_batch_tokens": None, "low_memory": False},
    "new": {},
}


def unpack(corpus: str) -> Path:
    """The corpus folder, unpacked once into the git-ignored cache."""
    target = CACHE / corpus
    if not target.is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        with tarfile.open(SEMBLE / f"{corpus}.tar.gz") as tar:
            tar.extractall(CACHE / f".{corpus}.tmp", filter="data")
        (CACHE / f".{corpus}.tmp").rename(target)
    return target


def _peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _rss_mb() -> float:
    import psutil

    return round(psutil.Process().memory_info().rss / 2**20, 1)


def make_embedder(profile: str) -> Any:
    """An OnnxEmbedder configured as ``profile`` says."""
    from local_memory_shared.embedding.onnx import OnnxEmbedder

    return OnnxEmbedder(**PROFILES[profile])


# ---- worker: one full index ------------------------------------------------------------------


class PhaseRss:
    """A progress sink that samples RSS every 20 ms and keeps the peak per pipeline phase."""

    def __init__(self) -> None:
        import threading

        import psutil

        self.current = "load"
        self.peaks: dict[str, float] = {}
        self._proc = psutil.Process()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            mb = round(self._proc.memory_info().rss / 2**20, 1)
            self.peaks[self.current] = max(self.peaks.get(self.current, 0.0), mb)

    def phase(self, name: str) -> None:
        self.current = name

    def files(self, done: int, total: int) -> None:
        pass

    def chunks(self, embedded: int, total: int) -> None:
        pass

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        return self.peaks


def worker_index(profile: str, project: str) -> dict[str, Any]:
    """Index ``project`` into this process's (fresh) data root; report RSS and embed rate."""
    from local_memory_indexer.pipeline import index_project

    sampler = PhaseRss()
    embedder = make_embedder(profile)
    embedder.embed_query("warm up")
    cpu0 = time.process_time()
    summary = index_project(project, embedder=embedder, rebuild=True, progress=sampler)
    embed_s = summary.seconds.get("embed", 0.0)
    return {
        "profile": profile,
        "chunks_embedded": summary.chunks_embedded,
        "files": summary.files_parsed,
        "embed_s": round(embed_s, 2),
        "chunks_per_s": round(summary.chunks_embedded / embed_s, 1) if embed_s else None,
        "cpu_s": round(time.process_time() - cpu0, 1),
        "peak_rss_by_phase_mb": sampler.stop(),
        "peak_rss_mb": _peak_mb(),
    }


def _spawn_json(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.footprint", *args],
        cwd=REPO,
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_index(project: Path, repeats: int) -> dict[str, Any]:
    """Interleave today/new index runs; then the real CLI under /usr/bin/time -v."""
    runs: list[dict[str, Any]] = []
    for _ in range(repeats):
        for profile in PROFILES:
            with tempfile.TemporaryDirectory() as root:
                env = {"LOCAL_VECTOR_SEARCH_DATA_ROOT": root}
                runs.append(_spawn_json(["_index", profile, str(project)], env))
                print(json.dumps(runs[-1]), file=sys.stderr)
    best = {
        p: {
            "peak_rss_mb": max(r["peak_rss_mb"] for r in runs if r["profile"] == p),
            "chunks_per_s": max(r["chunks_per_s"] or 0 for r in runs if r["profile"] == p),
        }
        for p in PROFILES
    }
    return {"runs": runs, "best": best}


def cli_index(project: Path, data_root: Path) -> dict[str, Any]:
    """``local-memory-indexer index`` under ``/usr/bin/time -v``: its maximum resident set."""
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    cmd = ["/usr/bin/time", "-v", str(BIN / "local-memory-indexer"), "index", str(project)]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr)
    return {
        "command": " ".join(cmd[:2] + ["local-memory-indexer", "index", project.name]),
        "wall_s": round(time.perf_counter() - t0, 1),
        "max_rss_mb": round(int(found.group(1)) / 1024, 1) if found else None,
    }


# ---- time to first answer --------------------------------------------------------------------


def first_cli(project: Path, data_root: Path, query: str) -> float:
    """Seconds from spawning ``local-memory-search query`` to its exit with a hybrid answer."""
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    cmd = [str(BIN / "local-memory-search"), "query", query, "--project", str(project), "--json"]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t0
    envelope = json.loads(out.stdout)
    if not envelope.get("ok") or not envelope.get("results"):
        raise RuntimeError(f"no hybrid answer: {out.stdout[:300]}")
    return seconds


async def _first_mcp_async(project: Path, data_root: Path, query: str) -> float:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    params = StdioServerParameters(command=str(BIN / "local-memory-search"), args=[], env=env)
    t0 = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("search_hybrid", {"query": query, "project_path": str(project)})
        seconds = time.perf_counter() - t0
    payload = json.loads(result.content[0].text)  # type: ignore[union-attr]
    if not payload.get("ok") or not payload.get("results"):
        raise RuntimeError(f"no hybrid answer over MCP: {str(payload)[:300]}")
    return seconds


def first_answer(project: Path, data_root: Path, query: str, repeats: int) -> dict[str, Any]:
    """Median and best spawn-to-first-hybrid-answer seconds, CLI and MCP stdio."""
    import anyio

    cli = [first_cli(project, data_root, query) for _ in range(repeats)]
    mcp = [anyio.run(_first_mcp_async, project, data_root, query) for _ in range(repeats)]
    return {
        "cli_median_s": round(statistics.median(cli), 3),
        "cli_best_s": round(min(cli), 3),
        "mcp_median_s": round(statistics.median(mcp), 3),
        "mcp_best_s": round(min(mcp), 3),
    }


def import_seconds() -> dict[str, float]:
    """Seconds to import the search CLI and server modules in a fresh interpreter (no queries)."""
    code = (
        "import time; t=time.perf_counter(); import local_memory_search.cli, local_memory_search.server;"
        "print(time.perf_counter()-t)"
    )
    runs = [float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(3)]
    return {"import_cli_and_server_s": round(min(runs), 3)}


# ---- worker: search-process memory breakdown -------------------------------------------------


def _queries(project: Path, count: int, seed: int = 11) -> list[tuple[str, dict[str, Any]]]:
    """``count`` mixed tool calls: identifiers and phrases from the corpus, no two identical."""
    rng = random.Random(seed)
    words: set[str] = set()
    for path in sorted(project.rglob("*")):
        if path.is_file() and path.suffix in {".rs", ".py", ".go", ".ts", ".js", ".md", ".java", ".c", ".h"}:
            words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,30}", path.read_text(errors="replace")))
    vocab = sorted(words)
    calls: list[tuple[str, dict[str, Any]]] = []
    tools = ["search_hybrid"] * 5 + ["search_keyword"] * 2 + ["search_semantic"] * 2 + ["find_callers"]
    for i in range(count):
        tool = tools[i % len(tools)]
        if tool == "find_callers":
            calls.append((tool, {"symbol_name": rng.choice(vocab), "project_path": str(project)}))
            continue
        n = 1 if tool == "search_keyword" else rng.randint(2, 5)
        text = " ".join(rng.sample(vocab, n)) + f" {i}" * (tool != "search_keyword")
        calls.append((tool, {"query": text, "project_path": str(project)}))
    return calls


def _stage(stages: list[dict[str, Any]], name: str, started: float) -> None:
    import tracemalloc

    import pyarrow as pa

    current, _peak = tracemalloc.get_traced_memory()
    stages.append(
        {
            "stage": name,
            "rss_mb": _rss_mb(),
            "python_heap_mb": round(current / 2**20, 1),
            "arrow_pool_mb": round(pa.total_allocated_bytes() / 2**20, 1),
            "s": round(time.perf_counter() - started, 2),
        }
    )


def _by_package(snapshot: Any, top: int = 8) -> list[tuple[str, float]]:
    sizes: dict[str, int] = {}
    for stat in snapshot.statistics("filename"):
        name = stat.traceback[0].filename
        key = name.split("site-packages/")[-1].split("/")[0] if "site-packages" in name else name
        key = "local_memory_" + key.split("local_memory_")[1].split("/")[0] if "local_memory_" in key else key
        sizes[key] = sizes.get(key, 0) + stat.size
    return [(k, round(v / 2**20, 1)) for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])[:top]]


def worker_serve(profile: str, project: str, count: int) -> dict[str, Any]:
    """Import, load, query ``count`` times; RSS and heap after each stage, and who holds the heap."""
    import tracemalloc

    tracemalloc.start(1)
    started = time.perf_counter()
    stages: list[dict[str, Any]] = []
    _stage(stages, "interpreter", started)
    from local_memory_search import api, encoder
    from local_memory_search.tools import call_tool

    _stage(stages, "import search", started)
    if profile != "new":  # pre-install today's embedder where the query encoder would build its own
        from local_memory_shared.config import load_settings

        key = ("onnx", "all-MiniLM-L6-v2", 384, load_settings().ollama_base_url)
        encoder.ENCODER._embedders[key] = make_embedder(profile)
    call_tool("search_keyword", {"query": "main", "project_path": project})
    _stage(stages, "first keyword (LanceDB + FTS open)", started)
    call_tool("search_semantic", {"query": "open a connection", "project_path": project})
    _stage(stages, "first semantic (model session)", started)
    call_tool("find_callers", {"symbol_name": "new", "project_path": project})
    _stage(stages, "first graph call", started)
    failures = 0
    for tool, args in _queries(Path(project), count):
        failures += not call_tool(tool, args).get("ok")
    _stage(stages, f"after {count} mixed queries", started)
    return {
        "profile": profile,
        "stages": stages,
        "failures": failures,
        "peak_rss_mb": _peak_mb(),
        "result_cache_entries": len(api.RESULT_CACHE._items),
        "query_vectors_cached": len(encoder.ENCODER._vectors),
        "python_heap_by_package_mb": _by_package(tracemalloc.take_snapshot()),
    }


# ---- driver ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run the sections and print one JSON report (progress on stderr)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="tokio")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--sections", default="index,first,serve")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    project = unpack(args.corpus)
    sections = set(args.sections.split(","))
    report: dict[str, Any] = {"corpus": args.corpus, "load_avg_start": os.getloadavg()}
    with tempfile.TemporaryDirectory() as root:
        data_root = Path(root)
        if "index" in sections:
            report["index"] = run_index(project, args.repeats)
        report["cli_index"] = cli_index(project, data_root)
        print(json.dumps(report["cli_index"]), file=sys.stderr)
        if "first" in sections:
            report["import"] = import_seconds()
            report["first_answer"] = first_answer(project, data_root, "spawn a task", 3)
            print(json.dumps(report["first_answer"]), file=sys.stderr)
        if "serve" in sections:
            env = {"LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
            report["serve"] = {
                p: _spawn_json(["_serve", p, str(project), str(args.queries)], env) for p in PROFILES
            }
    report["load_avg_end"] = os.getloadavg()
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_index":
        sys.stdout.write(json.dumps(worker_index(sys.argv[2], sys.argv[3])) + "\n")
    elif len(sys.argv) > 1 and sys.argv[1] == "_serve":
        sys.stdout.write(json.dumps(worker_serve(sys.argv[2], sys.argv[3], int(sys.argv[4]))) + "\n")
    else:
        raise SystemExit(main())
