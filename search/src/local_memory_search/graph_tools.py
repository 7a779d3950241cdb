"""The four graph tools of seed 003 as registry entries: thin wrappers over ``graph``'s SQL queries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from local_memory_shared.config import Settings
from local_memory_shared.tooling import NotBlank, ToolResult
from pydantic import Field

from . import graph
from .params import _Base
from .runtime import register_cache
from .store import open_index

# The graph library keeps a per-version resolution cache; the runtime owns its reset.
register_cache("graph", graph.clear_graph_cache)

GraphAnswer = tuple[dict[str, Any], list[dict[str, str]]]


class FindCallersParams(_Base):
    """find_callers: who calls a symbol."""

    symbol_name: NotBlank = Field(
        ...,
        min_length=1,
        description="Callee to reverse-lookup: a name (connect), a qualified name (Pool.connect) or "
        "path/to/file.py:Pool.connect to pick one definition.",
    )
    depth: int = Field(1, ge=1, le=3, description="Hop depth (1-3).")


class FindCalleesParams(_Base):
    """find_callees: what a symbol calls."""

    symbol_name: NotBlank = Field(
        ...,
        min_length=1,
        description="Caller symbol: a name, a qualified name (Pool.connect) or path/to/file.py:Pool.connect.",
    )
    depth: int = Field(1, ge=1, le=3, description="Hop depth (1-3).")


class GetImportGraphParams(_Base):
    """get_import_graph: import edges of one file or of the whole project."""

    file_path: str | None = Field(
        None, min_length=1, description="Repo-relative path; omit for the project-wide graph."
    )


class TracePathParams(_Base):
    """trace_path: a call chain from one symbol to another."""

    source_symbol: NotBlank = Field(..., min_length=1, description="Start symbol name or qualified path.")
    target_symbol: NotBlank = Field(..., min_length=1, description="End symbol name or qualified path.")
    max_depth: int = Field(
        graph.TRACE_DEFAULT_DEPTH, ge=1, le=10, description="Longest chain searched, in calls (1-10)."
    )


def _run(project_path: str | None, settings: Settings, query: Callable[[Any], GraphAnswer]) -> ToolResult:
    with open_index(project_path, settings) as reader:
        data, warnings = query(reader.conn)
        return ToolResult(data=data, warnings=[*reader.warnings, *warnings])


def find_callers_tool(params: FindCallersParams, settings: Settings) -> ToolResult:
    """The find_callers tool."""
    return _run(
        params.project_path, settings, lambda conn: graph.find_callers(conn, params.symbol_name, params.depth)
    )


def find_callees_tool(params: FindCalleesParams, settings: Settings) -> ToolResult:
    """The find_callees tool."""
    return _run(
        params.project_path, settings, lambda conn: graph.find_callees(conn, params.symbol_name, params.depth)
    )


def get_import_graph_tool(params: GetImportGraphParams, settings: Settings) -> ToolResult:
    """The get_import_graph tool."""
    return _run(params.project_path, settings, lambda conn: graph.get_import_graph(conn, params.file_path))


def trace_path_tool(params: TracePathParams, settings: Settings) -> ToolResult:
    """The trace_path tool."""
    return _run(
        params.project_path,
        settings,
        lambda conn: graph.trace_path(conn, params.source_symbol, params.target_symbol, params.max_depth),
    )
