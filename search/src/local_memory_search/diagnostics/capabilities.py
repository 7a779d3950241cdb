"""Which tools work now and how well: one entry per tool in the registry, from what the checks learned.

The tool list comes from ``local_memory_search.tools.TOOLS`` (imported inside the function: the
registry imports this package). Each tool is classed by what it needs (vectors + encoder, the
FTS index, the chunk mirror, the graph tables, nothing); a tool the table below does not know is
reported ``unknown`` rather than guessed ``ok``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .common import DEGRADED, OK

UNAVAILABLE, UNKNOWN = "unavailable", "unknown"
Capability = dict[str, str]


@dataclass
class Facts:
    """What the health checks learned about one index; filled as the checks run (hence mutable)."""

    project: str
    indexed: bool = False
    lance_ok: bool = False
    mirror_rows: int = 0
    fts_ok: bool = False
    vectors_ok: bool = True
    embedding_ok: bool = False
    embedding_reason: str = ""
    provenance: str = "unknown"  # recorded | inferred | unknown
    dimension_ok: bool = True
    symbols: int = 0
    import_edges: int = 0
    rerank_ok: bool | None = None
    rerank_reason: str = ""


def cap(status: str, reason: str = "") -> Capability:
    """One capability entry."""
    return {"status": status, "reason": reason} if reason else {"status": status}


def _semantic_reasons(f: Facts) -> list[str]:
    reasons = []
    if not f.lance_ok:
        reasons.append("LanceDB unavailable")
    if not f.embedding_ok:
        reasons.append(f"embedding backend down ({f.embedding_reason})")
    if not f.dimension_ok:
        reasons.append("provenance dimension differs from the stored vectors")
    return reasons


def _keyword_reason(f: Facts) -> str:
    return "" if f.lance_ok and f.fts_ok else "no FTS index: SQLite LIKE over the chunk mirror"


def _hybrid(f: Facts) -> Capability:
    semantic, keyword = _semantic_reasons(f), _keyword_reason(f)
    if semantic:
        return cap(DEGRADED, "keyword-only: " + "; ".join(semantic))
    if keyword:
        return cap(DEGRADED, keyword)
    if not f.vectors_ok:
        return cap(DEGRADED, "some stored vectors are damaged (NaN or not unit norm)")
    if f.provenance == "inferred":
        return cap(DEGRADED, "query encoder inferred from the vector dimension (index_provenance_inferred)")
    return cap(OK)


def _semantic(f: Facts) -> Capability:
    reasons = _semantic_reasons(f)
    if reasons:
        return cap(UNAVAILABLE, "; ".join(reasons))
    return cap(OK) if f.vectors_ok else cap(DEGRADED, "some stored vectors are damaged")


def _pack(f: Facts) -> Capability:
    out = dict(_hybrid(f))
    if f.rerank_ok is False:
        out["rerank"] = "unavailable: " + f.rerank_reason
    return out


def _graph(f: Facts) -> Capability:
    return cap(OK) if f.symbols else cap(DEGRADED, "no symbols recorded: answers are empty")


#: What each known tool needs, as a function of the facts.
RULES: dict[str, Callable[[Facts], Capability]] = {
    "search_hybrid": _hybrid,
    "explain_match": _hybrid,
    "retrieve_context_pack": _pack,
    "search_semantic": _semantic,
    "search_keyword": lambda f: cap(DEGRADED, _keyword_reason(f)) if _keyword_reason(f) else cap(OK),
    "read_chunk_neighbors": lambda f: cap(OK) if f.mirror_rows else cap(DEGRADED, "chunk mirror empty"),
    "get_chunk": lambda f: cap(OK) if f.mirror_rows or f.lance_ok else cap(UNAVAILABLE, "no chunk rows"),
    "search_similar": lambda f: cap(OK) if f.lance_ok else cap(UNAVAILABLE, "needs stored vectors (LanceDB)"),
    "find_callers": _graph,
    "find_callees": _graph,
    "trace_path": _graph,
    "get_import_graph": lambda f: (
        cap(OK) if f.import_edges else cap(DEGRADED, "no import edges recorded: answers are empty")
    ),
    "index_status": lambda f: cap(OK),
}
#: Tools that answer whether or not anything is indexed.
ALWAYS_AVAILABLE = frozenset({"health_check", "doctor_index"})


def capabilities(f: Facts) -> dict[str, Capability]:
    """Per registered tool: ``ok`` / ``degraded`` / ``unavailable`` / ``unknown`` and why."""
    from ..tools import TOOLS  # lazy: the registry imports this package

    out: dict[str, Capability] = {}
    for name in TOOLS:
        if name in ALWAYS_AVAILABLE:
            out[name] = cap(OK)
        elif name not in RULES:
            out[name] = cap(UNKNOWN, "health_check has no capability rule for this tool")
        elif not f.indexed:
            out[name] = cap(UNAVAILABLE, "nothing is published for this project yet")
        else:
            out[name] = RULES[name](f)
    return out
