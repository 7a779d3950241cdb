"""Scale-out figures: an index on S3 (``weed mini`` on loopback) and embedding on Ray, against the
local baseline measured in the same run. The estimate in ``docs/SCALE.md`` is computed from them.

    python -m bench.scale_out [--quick] [--json bench/results/scale-out.json]

Sections (each prints one table row; ``--json`` keeps every figure):

- ``embed``: chunks/s of the ONNX model on this project's own sources, serial in this process
  with 1 thread (= per core) and 2 threads, then on a local Ray cluster (``ray.init(num_cpus=2)``)
  with 1 and 2 actors of 1 thread each (one model session per actor);
- ``ray_index``: a full first index (walk, parse, embed, write, publish) of the corpus into a local
  data root, serial (this process, the local model) vs ``--ray`` (``RayParser`` + ``RayEmbedder``
  on ``ray.init(num_cpus=2)``, the default pool of 1 actor), interleaved rounds in rotating order,
  a fresh data root (empty embedding cache) each time, Ray pool start-up timed apart;
- ``index``: a full index of the corpus, local data root vs ``LOCAL_MEMORY_LANCE_URI=s3://…``
  (per-phase seconds from the pipeline's own summary);
- ``query``: ``search_keyword`` / ``search_semantic`` / ``search_hybrid`` p50 / p95 on the local
  and the S3 index, interleaved A/B, result cache bypassed, warm table handles;
- ``requests``: S3 requests (by method) per query, warm and cold (handles dropped), counted by a
  loopback proxy in front of the server;
- ``commits``: single-row appends per second on one S3 table, one committer and two racing.
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
import textwrap
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUERIES = [
    "open the LanceDB table read only",
    "conditional write probe",
    "reciprocal rank fusion of two legs",
    "embedding cache keyed by text hash",
    "writer lock flock",
    "parse a markdown file by heading",
    "find callers of a symbol",
    "storage options from environment",
    "progress bar on stderr",
    "validate tool arguments strictly",
    "retry with exponential backoff",
    "published version of the index",
]


@contextmanager
def _env(**values: str) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _corpus(dest: Path, quick: bool) -> Path:
    """This project's own Python sources (real code, no download)."""
    parts = ["shared/src"] if quick else ["shared/src", "indexer/src", "search/src"]
    for part in parts:
        shutil.copytree(ROOT / part, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _texts(project: Path, limit: int) -> list[str]:
    from local_memory_indexer.chunking import chunk_file
    from local_memory_shared.discovery import discover

    out: list[str] = []
    for f in discover(project, max_file_bytes=1 << 20).files:
        for d in chunk_file(f.path, f.abs_path.read_bytes(), f.language):
            out.append(d.text)
    return out[:limit]


def bench_embed(texts: list[str], rounds: int) -> dict[str, Any]:
    """Serial (1 / 2 ONNX threads) vs Ray (1 / 2 actors of 1 thread), all loaded first, then
    ``rounds`` interleaved rounds in rotating order; the median of each is reported."""
    import ray
    from local_memory_indexer.distributed import RayEmbedder
    from local_memory_shared.config import load_settings
    from local_memory_shared.embedding import embedder_from_settings

    out: dict[str, Any] = {"texts": len(texts), "rounds": rounds}
    configs: dict[str, Any] = {}
    for threads in (1, 2):
        with _env(LOCAL_MEMORY_EMBED_THREADS=str(threads)):
            configs[f"serial_{threads}t"] = embedder_from_settings(load_settings())
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "lance is not fork-safe", UserWarning)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    out["ray_init_s"] = round(time.perf_counter() - start, 2)
    try:
        for emb in configs.values():
            emb.embed_documents(texts[:8])  # model load + warm-up outside the timing
        # Ray pools are started per round (a 2-CPU cluster cannot hold both at once); their
        # start-up (actor placement + model load) is reported apart, not timed with the work.
        names = [*configs, "ray_1a", "ray_2a"]
        rates: dict[str, list[float]] = {name: [] for name in names}
        for r in range(rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                emb = configs.get(name)
                if emb is None:
                    start = time.perf_counter()
                    emb = RayEmbedder(actors=int(name[4]))
                    emb.embed_documents(texts[:8])
                    out.setdefault(f"{name}_start_s", round(time.perf_counter() - start, 2))
                start = time.perf_counter()
                emb.embed_documents(texts)
                rates[name].append(len(texts) / (time.perf_counter() - start))
                if name not in configs:
                    emb.close()
        for name, values in rates.items():
            out[f"{name}_chunks_per_s"] = round(statistics.median(values), 1)
    finally:
        for emb in configs.values():
            emb.close()
        ray.shutdown()
    return out


def bench_ray_index(project: Path, work: Path, rounds: int) -> dict[str, Any]:
    """Full first index, serial vs Ray (parse + embed on the cluster), interleaved; medians."""
    import ray
    from local_memory_indexer.distributed import RayEmbedder, RayParser
    from local_memory_indexer.pipeline import index_project
    from local_memory_shared.config import load_settings

    out: dict[str, Any] = {"rounds": rounds}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "lance is not fork-safe", UserWarning)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    out["ray_init_s"] = round(time.perf_counter() - start, 2)
    names = ["serial", "ray"]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    starts: list[float] = []
    try:
        for r in range(rounds):
            for name in names[r % 2 :] + names[: r % 2]:
                data = work / f"data-{name}-{r}"
                embedder = parser = None
                if name == "ray":
                    start = time.perf_counter()
                    embedder, parser = RayEmbedder(), RayParser()
                    starts.append(round(time.perf_counter() - start, 2))
                try:
                    with _env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data), LOCAL_MEMORY_LANCE_URI=""):
                        start = time.perf_counter()
                        summary = index_project(
                            project, settings=load_settings(), embedder=embedder, parser=parser
                        )
                        total = time.perf_counter() - start
                finally:
                    if embedder is not None:
                        embedder.close()
                phases = summary.seconds
                runs[name].append(
                    {
                        "chunks": summary.chunks_total,
                        "files": summary.files_parsed,
                        "seconds": round(total, 2),
                        "chunks_per_s": round(summary.chunks_total / total, 2),
                        "non_embed_s": round(sum(v for k, v in phases.items() if k != "embed"), 2),
                        "phases": phases,
                        "load": round(os.getloadavg()[0], 1),
                    }
                )
                shutil.rmtree(data, ignore_errors=True)
    finally:
        ray.shutdown()
    out["runs"], out["ray_pool_start_s"] = runs, starts
    for name in names:
        out[f"{name}_chunks_per_s"] = statistics.median(x["chunks_per_s"] for x in runs[name])
        out[f"{name}_non_embed_s"] = statistics.median(x["non_embed_s"] for x in runs[name])
    out["ray_vs_serial"] = round(out["ray_chunks_per_s"] / out["serial_chunks_per_s"], 2)
    return out


