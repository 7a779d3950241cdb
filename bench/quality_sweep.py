"""``search_hybrid`` on the docstring and hand-written question sets under other ranking knobs.

The companion of ``bench.semble --sweep`` and ``bench.cosqa_tools --sweep`` for the two sets the
ranking issue must not make worse: it reuses the indexes ``python -m bench.run --full --only
docq,questions`` built (run that first), runs each query's legs once (``bench.semble.cached_legs``)
and re-runs only the fusion per configuration. Span and file nDCG@10, query-weighted over the
corpora exactly as ``bench.run`` pools them:

    python -m bench.quality_sweep --sweep 'diversity=0.4' --sweep 'name_precision=1'
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from . import harness, quality
from .corpora import CACHE_DIR, fetch


def _sets(names: list[str], corpora: list[str]) -> dict[str, list[tuple[Path, list[quality.Query]]]]:
    """Per set: (indexed project, queries) of each corpus (of ``corpora``, when given), as
    ``bench.run --full`` laid them out."""
    out: dict[str, list[tuple[Path, list[quality.Query]]]] = {}
    if "docq" in names:
        for variant in ("docq-strip", "docq-mask"):
            out[variant] = []
        for key in [k for k in quality.QUALITY_CORPORA if not corpora or k in corpora]:
            corpus = fetch(key)
            _, _, queries, _ = quality.docstring_queries(corpus.root, limit=100)
            for variant in ("docq-strip", "docq-mask"):
                out[variant].append((quality.WORK_DIR / variant / corpus.root.name, queries))
    if "questions" in names:
        out["questions"] = []
        for key in [k for k in ("requests", "click", "flask", "rxjs") if not corpora or k in corpora]:
            corpus = fetch(key)
            queries = [
                quality.Query(q.id, q.question, tuple((a.file, a.start_line, a.end_line) for a in q.answers))
                for q in quality.load_questions(key)
            ]
            out["questions"].append((quality.WORK_DIR / "questions" / corpus.root.name, queries))
    return out


def sweep(names: list[str], specs: list[str], corpora: list[str] | None = None) -> dict[str, Any]:
    """Span / file nDCG@10 of ``search_hybrid`` per set under each knob spec (the defaults first)."""
    from local_memory_search import ranking
    from local_memory_search.api import RESULT_CACHE

    from .semble import cached_legs, parse_knobs

    sets = _sets(names, corpora or [])
    default = ranking.KNOBS
    out: dict[str, Any] = {}
    try:
        with cached_legs(), harness.data_root(CACHE_DIR / "data") as settings:
            configs = {spec: parse_knobs(spec) for spec in ["", *specs]}  # all from the defaults
            for spec, (knobs, extra) in configs.items():
                if extra:
                    raise SystemExit(f"only RankingKnobs fields here, not {sorted(extra)}")
                ranking.KNOBS = knobs
                RESULT_CACHE.clear()  # quality.evaluate does not bust the result cache; knobs are not in its key
                label = spec or "default"
                out[label] = {}
                for name, projects in sets.items():
                    pooled = {"queries": 0, "span": 0.0, "file": 0.0}
                    for project, queries in projects:
                        res = quality.evaluate(project, settings, queries, depth=50, tools=("search_hybrid",))
                        m = res["methods"]["search_hybrid"]
                        pooled["queries"] += res["queries"]
                        pooled["span"] += m["span"]["ndcg@10"] * res["queries"]
                        pooled["file"] += m["file"]["ndcg@10"] * res["queries"]
                    n = pooled["queries"] or 1
                    out[label][name] = {"span": pooled["span"] / n, "file": pooled["file"] / n, "queries": n}
                cells = "  ".join(f"{k} {v['span']:.4f}/{v['file']:.4f}" for k, v in out[label].items())
                print(f"{label:40s} span/file nDCG@10: {cells}", flush=True)
    finally:
        ranking.KNOBS = default
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="docq,questions")
    ap.add_argument("--sweep", action="append", default=[])
    ap.add_argument("--corpora", default="", help="a subset of the corpora (default: all)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    os.environ.setdefault("EMBED_BACKEND", "onnx")
    corpora = [c for c in args.corpora.split(",") if c]
    print(
        f"# python -m bench.quality_sweep --sets {args.sets} --corpora {args.corpora!r} "
        + " ".join(f"--sweep {s!r}" for s in args.sweep)
    )
    out = sweep([s.strip() for s in args.sets.split(",") if s.strip()], args.sweep, corpora)
    print(f"# load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
