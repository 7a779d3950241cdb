"""Glue between the benchmarks and the product: index a folder, call a search tool, read hits.

The benchmarks drive the real indexer (``local_memory_indexer.pipeline.index_project``) and the
real searcher (``local_memory_search.tools.call_tool``, the same function the MCP server
calls), in-process unless a benchmark needs a separate process.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from local_memory_shared.config import Settings, load_settings
from local_memory_shared.paths import project_paths

log = logging.getLogger(__name__)

SEARCH_TOOLS = ("search_keyword", "search_semantic", "search_hybrid")
#: Results per page; seed 003 caps ``limit`` at 50, so depth 100 takes two pages.
PAGE = 50


class BenchError(RuntimeError):
    """A benchmark could not run (the product answered an error, or an input is missing)."""


@dataclass(frozen=True)
class Hit:
    """Where one search result points."""

    file_path: str
    start_line: int
    end_line: int
    chunk_id: str = ""
    symbol_name: str = ""


@contextmanager
def data_root(path: Path) -> Iterator[Settings]:
    """Point ``LOCAL_VECTOR_SEARCH_DATA_ROOT`` at ``path`` for the duration (the searcher reads the env)."""
    old = os.environ.get("LOCAL_VECTOR_SEARCH_DATA_ROOT")
    path.mkdir(parents=True, exist_ok=True)
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(path)
    try:
        yield load_settings()
    finally:
        if old is None:
            os.environ.pop("LOCAL_VECTOR_SEARCH_DATA_ROOT", None)
        else:
            os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = old


_EMBEDDERS: dict[tuple[str, str | None], Any] = {}


def shared_embedder(settings: Settings) -> Any:
    """One embedder per backend/model for the whole run (loading the ONNX model takes seconds)."""
    from local_memory_shared.embedding import embedder_from_settings

    key = (settings.embed_backend, settings.embed_model)
    if key not in _EMBEDDERS:
        _EMBEDDERS[key] = embedder_from_settings(settings)
    return _EMBEDDERS[key]


def seed_embed_cache(project: Path, settings: Settings, model_key: str) -> int:
    """Copy cached vectors of ``model_key`` from every other index under ``bench/cache`` into ``project``'s.

    The indexer's embedding cache is keyed by (model, hash of the exact text embedded), so a
    seeded entry is precisely the vector the same model gives the same text: quality figures
    are unchanged, only the time to embed again is saved. Returns the rows added.
    """
    from local_memory_shared.state import open_state_rw

    from .corpora import CACHE_DIR

    target = project_paths(settings.data_root, project).state_db
    donors = sorted(
        path
        for path in {*CACHE_DIR.glob("*/projects/*/state.db"), *CACHE_DIR.glob("*/*/projects/*/state.db")}
        # Replicated latency corpora (``<name>-x10``) only hold copies of vectors found elsewhere.
        if not re.search(r"-x\d+-[0-9a-f]{12}$", path.parent.name)
    )
    conn = open_state_rw(target)
    added = 0
    try:
        for donor in donors:
            if donor.resolve() == target.resolve():
                continue
            try:
                conn.execute("ATTACH DATABASE ? AS donor", (f"file:{donor}?mode=ro",))
            except sqlite3.Error:
                continue
            try:
                before = conn.total_changes
                conn.execute(
                    "INSERT OR IGNORE INTO main.embed_cache(model_key, text_hash, vector) "
                    "SELECT model_key, text_hash, vector FROM donor.embed_cache WHERE model_key = ?",
                    (model_key,),
                )
                added += conn.total_changes - before
            except sqlite3.Error as exc:
                log.debug("no cache from %s: %s", donor, exc)
            finally:
                conn.execute("DETACH DATABASE donor")
    finally:
        conn.close()
    return added


def index(
    project: Path, settings: Settings, *, full: bool = False, fresh_embedder: bool = False, seed: bool = False
) -> dict[str, Any]:
    """Index ``project`` with the real pipeline; returns the IndexSummary as a dict.

    ``seed`` first copies matching cached vectors from other bench indexes (see :func:`seed_embed_cache`).
    """
    from local_memory_indexer.pipeline import index_project

    embedder = None if fresh_embedder else shared_embedder(settings)
    if seed:
        key = (embedder or shared_embedder(settings)).model_key
        log.info("seeded %d cached vectors into %s", seed_embed_cache(project, settings, key), project.name)
    summary = index_project(project, settings=settings, full=full, embedder=embedder)
    out = summary.to_dict()
    if out.get("errors"):
        log.warning(
            "indexing %s reported %d errors, first: %s", project, len(out["errors"]), out["errors"][0]
        )
    return out


def indexed_files(project: Path, settings: Settings) -> list[str]:
    """Repo-relative paths the index holds (read from the state DB), so baselines see the same files."""
    paths = project_paths(settings.data_root, project)
    conn = sqlite3.connect(f"file:{paths.state_db}?mode=ro", uri=True)
    try:
        return sorted(row[0] for row in conn.execute("SELECT path FROM files"))
    finally:
        conn.close()


def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call a search tool in-process exactly as the MCP server would; raise BenchError on an error envelope."""
    from local_memory_search.tools import call_tool

    envelope = call_tool(tool, args)
    if not envelope.get("ok", False):
        raise BenchError(f"{tool} answered an error: {envelope.get('error')}")
    return envelope


def hit_from(result: dict[str, Any]) -> Hit:
    """Read a result's location whether the fields are flat or nested under ``chunk``."""
    nested = result.get("chunk")
    src: dict[str, Any] = nested if isinstance(nested, dict) else result
    return Hit(
        file_path=str(src.get("file_path", "")),
        start_line=int(src.get("start_line") or 0),
        end_line=int(src.get("end_line") or 0),
        chunk_id=str(src.get("chunk_id", "")),
        symbol_name=str(src.get("symbol_name") or ""),
    )


def search(
    tool: str, project: Path, query: str, *, depth: int = PAGE, **params: Any
) -> tuple[list[Hit], list[str]]:
    """Ranked hits of ``tool`` down to ``depth`` (paging by 50) and the warning codes seen."""
    hits: list[Hit] = []
    warnings: list[str] = []
    offset = 0
    while offset < depth:
        limit = min(PAGE, depth - offset)
        env = call(
            tool, {"project_path": str(project), "query": query, "limit": limit, "offset": offset, **params}
        )
        results = env.get("results") or []
        hits.extend(hit_from(r) for r in results)
        warnings.extend(w.get("code", "") for w in env.get("warnings", []))
        if len(results) < limit:
            break
        offset += limit
    return hits, warnings


def files_in_order(hits: list[Hit]) -> list[str]:
    """Distinct files of ``hits`` in first-seen order (file-granularity ranking)."""
    seen: dict[str, None] = {}
    for h in hits:
        seen.setdefault(h.file_path, None)
    return list(seen)


def with_data_root(settings: Settings, root: Path) -> Settings:
    """A copy of ``settings`` pointing at another data root."""
    return replace(settings, data_root=root)
