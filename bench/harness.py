"""Glue between the benchmarks and the product: index a folder, call a search tool, read hits.

The benchmarks drive the real indexer (``local_memory_indexer.pipeline.index_project``) and the
real searcher (``local_memory_search.tools.call_tool``, the same function the MCP server
calls), in-process unless a benchmark needs a separate process.
"""

from __future__ import annotations

import logging
import os
import shutil
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


def index(
    project: Path,
    settings: Settings,
    *,
    full: bool = False,
    fresh_embedder: bool = False,
    rebuild: bool = False,
) -> dict[str, Any]:
    """Index ``project`` with the real pipeline; returns the IndexSummary as a dict.

    A bench index is disposable: one the current build refuses (another schema build or model)
    is dropped and rebuilt rather than failing the run.
    """
    from local_memory_indexer.pipeline import index_project
    from local_memory_shared.errors import ProvenanceMismatch

    embedder = None if fresh_embedder else shared_embedder(settings)
    try:
        summary = index_project(project, settings=settings, full=full, rebuild=rebuild, embedder=embedder)
    except ProvenanceMismatch as exc:
        log.warning("dropping the bench index of %s: %s", project.name, exc)
        shutil.rmtree(project_paths(settings.data_root, project).dir, ignore_errors=True)
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
