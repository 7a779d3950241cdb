"""``callers`` and ``callees``: who calls a definition, and what it calls, up to ``depth`` hops."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from local_memory_shared.envelope import warning

from .records import (
    DEFAULT_MAX_NODES,
    MAX_AMBIGUOUS,
    MAX_DEPTH,
    MAX_LISTED_SITES,
    W_AMBIGUOUS_EDGES,
    W_DEPTH,
    W_DYNAMIC,
    W_FANOUT,
    W_UNRESOLVED,
    CallEdge,
    GraphResult,
    Symbol,
    Warnings,
    check_cap,
    check_depth,
    check_symbol_name,
    not_resolved_answer,
    overload_warning,
    result,
    site_json,
)
from .resolve import GraphReader
from .traverse import CalleeNotes, Walk, callee_hops, caller_hops, walk


@dataclass(frozen=True)
class CallQuery:
    """A ``callers`` / ``callees`` question: a symbol name and how far to walk."""

    symbol_name: str
    depth: int = 1
    max_nodes: int = DEFAULT_MAX_NODES


def _checked(query: CallQuery) -> CallQuery:
    """``query`` with its fields validated (``InvalidArgument`` names the bad one)."""
    spec = check_symbol_name(query.symbol_name, "symbol_name")
    return CallQuery(
        spec, check_depth(query.depth, "depth", MAX_DEPTH), check_cap(query.max_nodes, "max_nodes")
    )


def _base(query: CallQuery, listing: str, **extra: Any) -> dict[str, Any]:
    """The answer's skeleton: the query, an empty ``listing`` (callers or callees), its sites and ``extra``."""
    return {
        "query": query.symbol_name,
        "depth": query.depth,
        listing: [],
        "edges": [],
        **extra,
        "dynamic_sites": [],
        "ambiguous_sites": [],
    }


def _start(graph: GraphReader, spec: str, base: dict[str, Any], warnings: Warnings) -> Symbol | None:
    """The one symbol ``spec`` names; None (with ``base`` answered) when there is no one symbol."""
    lookup = graph.lookup(spec)
    if lookup.status != "ok":
        not_resolved_answer(lookup, spec, base)
        return None
    overload_warning(lookup, warnings)
    base["symbol"] = lookup.symbols[0].node()
    return lookup.symbols[0]


def callers(conn: Any, query: CallQuery) -> GraphResult:
    """Definitions that call ``query.symbol_name``, up to ``query.depth`` (1..3) hops upstream."""
    query = _checked(query)
    graph = GraphReader(conn)
    warnings: Warnings = []
    base = _base(query, "callers", unresolved_sites=0)
    target = _start(graph, query.symbol_name, base, warnings)
    if target is None:
        return result(base, warnings)
    unresolved: dict[str, list[CallEdge]] = {}

    def step(frontier: list[str], level: int) -> list[Any]:
        return caller_hops(graph, frontier, unresolved if level == 1 else None)

    found = walk(graph, target, query.depth, query.max_nodes, step, upstream=True)
    dynamic_sites = [site_json(e, graph.caller_of(e)) for e in graph.dynamic_naming(target.name)]
    too_ambiguous = unresolved.get(target.key, [])
    base.update(
        callers=found.nodes,
        edges=found.edges,
        dynamic_sites=dynamic_sites[:MAX_LISTED_SITES],
        ambiguous_sites=[site_json(e, graph.caller_of(e)) for e in too_ambiguous[:MAX_LISTED_SITES]],
        unresolved_sites=len(too_ambiguous),
        truncated=found.truncated,
    )
    if too_ambiguous:
        warnings.append(
            warning(
                W_UNRESOLVED,
                f"{len(too_ambiguous)} call site(s) of {target.name!r} on receivers of unknown type match more "
                f"than {MAX_AMBIGUOUS} definitions and may call it: listed in ambiguous_sites, not as callers",
            )
        )
    base.update(_callers_status(graph, target, query.depth, found, len(too_ambiguous), len(dynamic_sites)))
    traversal_warnings(warnings, found, len(dynamic_sites), query)
    return result(base, warnings)


