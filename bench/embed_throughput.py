"""ONNX embedding throughput on realistic code chunks: length-sorted vs unsorted batches.

Chunks are 20-40 line windows of the Python standard library's own source (deterministic
for a given seed), which is what the indexer feeds the model. Run:

    .venv/bin/python bench/embed_throughput.py [--chunks 200] [--repeats 2] [--batch-sizes 32 64] [--corpus cosqa]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sysconfig
import time
from pathlib import Path

import numpy as np
from local_memory_shared.embedding.onnx import OnnxEmbedder, default_threads


def code_chunks(count: int, seed: int = 7) -> list[str]:
    """``count`` windows of 20-40 consecutive lines from stdlib modules, chosen reproducibly."""
    rng = random.Random(seed)
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
    rng.shuffle(files)
    chunks: list[str] = []
    for path in files:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        start = 0
        while start + 20 <= len(lines) and len(chunks) < count:
            size = rng.randint(20, 40)
            window = "\n".join(lines[start : start + size])
            if window.strip():
                chunks.append(window)
            start += size
            if rng.random() < 0.5:  # take only some windows per file, so many files are sampled
                break
        if len(chunks) >= count:
            break
    return chunks


def padding_efficiency(tokens: list[int], batch_size: int, sort_by_length: bool) -> float:
    """Real tokens / tokens computed when each batch is padded to its longest member."""
    order = sorted(tokens) if sort_by_length else tokens
    padded = sum(
        max(order[i : i + batch_size]) * len(order[i : i + batch_size])
        for i in range(0, len(order), batch_size)
    )
    return sum(tokens) / padded


def cosqa_functions(count: int, folder: Path) -> list[str]:
    """The first ``count`` functions of CoSQA's retrieval corpus: real code of very uneven length."""
    corpus = json.loads((folder / "code_idx_map.txt").read_text(encoding="utf-8"))
    return list(corpus)[:count]


def run(chunks: list[str], *, batch_size: int, sort_by_length: bool, repeats: int, threads: int) -> dict:
    """Best-of-``repeats`` wall and CPU time for one configuration (model load excluded)."""
    embedder = OnnxEmbedder(batch_size=batch_size, sort_by_length=sort_by_length, threads=threads)
    embedder.embed_query("warm up")
    best_wall = best_cpu = float("inf")
    vectors = None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        vectors = embedder.embed_documents(chunks)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return {
        "batch_size": batch_size,
        "sorted": sort_by_length,
        "seconds": round(best_wall, 2),
        "chunks_per_s": round(len(chunks) / best_wall, 1),
        # CPU time survives a busy shared machine better than wall time does.
        "cpu_seconds": round(best_cpu, 2),
        "chunks_per_cpu_s": round(len(chunks) / best_cpu, 1),
        "vectors": vectors,
    }


def main() -> None:
    """Measure and print one line per configuration (and optionally JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--threads", type=int, default=default_threads())
    parser.add_argument(
        "--corpus",
        choices=["stdlib", "cosqa"],
        default="stdlib",
        help="stdlib: 20-40 line windows (default); cosqa: whole functions of uneven length",
    )
    parser.add_argument(
        "--cosqa-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared/bench-data/cosqa"
    )
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    args = parser.parse_args()

    chunks = (
        code_chunks(args.chunks) if args.corpus == "stdlib" else cosqa_functions(args.chunks, args.cosqa_dir)
    )
    probe = OnnxEmbedder(threads=args.threads)
    tokens = probe.token_counts(chunks)
    lines = [c.count("\n") + 1 for c in chunks]
    summary = {
        "corpus": args.corpus,
        "chunks": len(chunks),
        "lines_mean": round(float(np.mean(lines)), 1),
        "tokens_mean": round(float(np.mean(tokens)), 1),
        "truncated_at_limit": sum(t >= probe.max_tokens for t in tokens),
        "token_limit": probe.max_tokens,
        "threads": args.threads,
    }
    results = []
    for batch_size in args.batch_sizes:
        for sort_by_length in (True, False):
            result = run(
                chunks,
                batch_size=batch_size,
                sort_by_length=sort_by_length,
                repeats=args.repeats,
                threads=args.threads,
            )
            result["padding_efficiency"] = round(padding_efficiency(tokens, batch_size, sort_by_length), 3)
            results.append(result)
    # Same vectors whichever way the batches were formed: sorting is only a speed lever.
    reference = results[0]["vectors"]
    drift = max(float(np.abs(r["vectors"] - reference).max()) for r in results)
    for r in results:
        del r["vectors"]
    if args.json:
        print(json.dumps({"summary": summary, "results": results, "max_abs_diff": drift}, indent=2))
        return
    print(
        f"{summary['chunks']} {args.corpus} chunks, {summary['lines_mean']} lines and {summary['tokens_mean']} tokens on average, "
        f"{summary['truncated_at_limit']} at the {summary['token_limit']}-token limit, {summary['threads']} threads"
    )
    for r in results:
        order = "length-sorted" if r["sorted"] else "unsorted     "
        print(
            f"  {order} batch {r['batch_size']:>3}: {r['chunks_per_s']:>6} chunks/s wall ({r['seconds']} s), "
            f"{r['chunks_per_cpu_s']:>6} chunks/CPU-s, padding efficiency {r['padding_efficiency']:.0%}"
        )
    print(
        f"  max |difference| between configurations: {drift:.2e}; load average now {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
