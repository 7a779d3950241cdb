"""Where the semble benchmark's targets sit: the hybrid rank of each query's first target file,
and its file rank in each leg, for the queries ``search_hybrid`` does not answer at rank 1.

A study aid for ranking work (issue 17): ``python -m bench.semble_misses --half tuning
[--repos a,b] [--show 5]`` prints, per miss, the query, the target, its first hybrid position
(file-level) and its best rank in the semantic / keyword / definition legs, then counts how
many misses have the target in a leg's top 10 / 50 (ordering, not recall). Reads the indexes
``bench.semble`` built; runs the real ``hybrid.rank``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from bench import semble


def _matches(path: str, target: str) -> bool:
    return path == target or path.endswith("/" + target) or target.endswith("/" + path)


def _first(paths: list[str], targets: list[str]) -> int | None:
    for i, p in enumerate(paths, start=1):
        if any(_matches(p, t) for t in targets):
            return i
    return None


def _file_order(hits: Any, meta: dict[str, dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for h in hits:
        seen.setdefault(meta.get(h.chunk_id, {}).get("file_path") or "", None)
    return list(seen)


def study(names: list[str], show: int) -> dict[str, Any]:
    """Per-query target positions over ``names``; prints the misses."""
    from local_memory_search.hybrid import RankRequest, rank
    from local_memory_search.store import open_index

    by_name = {r["name"]: r for r in semble.repos()}
    rows: list[dict[str, Any]] = []
    for name in names:
        repo = by_name[name]
        project = semble.project_root(repo, semble.CACHE / "corpora" / name)
        prefix = f"{repo['benchmark_root'].strip('/')}/" if repo.get("benchmark_root") else ""
        annotations = json.loads((semble.DATA / "annotations" / f"{name}.json").read_text())
        with open_index(str(project)) as reader:
            for item in annotations:
                targets = [t if isinstance(t, str) else t["path"] for t in item.get("relevant", [])]
                r = rank(reader, RankRequest(query=item["query"], mode="hybrid"))
                meta = {s.chunk_id: s.file_path or "" for s in r.ranked}
                files_kept: list[str] = []
                for s in r.ranked[: r.kept]:
                    files_kept.append(prefix + (s.file_path or ""))
                top10 = files_kept[:10]
                all_files = list(dict.fromkeys(prefix + (s.file_path or "") for s in r.ranked))
                legs: dict[str, int | None] = {}
                for leg in ("semantic", "keyword", "definition"):
                    hits = sorted(
                        (getattr(s, leg) for s in r.ranked if getattr(s, leg) is not None),
                        key=lambda h: h.rank,
                    )
                    order = list(dict.fromkeys(prefix + meta[h.chunk_id] for h in hits))
                    legs[leg] = _first(order, targets)
                rows.append(
                    {
                        "repo": name,
                        "query": item["query"],
                        "category": item["category"],
                        "targets": targets,
                        "chunk_rank": _first(top10, targets),
                        "kept": r.kept,
                        "file_rank_all": _first(all_files, targets),
                        **legs,
                        "top": list(dict.fromkeys(top10))[:show],
                    }
                )
    misses = [x for x in rows if x["chunk_rank"] != 1]
    for x in misses:
        print(
            f"[{x['repo']}/{x['category'][:4]}] {x['query']!r}\n  target {x['targets']} hybrid@10 "
            f"{x['chunk_rank']} (kept {x['kept']}, file rank among candidates {x['file_rank_all']}) "
            f"sem {x['semantic']} kw {x['keyword']} def {x['definition']}\n  top: {x['top']}"
        )
    in50 = sum(1 for x in misses if x["file_rank_all"] is not None)
    print(f"{len(misses)} of {len(rows)} queries miss rank 1; target among the candidates in {in50}")
    return {"rows": rows}


def main(argv: list[str] | None = None) -> int:
    """CLI."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=("tuning", "reporting"), default="tuning")
    ap.add_argument("--repos", default="")
    ap.add_argument("--show", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--data", help="data root of the indexes (default: bench.semble's)")
    args = ap.parse_args(argv)
    os.environ.setdefault("EMBED_BACKEND", "onnx")
    if args.data:
        semble.DATA_ROOT[0] = Path(args.data)
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(semble.DATA_ROOT[0])
    only = [r for r in args.repos.split(",") if r]
    names = [n for n in semble.halves()[args.half] if not only or n in only]
    out = study(names, args.show)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
