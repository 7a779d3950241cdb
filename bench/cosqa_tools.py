"""CoSQA (docstrings kept) nDCG@10 of the three search tools only, on the quality section's index.

A quick before/after check for ranking changes: it reuses the index ``python -m bench.run --full
--only cosqa`` builds in ``bench/cache/data`` (building it when absent) and skips the baselines
and the docstring-blanked variant. Run it twice on the same index, once with a base checkout's
packages first on ``PYTHONPATH``, to compare two rankings:

    python -m bench.cosqa_tools [--tools hybrid,semantic,keyword]
    PYTHONPATH=BASE/shared/src:BASE/indexer/src:BASE/search/src python -m bench.cosqa_tools
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from . import harness, quality
from .corpora import CACHE_DIR


def sweep(specs: list[str]) -> dict[str, Any]:
    """``search_hybrid`` under each knob spec (as ``bench.semble --sweep``: ``RankingKnobs`` fields
    or tool arguments), the legs run once per query and memoised."""
    from local_memory_search import ranking
    from local_memory_search.api import RESULT_CACHE

    from .semble import cached_legs, parse_knobs

    default = ranking.KNOBS
    out: dict[str, Any] = {}
    try:
        with cached_legs():
            configs = {spec or "default": parse_knobs(spec) for spec in ["", *specs]}  # all from the defaults
            for label, (knobs, extra) in configs.items():
                ranking.KNOBS = knobs
                RESULT_CACHE.clear()  # the searches do not bust the result cache; knobs are not in its key
                out[label] = run(["search_hybrid"], extra)["search_hybrid"]
                print(f"{label:40s} ndcg@10 {out[label]['ndcg@10']:.4f}", file=sys.stderr)
    finally:
        ranking.KNOBS = default
    return out


def run(tools: list[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """nDCG@10 and friends (file level: one function per file) of each tool on CoSQA's 500 test queries."""
    functions, raw_queries = quality.cosqa_sets(n_queries=None, corpus_size=None)
    queries = [
        quality.Query(qid, text, ((f"corpus/f{idx:05d}.py", 1, 10**6),)) for qid, text, idx in raw_queries
    ]
    project = quality.WORK_DIR / "cosqa"
    out: dict[str, Any] = {}
    with harness.data_root(CACHE_DIR / "data") as settings:
        if not project.is_dir():
            files = {f"corpus/f{idx:05d}.py": code + "\n" for idx, code in functions.items()}
            quality._write_tree(project, files)
        harness.index(project, settings)  # builds a missing index; an up-to-date one is a no-op
        for tool in tools:
            hits_of = [harness.search(tool, project, q.text, depth=100, **(extra or {}))[0] for q in queries]
            ranks = [
                quality.first_relevant_rank(harness.files_in_order(hits), {q.answers[0][0]}.__contains__)
                for q, hits in zip(queries, hits_of, strict=True)
            ]
            out[tool] = quality.score_ranks(ranks, depth=100)
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI: print the scores as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", default="hybrid,semantic,keyword")
    ap.add_argument(
        "--sweep",
        action="append",
        default=[],
        help="search_hybrid with these knobs, e.g. 'confidence_exponent=2' (repeatable; beside the defaults)",
    )
    args = ap.parse_args(argv)
    os.environ.setdefault("EMBED_BACKEND", "onnx")
    tools = [f"search_{t.strip()}" for t in args.tools.split(",") if t.strip()]
    json.dump(sweep(args.sweep) if args.sweep else run(tools), sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
