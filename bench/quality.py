"""Retrieval quality: our three search tools against grep and whole-file BM25, on three sets.

Sets:
* ``cosqa`` / ``cosqa-nodoc`` — CoSQA's 500 test queries over its 6,267 functions, one function
  per file (``f<idx>.py``), with docstrings kept and blanked. A hit is its function's file.
* ``docq-strip`` / ``docq-mask`` — docstring-as-query on the pinned Python corpora (see
  :func:`docstring_queries` for the leakage controls).
* ``questions`` — the hand-written questions of ``bench/questions/``.

Match granularity: a result of our tools counts at **span** level when it is in the labelled
file and its line range overlaps a labelled answer span; at **file** level when it is in a
labelled file (results deduplicated by file in rank order). The baselines rank files, so they
have file level only. On CoSQA each file is one function, so the two levels coincide.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from local_memory_shared.config import Settings

from . import harness
from .baselines import BM25Baseline, GrepBaseline
from .corpora import CACHE_DIR, fetch
from .metrics import first_relevant_rank, score_ranks
from .pysource import docstrings, first_sentence, mask_definition_names, strip_docstrings
from .questions import load as load_questions
from .questions import verify as verify_questions

log = logging.getLogger(__name__)

COSQA_DIR_CANDIDATES = ("../shared/bench-data/cosqa", "../../shared/bench-data/cosqa")
WORK_DIR = CACHE_DIR / "work"
QUALITY_CORPORA = ("requests", "click", "flask")


@dataclass(frozen=True)
class Query:
    """One query and where its answers are."""

    qid: str
    text: str
    answers: tuple[tuple[str, int, int], ...]  # (file, start_line, end_line)


def cosqa_dir() -> Path:
    """The CoSQA data folder (``../shared/bench-data/cosqa`` beside the checkout)."""
    repo = Path(__file__).resolve().parent.parent
    for rel in COSQA_DIR_CANDIDATES:
        path = (repo / rel).resolve()
        if (path / "code_idx_map.txt").is_file():
            return path
    raise harness.BenchError("CoSQA data not found beside the checkout (expected ../shared/bench-data/cosqa)")


# -- evaluation ------------------------------------------------------------------------------


def _span_hit(hit: harness.Hit, answers: tuple[tuple[str, int, int], ...]) -> bool:
    return any(hit.file_path == f and hit.start_line <= e and hit.end_line >= s for f, s, e in answers)


def evaluate(
    project: Path,
    settings: Settings,
    queries: list[Query],
    *,
    depth: int,
    tools: tuple[str, ...] = harness.SEARCH_TOOLS,
) -> dict[str, Any]:
    """Score every tool and both baselines on ``queries`` over the indexed ``project``."""
    files = harness.indexed_files(project, settings)
    out: dict[str, Any] = {
        "queries": len(queries),
        "indexed_files": len(files),
        "depth": depth,
        "methods": {},
    }
    for tool in tools:
        span_ranks: list[int | None] = []
        file_ranks: list[int | None] = []
        warnings: Counter[str] = Counter()
        started = time.perf_counter()
        for q in queries:
            hits, warns = harness.search(tool, project, q.text, depth=depth)
            warnings.update(warns)
            answer_files = {f for f, _, _ in q.answers}
            span_ranks.append(first_relevant_rank(hits, partial(_span_hit, answers=q.answers)))
            file_ranks.append(first_relevant_rank(harness.files_in_order(hits), answer_files.__contains__))
        out["methods"][tool] = {
            "span": score_ranks(span_ranks, depth=depth),
            "file": score_ranks(file_ranks, depth=depth),
            "seconds": round(time.perf_counter() - started, 2),
            "warnings": dict(warnings),
        }
    grep = GrepBaseline(project, files)
    started = time.perf_counter()
    bm25 = BM25Baseline(project, files)
    build = time.perf_counter() - started
    for name, baseline in (("grep", grep), ("bm25_files", bm25)):
        ranks = []
        started = time.perf_counter()
        for q in queries:
            answer_files = {f for f, _, _ in q.answers}
            ranks.append(
                first_relevant_rank(baseline.search(q.text, limit=max(depth, 100)), answer_files.__contains__)
            )
        out["methods"][name] = {
            "file": score_ranks(ranks, depth=max(depth, 100)),
            "seconds": round(time.perf_counter() - started + (build if name == "bm25_files" else 0), 2),
        }
    out["grep_engine"] = grep.version()
    return out


# -- CoSQA -----------------------------------------------------------------------------------


def _write_tree(root: Path, files: dict[str, str]) -> None:
    """Make ``root`` hold exactly ``files`` (unchanged files keep their mtime, so re-index is incremental)."""
    root.mkdir(parents=True, exist_ok=True)
    for existing in root.rglob("*"):
        rel = existing.relative_to(root).as_posix()
        if existing.is_file() and rel not in files:
            existing.unlink()
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def cosqa_sets(
    *, n_queries: int | None, corpus_size: int | None
) -> tuple[dict[int, str], list[tuple[str, str, int]]]:
    """CoSQA functions (idx → code) and test queries (id, text, answer idx), optionally a subset."""
    base = cosqa_dir()
    code_to_idx: dict[str, int] = json.loads((base / "code_idx_map.txt").read_text())
    functions = {idx: code for code, idx in code_to_idx.items()}
    test = json.loads((base / "cosqa-retrieval-test-500.json").read_text())
    queries = [(q["idx"], q["doc"], code_to_idx[q["code"]]) for q in test]
    if n_queries is not None:
        queries = queries[:n_queries]
    if corpus_size is not None:
        keep = {idx for _, _, idx in queries}
        # Distractors: a fixed, spread-out sample of the other functions.
        others = sorted(i for i in functions if i not in keep)
        step = max(1, len(others) // max(1, corpus_size - len(keep)))
        keep.update(others[::step][: max(0, corpus_size - len(keep))])
        functions = {i: functions[i] for i in sorted(keep)}
    return functions, queries


def run_cosqa(settings: Settings, *, smoke: bool) -> dict[str, Any]:
    """CoSQA with docstrings kept and blanked."""
    functions, raw_queries = cosqa_sets(n_queries=30 if smoke else None, corpus_size=150 if smoke else None)
    queries = [Query(qid, text, ((f"corpus/f{idx:05d}.py", 1, 10**6),)) for qid, text, idx in raw_queries]
    results: dict[str, Any] = {}
    for variant, rewrite in (("cosqa", None), ("cosqa-nodoc", strip_docstrings)):
        project = WORK_DIR / f"{'smoke-' if smoke else ''}{variant}"
        files = {
            f"corpus/f{idx:05d}.py": (rewrite(code) if rewrite else code) + "\n"
            for idx, code in functions.items()
        }
        _write_tree(project, files)
        started = time.perf_counter()
        summary = harness.index(project, settings, full=True)
        res = evaluate(project, settings, queries, depth=50 if smoke else 100)
        res["index_seconds"] = round(time.perf_counter() - started, 1)
        res["chunks"] = summary.get("chunks_total")
        res["functions"] = len(functions)
        res["subset"] = smoke
        results[variant] = res
    return results


# -- docstring-as-query ----------------------------------------------------------------------


def docstring_queries(
    root: Path, *, limit: int | None
) -> tuple[dict[str, str], dict[str, str], list[Query], dict[str, int]]:
    """Build the docstring-as-query set of one corpus.

    Returns (stripped files, stripped+masked files, queries, counts of dropped candidates).
    Leakage controls: only ``.py`` files are indexed (docs pages may quote docstrings); every
    docstring in the corpus is blanked, not only the queried ones; a query must have 4–40 words,
    must not be shared by two definitions, and must not occur verbatim (case-insensitive)
    anywhere in the stripped corpus (comments, strings); in the masked variant every
    ``def NAME`` is renamed to an opaque ``fn_<hash>`` so a query cannot win on the name alone.
    """
    stripped: dict[str, str] = {}
    masked: dict[str, str] = {}
    candidates: list[tuple[str, str, int, int, str]] = []
    dropped: Counter[str] = Counter()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        source = path.read_text(encoding="utf-8", errors="replace")
        try:
            docs = docstrings(source)
        except SyntaxError:
            docs = []
        stripped[rel] = strip_docstrings(source)
        masked[rel] = mask_definition_names(stripped[rel])
        for d in docs:
            sentence = first_sentence(d.text)
            words = sentence.split()
            if not 4 <= len(words) <= 40 or ">>>" in sentence or sentence.startswith((":", "..")):
                dropped["length_or_markup"] += 1
                continue
            candidates.append((sentence, rel, d.def_start, d.def_end, d.qualname))
    by_text = Counter(c[0].lower() for c in candidates)
    haystack = "\n".join(stripped.values()).lower()
    queries = []
    for sentence, rel, start, end, qualname in candidates:
        if by_text[sentence.lower()] > 1:
            dropped["duplicate_sentence"] += 1
        elif sentence.lower() in haystack:
            dropped["verbatim_elsewhere"] += 1
        else:
            queries.append(Query(f"{root.name}:{rel}:{qualname}", sentence, ((rel, start, end),)))
    # A fixed, content-derived sample, so the same pins give the same queries on any machine.
    queries.sort(key=lambda q: hashlib.sha1(q.qid.encode()).hexdigest())
    if limit is not None:
        queries = queries[:limit]
    return stripped, masked, queries, dict(dropped)


def run_docq(settings: Settings, *, smoke: bool) -> dict[str, Any]:
    """Docstring-as-query, docstrings blanked (and names masked in the second variant)."""
    corpora = ("requests",) if smoke else QUALITY_CORPORA
    per_corpus = 20 if smoke else 100
    results: dict[str, Any] = {"docq-strip": {"corpora": {}}, "docq-mask": {"corpora": {}}}
    for key in corpora:
        corpus = fetch(key)
        # Smoke: the library sources only, to keep the run short.
        root = corpus.root / "src" if smoke else corpus.root
        stripped, masked, queries, dropped = docstring_queries(root, limit=per_corpus)
        for variant, files in (("docq-strip", stripped), ("docq-mask", masked)):
            project = WORK_DIR / f"{'smoke-' if smoke else ''}{variant}" / corpus.root.name
            _write_tree(project, files)
            harness.index(project, settings, full=True)
            res = evaluate(project, settings, queries, depth=50)
            res["dropped_candidates"] = dropped
            res["example_queries"] = [q.text for q in queries[:3]]
            results[variant]["corpora"][key] = res
    for variant in results:
        results[variant]["overall"] = _pool(results[variant]["corpora"])
    return results


def _pool(per_corpus: dict[str, Any]) -> dict[str, Any]:
    """Query-weighted mean of every metric across corpora."""
    total = sum(r["queries"] for r in per_corpus.values())
    pooled: dict[str, Any] = {"queries": total, "methods": {}}
    if not total:
        return pooled
    first = next(iter(per_corpus.values()))
    for method, levels in first["methods"].items():
        pooled["methods"][method] = {}
        for level in ("span", "file"):
            if level not in levels:
                continue
            keys = [k for k in levels[level] if k != "queries"]
            pooled["methods"][method][level] = {
                k: round(
                    sum(r["methods"][method][level][k] * r["queries"] for r in per_corpus.values()) / total, 4
                )
                for k in keys
            } | {"queries": total}
    return pooled


# -- hand-written questions ------------------------------------------------------------------


def run_questions(settings: Settings, *, smoke: bool) -> dict[str, Any]:
    """Hand-written questions, each corpus indexed as its own project."""
    corpora = ("requests",) if smoke else ("requests", "click", "flask", "rxjs")
    results: dict[str, Any] = {"corpora": {}}
    for key in corpora:
        corpus = fetch(key)
        questions = load_questions(key)
        problems = verify_questions(questions, corpus.root)
        if problems:
            raise harness.BenchError("question labels out of date: " + "; ".join(problems[:5]))
        queries = [
            Query(q.id, q.question, tuple((a.file, a.start_line, a.end_line) for a in q.answers))
            for q in questions
        ]
        # Index a private copy: the pinned tree stays pristine for the baselines' and other runs.
        project = WORK_DIR / f"{'smoke-' if smoke else ''}questions" / corpus.root.name
        if not project.is_dir():
            shutil.copytree(corpus.root, project)
            if smoke:
                # Smoke: index the library sources only (every answer lives there).
                (project / ".localmemoryignore").write_text("/*\n!/src/\n")
        harness.index(project, settings, full=True)
        results["corpora"][key] = evaluate(project, settings, queries, depth=50)
    results["overall"] = _pool(results["corpora"])
    return results
