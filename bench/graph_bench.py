"""Code-graph benchmark: extraction cost, its share of indexing, query latency at scale, accuracy.

Four measurements, one JSON report:

1. **Extraction** (``extract_file_graph``) per file on real code: the venv's ``rich`` and ``lancedb``
   packages plus the pinned sdists under ``bench/cache/src`` (``python -m bench.corpora`` fetches
   them); the tree-sitter parse alone is timed too, so the query/attribution cost is visible.
2. **Share of indexing time**: the real pipeline (``index_project``, local ONNX model) on one
   pinned corpus; the pipeline's own phase timer separates ``graph`` (extraction + SQLite rows)
   from parse, embed and write.
3. **Query latency** on a synthetic project of ≥ 50,000 call edges, extracted and stored by the
   real code: ``find_callers`` / ``find_callees`` at depth 3 and ``trace_path`` (connected and
   random pairs), each *cold* (resolution cache cleared before the call), *warm* (the same call
   again) and *steady* (a stream of different calls on one fresh server). Wall and CPU time are
   both reported: the machine is shared, and CPU time is what the code costs (goal: p95 < 100 ms).
4. **Accuracy**: precision and recall of resolved call edges on 200 hand-labelled call sites of the
   pinned requests sdist (``bench/graph_gold_requests.json``).

Usage: python -m bench.graph_bench [--modules 1000] [--queries 200] [--corpus requests] [--skip-index]
       python -m bench.graph_bench --accuracy
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from local_memory_indexer.graph import extract_file_graph, write_file_graph
from local_memory_indexer.state_db import open_state_rw
from local_memory_indexer.treesitter import language_for_path, parse
from local_memory_search.graph import clear_graph_cache, find_callees, find_callers, trace_path
from local_memory_shared.state import open_state_ro

from .metrics import percentiles

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results" / "graph_bench.json"
GOLD = BENCH_DIR / "graph_gold_requests.json"
CORPORA = BENCH_DIR / "cache" / "src"

log = logging.getLogger(__name__)


# --- 1. extraction on real code -------------------------------------------------------------------


def real_roots() -> list[Path]:
    """rich and lancedb from this interpreter's site-packages, and every unpacked pinned corpus."""
    site = Path(sysconfig.get_paths()["purelib"])
    roots = [site / "rich", site / "lancedb"]
    if CORPORA.is_dir():
        roots += sorted(p for p in CORPORA.iterdir() if p.is_dir())
    return [r for r in roots if r.is_dir()]


def measure_extraction(roots: list[Path]) -> dict[str, Any]:
    """Per-file extraction time (and parse-only time) over every supported file under ``roots``."""
    per_root: dict[str, Any] = {}
    all_ms: list[float] = []
    for root in roots:
        extract_ms: list[float] = []
        parse_ms: list[float] = []
        lines = symbols = calls = imports = 0
        for path in sorted(root.rglob("*")):
            language = language_for_path(path.name)
            if not path.is_file() or language in ("text", "markdown"):
                continue
            data = path.read_bytes()
            rel = path.relative_to(root).as_posix()
            start = time.perf_counter()
            parse(language, data)
            parse_ms.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            graph = extract_file_graph(rel, data, language)
            extract_ms.append((time.perf_counter() - start) * 1000)
            lines += data.count(b"\n") + 1
            symbols += len(graph.symbols)
            calls += len(graph.calls)
            imports += len(graph.imports)
        if not extract_ms:
            continue
        all_ms += extract_ms
        per_root[root.name] = {
            "files": len(extract_ms),
            "lines": lines,
            "symbols": symbols,
            "calls": calls,
            "imports": imports,
            "extract_ms": percentiles(extract_ms),
            "parse_only_ms": percentiles(parse_ms),
            "extract_total_s": round(sum(extract_ms) / 1000, 3),
            "ms_per_1k_lines": round(sum(extract_ms) / lines * 1000, 2),
        }
    return {"per_root": per_root, "all_files_ms": percentiles(all_ms)}


# --- 2. share of indexing time --------------------------------------------------------------------


def measure_index_share(corpus: Path) -> dict[str, Any]:
    """Index ``corpus`` with the real pipeline in a scratch data root; the graph phase's share."""
    from local_memory_indexer.pipeline import index_project

    from . import harness

    with tempfile.TemporaryDirectory(prefix="graph-bench-") as tmp, harness.data_root(Path(tmp)) as settings:
        embedder = harness.shared_embedder(settings)  # model load stays out of the timing
        start = time.perf_counter()
        summary = index_project(corpus, settings=settings, embedder=embedder).to_dict()
        wall = time.perf_counter() - start
    phases = summary.get("seconds") or {}
    total = sum(phases.values())
    return {
        "corpus": corpus.name,
        "files_parsed": summary.get("files_parsed"),
        "chunks_written": summary.get("chunks_written"),
        "wall_s": round(wall, 2),
        "phases_s": phases,
        "graph_share_of_phases": round(phases.get("graph", 0.0) / total, 4) if total else None,
        "graph_share_without_embedding": (
            round(phases.get("graph", 0.0) / (total - phases.get("embed", 0.0)), 4)
            if total - phases.get("embed", 0.0) > 0
            else None
        ),
        "errors": len(summary.get("errors") or []),
    }


