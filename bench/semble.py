"""The semble code-search benchmark (36 repositories, 721 queries) through our real tools.

Unpacks each corpus of ``../shared/bench-data/semble/corpora`` into ``bench/cache/semble/corpora``
(once per tarball sha256), indexes it with the real pipeline into the data root
``bench/cache/semble/data`` (kept between runs: a re-run only re-indexes what changed), asks every
annotated query through ``local_memory_search.tools.call_tool`` (``search_hybrid``,
``search_semantic``, ``search_keyword``, default parameters, top 10 chunks) and scores the runs
with the benchmark's own ``score.py`` (chunk-level nDCG@10, the per-repository mean).

The repositories are split by a fixed rule: sorted by name, even positions (0, 2, ...) form the
tuning half, odd positions the reporting half. Ranking knobs are tuned on the tuning half only.

    python -m bench.semble [--half tuning|reporting|all] [--tools hybrid,semantic,keyword]
                           [--repo NAME ...] [--no-index] [--json FILE] [--runs DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import sys
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "bench-data" / "semble"
CACHE = ROOT / "bench" / "cache" / "semble"
#: The data root the indexes live in (``--data`` points it elsewhere, e.g. an experiment's copy).
DATA_ROOT = [CACHE / "data"]
TOOLS = ("search_hybrid", "search_semantic", "search_keyword")
CATEGORIES = ("architecture", "semantic", "symbol")

log = logging.getLogger("bench.semble")


def repos() -> list[dict[str, Any]]:
    """The benchmark's repositories (``repos.json``), sorted by name."""
    return sorted(json.loads((DATA / "repos.json").read_text()), key=lambda r: r["name"])


def halves() -> dict[str, list[str]]:
    """The fixed split: alphabetical order, even positions tune, odd positions report."""
    names = [r["name"] for r in repos()]
    return {"tuning": names[0::2], "reporting": names[1::2]}


