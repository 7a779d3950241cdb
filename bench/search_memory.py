"""Where a search process's memory goes (issue 14 item 2), on a small real corpus.

One fresh worker process per run (the index of ``bench.search_startup``: flask by default):

1. RSS after start (imports done; the worker starts as ``local-memory-search`` does, see
   ``bench.search_worker.start_like_the_server``: malloc arenas capped, query model prewarmed,
   no cyclic GC while importing, then the start-up objects frozen), after the first hybrid query (model session loaded),
   after ``--queries`` mixed calls with distinct texts (hybrid, keyword, semantic, find_callers,
   retrieve_context_pack), with each tool's p50/p95 and the RSS per mapping at the end
   (``/proc/self/smaps``: anonymous memory, heap, each shared library's resident pages);
2. a tracemalloc snapshot diff (first query → end) by file, for Python objects;
3. the RSS returned by clearing each cache registered with ``local_memory_search.runtime.RUNTIME``
   one at a time (``gc.collect()`` and glibc ``malloc_trim(0)`` after each), plus Arrow's pool;
4. separately, a fresh process holding only the ONNX query session (import → load → one query).

    nice -n 10 .venv/bin/python -m bench.search_memory [--corpus flask] [--queries 1000] [--out FILE]
        [--before main | --before /tmp/old/shared/src:/tmp/old/search/src] [--project PATH --data-root DIR]
        [--patch 'local_memory_search.readonly.INDEX_CACHE_BYTES=33554432' ...] [--rounds N]
        [--no-tracemalloc] [--skip-onnx]

Every run also samples RSS every 100 calls and probes, at start / after the first query / at the
end / after trimming: RSS split anonymous vs file-backed (``/proc/self/status``), glibc's own
account (``mallinfo2``: in use, free but kept in the arenas, mmapped), the LanceDB session's cache
(bytes, items) and Arrow's pool. ``--patch`` runs a what-if side (module constants set before
the searcher starts), interleaved with the others for ``--rounds``.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import emit, export_ref
from bench.footprint import REPO, _queries, _rss_mb, unpack
from bench.search_startup import ROOT, ensure_index


def _trim() -> float:
    """Collect garbage, hand free heap back to the OS, and answer RSS in MB."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:  # not glibc
        pass
    return _rss_mb()


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def malloc_mb() -> dict[str, float]:
    """glibc's own account of its heap (``mallinfo2``, every arena): bytes in use by malloc'd
    blocks, bytes free but kept inside the arenas (fragmentation and the per-arena caches), and
    large blocks served by ``mmap``. Empty where the C library is not glibc >= 2.33."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
    except (OSError, AttributeError):
        return {}
    info = libc.mallinfo2()
    mb = lambda n: round(n / 2**20, 1)  # noqa: E731
    return {"in_use": mb(info.uordblks), "free_in_arenas": mb(info.fordblks), "mmapped": mb(info.hblkhd)}


def status_mb() -> dict[str, float]:
    """RSS split as the kernel counts it (``/proc/self/status``): anonymous, file-backed, shared memory."""
    out: dict[str, float] = {}
    with open("/proc/self/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith(("RssAnon:", "RssFile:", "RssShmem:")):
                key, value = line.split(":", 1)
                out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


def rollup_mb() -> dict[str, float]:
    """PSS (shared pages divided among the processes mapping them; anonymous and file parts) and
    USS (pages this process alone maps), from ``/proc/self/smaps_rollup``."""
    fields: dict[str, int] = {}
    try:
        with open("/proc/self/smaps_rollup", encoding="utf-8") as rollup:
            for line in rollup:
                parts = line.split()
                if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                    fields[parts[0][:-1]] = int(parts[1])
    except OSError:
        return {}
    mb = lambda kb: round(kb / 1024, 1)  # noqa: E731
    return {
        "pss": mb(fields.get("Pss", 0)),
        "pss_anon": mb(fields.get("Pss_Anon", 0)),
        "pss_file": mb(fields.get("Pss_File", 0)),
        "uss": mb(fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)),
    }


def lance_cache_mb() -> dict[str, float]:
    """What the process-wide LanceDB session holds (index pages + manifests), if this tree has one."""
    try:
        from local_memory_search import readonly
    except ImportError:
        return {}
    session = getattr(readonly, "_session", None)
    if session is None:
        return {}
    return {"size_mb": round(session.size_bytes / 2**20, 1), "items": int(session.approx_num_items)}


def memory_probe() -> dict[str, Any]:
    """One sample of every account above, plus Arrow's pool, RSS and the page faults so far (major:
    read from disk, e.g. library pages handed back and touched again; minor: mapped from memory)."""
    import resource

    import pyarrow as pa

    from bench.search_worker import _rss_split

    pool = pa.default_memory_pool()
    memos: dict[str, list[int | None]] = {}
    try:
        from local_memory_search import ranking

        for name in ("path_info", "_prefix_match"):
            info = getattr(ranking, name).cache_info()
            memos[name] = [info.currsize, info.maxsize]
    except (ImportError, AttributeError):
        pass
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "faults": {"major": usage.ru_majflt, "minor": usage.ru_minflt},
        "ranking_memos_entries_max": memos,
        "rss": _rss_mb(),
        "query_models": _rss_split().get("query_models"),
        **status_mb(),
        **rollup_mb(),
        "malloc": malloc_mb(),
        "lance_session": lance_cache_mb(),
        "arrow_pool": {
            "allocated": round(pool.bytes_allocated() / 2**20, 1),
            "max": round(pool.max_memory() / 2**20, 1),
            "backend": pool.backend_name,
        },
    }


def apply_patches(spec: str) -> dict[str, str]:
    """``module.ATTR=value;…`` set before the searcher starts (bench-only what-ifs, e.g.
    ``local_memory_search.readonly.INDEX_CACHE_BYTES=33554432``); values are Python literals."""
    import ast
    import importlib

    applied: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in spec.split(";"))):
        target, _, literal = item.partition("=")
        module, _, attr = target.rpartition(".")
        setattr(importlib.import_module(module), attr, ast.literal_eval(literal))
        applied[target] = literal
    return applied


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"n": len(ordered), "p50": round(at(0.5) * 1000, 1), "p95": round(at(0.95) * 1000, 1)}


def smaps_split_mb(top: int = 8) -> dict[str, dict[str, float]]:
    """Resident MB per mapping (``/proc/self/smaps``), and of it the anonymous part (for a library:
    its pages copied on write, e.g. relocated data) and the file-backed part (clean file pages)."""
    totals: dict[str, list[int]] = {}
    name = "[anon]"
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            first = line.split(maxsplit=6)
            if "-" in first[0] and len(first) >= 5 and ":" not in first[0]:
                name = first[5].strip() if len(first) > 5 else "[anon]"
                name = name.split("site-packages/")[-1].split("/")[0] if "site-packages/" in name else name
            elif line.startswith("Rss:"):
                totals.setdefault(name, [0, 0])[0] += int(line.split()[1])
            elif line.startswith("Anonymous:"):
                totals.setdefault(name, [0, 0])[1] += int(line.split()[1])
    ranked = sorted(totals.items(), key=lambda kv: -kv[1][0])
    mb = lambda kb: round(kb / 1024, 1)  # noqa: E731
    out: dict[str, dict[str, float]] = {"rss": {}, "anon": {}, "file": {}}
    for key, (rss, anon) in ranked[:top]:
        out["rss"][key], out["anon"][key], out["file"][key] = mb(rss), mb(anon), mb(rss - anon)
    rest = ranked[top:]
    out["rss"]["(rest)"] = mb(sum(v[0] for _, v in rest))
    out["anon"]["(rest)"] = mb(sum(v[1] for _, v in rest))
    out["file"]["(rest)"] = mb(sum(v[0] - v[1] for _, v in rest))
    return out


def _calls(project: Path, count: int) -> list[tuple[str, dict[str, Any]]]:
    """``count`` mixed calls with distinct texts; every 10th is a context pack."""
    calls = _queries(project, count)
    for i in range(9, len(calls), 10):
        tool, args = calls[i]
        text = args.get("query") or args.get("symbol_name") or "x"
        calls[i] = ("retrieve_context_pack", {"query": f"{text} context {i}", "project_path": str(project)})
    return calls


def worker(project: str, count: int) -> dict[str, Any]:
    """Run in a fresh process: stages, heap diff, per-cache RSS."""
    import tracemalloc

    import pyarrow as pa

    from bench.search_worker import server_after_call, start_like_the_server

    t0 = time.perf_counter()
    patches = apply_patches(os.environ.get("BENCH_PATCH", ""))
    start_like_the_server()
    from local_memory_search.runtime import RUNTIME
    from local_memory_search.tools import call_tool

    after_call = server_after_call()
    stages = {"start (imports)": _rss_mb()}
    probes: dict[str, Any] = {"start": memory_probe()}
    tracing = os.environ.get("BENCH_TRACEMALLOC", "1") == "1"
    if tracing:
        tracemalloc.start(1)
    call_tool("search_hybrid", {"query": "how are blueprints registered", "project_path": project})
    after_call()
    stages["first hybrid query"] = _rss_mb()
    first = tracemalloc.take_snapshot() if tracing else None
    probes["first hybrid query"] = memory_probe()
    try:
        from local_memory_search.server import LIBRARY_PAGEOUT  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # an older tree
        pass
    else:
        LIBRARY_PAGEOUT.wait()
        probes["after library pageout"] = {"mappings_advised": LIBRARY_PAGEOUT.advised, **memory_probe()}
    timeline: list[tuple[int, float]] = []
    failures: dict[str, int] = {}
    seconds: dict[str, list[float]] = {}
    for n, (tool, args) in enumerate(_calls(Path(project), count), 1):
        if n % 100 == 0:
            timeline.append((n, _rss_mb()))
        started = time.perf_counter()
        if not call_tool(tool, args).get("ok"):
            failures[tool] = failures.get(tool, 0) + 1
        seconds.setdefault(tool, []).append(time.perf_counter() - started)
        after_call()
    stages[f"after {count} mixed queries"] = _rss_mb()
    probes[f"after {count} mixed queries"] = memory_probe()
    split = smaps_split_mb()
    by_mapping = split["rss"]
    traced = traced_peak = 0
    diff: list[tuple[str, float]] = []
    if first is not None:
        last = tracemalloc.take_snapshot()
        traced, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        diff = [
            (
                str(s.traceback[0]).split("site-packages/")[-1].replace(str(REPO) + "/", ""),
                round(s.size_diff / 2**20, 2),
            )
            for s in last.compare_to(first, "lineno")[:10]
        ]
    stages["after gc + malloc_trim"] = _trim()
    probes["after gc + malloc_trim"] = memory_probe()
    freed: dict[str, float] = {}
    for name in RUNTIME.names():
        before = _trim()
        RUNTIME.clear_cache(name)
        freed[name] = round(before - _trim(), 1)
    return {
        "patches": patches,
        "stages_rss_mb": stages,
        "rss_timeline_mb": timeline,
        "probes": probes,
        "latency_ms": {tool: _percentiles(values) for tool, values in sorted(seconds.items())},
        "rss_by_mapping_mb": by_mapping,
        "anon_by_mapping_mb": split["anon"],
        "file_by_mapping_mb": split["file"],
        "threads": len(os.listdir("/proc/self/task")),
        "failures": failures,
        "seconds": round(time.perf_counter() - t0, 1),
        "python_traced_mb": round(traced / 2**20, 1),
        "python_traced_peak_mb": round(traced_peak / 2**20, 1),
        "tracemalloc_growth_top10_mb": diff,
        "arrow_pool_mb": round(pa.total_allocated_bytes() / 2**20, 1),
        "rss_freed_by_clearing_mb": freed,
        "rss_after_all_cleared_mb": _trim(),
    }


def onnx_alone() -> dict[str, Any]:
    """Run in a fresh process: the ONNX query session alone."""
    base = _rss_mb()
    from local_memory_shared.embedding.onnx import OnnxEmbedder

    imported = _rss_mb()
    embedder = OnnxEmbedder()
    embedder.embed_query("how are blueprints registered")
    loaded = _rss_mb()
    for i in range(200):
        embedder.embed_query(f"query number {i} about flask blueprints and templates")
    return {
        "interpreter": base,
        "import": imported,
        "session + 1 query": loaded,
        "after 200 queries": _rss_mb(),
    }


def _spawn(
    args: list[str], before: str | None = None, data_root: Path = ROOT, patch: str = ""
) -> dict[str, Any]:
    path = f"{before}{os.pathsep}{REPO}" if before else str(REPO)
    env = {
        **os.environ,
        "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root),
        "PYTHONPATH": path,
        "BENCH_PATCH": patch,
    }
    out = subprocess.run(
        [sys.executable, "-m", "bench.search_memory", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def before_path(before: str) -> str:
    """``--before``: a PYTHONPATH as given, or a git ref exported with ``git archive`` (its
    ``shared/src`` and ``search/src``)."""
    if os.pathsep in before or Path(before).is_dir():
        return before
    tree = export_ref(before, REPO / "bench" / "cache" / "search-memory-before" / before.replace("/", "_"))
    return f"{tree / 'shared' / 'src'}{os.pathsep}{tree / 'search' / 'src'}"


def _summary(run: dict[str, Any]) -> dict[str, Any]:
    stages = list(run["stages_rss_mb"].values())
    end = next((p for k, p in run["probes"].items() if k.startswith("after ") and "queries" in k), {})
    return {
        "rss_start": stages[0],
        "rss_end": stages[2],
        "anon_end": end.get("RssAnon"),
        "file_end": end.get("RssFile"),
        "uss_end": end.get("uss"),
        "pss_end": end.get("pss"),
        "rss_after_trim": stages[3],
        "p95_ms": {tool: v["p95"] for tool, v in run["latency_ms"].items()},
        "p50_ms": {tool: v["p50"] for tool, v in run["latency_ms"].items()},
    }


def main(argv: list[str] | None = None) -> int:
    """Index once, run the worker(s) and the ONNX-only process, print one JSON report."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="flask")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--before",
        default=None,
        help="a git ref (exported with git archive) or the PYTHONPATH of an older source tree "
        "(its shared/src:search/src) whose search process runs first in every round",
    )
    ap.add_argument(
        "--patch",
        action="append",
        default=[],
        help="a what-if side: this checkout with 'module.ATTR=literal;...' set before it starts (repeatable)",
    )
    ap.add_argument("--rounds", type=int, default=1, help="rounds of all sides, interleaved")
    ap.add_argument(
        "--no-tracemalloc",
        action="store_true",
        help="no Python heap tracing (latency as served; the tracemalloc diff is left out)",
    )
    ap.add_argument("--skip-onnx", action="store_true", help="leave out the ONNX-session-alone process")
    ap.add_argument(
        "--project",
        type=Path,
        default=None,
        help="an already indexed project to query instead of --corpus (with --data-root; nothing is indexed)",
    )
    ap.add_argument("--data-root", type=Path, default=ROOT)
    args = ap.parse_args(argv)
    if args.project is not None:
        project = args.project.resolve()
    else:
        project = unpack(args.corpus)
        ensure_index(project, args.data_root)
    if args.no_tracemalloc:
        os.environ["BENCH_TRACEMALLOC"] = "0"
    worker_args = ["_worker", str(project), str(args.queries)]
    sides: list[tuple[str, str | None, str]] = []
    if args.before:
        sides.append(("search_process_before", before_path(args.before), ""))
    sides.append(("search_process", None, ""))
    sides += [(f"patch: {spec}", None, spec) for spec in args.patch]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in sides}
    for r in range(args.rounds):
        for name, path, spec in sides:
            load = os.getloadavg()
            run = _spawn(worker_args, path, args.data_root, spec)
            run["load_avg_before"] = [round(x, 2) for x in load]
            runs[name].append(run)
            summary = _summary(run)
            print(
                f"round {r} {name}: RSS {summary['rss_start']} -> {summary['rss_end']} MB "
                f"(anon {summary['anon_end']}, file {summary['file_end']}, USS {summary['uss_end']}) "
                f"(trimmed {summary['rss_after_trim']}), p95 {summary['p95_ms']}, load {run['load_avg_before']}",
                file=sys.stderr,
                flush=True,
            )
    report: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "corpus": str(args.project) if args.project else args.corpus,
        "load_avg": os.getloadavg(),
        "summary": {name: [_summary(run) for run in rs] for name, rs in runs.items()},
    }
    for name, rs in runs.items():
        report[name] = rs[0] if len(rs) == 1 else rs
    if not args.skip_onnx:
        report["onnx_session_alone_rss_mb"] = _spawn(["_onnx"])
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["_worker"]:
        sys.stdout.write(json.dumps(worker(sys.argv[2], int(sys.argv[3]))) + "\n")
    elif sys.argv[1:2] == ["_onnx"]:
        sys.stdout.write(json.dumps(onnx_alone()) + "\n")
    else:
        raise SystemExit(main())
