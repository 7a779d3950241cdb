"""CoSQA retrieval quality of search_hybrid / search_semantic / search_keyword at default parameters.

Indexes the 6,267 CoSQA functions (one file each) with the real indexer pipeline and the local
ONNX model, then runs every query through the real search tools and scores the rank of the
matching function: nDCG@10, MRR@10, Recall@1, Recall@10. The index is kept under
``bench/cache/`` so a second run only searches.

    python -m bench.search_quality [--split test|dev] [--queries N] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "bench-data" / "cosqa"
CACHE = ROOT / "bench" / "cache" / "cosqa"
TOOLS = ("search_semantic", "search_keyword", "search_hybrid")


def build_corpus(corpus_dir: Path) -> dict[str, int]:
    """Write each CoSQA function to its own file; returns file path → retrieval index."""
    mapping = json.loads((DATA / "code_idx_map.txt").read_text())
    corpus_dir.mkdir(parents=True, exist_ok=True)
    files: dict[str, int] = {}
    for code, idx in mapping.items():
        rel = f"corpus/f{idx:05d}.py"
        path = corpus_dir / rel
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code + "\n", encoding="utf-8")
        files[rel] = idx
    return files


def score(ranks: list[int | None]) -> dict[str, float]:
    """nDCG@10, MRR@10, Recall@1 and Recall@10 from 1-based ranks (None = not in the top 10)."""
    n = len(ranks)
    return {
        "ndcg@10": sum(1 / math.log2(r + 1) for r in ranks if r and r <= 10) / n,
        "mrr@10": sum(1 / r for r in ranks if r and r <= 10) / n,
        "recall@1": sum(1 for r in ranks if r == 1) / n,
        "recall@10": sum(1 for r in ranks if r and r <= 10) / n,
    }


def main(argv: list[str] | None = None) -> int:
    """Build (or reuse) the CoSQA index and print the three tools' figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=("test", "dev"), default="test")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--ablation",
        action="store_true",
        help="also score plain weighted RRF (alpha 0.65) and equal-weight RRF (alpha 0.5), no leg confidence",
    )
    args = ap.parse_args(argv)

    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(CACHE / "data")
    os.environ.setdefault("EMBED_BACKEND", "onnx")
    from local_memory_indexer.pipeline import index_project
    from local_memory_search.tools import call_tool

    corpus_dir = CACHE / "corpus"
    files = build_corpus(corpus_dir)
    started = time.perf_counter()
    summary = index_project(corpus_dir)
    index_seconds = time.perf_counter() - started
    print(f"indexed {summary.chunks_total} chunks in {index_seconds:.1f}s", file=sys.stderr)

    queries = json.loads((DATA / f"cosqa-retrieval-{args.split}-500.json").read_text())[: args.queries]
    from local_memory_search import fusion as hybrid

    def run(tool: str, extra: dict[str, object]) -> dict[str, float]:
        ranks: list[int | None] = []
        t0 = time.perf_counter()
        for q in queries:
            args = {
                "query": q["doc"],
                "project_path": str(corpus_dir),
                "limit": 10,
                "fields": ["file_path"],
                "cache_bust": True,
                **extra,
            }
            env = call_tool(tool, args)
            assert env["ok"], env
            seen: list[int] = []
            for hit in env["results"]:
                idx = files.get(hit["file_path"])
                if idx is not None and idx not in seen:
                    seen.append(idx)
            gold = q["retrieval_idx"]
            ranks.append(seen.index(gold) + 1 if gold in seen else None)
        return {**score(ranks), "seconds": time.perf_counter() - t0}

    report: dict[str, dict[str, float]] = {tool: run(tool, {}) for tool in TOOLS}
    if args.ablation:
        exponent = hybrid.RRF_SCORE_EXPONENT
        hybrid.RRF_SCORE_EXPONENT = 0.0  # plain RRF: contributions from ranks only
        try:
            report["plain RRF a=0.65"] = run("search_hybrid", {})
            report["plain RRF a=0.5"] = run("search_hybrid", {"alpha": 0.5})
        finally:
            hybrid.RRF_SCORE_EXPONENT = exponent
    best_leg = max(report["search_semantic"]["ndcg@10"], report["search_keyword"]["ndcg@10"])
    out = {
        "split": args.split,
        "queries": len(queries),
        "chunks": summary.chunks_total,
        "tools": report,
        "hybrid_at_least_best_leg": report["search_hybrid"]["ndcg@10"] >= best_leg,
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(
            f"CoSQA {args.split}, {len(queries)} queries, {summary.chunks_total} chunks (default parameters)"
        )
        for tool, r in report.items():
            print(
                f"  {tool:16s} nDCG@10 {r['ndcg@10']:.4f}  MRR@10 {r['mrr@10']:.4f}  "
                f"R@1 {r['recall@1']:.3f}  R@10 {r['recall@10']:.3f}  ({r['seconds']:.1f}s)"
            )
        print(f"  hybrid >= best leg: {out['hybrid_at_least_best_leg']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
