"""``trace``: the shortest call chain between two definitions (bidirectional breadth-first search)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from local_memory_shared.envelope import warning

from .records import (
    TRACE_DEFAULT_DEPTH,
    TRACE_MAX_DEPTH,
    TRACE_MAX_VISITS,
    W_AMBIGUOUS_EDGES,
    W_TRUNCATED,
    CallEdge,
    GraphResult,
    Symbol,
    Warnings,
    check_depth,
    check_symbol_name,
    edge_json,
    not_resolved_answer,
    overload_warning,
    result,
)
from .resolve import GraphReader
from .traverse import callee_hops, caller_hops

#: parent link of a traced definition: (neighbour key, call site, resolution)
_Link = tuple[str, CallEdge, str]


@dataclass(frozen=True)
class TraceQuery:
    """A ``trace`` question: from which definition to which, within how many calls."""

    source_symbol: str
    target_symbol: str
    max_depth: int = TRACE_DEFAULT_DEPTH


@dataclass
class _Search:
    """Both halves of a bidirectional search: parent links and depth of every reached definition."""

    forward: dict[str, _Link | None]
    backward: dict[str, _Link | None]
    depth_of: dict[tuple[str, str], int] = field(default_factory=dict)
    visits: int = 0
    truncated: bool = False


def trace(conn: Any, query: TraceQuery) -> GraphResult:
    """The shortest call chain from ``query.source_symbol`` to ``query.target_symbol``."""
    source_spec = check_symbol_name(query.source_symbol, "source_symbol")
    target_spec = check_symbol_name(query.target_symbol, "target_symbol")
    max_depth = check_depth(query.max_depth, "max_depth", TRACE_MAX_DEPTH)
    graph = GraphReader(conn)
    warnings: Warnings = []
    base: dict[str, Any] = {
        "source_query": source_spec,
        "target_query": target_spec,
        "max_depth": max_depth,
        "path": [],
        "hops": [],
    }
    ends = _ends(graph, {"source": source_spec, "target": target_spec}, base, warnings)
    if isinstance(ends, dict):
        return result(ends, warnings)
    source, target = ends
    base.update(source=source.node(), target=target.node())
    if source.key == target.key:
        base.update(status="ok", path=[source.node()], hops=[], length=0)
        base["message"] = "source and target are the same definition"
        return result(base, warnings)
    search = _Search(forward={source.key: None}, backward={target.key: None})
    search.depth_of.update({("f", source.key): 0, ("b", target.key): 0})
    meeting = _meet(graph, search, source.key, target.key, max_depth)
    if meeting is None:
        return result(_no_path(base, search, source, target, max_depth, warnings), warnings)
    return result(_path_answer(graph, base, search, meeting, warnings), warnings)


def _ends(
    graph: GraphReader, specs: dict[str, str], base: dict[str, Any], warnings: Warnings
) -> tuple[Symbol, Symbol] | dict[str, Any]:
    """The source and target definitions, or the answer saying which side names none or several."""
    ends: dict[str, Symbol] = {}
    for side, spec in specs.items():
        lookup = graph.lookup(spec)
        if lookup.status != "ok":
            answer = not_resolved_answer(lookup, spec, dict(base))
            answer["side"] = side
            answer["message"] = f"{side}: {answer['message']}"
            return answer
        overload_warning(lookup, warnings)
        ends[side] = lookup.symbols[0]
    return ends["source"], ends["target"]


def _meet(graph: GraphReader, search: _Search, source: str, target: str, max_depth: int) -> str | None:
    """Widen the smaller frontier until the two searches meet; the key where they meet, if they do.

    Searching from both ends touches far fewer definitions than a one-sided search when the graph fans out.
    """
    forward_frontier, backward_frontier = [source], [target]
    hops_searched = 0
    while forward_frontier and backward_frontier and hops_searched < max_depth:
        go_forward = len(forward_frontier) <= len(backward_frontier)
        frontier = forward_frontier if go_forward else backward_frontier
        if search.visits + len(frontier) > TRACE_MAX_VISITS:
            search.truncated = True
            return None
        search.visits += len(frontier)
        if go_forward:
            hops = callee_hops(graph, frontier)
            seen, other, tag = search.forward, search.backward, "f"
        else:
            hops = caller_hops(graph, frontier)
            seen, other, tag = search.backward, search.forward, "b"
        next_frontier: list[str] = []
        meets: list[str] = []
        for hop in hops:
            key = hop.neighbour.key
            if key in seen:
                continue
            graph.remember([hop.neighbour])
            seen[key] = (hop.origin, hop.edge, hop.how)
            search.depth_of[(tag, key)] = search.depth_of[(tag, hop.origin)] + 1
            next_frontier.append(key)
            if key in other:
                meets.append(key)
        if go_forward:
            forward_frontier = next_frontier
        else:
            backward_frontier = next_frontier
        hops_searched += 1
        if meets:
            return min(meets, key=lambda k: search.depth_of[("f", k)] + search.depth_of[("b", k)])
    return None


def _no_path(
    base: dict[str, Any], search: _Search, source: Symbol, target: Symbol, max_depth: int, warnings: Warnings
) -> dict[str, Any]:
    reason = (
        f"gave up after {search.visits} definitions (the graph fans out too far to be sure)"
        if search.truncated
        else f"searched every call chain up to {max_depth} hop(s)"
    )
    base.update(
        status="no_path",
        truncated=search.truncated,
        message=f"no call path from {source.key} to {target.key}: {reason}",
    )
    if search.truncated:
        warnings.append(warning(W_TRUNCATED, f"trace stopped after {search.visits} definitions"))
    return base


def _path_answer(
    graph: GraphReader, base: dict[str, Any], search: _Search, meeting: str, warnings: Warnings
) -> dict[str, Any]:
    chain: list[str] = [meeting]
    hops: list[dict[str, Any]] = []
    key = meeting
    while (parent := search.forward[key]) is not None:
        hops.append(edge_json(parent[1], parent[0], key, parent[2]))
        key = parent[0]
        chain.append(key)
    chain.reverse()
    hops.reverse()
    key = meeting
    while (parent := search.backward[key]) is not None:
        hops.append(edge_json(parent[1], key, parent[0], parent[2]))
        key = parent[0]
        chain.append(key)
    path = [graph.rows_of(k)[0].node() for k in chain]
    ambiguous = sum(h["resolution"] == "ambiguous" for h in hops)
    if ambiguous:
        warnings.append(
            warning(
                W_AMBIGUOUS_EDGES,
                f"{ambiguous} hop(s) of this path go through a call that matches several definitions",
            )
        )
    base.update(
        status="ok", path=path, hops=hops, length=len(hops), message=f"{len(hops)}-hop call path found"
    )
    return base
