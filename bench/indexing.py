"""Indexing throughput by phase on the scale corpus, a no-change re-index and a one-file change.

Phase seconds come from the pipeline's own ``IndexSummary.seconds`` (walk, parse, graph, embed,
write, index); files/s and chunks/s divide the run's files parsed and chunks written by each
phase's time. The embedding model is loaded before timing starts (that one-off load is
reported separately).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from local_memory_shared.config import Settings

from . import harness

#: A function appended to one file for the one-file-change run.
CHANGE_SNIPPET = '''

def _bench_added_helper(values):
    """Return the values sorted and without duplicates (added by the benchmark)."""
    return sorted(set(values))
'''


def _rates(summary: dict[str, Any], wall: float) -> dict[str, Any]:
    files = summary.get("files_parsed", 0)
    chunks = summary.get("chunks_written", 0)
    phases = {}
    for phase, seconds in (summary.get("seconds") or {}).items():
        phases[phase] = {
            "seconds": round(seconds, 3),
            "files_per_s": round(files / seconds, 1) if seconds > 0 else None,
            "chunks_per_s": round(chunks / seconds, 1) if seconds > 0 else None,
        }
    embed = phases.get("embed")
    if embed and embed["seconds"] > 0:
        # Cache hits cost almost nothing; the model's rate is what was really embedded per second.
        embed["embedded_chunks_per_s"] = round((summary.get("chunks_embedded") or 0) / embed["seconds"], 1)
    return {
        "wall_seconds": round(wall, 2),
        "files_seen": summary.get("files_seen"),
        "files_parsed": files,
        "files_unchanged": summary.get("files_unchanged"),
        "chunks_written": chunks,
        "chunks_embedded": summary.get("chunks_embedded"),
        "chunks_reused": summary.get("chunks_reused"),
        "chunks_total": summary.get("chunks_total"),
        "files_per_s": round(files / wall, 1) if wall > 0 else None,
        "chunks_per_s": round(chunks / wall, 1) if wall > 0 else None,
        "phases": phases,
        "languages": summary.get("languages"),
        "errors": len(summary.get("errors") or []),
    }


def pick_change_target(project: Path) -> Path:
    """A mid-sized Python source file to edit (deterministic)."""
    candidates = sorted(
        p for p in project.rglob("*.py") if "test" not in p.as_posix() and 4_000 < p.stat().st_size < 40_000
    )
    if not candidates:
        candidates = sorted(project.rglob("*.py"))
    return candidates[len(candidates) // 2]


def run_indexing(project: Path, settings: Settings) -> dict[str, Any]:
    """Full index, no-change re-index and one-file-change re-index of ``project``."""
    t0 = time.perf_counter()
    harness.shared_embedder(settings).embed_documents(["warm up the model"])
    model_load = time.perf_counter() - t0
    out: dict[str, Any] = {
        "project": project.name,
        "model_load_seconds": round(model_load, 2),
    }
    t0 = time.perf_counter()
    full = harness.index(project, settings)
    out["full"] = _rates(full, time.perf_counter() - t0)
    t0 = time.perf_counter()
    again = harness.index(project, settings)
    out["no_change"] = _rates(again, time.perf_counter() - t0)
    target = pick_change_target(project)
    # Replace (not append to) the hard link, so the pinned source tree is never modified.
    text = target.read_text(encoding="utf-8")
    target.unlink()
    target.write_text(text + CHANGE_SNIPPET, encoding="utf-8")
    t0 = time.perf_counter()
    changed = harness.index(project, settings)
    out["one_file_change"] = _rates(changed, time.perf_counter() - t0)
    out["one_file_change"]["file"] = target.relative_to(project).as_posix()
    return out
