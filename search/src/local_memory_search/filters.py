"""The eight seed-003 filters: a frozen record, a LanceDB SQL predicate and a parameterised SQLite clause.

Every LanceDB predicate also pins ``project_path`` and ``schema_version``, so no query can
return another project's rows or rows of a stale schema. The library takes :class:`SearchFilters`
(a plain record); the tool layer converts its validated pydantic model with :meth:`SearchFilters.of`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from local_memory_shared.schema import SCHEMA_VERSION

from .store import sql_str


@dataclass(frozen=True)
class SearchFilters:
    """Pre-filters applied to both legs before ranking (already validated at the edge)."""

    language: str | None = None
    file_extensions: tuple[str, ...] | None = None
    path_prefix: str | None = None
    updated_after: str | None = None
    tags: tuple[str, ...] | None = None
    class_name: str | None = None
    function_name: str | None = None
    last_commit_hash: str | None = None

    @classmethod
    def of(cls, source: Any) -> SearchFilters | None:
        """A record from any object with the eight filter attributes (e.g. the edge model), or None."""
        if source is None:
            return None
        if isinstance(source, SearchFilters):
            return source
        values = {f.name: getattr(source, f.name, None) for f in fields(cls)}
        for key in ("file_extensions", "tags"):
            value = values[key]
            if value is not None:
                values[key] = tuple(value)
        return cls(**values)


#: The eight filter keys of seed 003, in order.
FILTER_KEYS: tuple[str, ...] = tuple(f.name for f in fields(SearchFilters))


@dataclass(frozen=True)
class LanceWhere:
    """A LanceDB predicate and whether it must run before the search (``prefilter``).

    The scope predicates (project, schema version) hold for every row of a healthy per-project
    table, so alone they run after the search: prefiltering them scans every row on every query
    (about 20 ms at 55k chunks) to drop nothing. A user filter does drop rows, so it runs first,
    or a page could come back short.
    """

    sql: str
    prefilter: bool


def lance_where(project: str, filters: SearchFilters | None, *, extra: list[str] | None = None) -> LanceWhere:
    """LanceDB predicate for ``filters`` (and ``extra`` clauses) within ``project``."""
    parts = [f"project_path = {sql_str(project)}", f"schema_version = {SCHEMA_VERSION}"]
    scope = len(parts)
    if filters is not None:
        if filters.language:
            parts.append(f"language = {sql_str(filters.language)}")
        if filters.file_extensions:
            parts.append(f"file_extension IN ({', '.join(sql_str(e) for e in filters.file_extensions)})")
        if filters.path_prefix:
            parts.append(f"starts_with(file_path, {sql_str(filters.path_prefix)})")
        if filters.updated_after:
            parts.append(f"updated_at > {sql_str(filters.updated_after)}")
        if filters.tags:
            parts.append(f"array_has_any(tags, [{', '.join(sql_str(t) for t in filters.tags)}])")
        if filters.class_name:
            parts.append(f"class_name = {sql_str(filters.class_name)}")
        if filters.function_name:
            parts.append(f"function_name = {sql_str(filters.function_name)}")
        if filters.last_commit_hash:
            parts.append(f"last_commit_hash = {sql_str(filters.last_commit_hash)}")
    parts.extend(extra or [])
    return LanceWhere(" AND ".join(f"({p})" for p in parts), prefilter=len(parts) > scope)


def sqlite_where(filters: SearchFilters | None, *, alias: str = "chunks") -> tuple[str, list[Any]]:
    """SQLite ``WHERE`` body and parameters for ``filters`` over the chunk mirror."""
    parts = [f"{alias}.schema_version = ?"]
    args: list[Any] = [SCHEMA_VERSION]
    if filters is not None:
        if filters.language:
            parts.append(f"{alias}.language = ?")
            args.append(filters.language)
        if filters.file_extensions:
            parts.append(f"{alias}.file_extension IN ({','.join('?' * len(filters.file_extensions))})")
            args.extend(filters.file_extensions)
        if filters.path_prefix:
            # substr instead of LIKE: a prefix may contain % or _.
            parts.append(f"substr({alias}.file_path, 1, ?) = ?")
            args.extend([len(filters.path_prefix), filters.path_prefix])
        if filters.updated_after:
            parts.append(f"{alias}.updated_at > ?")
            args.append(filters.updated_after)
        if filters.tags:
            marks = ",".join("?" * len(filters.tags))
            parts.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE json_each.value IN ({marks}))")
            args.extend(filters.tags)
        if filters.class_name:
            parts.append(f"{alias}.class_name = ?")
            args.append(filters.class_name)
        if filters.function_name:
            parts.append(f"{alias}.function_name = ?")
            args.append(filters.function_name)
        if filters.last_commit_hash:
            parts.append(f"{alias}.last_commit_hash = ?")
            args.append(filters.last_commit_hash)
    return " AND ".join(parts), args