def bench_index(project: Path, work: Path, s3_env: dict[str, str]) -> dict[str, Any]:
    from local_memory_indexer.pipeline import index_project
    from local_memory_shared.config import load_settings

    out: dict[str, Any] = {}
    for name, extra in (("local", {"LOCAL_MEMORY_LANCE_URI": ""}), ("s3", s3_env)):
        with _env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(work / f"data-{name}"), **extra):
            start = time.perf_counter()
            summary = index_project(project, settings=load_settings())
            total = time.perf_counter() - start
        data = work / f"data-{name}"
        state = sum(p.stat().st_size for p in data.rglob("state.db*") if p.is_file())
        out[name] = {
            "chunks": summary.chunks_total,
            "seconds": round(total, 2),
            "chunks_per_s": round(summary.chunks_total / total, 1),
            "phases": summary.seconds,
            "state_db_bytes_per_chunk": round(state / summary.chunks_total),
        }
        if name == "local":
            lance = _tree_bytes(data, "lance")
        else:
            lance = _s3_bytes(s3_env, "bench/")
        out[name]["lance_bytes_per_chunk"] = round(lance / summary.chunks_total)
    return out


def _tree_bytes(root: Path, part: str) -> int:
    return sum(
        p.stat().st_size for p in root.rglob("*") if p.is_file() and part in p.relative_to(root).parts[2]
    )


def _s3_bytes(s3_env: dict[str, str], prefix: str) -> int:
    """Bytes of every object under ``prefix`` of the bench bucket (all versions the index kept)."""
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=s3_env["AWS_ENDPOINT_URL"],
        aws_access_key_id=s3_env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=s3_env["AWS_SECRET_ACCESS_KEY"],
        region_name=s3_env["AWS_REGION"],
    )
    bucket = s3_env["LOCAL_MEMORY_LANCE_URI"].split("/")[2]
    total = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        total += sum(int(o["Size"]) for o in page.get("Contents", []))
    return total


def bench_query(project: Path, work: Path, s3_env: dict[str, str], rounds: int) -> dict[str, Any]:
    from local_memory_search.store import clear_caches
    from local_memory_search.tools import call_tool

    sides = {
        "local": {"LOCAL_VECTOR_SEARCH_DATA_ROOT": str(work / "data-local"), "LOCAL_MEMORY_LANCE_URI": ""},
        "s3": {"LOCAL_VECTOR_SEARCH_DATA_ROOT": str(work / "data-s3"), **s3_env},
    }
    times: dict[tuple[str, str], list[float]] = {}
    clear_caches()
    for r in range(rounds):
        for tool in ("search_keyword", "search_semantic", "search_hybrid"):
            for q in QUERIES:
                order = ("local", "s3") if r % 2 == 0 else ("s3", "local")  # interleaved A/B
                for side in order:
                    with _env(**sides[side]):
                        args = {"query": q, "project_path": str(project), "cache_bust": True, "limit": 10}
                        start = time.perf_counter()
                        answer = call_tool(tool, args)
                        elapsed = (time.perf_counter() - start) * 1000
                    assert answer["ok"] and answer["results"], answer
                    if r > 0 or q != QUERIES[0]:  # the first call of a side opens the table
                        times.setdefault((tool, side), []).append(elapsed)
    return {
        f"{tool}_{side}": {"p50_ms": round(_pct(v, 0.5), 1), "p95_ms": round(_pct(v, 0.95), 1), "n": len(v)}
        for (tool, side), v in times.items()
    }


