"""The one breadth-first traversal of the call graph, and the two directions it steps in.

``caller_hops`` and ``callee_hops`` turn a frontier of definition keys into :class:`Hop` records
(one per resolved call edge); :func:`walk` runs the level-by-level search over them for
``find_callers`` and ``find_callees``, and ``trace_path`` widens its two frontiers with the same
hop functions. A visited set means recursion never loops; the node cap is reported as truncation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .records import DYNAMIC, TOO_AMBIGUOUS, CallEdge, Resolution, Symbol, edge_json, site_json
from .resolve import GraphReader


class Hop(NamedTuple):
    """One resolved call edge seen from the frontier: ``origin`` is the frontier definition's key."""

    origin: str
    edge: CallEdge
    neighbour: Symbol
    how: str
    #: counts toward the "ambiguous calls" warning
    ambiguous: int = 0


@dataclass
class CalleeNotes:
    """Call sites inside the walked definitions that land on no single definition."""

    external: list[dict[str, Any]] = field(default_factory=list)
    dynamic_sites: list[dict[str, Any]] = field(default_factory=list)
    ambiguous_sites: list[dict[str, Any]] = field(default_factory=list)
    ambiguous_edges: int = 0
    any_call: bool = False


def caller_hops(
    graph: GraphReader, keys: list[str], unresolved: dict[str, list[CallEdge]] | None = None
) -> list[Hop]:
    """A hop to the caller of every static call site landing on one of ``keys``.

    Call sites of the same name too ambiguous to resolve are collected per key in ``unresolved``.
    """
    wanted: dict[str, set[str]] = defaultdict(set)
    for key in keys:
        rows = graph.rows_of(key)
        if rows:
            for written in {rows[0].name} | graph.aliases_of(rows[0].name):
                wanted[written].add(key)
    out: list[Hop] = []
    for edge in graph.edges_calling(list(wanted)):
        resolution = graph.resolve(edge)
        if resolution.how == TOO_AMBIGUOUS:
            if unresolved is not None:
                for key in wanted[edge.callee_name]:
                    unresolved.setdefault(key, []).append(edge)
            continue
        for target in resolution.targets:
            if target.key in wanted[edge.callee_name]:
                how = resolution.how
                out.append(Hop(target.key, edge, graph.caller_of(edge), how, int(how == "ambiguous")))
    return out


def callee_hops(graph: GraphReader, keys: list[str], notes: CalleeNotes | None = None) -> list[Hop]:
    """A hop to every definition a call site inside one of ``keys`` lands on; the rest go to ``notes``."""
    symbols = [row for key in keys for row in graph.rows_of(key)]
    out: list[Hop] = []
    for edge in graph.edges_from(symbols):
        caller = graph.caller_of(edge)
        resolution = Resolution((), "dynamic") if edge.dynamic else graph.resolve(edge)
        if notes is not None:
            _note_callee(notes, edge, caller, resolution)
        out.extend(Hop(caller.key, edge, callee, resolution.how) for callee in resolution.targets)
    return out


def _note_callee(notes: CalleeNotes, edge: CallEdge, caller: Symbol, resolution: Resolution) -> None:
    notes.any_call = True
    if edge.dynamic:
        named = None if edge.callee_name == DYNAMIC else edge.callee_name
        notes.dynamic_sites.append(site_json(edge, caller) | {"named": named})
    elif resolution.how == TOO_AMBIGUOUS:
        notes.ambiguous_sites.append(
            site_json(edge, caller) | {"name": edge.callee_name, "definitions": resolution.candidates}
        )
    elif not resolution.targets:
        notes.external.append(
            {
                "caller": caller.key,
                "name": edge.callee_name,
                "callee_text": edge.callee_text,
                "file_path": edge.file_path,
                "line": edge.line,
            }
        )
    else:
        notes.ambiguous_edges += resolution.how == "ambiguous"


#: ``step(frontier, level)`` → hops; level 0 is a look-ahead that must record nothing
Step = Callable[[list[str], int], list[Hop]]


@dataclass
class Walk:
    """What a traversal found: nodes with their depth, edges, and whether it was cut short."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    ambiguous_edges: int = 0
    truncated: bool = False
    depth_limited: bool = False


def walk(
    graph: GraphReader, start: Symbol, depth: int, max_nodes: int, step: Step, *, upstream: bool
) -> Walk:
    """Breadth-first from ``start`` for ``depth`` levels; ``upstream`` walks to callers, else to callees."""
    levels: dict[str, int] = {start.key: 0}
    found = Walk()
    recursive = False
    frontier = [start.key]
    for level in range(1, depth + 1):
        next_frontier: list[str] = []
        for hop in step(frontier, level):
            key = hop.neighbour.key
            if key == start.key == hop.origin and not recursive:
                recursive = True  # it calls itself: say so, once, without walking the cycle
                found.nodes.append({**start.node(), "depth": level, "recursive": True})
            if key not in levels:
                if len(found.nodes) >= max_nodes:
                    found.truncated = True
                    continue
                levels[key] = level
                graph.remember([hop.neighbour])
                found.nodes.append({**hop.neighbour.node(), "depth": level})
                if not upstream or hop.neighbour.id is not None:  # a file's top level has no callers
                    next_frontier.append(key)
            found.ambiguous_edges += hop.ambiguous
            caller, callee = (key, hop.origin) if upstream else (hop.origin, key)
            found.edges.append(edge_json(hop.edge, caller, callee, hop.how))
        frontier = next_frontier
        if found.truncated or not frontier:
            break
    found.depth_limited = (
        not found.truncated
        and bool(frontier)
        and any(h.neighbour.key not in levels for h in step(frontier, 0))
    )
    return found
