"""The filters of a memory search, compiled BEFORE ranking (issue 12: a page is never short).

Everything SQL can say becomes one LanceDB ``where`` used as a prefilter by both legs: project,
kinds (with seed 000's defaults), status, tags (all), tree, temporal, expiry, ``asOf`` and grep.
What only Python can check (record path-pattern globs against ``path``, ``meta`` containment,
``metaPredicate``) is evaluated over the SQL-filtered rows first (path: once per distinct stored
pattern) and turned into SQL, so ranking only ever sees qualifying records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from local_memory_shared.errors import InvalidArgument
from local_memory_shared.memory.model import EPHEMERAL_KINDS, HIT_ELIGIBLE_KINDS, utc_now
from local_memory_shared.memory.query import (
    MetaPredicate,
    TemporalFilter,
    TreeFilter,
    matches_any_pattern,
    meta_contains,
)

from .reader import MemoryReader, sql_in, sql_str


@dataclass(frozen=True)
class MemoryFilters:
    """Validated filters (pure data; see :func:`compile_where`)."""

    project: str | None = None  # None = every project (crossProject)
    kinds: tuple[str, ...] | None = None
    status: str | None = None
    tags: tuple[str, ...] = ()
    path: str | None = None
    tree: TreeFilter | None = None
    meta: dict[str, Any] | None = None
    meta_predicate: MetaPredicate | None = None
    temporal: TemporalFilter | None = None
    grep: str | None = None
    as_of: str | None = None
    include_expired: bool = False
    include_scratch: bool = False
    include_superseded: bool = False
    sort: str = "relevance"
    now: str = field(default_factory=utc_now)


def default_kinds(f: MemoryFilters) -> tuple[str, ...] | None:
    """Seed 000's kind defaults per sort mode and scope."""
    if f.kinds:
        return f.kinds
    if f.sort == "occurrences":
        return ("trap",)
    if f.sort == "hits":
        return tuple(sorted(HIT_ELIGIBLE_KINDS))
    return None


def expiry_moment(f: MemoryFilters) -> str | None:
    """The moment records must not have expired at (None: expired records included)."""
    return None if f.include_expired else f.as_of or f.now


@dataclass(frozen=True)
class VectorFilter:
    """The filters as the in-memory vector leg applies them (``vectors``): ``where`` is the SQL
    without the parts that change from call to call (cached there as a mask per version), and
    those parts, applied to the mask with the comparisons the SQL makes."""

    where: str
    #: ``created <= created_max`` (asOf)
    created_max: str | None
    #: ``expires IS NULL OR expires > unexpired_at``
    unexpired_at: str | None
    #: ``array_has_any(paths, path_patterns)``; None: no path filter
    path_patterns: tuple[str, ...] | None
    #: ``project = project`` (also in ``where``; the FTS5 leg seeks to the project's docids)
    project: str | None = None


def compile_where(f: MemoryFilters, *, per_call: bool = True) -> str:
    """The SQL part of the filters (``per_call=False``: without the ``asOf`` and expiry clauses,
    see :class:`VectorFilter`)."""
    parts = ["schema_version = 1"]
    if f.project is not None:
        parts.append(f"project = {sql_str(f.project)}")
    kinds = default_kinds(f)
    if kinds:
        parts.append(sql_in("kind", kinds))
    elif f.project is None:
        parts.append("NOT " + sql_in("kind", sorted(EPHEMERAL_KINDS)))
    elif not f.include_scratch:
        parts.append("kind != 'scratch'")
    parts.append(_status_clause(f))
    for tag in f.tags:
        parts.append(f"array_has(tags, {sql_str(tag.lower())})")
    if f.tree is not None:
        parts.append(f.tree.where)
    if f.temporal is not None:
        parts.append(f.temporal.where())
    if f.grep is not None:
        parts.append(f"regexp_like(content, {sql_str('(?i)' + f.grep)})")
    if f.as_of and per_call:
        parts.append(f"created <= {sql_str(f.as_of)}")
    moment = expiry_moment(f)
    if per_call and moment is not None:
        parts.append(f"(expires IS NULL OR expires > {sql_str(moment)})")
    return " AND ".join(p for p in parts if p)


def _status_clause(f: MemoryFilters) -> str:
    if f.status:
        return f"status = {sql_str(f.status)}"
    if f.sort in ("occurrences", "hits"):
        return "status = 'active'"
    # Superseded records stay in the candidate set so a query in the old wording finds the successor.
    return "status != 'archived'"


def compile_filters(reader: MemoryReader, f: MemoryFilters) -> tuple[str, VectorFilter]:
    """The full SQL ``where`` of the filters, and the same filters for the in-memory vector leg.

    What only Python can check becomes SQL too: ``path`` is ``array_has_any(paths, <the stored
    patterns that match it>)`` (each distinct pattern matched once, so the clause stays small and a
    prefilter); ``meta``/``metaPredicate`` are evaluated row by row over the SQL-filtered rows and
    become an ``id IN`` clause.
    """
    where = compile_where(f)
    patterns = None if f.path is None else path_patterns(reader, f.path)
    path = None if patterns is None else _path_clause(patterns)
    meta = meta_clause(reader, f, where if path is None else f"{where} AND {path}")
    vf = VectorFilter(
        where=" AND ".join([compile_where(f, per_call=False), *([meta] if meta else [])]),
        created_max=f.as_of,
        unexpired_at=expiry_moment(f),
        path_patterns=None if patterns is None else tuple(patterns),
        project=f.project,
    )
    return " AND ".join([where, *(c for c in (path, meta) if c)]), vf


def meta_clause(reader: MemoryReader, f: MemoryFilters, scope: str) -> str | None:
    """``id IN (...)`` of the rows within ``scope`` that pass ``meta``/``metaPredicate`` (None: neither)."""
    if f.meta is None and f.meta_predicate is None:
        return None
    allowed = set()
    for row in reader.rows(scope, ("id", "meta")):
        meta = row["meta"] if isinstance(row["meta"], dict) else _json(row["meta"])
        if f.meta is not None and not meta_contains(meta, f.meta):
            continue
        if f.meta_predicate is not None and not f.meta_predicate.matches(meta):
            continue
        allowed.add(row["id"])
    return sql_in("id", allowed)


def path_patterns(reader: MemoryReader, path: str) -> list[str]:
    """The stored patterns that match ``path`` (over the whole version's distinct patterns)."""
    return [p for p in reader.path_patterns() if matches_any_pattern(path, (p,))]


def _path_clause(patterns: list[str]) -> str:
    """Records having any of ``patterns`` (the rest of ``where`` still applies beside this clause)."""
    if not patterns:
        return "FALSE"
    return f"array_has_any(paths, make_array({', '.join(sql_str(p) for p in patterns)}))"


def _json(value: Any) -> Any:
    import json

    if value in (None, ""):
        return {}
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return {}


def check_grep(pattern: str | None) -> str | None:
    """Validate a grep regex (Python syntax check; LanceDB runs it case-insensitively)."""
    if pattern is None:
        return None
    try:
        re.compile(pattern)
    except re.error as exc:
        raise InvalidArgument(f"grep is not a valid regex: {exc}", field="grep") from exc
    if "(?" in pattern:
        raise InvalidArgument("grep: look-around and inline flags are not supported", field="grep")
    return pattern
