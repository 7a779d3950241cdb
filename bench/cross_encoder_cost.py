"""What re-ranking ``search_hybrid``'s top N with a MiniLM-L6 cross-encoder would cost (issue 17).

No PyPI package ships a cross-encoder's weights (``bench/results/cross_encoder_survey.json``
records every package checked), and the weights cannot be fetched from a model hub here, so no
re-ranker's *quality* can be measured on this machine. Its *cost* can: ms-marco-MiniLM-L-6-v2, the
default re-ranker of nearly every package surveyed, is the BERT network of all-MiniLM-L6-v2 (6
layers, 384 wide, 12 heads, the same vocabulary) with a one-logit head instead of mean pooling, so
the int8 all-MiniLM-L6-v2 ONNX file the product ships runs the same arithmetic a re-ranker would.

For the first ``--per-repo`` queries of each indexed semble tuning-half repository, one process
asks ``search_hybrid`` for the top 30 chunks with their text (a first call warms the project, the
second is timed), then scores the query's top N as a cross-encoder does (``[CLS] query [SEP]
chunk [SEP]`` pairs truncated to M tokens, the product's ONNX session options, T threads, in the
length-sorted runs of at most 2,048 padded tokens the product's embedder forms) for every
(N, T, M) setting, in rotating order: the search and the re-ranker are interleaved query by query,
so machine load hits both alike. Per setting it reports wall and CPU
milliseconds per query (p50/p95, tokenizing included) and their ratio to ``search_hybrid``'s own on
the same queries; then a fresh process loads one session and runs the heaviest setting over the
first queries' pairs to report the peak resident memory that session adds::

    nice -n 10 python -m bench.cross_encoder_cost [--per-repo 2] [--repos a,b] [--threads 1,2]
                                                  [--max-tokens 256,512] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import emit

TOP = 30
TOP_NS = (10, 20, 30)
#: Queries the memory child scores (the peak is reached on the first few; the rest only costs time).
MEMORY_QUERIES = 3


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


def _status_mb(key: str) -> float:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(key + ":")) / 1024


class PairScorer:
    """The shipped MiniLM ONNX file run as a cross-encoder: one session per thread count."""

    def __init__(self, threads: list[int], max_tokens: list[int]) -> None:
        import onnxruntime as ort
        from local_memory_shared.embedding.onnx import (
            bound_malloc_heap,
            builtin_model_files,
            session_options,
        )
        from tokenizers import Tokenizer

        bound_malloc_heap()
        files = builtin_model_files()
        self.sessions = {
            t: ort.InferenceSession(
                str(files.model), session_options(ort, t), providers=["CPUExecutionProvider"]
            )
            for t in threads
        }
        self.inputs = {i.name for i in next(iter(self.sessions.values())).get_inputs()}
        self.tokenizers: dict[int, Any] = {}
        for m in max_tokens:
            tok = Tokenizer.from_file(str(files.tokenizer))
            tok.enable_truncation(max_length=m, strategy="longest_first")
            tok.no_padding()  # padded per run, to that run's longest pair
            self.tokenizers[m] = tok

    def score(self, query: str, texts: list[str], threads: int, max_tokens: int) -> list[int]:
        """Score the pairs in the runs the product's embedder would form (length-sorted, at most
        ``DEFAULT_BATCH_SIZE`` rows and ``DEFAULT_BATCH_TOKENS`` padded tokens a run); returns
        each pair's token count."""
        import numpy as np
        from local_memory_shared.embedding.onnx import (
            DEFAULT_BATCH_SIZE,
            DEFAULT_BATCH_TOKENS,
            plan_batches,
        )

        enc = self.tokenizers[max_tokens].encode_batch([(query, t) for t in texts])
        lengths = [len(e.ids) for e in enc]
        for rows in plan_batches(lengths, DEFAULT_BATCH_SIZE, DEFAULT_BATCH_TOKENS):
            width = max(lengths[i] for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for r, i in enumerate(rows):
                ids[r, : lengths[i]] = enc[i].ids
                mask[r, : lengths[i]] = 1
                types[r, : lengths[i]] = enc[i].type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            self.sessions[threads].run(None, {k: v for k, v in feed.items() if k in self.inputs})
        return lengths


def _key(n: int, threads: int, max_tokens: int) -> str:
    return f"top{n}-threads{threads}-tokens{max_tokens}"


def measure(names: list[str], per_repo: int, threads: list[int], max_tokens: list[int]) -> dict[str, Any]:
    """Interleave search_hybrid and every re-ranker setting query by query; wall and CPU seconds."""
    from local_memory_search.tools import call_tool

    from bench import semble

    settings = [(n, t, m) for n in TOP_NS for t in threads for m in max_tokens]
    scorer = PairScorer(threads, max_tokens)
    by_name = {r["name"]: r for r in semble.repos()}
    wall: dict[str, list[float]] = {"search_hybrid": [], **{_key(*s): [] for s in settings}}
    cpu: dict[str, list[float]] = {k: [] for k in wall}
    tokens: dict[int, list[int]] = {m: [] for m in max_tokens}
    items: list[dict[str, Any]] = []
    for name in names:
        repo = by_name[name]
        project = semble.project_root(repo, semble.CACHE / "corpora" / name)
        annotations = json.loads((semble.DATA / "annotations" / f"{name}.json").read_text())
        for query in list(dict.fromkeys(a["query"] for a in annotations))[:per_repo]:
            args = {
                "query": query,
                "project_path": str(project),
                "limit": TOP,
                "fields": ["text"],
                "cache_bust": True,
            }
            env = call_tool("search_hybrid", args)  # warms this project's tables
            if not env.get("ok"):
                print(f"skip {name}: {env.get('error') or env}", file=sys.stderr)
                break
            w, c = time.perf_counter(), time.process_time()
            env = call_tool("search_hybrid", args)
            wall["search_hybrid"].append(time.perf_counter() - w)
            cpu["search_hybrid"].append(time.process_time() - c)
            texts = [str(h.get("text") or "") for h in env["results"]]
            items.append({"repo": name, "query": query, "texts": texts})
            shift = len(items) % len(settings)
            for n, t, m in settings[shift:] + settings[:shift]:
                w, c = time.perf_counter(), time.process_time()
                counts = scorer.score(query, texts[:n], t, m)
                wall[_key(n, t, m)].append(time.perf_counter() - w)
                cpu[_key(n, t, m)].append(time.process_time() - c)
                if n == TOP and t == threads[0]:
                    tokens[m].extend(counts)
            print(f"{name}: {query[:60]!r} done", file=sys.stderr)
    return {"items": items, "wall": wall, "cpu": cpu, "tokens": tokens}


def memory_child(pairs_file: str, threads: int, max_tokens: int) -> dict[str, float]:
    """In a fresh process: RSS before one session loads, and the peak after scoring every query."""
    import numpy  # noqa: F401  (imported by the searcher anyway: not the re-ranker's memory)
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401

    items = json.loads(Path(pairs_file).read_text())
    rss_before, hwm_before = _status_mb("VmRSS"), _status_mb("VmHWM")
    scorer = PairScorer([threads], [max_tokens])
    for item in items[:MEMORY_QUERIES]:
        scorer.score(item["query"], item["texts"][:TOP], threads, max_tokens)
    return {
        "rss_before_mb": round(rss_before, 1),
        "hwm_before_mb": round(hwm_before, 1),
        "rss_after_mb": round(_status_mb("VmRSS"), 1),
        "peak_added_mb": round(_status_mb("VmHWM") - rss_before, 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure interleaved here, memory in a fresh process, print one JSON report."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-repo", type=int, default=2, help="queries per repository (first distinct ones)")
    ap.add_argument("--repos", default="", help="comma-separated tuning-half repositories (default: all)")
    ap.add_argument("--threads", default="1,2", help="ONNX Runtime thread counts to measure")
    ap.add_argument("--max-tokens", default="256,512", help="pair truncation lengths to measure")
    ap.add_argument("--out", type=Path, help="also write the report here")
    ap.add_argument("--memory-child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.memory_child:
        pairs, threads, max_tokens = args.memory_child
        sys.stdout.write(json.dumps(memory_child(pairs, int(threads), int(max_tokens))) + "\n")
        return 0
    from bench import semble

    os.environ.setdefault("EMBED_BACKEND", "onnx")
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(semble.DATA_ROOT[0])
    wanted = {r for r in args.repos.split(",") if r}
    names = [n for n in semble.halves()["tuning"] if not wanted or n in wanted]
    lengths = sorted(int(m) for m in args.max_tokens.split(",") if m)
    threads = sorted(int(t) for t in args.threads.split(",") if t)
    load_before = os.getloadavg()
    run = measure(names, args.per_repo, threads, lengths)
    if not run["items"]:
        raise SystemExit("no query answered: are the semble indexes there (bench/README.md)?")
    load_after = os.getloadavg()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(run["items"], fh)
    heavy = (max(threads), max(lengths))
    try:
        cmd = [sys.executable, "-m", "bench.cross_encoder_cost", "--memory-child", fh.name]
        out = subprocess.run([*cmd, *map(str, heavy)], capture_output=True, text=True, check=True)
    finally:
        os.unlink(fh.name)
    memory = json.loads(out.stdout.strip().splitlines()[-1])
    base = {kind: run[kind]["search_hybrid"] for kind in ("wall", "cpu")}
    table: dict[str, dict[str, float]] = {}
    for key in run["wall"]:
        row: dict[str, float] = {}
        for kind in ("wall", "cpu"):
            for q, label in ((0.5, "p50"), (0.95, "p95")):
                row[f"{kind}_{label}_ms"] = _pct(run[kind][key], q)
                if key != "search_hybrid":
                    row[f"{kind}_{label}_x_hybrid"] = round(
                        _pct(run[kind][key], q) / max(_pct(base[kind], q), 0.1), 2
                    )
        table[key] = row
    report = {
        "what": "cost proxy: the shipped int8 all-MiniLM-L6-v2 ONNX (the network of "
        "ms-marco-MiniLM-L-6-v2) scoring search_hybrid's top N (query, chunk) pairs in the embedder's 2,048-token runs, "
        "interleaved with search_hybrid on the same queries; no quality figure",
        "repos": sorted({i["repo"] for i in run["items"]}),
        "queries": len(run["items"]),
        "per_query_ms": table,
        "tokens_per_pair_top30": {
            str(m): {"mean": round(sum(v) / len(v), 1), "max": max(v)} for m, v in run["tokens"].items() if v
        },
        "memory_one_session": {"setting": _key(TOP, *heavy), **memory},
        "load_avg_before": [round(x, 2) for x in load_before],
        "load_avg_after": [round(x, 2) for x in load_after],
        "nproc": os.cpu_count(),
    }
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
