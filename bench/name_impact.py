"""Which guard queries a path-factor knob can move, without an index: ``python -m bench.name_impact
--sweep 'question_name_boost=6,name_stem=5'``.

For each guard set (CoSQA's 500 test queries over its 6,267 ``corpus/fNNNNN.py`` files, the
docstring sets' queries and the hand-written questions over their corpora's files) it counts the
queries for which some file's per-chunk path factors (``ranking.path_factors``: path and doc
priors, name match and precision) differ between the defaults and the spec. A set with none is
unchanged by the spec by construction (for knobs that act only through those factors), so its
index need not be built to check it; the others are the queries to measure with
``bench.quality_sweep`` / ``bench.cosqa_tools``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import quality
from .corpora import fetch


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)


def _moved(queries: list[str], paths: list[str], knobs: Any) -> list[str]:
    """The queries for which some path's factors differ between the defaults and ``knobs``."""
    from local_memory_search import ranking

    out = []
    for text in queries:
        shape = ranking.QueryShape.of(text)
        if any(
            ranking.path_factors(p, shape, ranking.KNOBS) != ranking.path_factors(p, shape, knobs)
            for p in paths
        ):
            out.append(text)
    return out


def impact(spec: str) -> dict[str, Any]:
    """Per guard set and corpus: queries, how many the spec can move, and a few of them."""
    from .semble import parse_knobs

    knobs, extra = parse_knobs(spec)
    if extra:
        raise SystemExit(f"only RankingKnobs fields here, not {sorted(extra)}")
    sets: dict[str, tuple[list[str], list[str]]] = {}
    functions, raw = quality.cosqa_sets(n_queries=None, corpus_size=None)
    sets["cosqa"] = ([t for _, t, _ in raw], [f"corpus/f{idx:05d}.py" for idx in sorted(functions)])
    for key in quality.QUALITY_CORPORA:
        root = fetch(key).root
        _, _, queries, _ = quality.docstring_queries(root, limit=100)
        sets[f"docq/{key}"] = ([q.text for q in queries], _files(root))
    for key in ("requests", "click", "flask", "rxjs"):
        root = fetch(key).root
        sets[f"questions/{key}"] = ([q.question for q in quality.load_questions(key)], _files(root))
    out: dict[str, Any] = {}
    for name, (queries, paths) in sets.items():
        moved = _moved(queries, paths, knobs)
        out[name] = {"queries": len(queries), "moved": len(moved), "examples": moved[:3]}
        print(f"{name:20s} {len(moved):4d} of {len(queries):4d} queries can move", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", required=True, help="knob spec, as bench.semble --sweep")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    out = impact(args.sweep)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