# --- accuracy against hand-labelled call sites ----------------------------------------------------------


def measure_accuracy(gold_file: Path) -> dict[str, Any]:
    """Precision and recall of resolved call edges on hand-labelled call sites of a pinned corpus.

    A *claim* is a call site resolved to definitions without ambiguity; it is correct when its
    target is one the label allows. Recall counts labelled sites with a project target whose claim
    hits it; ambiguous answers (several candidates, flagged as such) are reported apart.
    """
    from local_memory_search.graph import _EDGE_COLUMNS, CallEdge, GraphReader

    doc = json.loads(gold_file.read_text())
    corpus = CORPORA / doc["corpus"]
    if not corpus.is_dir():
        return {"skipped": f"{corpus} is not unpacked (python -m bench.corpora)"}
    files = {p.relative_to(corpus).as_posix(): p.read_bytes() for p in sorted(corpus.rglob("*.py"))}
    with tempfile.TemporaryDirectory(prefix="graph-accuracy-") as tmp:
        db = Path(tmp) / "state.db"
        conn = open_state_rw(db)
        conn.execute("BEGIN")
        for rel, data in files.items():
            write_file_graph(
                conn, rel, "python", extract_file_graph(rel, data, "python"), [], frozenset(files)
            )
        conn.execute("COMMIT")
        conn.close()
        ro = open_state_ro(db)
        graph = GraphReader(ro)
        edges = [
            CallEdge(*r) for r in graph.query(f"SELECT {_EDGE_COLUMNS} FROM call_edges WHERE dynamic = 0")
        ]
        by_site = {(e.file_path, e.line, e.callee_text): e for e in edges}
        claims = correct = with_target = found = ambiguous = ambiguous_hit = missing = 0
        wrong: list[str] = []
        for site in doc["sites"]:
            expected = set(site["expected_any_of"])
            with_target += bool(expected)
            edge = by_site.get((site["file_path"], site["line"], site["callee_text"]))
            if edge is None:
                missing += 1
                continue
            resolution = graph.resolve(edge)
            targets = {t.key for t in resolution.targets}
            if resolution.how in ("ambiguous", "too_ambiguous"):
                ambiguous += 1
                ambiguous_hit += bool(expected & targets)
                continue
            if targets:
                claims += 1
                hit = bool(expected & targets)
                correct += hit
                found += hit
                if not hit:
                    wrong.append(
                        f"{site['file_path']}:{site['line']} {site['callee_text']} -> {sorted(targets)}"
                    )
        ro.close()
    return {
        "corpus": doc["corpus"],
        "labelled_sites": len(doc["sites"]),
        "sites_with_project_target": with_target,
        "claims": claims,
        "precision": round(correct / claims, 4) if claims else None,
        "recall": round(found / with_target, 4) if with_target else None,
        "ambiguous_answers": ambiguous,
        "ambiguous_containing_truth": ambiguous_hit,
        "wrong_claims": wrong,
        "labelled_sites_not_extracted": missing,
    }


# --- 3. query latency on a large synthetic graph ---------------------------------------------------


def synthetic_project(modules: int, seed: int = 7) -> dict[str, str]:
    """A Python project of ``modules`` files with realistic call shapes (~64 call sites per file).

    Each module imports three others, defines a class with four methods and twelve functions;
    calls go to the same module, to imported modules (``mX.f()``), to methods through typed
    locals (``c = C3(); c.m1()``), to a name many classes define (``x.run()``: ambiguous), to the
    standard library, and into recursion and cycles.
    """
    rng = random.Random(seed)
    files: dict[str, str] = {"pkg/__init__.py": ""}
    for i in range(modules):
        peers = rng.sample([m for m in range(modules) if m != i], 3)
        lines = [f"from pkg import m{p}" for p in peers] + ["import os", ""]
        lines += [f"class C{i}:"]
        for k in range(4):
            body = [f"        return self.m{(k + 1) % 4}()"] if k < 3 else ["        return os.getcwd()"]
            lines += [f"    def m{k}(self):", *body]
        lines += ["    def run(self):", f"        return f{i}_0()", ""]
        for j in range(12):
            calls = [
                f"    f{i}_{(j + 1) % 12}()",
                f"    m{peers[j % 3]}.f{peers[j % 3]}_{rng.randrange(12)}()",
                f"    c = C{rng.choice(peers)}()",
                f"    c.m{rng.randrange(4)}()",
                "    x.run()",
                "    os.path.join('a', 'b')",
            ]
            if j == 0:
                calls.append(f"    f{i}_0()")  # direct recursion
            lines += [f"def f{i}_{j}(x):", *calls, "    return x", ""]
        files[f"pkg/m{i}.py"] = "\n".join(lines) + "\n"
    return files