def bench_requests(project: Path, work: Path, s3_env: dict[str, str]) -> dict[str, Any]:
    from local_memory_search.store import clear_caches
    from local_memory_search.tools import call_tool

    from .s3_server import s3_proxy

    out: dict[str, Any] = {}
    with s3_proxy(s3_env["AWS_ENDPOINT_URL"]) as (proxy, counts):
        env = {"LOCAL_VECTOR_SEARCH_DATA_ROOT": str(work / "data-s3"), **s3_env, "AWS_ENDPOINT_URL": proxy}
        with _env(**env):
            for tool in ("search_keyword", "search_semantic", "search_hybrid"):
                for state in ("cold", "warm"):
                    if state == "cold":
                        clear_caches()
                    before = dict(counts)
                    start = time.perf_counter()
                    answer = call_tool(
                        tool,
                        {
                            "query": f"{tool} {state} request count",
                            "project_path": str(project),
                            "cache_bust": True,
                        },
                    )
                    elapsed = (time.perf_counter() - start) * 1000
                    assert answer["ok"], answer
                    delta = {m: counts[m] - before.get(m, 0) for m in counts if counts[m] - before.get(m, 0)}
                    out[f"{tool}_{state}"] = {
                        "requests": sum(delta.values()),
                        "by_method": delta,
                        "ms": round(elapsed, 1),
                    }
    return out


COMMITTER = textwrap.dedent(
    """
    import sys, time
    import pyarrow as pa
    import lancedb
    uri, opts, n, start = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[4:]), int(sys.argv[2]), float(sys.argv[3])
    t = lancedb.connect(uri, storage_options=opts).open_table("commits")
    while time.time() < start:
        time.sleep(0.002)
    for i in range(n):
        t.add(pa.table({"n": [i]}))
    print(time.time() - start)
    """
)


def bench_commits(s3_env: dict[str, str], n: int) -> dict[str, Any]:
    import lancedb
    import pyarrow as pa
    from local_memory_shared.config import storage_options_from_env

    out: dict[str, Any] = {}
    with _env(**s3_env):
        opts = storage_options_from_env()
    for writers in (1, 2):
        uri = f"{s3_env['LOCAL_MEMORY_LANCE_URI']}/commit-bench-{writers}"
        db = lancedb.connect(uri, storage_options=opts)
        db.create_table("commits", schema=pa.schema([("n", pa.int64())]), mode="overwrite")
        start = time.time() + 3
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    COMMITTER,
                    uri,
                    str(n),
                    str(start),
                    *(f"{k}={v}" for k, v in opts.items()),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(writers)
        ]
        spans = [float(p.communicate(timeout=600)[0].strip()) for p in procs]
        table = db.open_table("commits")
        rows = table.count_rows()
        out[f"{writers}_writer"] = {
            "commits": writers * n,
            "rows_after": rows,
            "commits_per_s": round(writers * n / max(spans), 1),
            "fragments": len(table.to_lance().get_fragments()),
        }
        start = time.perf_counter()
        table.optimize()
        out[f"{writers}_writer"]["compact_s"] = round(time.perf_counter() - start, 2)
    return out


def run(quick: bool, only: set[str] | None = None) -> dict[str, Any]:
    from .s3_server import s3_server

    result: dict[str, Any] = {"quick": quick, "cpus": os.cpu_count(), "load_start": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="scale-out-") as tmp:
        work = Path(tmp)
        project = _corpus(work / "corpus", quick)
        with s3_server(work / "s3") as server:
            s3_env = server.env("bench")
            steps: list[tuple[str, Callable[[], Any]]] = [
                ("embed", lambda: bench_embed(_texts(project, 100 if quick else 400), 2 if quick else 3)),
                ("ray_index", lambda: bench_ray_index(project, work, 2 if quick else 3)),
                ("index", lambda: bench_index(project, work, s3_env)),
                ("query", lambda: bench_query(project, work, s3_env, 2 if quick else 4)),
                ("requests", lambda: bench_requests(project, work, s3_env)),
                ("commits", lambda: bench_commits(s3_env, 10 if quick else 40)),
            ]
            for name, step in steps:
                if only and name not in only and not (name in ("query", "requests") and "index" in only):
                    continue
                start = time.perf_counter()
                result[name] = step()
                print(f"{name} ({time.perf_counter() - start:.1f}s): {json.dumps(result[name])}", flush=True)
    result["load_end"] = os.getloadavg()[0]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small inputs (a minute)")
    parser.add_argument("--json", default=None, help="write every figure to this file")
    parser.add_argument("--only", default="", help="comma-separated sections (query/requests need index)")
    args = parser.parse_args(argv)
    result = run(args.quick, {x for x in args.only.split(",") if x} or None)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