def _callers_status(
    graph: GraphReader, target: Symbol, depth: int, found: Walk, too_ambiguous: int, dynamic: int
) -> dict[str, str]:
    if found.nodes:
        return {
            "status": "ok",
            "message": f"{len(found.nodes)} caller(s) of {target.key} within depth {depth}",
        }
    if too_ambiguous:
        return {
            "status": "unresolved_ambiguous",
            "message": (
                f"no call resolves to {target.key}; {too_ambiguous} call site(s) of {target.name!r} could "
                f"(their receivers' types are unknown and over {MAX_AMBIGUOUS} definitions share the name)"
            ),
        }
    if dynamic:
        return {
            "status": "unresolved_dynamic",
            "message": (
                f"no static call reaches {target.key}; {dynamic} dynamic call site(s) name "
                f"{target.name!r} (getattr/send/obj[...]()) and may call it: see dynamic_sites"
            ),
        }
    anonymous = graph.count_anonymous_dynamic()
    note = (
        f"; {anonymous} dynamic call site(s) in the project could not be resolved and might call it"
        if anonymous
        else ""
    )
    return {
        "status": "no_callers",
        "message": f"{target.key} is defined but no call to it is in the index{note}",
    }


def callees(conn: Any, query: CallQuery) -> GraphResult:
    """Definitions ``query.symbol_name`` calls, up to ``query.depth`` (1..3) hops downstream."""
    query = _checked(query)
    graph = GraphReader(conn)
    warnings: Warnings = []
    base = _base(query, "callees", external=[])
    source = _start(graph, query.symbol_name, base, warnings)
    if source is None:
        return result(base, warnings)
    notes = CalleeNotes()

    def step(frontier: list[str], level: int) -> list[Any]:
        return callee_hops(graph, frontier, notes if level else None)

    found = walk(graph, source, query.depth, query.max_nodes, step, upstream=False)
    found.ambiguous_edges += notes.ambiguous_edges
    base.update(
        callees=found.nodes,
        edges=found.edges,
        external=notes.external[:MAX_LISTED_SITES],
        dynamic_sites=notes.dynamic_sites[:MAX_LISTED_SITES],
        ambiguous_sites=notes.ambiguous_sites[:MAX_LISTED_SITES],
        truncated=found.truncated,
    )
    if notes.ambiguous_sites:
        warnings.append(
            warning(
                W_UNRESOLVED,
                f"{len(notes.ambiguous_sites)} call site(s) on receivers of unknown type match more than "
                f"{MAX_AMBIGUOUS} definitions each: listed in ambiguous_sites, not followed",
            )
        )
    base.update(_callees_status(source, query.depth, found, notes))
    traversal_warnings(warnings, found, len(notes.dynamic_sites), query)
    return result(base, warnings)


def _callees_status(source: Symbol, depth: int, found: Walk, notes: CalleeNotes) -> dict[str, str]:
    if found.nodes:
        return {
            "status": "ok",
            "message": f"{source.key} reaches {len(found.nodes)} definition(s) within depth {depth}",
        }
    if notes.dynamic_sites or notes.ambiguous_sites:
        return {
            "status": "unresolved_dynamic" if notes.dynamic_sites else "unresolved_ambiguous",
            "message": f"{source.key} makes only dynamic, ambiguous or external calls; none resolves to one definition",
        }
    if notes.any_call:
        return {
            "status": "external_only",
            "message": f"{source.key} only calls code outside the project (standard library, packages): see external",
        }
    return {"status": "no_callees", "message": f"{source.key} makes no calls that the index recorded"}


def traversal_warnings(warnings: Warnings, found: Walk, dynamic_sites: int, query: CallQuery) -> None:
    """The warnings every traversal can raise: node cap, depth limit, ambiguous and dynamic calls."""
    if found.truncated:
        warnings.append(
            warning(W_FANOUT, f"stopped at {query.max_nodes} nodes: the graph fans out further than listed")
        )
    if found.depth_limited:
        hint = f"; raise depth (max {MAX_DEPTH})" if query.depth < MAX_DEPTH else ""
        warnings.append(warning(W_DEPTH, f"more definitions lie beyond depth {query.depth}{hint}"))
    if found.ambiguous_edges:
        warnings.append(
            warning(
                W_AMBIGUOUS_EDGES,
                f"{found.ambiguous_edges} call(s) match several definitions of the same name; they are listed with "
                "resolution='ambiguous' rather than guessed",
            )
        )
    if dynamic_sites:
        warnings.append(
            warning(W_DYNAMIC, f"{dynamic_sites} dynamic call site(s) could not be resolved statically")
        )