def build_state(db: Path, files: dict[str, str]) -> dict[str, Any]:
    """Extract and store every file like the pipeline does; returns timings and row counts."""
    conn = open_state_rw(db)
    project = frozenset(files)
    start = time.perf_counter()
    conn.execute("BEGIN")
    extract_s = 0.0
    for rel, text in files.items():
        t0 = time.perf_counter()
        graph = extract_file_graph(rel, text.encode(), language_for_path(rel))
        extract_s += time.perf_counter() - t0
        write_file_graph(conn, rel, "python", graph, [], project)
    conn.execute("COMMIT")
    total = time.perf_counter() - start
    counts = {
        t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("symbols", "call_edges", "import_edges")
    }
    conn.close()
    return {"files": len(files), "build_s": round(total, 2), "extract_s": round(extract_s, 2), **counts}


def _timed(fn: Any, *args: Any, cold: bool = False, **kwargs: Any) -> tuple[float, float, dict[str, Any]]:
    """(wall ms, CPU ms, answer); ``cold`` forgets every cached resolution first."""
    if cold:
        clear_graph_cache()
    wall, cpu = time.perf_counter(), time.process_time()
    data, _warnings = fn(*args, **kwargs)
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000, data


def _series(fn: Any, calls: list[tuple[Any, ...]], mode: str, **kwargs: Any) -> dict[str, Any]:
    """Latency of ``calls`` in one cache mode: cold (cleared before each), warm (second run), steady."""
    wall: list[float] = []
    cpu: list[float] = []
    if mode == "steady":
        clear_graph_cache()  # a fresh server answering a stream of different questions
    for args in calls:
        if mode == "warm":
            fn(*args, **kwargs)
        w, c, _ = _timed(fn, *args, cold=mode == "cold", **kwargs)
        wall.append(w)
        cpu.append(c)
    return {"wall_ms": percentiles(wall), "cpu_ms": percentiles(cpu)}


def measure_queries(db: Path, queries: int, seed: int = 11) -> dict[str, Any]:
    """find_callers / find_callees at depth 3 and trace_path, each cold, warm and steady-state."""
    rng = random.Random(seed)
    conn = open_state_ro(db)
    keys = [
        f"{r[0]}:{r[1]}"
        for r in conn.execute("SELECT file_path, qualified_name FROM symbols WHERE kind != 'class'")
    ]
    sample = rng.sample(keys, min(queries, len(keys)))
    statuses: dict[str, int] = {}
    capped = 0
    for key in sample:
        data, _ = find_callers(conn, key, depth=3)
        statuses[data["status"]] = statuses.get(data["status"], 0) + 1
        capped += bool(data.get("truncated"))

    connected: list[tuple[str, str]] = []
    for key in sample:
        # a connected pair: walk 2-5 resolved hops forward from the source
        target = key
        for _ in range(rng.randint(2, 5)):
            data, _ = find_callees(conn, target, depth=1)
            nodes = [n["id"] for n in data.get("callees", []) if n["id"] != target]
            if not nodes:
                break
            target = rng.choice(nodes)
        if target != key:
            connected.append((key, target))
    unconnected = [(key, rng.choice(keys)) for key in sample]
    found = [trace_path(conn, a, b)[0] for a, b in connected]

    out: dict[str, Any] = {
        "sampled_symbols": len(sample),
        "find_callers_statuses": statuses,
        "find_callers_capped_at_200_nodes": capped,
        "trace_connected_found": f"{sum(d['status'] == 'ok' for d in found)}/{len(found)}",
        "trace_connected_mean_hops": round(
            sum(d.get("length", 0) for d in found) / max(1, sum(d["status"] == "ok" for d in found)), 2
        ),
    }
    for mode in ("cold", "warm", "steady"):
        out[mode] = {
            "find_callers_depth3": _series(find_callers, [(conn, k) for k in sample], mode, depth=3),
            "find_callees_depth3": _series(find_callees, [(conn, k) for k in sample], mode, depth=3),
            "trace_path_connected": _series(trace_path, [(conn, a, b) for a, b in connected], mode),
            "trace_path_random_pair": _series(trace_path, [(conn, a, b) for a, b in unconnected], mode),
        }
    conn.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the three measurements and write ``bench/results/graph_bench.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=1000, help="synthetic modules (~64 call edges each)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--corpus", default="requests", help="pinned corpus under bench/cache/src for the share"
    )
    parser.add_argument("--skip-index", action="store_true", help="skip the (slow, embedding) indexing share")
    parser.add_argument("--accuracy", action="store_true", help="only score the hand-labelled call sites")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    if args.accuracy:
        json.dump(measure_accuracy(GOLD), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    report: dict[str, Any] = {
        "accuracy": measure_accuracy(GOLD),
        "extraction": measure_extraction(real_roots()),
    }
    if not args.skip_index:
        corpus = next((p for p in sorted(CORPORA.glob(f"{args.corpus}-*")) if p.is_dir()), None)
        report["index_share"] = (
            measure_index_share(corpus) if corpus else {"skipped": f"no {args.corpus} under {CORPORA}"}
        )
    with tempfile.TemporaryDirectory(prefix="graph-bench-") as tmp:
        db = Path(tmp) / "state.db"
        report["synthetic_graph"] = build_state(db, synthetic_project(args.modules))
        report["queries"] = measure_queries(db, args.queries)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
