"""Turn a user's symbol name (``name``, ``Class.method``, ``path/to/file.py:Class.method``) into definitions."""

from __future__ import annotations

import re
from collections import defaultdict

from .reader import SqlReader
from .records import MODULE, Lookup, Symbol, parse_spec
from .scope import without_constructors

_QUALIFIED_SPLIT = re.compile(r"::|#|->|\\")


def lookup_symbol(graph: SqlReader, spec: str) -> Lookup:
    """Definitions ``spec`` means: one logical symbol (``ok``), several (``ambiguous``) or none."""
    path, qualified = parse_spec(spec)
    if qualified == MODULE:
        return _module_lookup(graph, path)
    name = _QUALIFIED_SPLIT.sub(".", qualified).split(".")[-1]
    rows = graph.named(name)
    if "." in qualified or qualified != name:
        dotted = _QUALIFIED_SPLIT.sub(".", qualified)
        exact = [r for r in rows if r.qualified_name == dotted]
        rows = exact or [r for r in rows if r.qualified_name.endswith("." + dotted)]
    if path is not None:
        rows = [r for r in rows if r.file_path == path or r.file_path.endswith("/" + path)]
    rows = without_constructors(rows)
    if not rows:
        return Lookup("not_found")
    keys: dict[str, list[Symbol]] = defaultdict(list)
    for r in rows:
        keys[r.key].append(r)
    graph.remember(rows)
    if len(keys) > 1:
        return Lookup("ambiguous", candidates=[group[0] for group in keys.values()])
    group = next(iter(keys.values()))
    return Lookup("ok", symbols=group, overloads=len(group))


def _module_lookup(graph: SqlReader, path: str | None) -> Lookup:
    """``path:<module>``: a file's top-level code."""
    if path is None:
        return Lookup("not_found")
    files = [
        r[0]
        for r in graph.query(
            "SELECT DISTINCT file_path FROM call_edges WHERE caller_symbol_id IS NULL AND "
            "(file_path = ? OR file_path LIKE ?)",
            (path, f"%/{path}"),
        )
    ]
    if len(files) != 1:
        mods = [graph.module_symbol(f, 1) for f in files]
        return Lookup("ambiguous" if files else "not_found", candidates=mods)
    module = graph.module_symbol(files[0], 1)
    graph.remember([module])
    return Lookup("ok", symbols=[module])
