"""Run the benchmark suite: ``python -m bench.run --smoke|--full [--only SECTIONS] [--out DIR]``.

Sections, in run order: ``indexing`` (scale corpus), ``latency`` (10k and 100k chunks),
``isolation``, ``cosqa``, ``docq``, ``questions``. ``--smoke`` runs every section on tiny inputs
(about two minutes; CI runs it through ``tests/test_bench_smoke.py``); ``--full`` is the real
suite (``make bench``). Results go to ``bench/results/<mode>-<UTC time>.json`` (plus
``latest-<mode>.json`` and a Markdown table ``latest-<mode>.md``), with machine facts; a table is
printed with the command that reproduces each figure.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import harness, indexing, isolation, latency, quality, scale
from .corpora import CACHE_DIR, fetch
from .machine import machine_facts
from .report import render_markdown, render_text

log = logging.getLogger("bench")

SECTIONS = ("indexing", "latency", "isolation", "cosqa", "docq", "questions")
#: Sections of the full run only (``semble`` indexes 36 repositories: far too long for the smoke run).
FULL_ONLY = ("semble",)
RESULTS_DIR = Path(__file__).resolve().parent / "results"

#: Knobs per mode. Smoke keeps every code path but shrinks every input.
MODES: dict[str, dict[str, Any]] = {
    "smoke": {
        "scale_corpus": ("requests", "src"),
        "other_corpus": ("flask", "src/flask/sansio"),
        "replicas": 3,
        "latency_queries": 15,
        "cold_samples": 1,
        "isolation_idle": 15,
    },
    "full": {
        "scale_corpus": ("sphinx", None),
        "other_corpus": ("flask", None),
        "replicas": 10,
        "latency_queries": 200,
        "cold_samples": 3,
        "isolation_idle": 100,
    },
}


def _command(mode: str, section: str) -> str:
    return f"python -m bench.run --{mode} --only {section}"


def run(mode: str, sections: list[str], out_dir: Path) -> dict[str, Any]:
    """Run ``sections`` in ``mode``; returns (and writes) the results document."""
    knobs = MODES[mode]
    smoke = mode == "smoke"
    started = time.perf_counter()
    doc: dict[str, Any] = {
        "mode": mode,
        "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_facts(),
        "corpora": {},
        "commands": {s: _command(mode, s) for s in sections},
        "sections": {},
        "errors": {},
    }
    run_root = CACHE_DIR / f"run-{mode}"
    # Indexing always starts from an empty data root; latency/isolation alone reuse its index.
    if "indexing" in sections:
        shutil.rmtree(run_root, ignore_errors=True)
    run_data = run_root / "data"
    # Quality indexes persist between runs: their embedding caches make a re-run cheap, and
    # each run still re-parses every file (full=True), so chunking changes are always picked up.
    quality_data = CACHE_DIR / ("data" if mode == "full" else "data-smoke")
    scale_key, scale_sub = knobs["scale_corpus"]
    scale_project = run_root / "scale" / scale_key
    for key in {scale_key, knobs["other_corpus"][0], "requests"} | (
        {"click", "flask", "rxjs"} if not smoke else set()
    ):
        doc["corpora"][key] = fetch(key).describe()

    def section(name: str, fn: Any) -> None:
        if name not in sections:
            return
        log.info("== %s (%s)", name, _command(mode, name))
        t0 = time.perf_counter()
        try:
            doc["sections"][name] = fn()
            doc["sections"][name]["section_seconds"] = round(time.perf_counter() - t0, 1)
        except Exception as exc:  # one broken section must not hide the others' numbers
            log.exception("section %s failed", name)
            doc["errors"][name] = f"{type(exc).__name__}: {exc}"
        # Written after every section, so a long run that is stopped keeps what it measured.
        doc["seconds"] = round(time.perf_counter() - started, 1)
        _write(doc, out_dir)

    def needs_scale_index() -> None:
        if not scale_project.is_dir():
            if scale_sub:
                scale.prepare_small_tree(scale_project, scale_key, scale_sub)
            else:
                scale.prepare_scale_tree(scale_project, scale_key)
        with harness.data_root(run_data) as settings:
            harness.index(scale_project, settings)

    def do_indexing() -> dict[str, Any]:
        if scale_sub:
            scale.prepare_small_tree(scale_project, scale_key, scale_sub)
        else:
            scale.prepare_scale_tree(scale_project, scale_key)
        with harness.data_root(run_data) as settings:
            # Never seeded: this section measures real embedding from an empty cache.
            return indexing.run_indexing(scale_project, settings)

    def do_latency() -> dict[str, Any]:
        needs_scale_index()
        out: dict[str, Any] = {"tiers": {}}
        with harness.data_root(run_data) as settings:
            base_chunks = _chunk_count(scale_project, run_data)
            out["tiers"][f"{base_chunks}"] = measure(scale_project, base_chunks, "real vectors")
            replica = run_root / "replicated" / f"{scale_key}-x{knobs['replicas']}"
            scale.replicate_tree(scale_project, replica, knobs["replicas"])
            real = harness.shared_embedder(settings)
            seed = scale.embed_cache_of(scale_project, run_data, real.model_key)
            replay = scale.ReplayEmbedder(real, seed)
            from local_memory_indexer.pipeline import index_project

            t0 = time.perf_counter()
            summary = index_project(replica, settings=settings, embedder=replay).to_dict()
            build = {
                "seconds": round(time.perf_counter() - t0, 1),
                "phases": summary["seconds"],
                "replayed_vectors": replay.replayed,
                "embedded_vectors": replay.embedded,
            }
            chunks = summary["chunks_total"]
            tier = measure(replica, chunks, f"x{knobs['replicas']} replication of real vectors")
            tier["build"] = build
            out["tiers"][f"{chunks}"] = tier
        return out

    def measure(project: Path, chunks: int, vectors: str) -> dict[str, Any]:
        res = latency.measure_tier(
            project, run_data, n_warm=knobs["latency_queries"], cold_samples=knobs["cold_samples"]
        )
        res.update({"chunks": chunks, "vectors": vectors, "project": project.name})
        return res

    def do_isolation() -> dict[str, Any]:
        needs_scale_index()
        other_key, other_sub = knobs["other_corpus"]
        other = scale.prepare_small_tree(run_root / "other" / other_key, other_key, other_sub)
        # "Fresh" means no index at all, so the writer really embeds while the searcher is measured.
        from local_memory_shared.paths import project_paths

        shutil.rmtree(project_paths(run_data, other).dir, ignore_errors=True)
        res = isolation.run_isolation(scale_project, other, run_data, n_idle=knobs["isolation_idle"])
        res["project_chunks"] = _chunk_count(scale_project, run_data)
        return res

    def do_quality(fn: Any) -> Any:
        def inner() -> dict[str, Any]:
            with harness.data_root(quality_data) as settings:
                return fn(settings, smoke=smoke)

        return inner

    steps = {
        "indexing": do_indexing,
        "latency": do_latency,
        "isolation": do_isolation,
        "cosqa": do_quality(quality.run_cosqa),
        "docq": do_quality(quality.run_docq),
        "questions": do_quality(quality.run_questions),
        "semble": _semble,
    }
    # Sections run in the order given (--only), so the most wanted figures come first.
    for name in sections:
        section(name, steps[name])
    doc["seconds"] = round(time.perf_counter() - started, 1)
    doc["machine"]["load_average_end"] = machine_facts()["load_average"]
    _write(doc, out_dir)
    return doc


def _semble() -> dict[str, Any]:
    """The semble benchmark, both halves, three tools (bench/semble.py); run lines dropped."""
    from . import semble

    result = semble.run("all")
    for half in result["halves"].values():
        for name, res in half["tools"].items():
            log.info("semble %s", semble.render({name: res}, half["repos"], name))
            res.pop("lines", None)
    return result


def _chunk_count(project: Path, data_root: Path) -> int:
    import sqlite3

    from local_memory_shared.paths import project_paths

    conn = sqlite3.connect(f"file:{project_paths(data_root, project).state_db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
    finally:
        conn.close()


def _write(doc: dict[str, Any], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = doc["started_at"].replace(":", "").replace("-", "")
    text = json.dumps(doc, indent=1, sort_keys=False)
    (out_dir / f"{doc['mode']}-{stamp}.json").write_text(text)
    (out_dir / f"latest-{doc['mode']}.json").write_text(text)
    (out_dir / f"latest-{doc['mode']}.md").write_text(render_markdown(doc))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--smoke", action="store_true", help="tiny inputs, about two minutes (CI)")
    group.add_argument("--full", action="store_true", help="the real suite (make bench)")
    parser.add_argument(
        "--only",
        default=None,
        help=f"comma-separated sections: {','.join(SECTIONS + FULL_ONLY)} (smoke default: all but {','.join(FULL_ONLY)})",
    )
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="where results are written")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    known = SECTIONS + FULL_ONLY
    only = args.only or ",".join(SECTIONS if args.smoke else known)
    sections = [s.strip() for s in only.split(",") if s.strip()]
    unknown = sorted(set(sections) - set(known))
    if unknown:
        parser.error(f"unknown sections {unknown}; known: {', '.join(known)}")
    doc = run("smoke" if args.smoke else "full", sections, args.out)
    sys.stdout.write(render_text(doc))
    return 1 if doc["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
