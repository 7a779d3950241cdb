"""Time to first answer of a first index (issue 14 item 3): spawn of ``index`` → keyword → semantic.

Builds one ~3,400-file project from real corpora (default: laravel-framework and abseil-cpp from
``../shared/bench-data/semble/corpora``, unpacked into the git-ignored ``bench/cache/footprint``
and copied side by side into ``bench/cache/first_answer/<name>``), picks ``--targets`` files
spread over the project (in path order) that each define an identifier no other file mentions,
then for each variant spawns ``local-memory-indexer index`` into a fresh data root and polls
``search_keyword`` (in this process, the current searcher) every ``--poll`` seconds:

- ``first_result_s``: the first published answer of any kind (some target found anywhere);
- ``keyword_all_s``: every target's query answers with its file in the top 3 (the whole project
  is keyword-searchable: "first correct keyword answer" for any file);
- ``semantic_all_s``: the ``vectors_pending`` warning is gone and the run exited (every row has
  its vector: full semantic search).

Variants: ``after`` (this checkout) and, with ``--before REF`` (default ``main``), that git ref
exported with ``git archive`` into ``bench/cache/first_answer/src-REF`` and put first on the
indexer's ``PYTHONPATH``. Variants alternate ``--repeats`` times; ``--timeout`` stops a variant
that has not finished (reported as null with the fraction of targets found)::

    nice -n 10 .venv/bin/python -m bench.first_answer [--corpora laravel-framework,abseil-cpp]
        [--before main] [--repeats 1] [--timeout 1200] [--out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import common
from bench.common import emit
from bench.footprint import REPO, unpack

CACHE = REPO / "bench" / "cache" / "first_answer"
_DEFINES = re.compile(
    r"\b(?:function|class|def|func|fn|struct|interface|trait|enum)\s+([A-Za-z_][A-Za-z0-9_]{7,})"
)
_SOURCE = {".php", ".cc", ".h", ".py", ".go", ".rs", ".java", ".ts", ".js", ".rb", ".c", ".cpp", ".hpp"}


def build_project(corpora: list[str]) -> Path:
    """The corpora copied side by side into one project folder (once)."""
    name = "+".join(corpora)
    if len(name) > 100:  # e.g. every semble corpus: keep the folder name short and stable
        name = f"{len(corpora)}-corpora-{hashlib.sha1(name.encode()).hexdigest()[:10]}"
    target = CACHE / name
    if not target.is_dir():
        tmp = CACHE / f".{target.name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        for corpus in corpora:
            shutil.copytree(unpack(corpus), tmp / corpus)
        tmp.rename(target)
    return target


def pick_targets(project: Path, count: int) -> list[tuple[str, str]]:
    """``(identifier, file)`` pairs: files spread over the path order, each identifier in one file only."""
    files = sorted(p for p in project.rglob("*") if p.is_file() and p.suffix in _SOURCE)
    texts = {p: p.read_text(errors="replace") for p in files}
    seen: dict[str, int] = {}
    for text in texts.values():
        for word in set(re.findall(r"[A-Za-z_][A-Za-z0-9_]{7,}", text)):
            seen[word] = seen.get(word, 0) + 1
    out: list[tuple[str, str]] = []
    for k in range(count):
        start = int(k * (len(files) - 1) / max(1, count - 1))
        # The last target is the last file with a unique definition; the others search forward.
        order = range(start, -1, -1) if k == count - 1 else range(start, len(files))
        for i in order:
            names = [n for n in _DEFINES.findall(texts[files[i]]) if seen.get(n) == 1]
            if names:
                out.append((names[0], str(files[i].relative_to(project))))
                break
    return out


def export_ref(ref: str) -> Path:
    """``git archive REF`` unpacked under the cache (the indexer of another commit)."""
    return common.export_ref(ref, CACHE / f"src-{ref.replace('/', '_')}")


def _keyword_hit(project: Path, identifier: str, file: str) -> tuple[bool, set[str]]:
    from local_memory_search.tools import call_tool

    got = call_tool(
        "search_keyword", {"query": identifier, "project_path": str(project), "limit": 3, "cache_bust": True}
    )
    if not got.get("ok"):
        return False, set()
    found = any(r.get("file_path") == file for r in got.get("results", []))
    return found, {w["code"] for w in got.get("warnings", [])}


def run_variant(
    name: str, src: Path | None, project: Path, targets: list[tuple[str, str]], timeout: float, poll: float
) -> dict[str, Any]:
    """One first index from nothing, polled until it finishes (or ``timeout``)."""
    from local_memory_search.store import clear_caches

    data_root = CACHE / f"data-{name}"
    shutil.rmtree(data_root, ignore_errors=True)
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    if src is not None:
        paths = [src / pkg / "src" for pkg in ("shared", "indexer", "search")]
        env["PYTHONPATH"] = os.pathsep.join([*map(str, paths), env.get("PYTHONPATH", "")])
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(data_root)
    clear_caches()
    cmd = [sys.executable, "-m", "local_memory_indexer.cli", "index", str(project), "--json"]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    found: dict[str, float] = {}
    first_result = semantic_all = None
    exited = None
    timeline: list[tuple[float, int]] = []
    while True:
        now = time.perf_counter() - started
        if exited is None and proc.poll() is not None:
            exited = now
        if now > timeout:
            proc.kill()
            break
        codes: set[str] = set()
        for identifier, file in targets:
            if identifier in found:
                continue
            try:
                hit, codes = _keyword_hit(project, identifier, file)
            except Exception:  # noqa: BLE001 - nothing published yet, a DB mid-creation
                hit = False
            if hit:
                found[identifier] = time.perf_counter() - started
                if first_result is None:
                    first_result = found[identifier]
        timeline.append((round(now, 2), len(found)))
        if len(found) == len(targets) and exited is not None:
            if src is None:
                _, codes = _keyword_hit(project, *targets[-1])
                semantic_all = exited if "vectors_pending" not in codes else None
            else:
                semantic_all = exited
            break
        time.sleep(poll)
    stdout = proc.communicate()[0]
    coverage = _coverage(data_root, project)
    summary: dict[str, Any] = {}
    try:
        summary = json.loads(stdout)["data"]
    except (ValueError, KeyError, TypeError):
        pass
    return {
        "variant": name,
        "first_result_s": _round(first_result),
        "keyword_all_s": _round(max(found.values())) if len(found) == len(targets) else None,
        "semantic_all_s": _round(semantic_all),
        "index_exit_s": _round(exited),
        "targets_found": f"{len(found)}/{len(targets)}",
        "per_target_s": {k: round(v, 2) for k, v in found.items()},
        "files_seen": summary.get("files_seen"),
        "chunks_total": summary.get("chunks_total"),
        "chunks_embedded": summary.get("chunks_embedded"),
        "seconds": summary.get("seconds"),
        "timed_out": exited is None,
        "files_published_at_end": coverage[0],
        "chunks_published_at_end": coverage[1],
        "chunks_without_vectors_at_end": coverage[2],
    }


def _coverage(data_root: Path, project: Path) -> tuple[int | None, int | None, int | None]:
    """Files and chunks the last published state holds, and how many chunks still lack vectors."""
    from local_memory_shared.paths import project_paths
    from local_memory_shared.state_reader import open_state_ro, read_pending_vectors

    try:
        conn = open_state_ro(project_paths(data_root, project).state_db)
    except Exception:  # noqa: BLE001 - nothing was written
        return None, None, None
    try:
        files = int(conn.execute("SELECT COUNT(*) FROM files").fetchone()[0])
        chunks = int(conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        return files, chunks, read_pending_vectors(conn)
    finally:
        conn.close()


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="laravel-framework,abseil-cpp")
    parser.add_argument("--before", default="main", help="git ref of the baseline ('' to skip)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--targets", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=1200.0)
    parser.add_argument("--poll", type=float, default=0.5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    project = build_project(args.corpora.split(","))
    targets = pick_targets(project, args.targets)
    variants: list[tuple[str, Path | None]] = [("after", None)]
    if args.before:
        variants.insert(0, ("before", export_ref(args.before)))
    runs = []
    for _ in range(args.repeats):
        for name, src in variants:
            result = run_variant(name, src, project, targets, args.timeout, args.poll)
            sys.stderr.write(json.dumps(result) + "\n")
            runs.append(result)
    report = {"project": str(project), "targets": targets, "runs": runs}
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
