"""Records, limits and warning codes of the graph queries, and the JSON shapes every answer uses."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from local_memory_shared.envelope import warning
from local_memory_shared.errors import InvalidArgument

MODULE = "<module>"
DYNAMIC = "<dynamic>"
MAX_DEPTH = 3
DEFAULT_MAX_NODES = 200
TRACE_DEFAULT_DEPTH = 6
TRACE_MAX_DEPTH = 10
#: visits a trace may make before it gives up (each visit is one indexed query)
TRACE_MAX_VISITS = 20_000
MAX_LISTED_SITES = 100
#: a call matching more definitions than this is reported as a count, not as that many edges
MAX_AMBIGUOUS = 8
TOO_AMBIGUOUS = "too_ambiguous"
DEFAULT_IMPORT_LIMIT = 1000

# Stable warning codes of the graph tools.
W_FANOUT = "graph_fanout_capped"
W_DEPTH = "graph_depth_limited"
W_AMBIGUOUS_EDGES = "graph_ambiguous_calls"
W_DYNAMIC = "graph_dynamic_calls"
W_OVERLOADS = "graph_overloads_merged"
W_TRUNCATED = "graph_truncated"
W_UNRESOLVED = "graph_unresolved_calls"

SYMBOL_COLUMNS = "id, file_path, name, qualified_name, kind, start_line, end_line, chunk_id, language"
EDGE_COLUMNS = (
    "id, file_path, caller_symbol_id, caller_qualified, callee_name, callee_text, line, dynamic, "
    "language, receiver_type"
)
_SPEC = re.compile(r"^(?P<path>[^:]+?):(?!:)(?P<name>.+)$")

Warnings = list[dict[str, str]]


# The three records below are NamedTuples, not dataclasses: the per-version cache holds one per
# stored call site, and the garbage collector untracks tuples of plain values, so a cache of
# 100k+ edges costs nothing when a full collection runs (as dataclasses it cost ~1 s each time).


class Symbol(NamedTuple):
    """A definition row (or the ``<module>`` pseudo-definition of a file's top-level code)."""

    id: int | None
    file_path: str
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    chunk_id: str | None
    language: str | None

    @property
    def key(self) -> str:
        """``path:Qualified.name``: unique per definition and accepted back as a symbol name."""
        return f"{self.file_path}:{self.qualified_name}"

    def node(self) -> dict[str, Any]:
        """The JSON node every graph tool answers."""
        return {
            "id": self.key,
            "file_path": self.file_path,
            "line": self.start_line,
            "end_line": self.end_line,
            "qualified_name": self.qualified_name,
            "name": self.name,
            "kind": self.kind,
            "chunk_id": self.chunk_id,
        }


class CallEdge(NamedTuple):
    """One call site as stored."""

    id: int
    file_path: str
    caller_symbol_id: int | None
    caller_qualified: str
    callee_name: str
    callee_text: str
    line: int
    dynamic: bool
    language: str | None
    receiver_type: str | None = None


class Resolution(NamedTuple):
    """Where a call site lands: definitions and how they were chosen."""

    #: self | typed | qualified | same_file | imported | same_package | unique | ambiguous |
    #: too_ambiguous (more than MAX_AMBIGUOUS definitions: not listed) | external
    targets: tuple[Symbol, ...]
    how: str
    #: definitions that share the name, when ``too_ambiguous``
    candidates: int = 0


@dataclass
class Lookup:
    """Outcome of turning a user's symbol name into definitions."""

    status: str  # ok | not_found | ambiguous
    symbols: list[Symbol] = field(default_factory=list)  # every row of the one logical symbol
    candidates: list[Symbol] = field(default_factory=list)
    overloads: int = 0


@dataclass(frozen=True)
class GraphResult:
    """What every graph query answers: the JSON ``data`` and the envelope ``warnings``."""

    data: Mapping[str, Any]
    warnings: tuple[Mapping[str, str], ...] = ()

    def as_tuple(self) -> tuple[dict[str, Any], Warnings]:
        """``(data, warnings)`` as plain mutable values (the shape the tool layer unpacks)."""
        return dict(self.data), [dict(w) for w in self.warnings]


def result(data: dict[str, Any], warnings: Warnings) -> GraphResult:
    """Freeze one answer."""
    return GraphResult(data, tuple(warnings))


def symbol(row: Any) -> Symbol:
    """A ``symbols`` row (in ``SYMBOL_COLUMNS`` order) as a record."""
    return Symbol(*row)


def parse_spec(spec: str) -> tuple[str | None, str]:
    """``path/to/file.py:Class.method`` → (path, name); a plain name has no path."""
    spec = spec.strip()
    match = _SPEC.match(spec)
    if match and ("/" in match["path"] or "." in match["path"]):
        path = match["path"].replace("\\", "/").removeprefix("./")
        return path, match["name"].strip()
    return None, spec


def chunks(items: list[Any], size: int = 500) -> list[list[Any]]:
    """``items`` in slices small enough for one SQL ``IN`` list."""
    # SQLite caps bound parameters; 500 per IN list stays far below every build's limit
    return [items[i : i + size] for i in range(0, len(items), size)]


# --- argument checks -------------------------------------------------------------------------------


def check_symbol_name(value: Any, field_name: str) -> str:
    """A non-blank symbol name, stripped."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{field_name} must be a non-empty symbol name", field=field_name)
    return value.strip()


def check_depth(value: Any, field_name: str, maximum: int) -> int:
    """An integer hop count from 1 to ``maximum``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidArgument(f"{field_name} must be an integer from 1 to {maximum}", field=field_name)
    return value


def check_cap(value: Any, field_name: str) -> int:
    """A positive integer cap."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(f"{field_name} must be a positive integer", field=field_name)
    return value


# --- JSON shapes -----------------------------------------------------------------------------------


def edge_json(edge: CallEdge, caller: str, callee: str, how: str) -> dict[str, Any]:
    """One resolved call edge."""
    return {
        "caller": caller,
        "callee": callee,
        "file_path": edge.file_path,
        "line": edge.line,
        "callee_text": edge.callee_text,
        "resolution": how,
    }


def site_json(edge: CallEdge, caller: Symbol) -> dict[str, Any]:
    """One call site that resolves to no single definition."""
    return {
        "caller": caller.key,
        "file_path": edge.file_path,
        "line": edge.line,
        "callee_text": edge.callee_text,
    }


def not_resolved_answer(lookup: Lookup, spec: str, base: dict[str, Any]) -> dict[str, Any]:
    """``base`` completed for a name that is unknown or names several definitions."""
    if lookup.status == "not_found":
        base.update(
            status="not_found",
            symbol=None,
            message=f"no definition named {spec!r} in the index (check the spelling, or index the file that defines it)",
        )
    else:
        base.update(
            status="ambiguous",
            symbol=None,
            candidates=[c.node() for c in lookup.candidates],
            message=(
                f"{spec!r} names {len(lookup.candidates)} definitions; ask again with a qualified name "
                "such as 'Class.method' or 'path/to/file.py:Class.method'"
            ),
        )
    return base


def overload_warning(lookup: Lookup, warnings: Warnings) -> None:
    """Say so when the one logical symbol has several rows (overloads)."""
    if lookup.overloads > 1:
        s = lookup.symbols[0]
        warnings.append(
            warning(
                W_OVERLOADS,
                f"{s.key} is defined {lookup.overloads} times (overloads); calls cannot tell them apart",
            )
        )
