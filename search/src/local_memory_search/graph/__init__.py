"""Read-only call-graph and import-graph queries: callers, callees, trace and imports.

The indexer stores definitions (``symbols``), call sites by callee *name* (``call_edges``) and
imports (``import_edges``); this package answers questions over them. One module per job:

- ``records``: the records (``Symbol``, ``CallEdge``, ``Resolution``), limits, warning codes, the
  JSON shapes and argument checks;
- ``cache``: the per-graph-version memo (``GraphCaches``, with ``clear()``);
- ``reader``: read-only SQL over the graph tables (``SqlReader``);
- ``scope``: what a file imports and the definitions of one name, indexed for resolution;
- ``resolve``: call resolution and its per-language policy (``GraphReader``);
- ``lookup``: a user's symbol name → definitions;
- ``traverse``: the one breadth-first traversal (``walk``) and its two step directions;
- ``calls`` (``callers``/``callees``), ``trace`` and ``imports``: the queries and their messages.

Every query is a plain function ``(conn, frozen query dataclass) -> GraphResult`` (``data`` dict and
a ``warnings`` tuple); ``data["status"]`` tells apart "not found", "ambiguous", "no callers", "only
dynamic call sites" and "no path within depth N". Traversals are cut at a node cap that is reported.
Resolutions are cached per graph version (``graph_version``), never across a change. The older
``find_callers(conn, name, depth)``-style functions stay as thin wrappers answering ``(data, warnings)``.
"""

from __future__ import annotations

from typing import Any

from .cache import GRAPH_CACHES, MAX_CACHED_GRAPHS, GraphCaches, clear_graph_cache
from .calls import CallQuery, callees, callers
from .imports import ImportQuery, imports
from .records import (
    DEFAULT_IMPORT_LIMIT,
    DEFAULT_MAX_NODES,
    DYNAMIC,
    EDGE_COLUMNS,
    MAX_AMBIGUOUS,
    MAX_DEPTH,
    MAX_LISTED_SITES,
    MODULE,
    SYMBOL_COLUMNS,
    TOO_AMBIGUOUS,
    TRACE_DEFAULT_DEPTH,
    TRACE_MAX_DEPTH,
    TRACE_MAX_VISITS,
    W_AMBIGUOUS_EDGES,
    W_DEPTH,
    W_DYNAMIC,
    W_FANOUT,
    W_OVERLOADS,
    W_TRUNCATED,
    W_UNRESOLVED,
    CallEdge,
    GraphResult,
    Resolution,
    Symbol,
)
from .resolve import GraphReader
from .trace import TraceQuery, trace

#: the pre-package name of ``EDGE_COLUMNS`` (the graph benchmark reads it)
_EDGE_COLUMNS = EDGE_COLUMNS

Answer = tuple[dict[str, Any], list[dict[str, str]]]

__all__ = [
    "DEFAULT_IMPORT_LIMIT",
    "DEFAULT_MAX_NODES",
    "DYNAMIC",
    "EDGE_COLUMNS",
    "GRAPH_CACHES",
    "MAX_AMBIGUOUS",
    "MAX_CACHED_GRAPHS",
    "MAX_DEPTH",
    "MAX_LISTED_SITES",
    "MODULE",
    "SYMBOL_COLUMNS",
    "TOO_AMBIGUOUS",
    "TRACE_DEFAULT_DEPTH",
    "TRACE_MAX_DEPTH",
    "TRACE_MAX_VISITS",
    "W_AMBIGUOUS_EDGES",
    "W_DEPTH",
    "W_DYNAMIC",
    "W_FANOUT",
    "W_OVERLOADS",
    "W_TRUNCATED",
    "W_UNRESOLVED",
    "CallEdge",
    "CallQuery",
    "GraphCaches",
    "GraphReader",
    "GraphResult",
    "ImportQuery",
    "Resolution",
    "Symbol",
    "TraceQuery",
    "callees",
    "callers",
    "clear_graph_cache",
    "find_callees",
    "find_callers",
    "get_import_graph",
    "imports",
    "resolved_call_edges",
    "trace",
    "trace_path",
]


def find_callers(
    conn: Any, symbol_name: str, depth: int = 1, *, max_nodes: int = DEFAULT_MAX_NODES
) -> Answer:
    """``callers`` answering ``(data, warnings)`` (the tool layer's shape)."""
    return callers(conn, CallQuery(symbol_name, depth, max_nodes)).as_tuple()


def find_callees(
    conn: Any, symbol_name: str, depth: int = 1, *, max_nodes: int = DEFAULT_MAX_NODES
) -> Answer:
    """``callees`` answering ``(data, warnings)``."""
    return callees(conn, CallQuery(symbol_name, depth, max_nodes)).as_tuple()


def trace_path(
    conn: Any, source_symbol: str, target_symbol: str, max_depth: int = TRACE_DEFAULT_DEPTH
) -> Answer:
    """``trace`` answering ``(data, warnings)``."""
    return trace(conn, TraceQuery(source_symbol, target_symbol, max_depth)).as_tuple()


def get_import_graph(conn: Any, file_path: str | None = None, *, limit: int = DEFAULT_IMPORT_LIMIT) -> Answer:
    """``imports`` answering ``(data, warnings)``."""
    return imports(conn, ImportQuery(file_path, limit)).as_tuple()


def resolved_call_edges(conn: Any) -> list[tuple[str, str, str, CallEdge]]:
    """Every static call site resolved: ``(caller id, callee id, resolution, edge)``; for audits and tests."""
    graph = GraphReader(conn)
    edges = [
        CallEdge(*row)
        for row in graph.query(
            f"SELECT {EDGE_COLUMNS} FROM call_edges WHERE dynamic = 0 ORDER BY file_path, line"
        )
    ]
    graph.prefetch(edges)
    out: list[tuple[str, str, str, CallEdge]] = []
    for edge in edges:
        resolution = graph.resolve(edge)
        caller = graph.caller_of(edge)
        for target in resolution.targets:
            out.append((caller.key, target.key, resolution.how, edge))
    return out