def scorer() -> ModuleType:
    """The benchmark's own ``score.py``, imported from the data folder."""
    spec = importlib.util.spec_from_file_location("semble_score", DATA / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def unpack(repo: dict[str, Any]) -> Path:
    """The corpus folder of ``repo``, unpacked once per tarball checksum."""
    target = CACHE / "corpora" / repo["name"]
    marker = CACHE / "corpora" / f".{repo['name']}.sha256"
    tarball = DATA / "corpora" / f"{repo['name']}.tar.gz"
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    if target.is_dir() and marker.is_file() and marker.read_text() == digest:
        return target
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        tar.extractall(target, filter="tar")
    marker.write_text(digest)
    return target


def project_root(repo: dict[str, Any], corpus: Path) -> Path:
    """The directory the protocol indexes: ``benchmark_root`` inside the corpus, or all of it."""
    root = repo.get("benchmark_root")
    return corpus / root if root else corpus


def index_repos(selected: list[dict[str, Any]], *, rebuild: bool = False) -> dict[str, dict[str, Any]]:
    """Index (or incrementally refresh; ``rebuild``: re-chunk every file, reusing cached vectors)
    every selected corpus; returns name -> summary facts."""
    from bench import harness

    out: dict[str, dict[str, Any]] = {}
    with harness.data_root(DATA_ROOT[0]) as settings:
        for repo in sorted(selected, key=lambda r: r["tar_gz_bytes"]):  # small first: early results
            project = project_root(repo, unpack(repo))
            started = time.perf_counter()
            summary = harness.index(project, settings, rebuild=rebuild)
            out[repo["name"]] = {
                "chunks": summary.get("chunks_total"),
                "seconds": round(time.perf_counter() - started, 1),
            }
            log.info("indexed %s: %s", repo["name"], out[repo["name"]])
    return out


def ask(repo: dict[str, Any], tool: str, queries: list[str], extra: dict[str, Any]) -> list[dict[str, Any]]:
    """One run line per distinct query: the ranked spans ``tool`` returned (repo-relative paths)."""
    from local_memory_search.tools import call_tool

    project = project_root(repo, CACHE / "corpora" / repo["name"])
    prefix = f"{repo['benchmark_root'].strip('/')}/" if repo.get("benchmark_root") else ""
    lines = []
    for query in dict.fromkeys(queries):
        env = call_tool(
            tool,
            {
                "query": query,
                "project_path": str(project),
                "limit": 10,
                "fields": ["file_path", "start_line", "end_line"],
                "cache_bust": True,
                **extra,
            },
        )
        if not env.get("ok"):
            raise RuntimeError(f"{tool} failed on {repo['name']}: {env}")
        spans = [[prefix + h["file_path"], h["start_line"], h["end_line"]] for h in env["results"]]
        lines.append({"repo": repo["name"], "query": query, "ranked_spans": spans})
    return lines


def score_run(lines: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """Score run lines with score.py's own functions: per repository, per category, overall."""
    sc = scorer()
    by_key = {(ln["repo"], ln["query"]): ln for ln in lines}
    per_repo: dict[str, dict[str, Any]] = {}
    for name in names:
        annotations = json.loads((DATA / "annotations" / f"{name}.json").read_text())
        cats: dict[str, list[float]] = {c: [] for c in CATEGORIES}
        scores = []
        for item in annotations:
            targets = [sc.parse_target(t) for t in [*item.get("relevant", []), *item.get("secondary", [])]]
            value, _, _ = sc.score_query(targets, by_key.get((name, item["query"])), "auto")
            scores.append(value)
            cats[item["category"]].append(value)
        per_repo[name] = {
            "ndcg@10": sum(scores) / len(scores),
            **{c: sum(v) / len(v) for c, v in cats.items() if v},
        }
    return {
        "repos": per_repo,
        "overall": _mean([r["ndcg@10"] for r in per_repo.values()]),
        **{c: _mean([r[c] for r in per_repo.values() if c in r]) for c in CATEGORIES},
    }


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def published() -> dict[str, Any]:
    """Published per-repository figures (semble hybrid, CodeRankEmbed hybrid)."""
    return json.loads((DATA / "published.json").read_text())["repos"]


def evaluate(names: list[str], tools: list[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Ask every query of ``names`` through each tool; returns the scores (and the run lines)."""
    by_name = {r["name"]: r for r in repos()}
    out: dict[str, Any] = {}
    for tool in tools:
        started = time.perf_counter()
        lines: list[dict[str, Any]] = []
        for name in names:
            annotations = json.loads((DATA / "annotations" / f"{name}.json").read_text())
            lines.extend(ask(by_name[name], tool, [a["query"] for a in annotations], extra or {}))
        out[tool] = {**score_run(lines, names), "seconds": round(time.perf_counter() - started, 1)}
        out[tool]["lines"] = lines
    return out


def _pub(pub: dict[str, Any], name: str, key: str) -> float | None:
    entry = pub.get(name) or {}
    value = entry.get(key)
    if isinstance(value, dict):
        value = value.get("ndcg10")
    return value if isinstance(value, (int, float)) else None


def render(results: dict[str, Any], names: list[str], title: str) -> str:
    """A text table: per repository, per category and overall, beside semble and CRE hybrid."""
    pub = published()
    tools = [t for t in TOOLS if t in results]
    head = f"{'repo':20s}" + "".join(f"{t.removeprefix('search_'):>10s}" for t in tools)
    rows = [f"== {title} ({len(names)} repositories)", head + f"{'semble':>10s}{'CRE-hyb':>10s}"]
    for name in names:
        cells = "".join(f"{results[t]['repos'][name]['ndcg@10']:10.3f}" for t in tools)
        semble, cre = _pub(pub, name, "semble_hybrid"), _pub(pub, name, "coderankembed_hybrid")
        rows.append(f"{name:20s}{cells}{_fmt(semble)}{_fmt(cre)}")
    for key in ("overall", *CATEGORIES):
        cells = "".join(f"{results[t][key]:10.3f}" for t in tools)
        ref = _mean([v for n in names if (v := _pub_cat(pub, n, key)) is not None])
        cre = _mean([v for n in names if (v := _pub(pub, n, "coderankembed_hybrid")) is not None])
        rows.append(f"{'MEAN ' + key:20s}{cells}{ref:10.3f}{cre if key == 'overall' else float('nan'):10.3f}")
    return "\n".join(rows)


def _pub_cat(pub: dict[str, Any], name: str, key: str) -> float | None:
    if key == "overall":
        return _pub(pub, name, "semble_hybrid")
    value = ((pub.get(name) or {}).get("semble_hybrid") or {}).get("by_category", {}).get(key)
    return value if isinstance(value, (int, float)) else None


def _fmt(x: float | None) -> str:
    return f"{x:10.3f}" if x is not None else f"{'-':>10s}"


def run(
    half: str = "all", tools: list[str] | None = None, *, index: bool = True, only: list[str] | None = None
) -> dict[str, Any]:
    """Index (unless ``index`` is false) and score ``half`` (or its repositories in ``only``)."""
    split = halves()
    groups = {"tuning": split["tuning"], "reporting": split["reporting"]}
    if half != "all":
        groups = {half: groups[half]}
    if only:
        groups = {k: [n for n in v if n in only] for k, v in groups.items()}
        groups = {k: v for k, v in groups.items() if v}
    selected = [r for r in repos() if any(r["name"] in g for g in groups.values())]
    facts = index_repos(selected) if index else {}
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(DATA_ROOT[0])
    out: dict[str, Any] = {"index": facts, "halves": {}}
    for name, group in groups.items():
        out["halves"][name] = {"repos": group, "tools": evaluate(group, list(tools or TOOLS))}
    return out


@contextmanager
def cached_legs() -> Iterator[None]:
    """Memoise the retrieval legs per (index version, query, depth, filters) while configs are swept.

    The legs are the real ones, run once per query; only the pure fusion and the ranking factors
    run again for each configuration, so a sweep over many knob settings costs seconds, not hours.
    """
    from local_memory_search import hybrid, ranking

    names = ("semantic_leg", "keyword_leg", "definition_leg")
    originals = {n: getattr(hybrid, n) for n in names}
    memo: dict[tuple[Any, ...], Any] = {}

    def wrap(name: str, fn: Any) -> Any:
        def inner(reader: Any, req: Any, *rest: Any) -> Any:
            extra = tuple(sorted(rest[0])) if name == "definition_leg" else ()
            if name == "keyword_leg":  # the BM25 text adds definition terms for the query's names
                extra = (ranking.plain_words(ranking.KNOBS),)
            key = (name, reader.cache_token, req.query, req.depth, repr(req.filters), extra)
            if key not in memo:
                memo[key] = fn(reader, req, *rest)
            return memo[key]

        return inner

    try:
        for n, fn in originals.items():
            setattr(hybrid, n, wrap(n, fn))
        yield
    finally:
        for n, fn in originals.items():
            setattr(hybrid, n, fn)


def sweep(names: list[str], configs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """search_hybrid under each config of ``configs``: ``RankingKnobs`` or ``(RankingKnobs, tool
    arguments)`` (the legs run once per query, then come from the memo)."""
    from local_memory_search import ranking

    default = ranking.KNOBS
    out: dict[str, dict[str, Any]] = {}
    try:
        with cached_legs():
            for label, config in configs.items():
                knobs, extra = config if isinstance(config, tuple) else (config, {})
                ranking.KNOBS = knobs
                res = evaluate(names, ["search_hybrid"], extra)["search_hybrid"]
                out[label] = {k: res[k] for k in ("overall", *CATEGORIES)}
                out[label]["repos"] = {n: r["ndcg@10"] for n, r in res["repos"].items()}
                cells = " ".join(f"{k} {out[label][k]:.4f}" for k in ("overall", *CATEGORIES))
                print(f"{label:28s} {cells}", flush=True)
    finally:
        ranking.KNOBS = default
    return out


def ablation(names: list[str]) -> dict[str, dict[str, Any]]:
    """search_hybrid with every ranking factor off, each factor alone, all together, and all but each one."""
    from dataclasses import fields, replace

    from local_memory_search import ranking

    default = ranking.KNOBS
    configs = {"none": ranking.OFF}
    for f in fields(ranking.RankingKnobs):
        if getattr(default, f.name) != getattr(ranking.OFF, f.name):
            configs[f.name] = replace(ranking.OFF, **{f.name: getattr(default, f.name)})
    configs["all"] = default
    for f in fields(ranking.RankingKnobs):
        if getattr(default, f.name) != getattr(ranking.OFF, f.name):
            configs[f"all but {f.name}"] = replace(default, **{f.name: getattr(ranking.OFF, f.name)})
    return sweep(names, configs)


def parse_knobs(spec: str) -> tuple[Any, dict[str, Any]]:
    """``(RankingKnobs, tool arguments)`` from ``"diversity=0.3,gap_threshold=0"``: names of
    ``RankingKnobs`` fields set knobs (the others keep their defaults), any other name is passed
    to ``search_hybrid`` as an argument (``alpha``, ``rrf_k``, ``gap_threshold``, ...)."""
    from dataclasses import fields, replace

    from local_memory_search import ranking

    pairs = [(k.strip(), float(v)) for k, v in (p.split("=", 1) for p in spec.split(",") if p.strip())]
    names = {f.name for f in fields(ranking.RankingKnobs)}
    knobs = replace(ranking.KNOBS, **{k: v for k, v in pairs if k in names})
    return knobs, {k: (int(v) if k == "rrf_k" else v) for k, v in pairs if k not in names}


def main(argv: list[str] | None = None) -> int:
    """CLI: index, ask, score and print both halves."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=("tuning", "reporting", "all"), default="all")
    ap.add_argument("--tools", default="hybrid,semantic,keyword")
    ap.add_argument("--no-index", action="store_true", help="score the cached indexes as they are")
    ap.add_argument("--index-only", action="store_true")
    ap.add_argument(
        "--rebuild",
        action="store_true",
        help="with --index-only: re-chunk every file (cached vectors reused)",
    )
    ap.add_argument("--data", help=f"data root of the indexes (default {CACHE / 'data'})")
    ap.add_argument("--ablation", action="store_true", help="search_hybrid per ranking factor (no indexing)")
    ap.add_argument(
        "--sweep",
        action="append",
        default=[],
        help="search_hybrid with these knobs, e.g. 'diversity=0.3,path_prior=0.5' (repeatable; no indexing)",
    )
    ap.add_argument("--repos", default="", help="comma-separated subset of the half's repositories")
    ap.add_argument("--json", help="write scores (per repository and category) to this file")
    ap.add_argument("--runs", help="write each tool's run lines (score.py's JSONL input) to this folder")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    os.environ.setdefault("EMBED_BACKEND", "onnx")
    tools = [f"search_{t.strip()}" for t in args.tools.split(",") if t.strip()]
    if args.data:
        DATA_ROOT[0] = Path(args.data).resolve()
    if args.index_only:
        split = halves()
        wanted = split[args.half] if args.half != "all" else split["tuning"] + split["reporting"]
        subset = {r for r in args.repos.split(",") if r}
        if subset:
            wanted = [name for name in wanted if name in subset]
        index_repos([r for r in repos() if r["name"] in wanted], rebuild=args.rebuild)
        return 0
    only = [r for r in args.repos.split(",") if r]
    if args.ablation or args.sweep:
        os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(DATA_ROOT[0])
        half = halves()[args.half if args.half != "all" else "tuning"]
        names = [n for n in half if n in only] if only else half  # --repos narrows the half
        if args.sweep:
            out = sweep(names, {"default": parse_knobs(""), **{s: parse_knobs(s) for s in args.sweep}})
        else:
            out = ablation(names)
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2))
        return 0
    result = run(args.half, tools, index=not args.no_index, only=only or None)
    for name, half in result["halves"].items():
        print(render(half["tools"], half["repos"], f"{name} half"))
        if args.runs:
            Path(args.runs).mkdir(parents=True, exist_ok=True)
            for tool, res in half["tools"].items():
                with open(Path(args.runs) / f"{name}-{tool}.jsonl", "w") as fh:
                    fh.writelines(json.dumps(ln) + "\n" for ln in res["lines"])
    if args.json:
        for half in result["halves"].values():
            for res in half["tools"].values():
                res.pop("lines", None)
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
