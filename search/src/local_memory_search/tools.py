"""The search server's tool registry: one :class:`ToolSpec` per MCP tool, and ``call_tool``.

Adding a tool is one ``register(ToolSpec(...))`` call: a params model (a strict pydantic model)
and a function ``fn(params, settings) -> ToolResult``. Both the MCP server and the CLI run tools
only through :func:`call_tool`, i.e. the shared :meth:`ToolRegistry.call` boundary, so the same
mistake answers the same error code everywhere and a server keeps serving after any error.
"""

from __future__ import annotations

from typing import Any

from local_memory_shared.config import Settings, load_settings
from local_memory_shared.tooling import ImportedTool, ToolRegistry, ToolSpec

from . import api, graph_tools
from .params import (
    ContextPackParams,
    DoctorIndexParams,
    ExplainMatchParams,
    GetChunkParams,
    HealthCheckParams,
    IndexStatusParams,
    ReadChunkNeighborsParams,
    SearchHybridParams,
    SearchKeywordParams,
    SearchSemanticParams,
    SearchSimilarParams,
)

__all__ = ["REGISTRY", "TOOLS", "ToolSpec", "call_tool", "register"]

#: Every tool of ``local-memory-search``, in publication order.
REGISTRY: ToolRegistry[Settings] = ToolRegistry()
#: name → spec (the registry's own dict).
TOOLS: dict[str, ToolSpec[Settings]] = REGISTRY.specs


def register(spec: ToolSpec[Settings]) -> ToolSpec[Settings]:
    """Add a read-only tool to the registry (the searcher publishes nothing else)."""
    if not spec.read_only:
        raise ValueError(f"search tool {spec.name!r} must be read-only")
    return REGISTRY.register(spec)


def call_tool(name: str, args: Any = None, *, settings: Settings | None = None) -> dict[str, Any]:
    """Validate ``args``, run tool ``name`` and answer its envelope; never raises."""
    return REGISTRY.call(name, args, lambda: settings or load_settings())


#: The context pack, the diagnostics and the memory tools are imported on their first call
#: (``ImportedTool``): a server lists them from their argument models (``params``,
#: ``memory/params``) and its first search pays for none of their modules (about 0.07 s of CPU:
#: the diagnostics' gitignore and YAML parsers, the memory reader and search).
_DIAGNOSTICS = "local_memory_search.diagnostics"

# Publication order is seed 003's order (the manifest lists the tools as tools/list answers them).
register(
    ToolSpec(
        "search_hybrid",
        api.search_hybrid,
        SearchHybridParams,
        "Primary hybrid search: vector ANN + BM25 fused with weighted Reciprocal Rank Fusion, exact-identifier "
        "and recency boosts, relevance-gap filtering. Use for most questions about the code.",
    )
)
register(
    ToolSpec(
        "search_semantic",
        api.search_semantic,
        SearchSemanticParams,
        "Pure vector (semantic) search with the index's own embedding model: finds code by meaning.",
    )
)
register(
    ToolSpec(
        "search_keyword",
        api.search_keyword,
        SearchKeywordParams,
        "Pure BM25 full-text search: best for exact identifiers, error strings and rare words.",
    )
)
register(
    ToolSpec(
        "retrieve_context_pack",
        ImportedTool("local_memory_search.context", "retrieve_context_pack"),
        ContextPackParams,
        "Token-budgeted context pack for an LLM prompt: hybrid hits grouped by file in rank order, neighbour "
        "chunks added, overlapping ranges merged, never longer than max_chars; returns the structured excerpts "
        "and one ready-to-paste text block. rerank=true asks the Ollama re-ranker (RERANK_MODEL) first.",
    )
)
register(
    ToolSpec(
        "read_chunk_neighbors",
        api.read_chunk_neighbors,
        ReadChunkNeighborsParams,
        "Load the chunks just before and after a chunk in the same file (before/after up to 5).",
    )
)
register(
    ToolSpec(
        "get_chunk",
        api.get_chunk,
        GetChunkParams,
        "Fetch one chunk by its stable chunk_id, whole text unless max_chars is set.",
    )
)
register(
    ToolSpec(
        "search_similar",
        api.search_similar,
        SearchSimilarParams,
        "Find chunks similar to a file, or to one function in it, using their stored vectors.",
    )
)
register(
    ToolSpec(
        "explain_match",
        api.explain_match,
        ExplainMatchParams,
        "Score breakdown of one search_hybrid result: each leg's rank and raw score, RRF contributions, "
        "identifier and recency boosts, final score.",
    )
)
register(
    ToolSpec(
        "health_check",
        ImportedTool(_DIAGNOSTICS, "health_check_tool"),
        HealthCheckParams,
        "Readiness of a project's index: LanceDB, table schema_version, FTS index, provenance, embedding backend "
        "(one real encode), SQLite state. Answers ready / degraded / not_ready with reasons; verbose adds which "
        "tools work now and diagnostics (versions, paths, CPU features).",
    )
)
register(
    ToolSpec(
        "index_status",
        ImportedTool(_DIAGNOSTICS, "index_status_tool"),
        IndexStatusParams,
        "What is indexed (files, chunks per language, model and dimension, last index time) and how fresh it is: "
        "files changed, new and deleted since the last index, and the stale ratio.",
    )
)
register(
    ToolSpec(
        "doctor_index",
        ImportedTool(_DIAGNOSTICS, "doctor_index_tool"),
        DoctorIndexParams,
        "Read-only consistency checks between SQLite and LanceDB (row counts per file, orphans), FTS coverage, "
        "vector dimension vs provenance, schema_version, graph edges; each finding has a severity and the exact "
        "local-memory-indexer command that fixes it. auto_fix is accepted and does nothing.",
    )
)
register(
    ToolSpec(
        "find_callers",
        graph_tools.find_callers_tool,
        graph_tools.FindCallersParams,
        "Definitions that call symbol_name, up to depth 1-3 hops upstream (function-to-function edges from "
        "tree-sitter). Ambiguous names list their candidates; 'not found', 'no callers' and 'unresolved dynamic "
        "calls' are different answers. Each node has file_path, line, qualified_name and chunk_id for get_chunk.",
    )
)
register(
    ToolSpec(
        "find_callees",
        graph_tools.find_callees_tool,
        graph_tools.FindCalleesParams,
        "Definitions that symbol_name calls, up to depth 1-3 hops downstream; external and dynamic calls are "
        "counted, not invented. Each node has file_path, line, qualified_name and chunk_id.",
    )
)
register(
    ToolSpec(
        "get_import_graph",
        graph_tools.get_import_graph_tool,
        graph_tools.GetImportGraphParams,
        "Import/dependency edges: for one file (what it imports and who imports it) or, with file_path omitted, "
        "the project-wide graph; imports are resolved to project files where possible.",
    )
)
register(
    ToolSpec(
        "trace_path",
        graph_tools.trace_path_tool,
        graph_tools.TracePathParams,
        "Shortest call chain from source_symbol to target_symbol (names or qualified paths); says so, with the "
        "depth searched, when no path exists.",
    )
)
from .memory import register as _memory_tools  # noqa: E402,F401  (registers the memory tools)
