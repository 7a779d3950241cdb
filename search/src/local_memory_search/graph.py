"""Read-only call-graph and import-graph queries: find_callers, find_callees, trace_path, get_import_graph.

The indexer stores definitions (``symbols``), call sites by callee *name* (``call_edges``) and
imports (``import_edges``). A call site is resolved to definitions here, at query time, so an
edited file never leaves other files' edges pointing at dead rows. Resolution, strongest first:

1. ``self.x()`` / ``this.x()`` (or a bare call where the language has an implicit ``this``) →
   the method of the caller's own class;
2. ``Foo.x()`` / ``Foo::x()`` → a definition qualified ``Foo.x``; an upper-case receiver that is
   no class of ours is an external type (``Vec::new``, ``Console.WriteLine``);
3. the caller's own file, then the files it imports, then (Go, Java, Kotlin, C#) its package;
4. the only definition of that name in the project, unless the language's scoping rules make
   that impossible (a bare Python/JS/Rust/Go call needs a local definition or an import);
5. otherwise every remaining candidate, flagged ``ambiguous``; none left means ``external``.

Every answer is ``(data, warnings)``; ``data["status"]`` tells apart "not found", "ambiguous",
"no callers", "only dynamic call sites" and "no path within depth N". Traversals are breadth
first over visited sets (recursion never loops) and cut at a node cap that is reported.
"""

from __future__ import annotations

import json
import posixpath
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from local_memory_shared.envelope import warning
from local_memory_shared.errors import InvalidArgument, StoreError

MODULE = "<module>"
DYNAMIC = "<dynamic>"
MAX_DEPTH = 3
DEFAULT_MAX_NODES = 200
TRACE_DEFAULT_DEPTH = 6
TRACE_MAX_DEPTH = 10
#: visits a trace may make before it gives up (each visit is one indexed query)
TRACE_MAX_VISITS = 20_000
MAX_LISTED_SITES = 100
DEFAULT_IMPORT_LIMIT = 1000

# Stable warning codes of the graph tools.
W_FANOUT = "graph_fanout_capped"
W_DEPTH = "graph_depth_limited"
W_AMBIGUOUS_EDGES = "graph_ambiguous_calls"
W_DYNAMIC = "graph_dynamic_calls"
W_OVERLOADS = "graph_overloads_merged"
W_TRUNCATED = "graph_truncated"

#: kinds a call can land on (a call never runs an interface, trait, enum, type alias or module)
CALLABLE_KINDS = frozenset({"function", "method", "class", "struct"})
_TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type"})
_SELF_RECEIVERS = frozenset({"self", "this", "cls", "Self", "$this", "static", "@", "base"})
#: a bare call may be a method of the caller's class
_IMPLICIT_THIS = frozenset({"java", "csharp", "cpp", "kotlin", "ruby"})
#: a bare call needs a local definition or an import (or the package, where packages are folders)
_SCOPED_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx", "rust", "go", "java", "kotlin", "csharp"})
_PACKAGE_DIR_LANGUAGES = frozenset({"go", "java", "kotlin", "csharp"})
_SEPARATORS = re.compile(r"::|->|\?->|\.|\\")
_GENERICS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]|\([^()]*\)")
_QUALIFIED_SPLIT = re.compile(r"::|#|->|\\")
_SPEC = re.compile(r"^(?P<path>[^:]+?):(?!:)(?P<name>.+)$")


@dataclass(frozen=True)
class Symbol:
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


@dataclass(frozen=True)
class CallEdge:
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


@dataclass(frozen=True)
class Resolution:
    """Where a call site lands: definitions and how they were chosen."""

    targets: tuple[Symbol, ...]
    how: str  # self | typed | qualified | same_file | imported | same_package | unique | ambiguous | external


@dataclass
class _Lookup:
    """Outcome of turning a user's symbol name into definitions."""

    status: str  # ok | not_found | ambiguous
    symbols: list[Symbol] = field(default_factory=list)  # every row of the one logical symbol
    candidates: list[Symbol] = field(default_factory=list)
    overloads: int = 0


def _symbol(row: sqlite3.Row | tuple[Any, ...]) -> Symbol:
    return Symbol(*row)


_SYMBOL_COLUMNS = "id, file_path, name, qualified_name, kind, start_line, end_line, chunk_id, language"
_EDGE_COLUMNS = (
    "id, file_path, caller_symbol_id, caller_qualified, callee_name, callee_text, line, dynamic, language, receiver_type"
)


class GraphReader:
    """Cached, read-only access to the graph tables of one state DB connection (one call's worth)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self._named: dict[str, list[Symbol]] = {}
        self._by_id: dict[int, Symbol] = {}
        self._by_key: dict[str, list[Symbol]] = {}
        self._imports: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._resolved: dict[tuple[Any, ...], Resolution] = {}
        self._module_chunks: dict[tuple[str, int], str | None] = {}

    # --- raw access ----------------------------------------------------------------------------

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the code graph: {exc}") from exc

    def named(self, name: str) -> list[Symbol]:
        """Every definition called ``name``."""
        found = self._named.get(name)
        if found is None:
            found = [_symbol(r) for r in self.query(f"SELECT {_SYMBOL_COLUMNS} FROM symbols WHERE name = ?", (name,))]
            self._named[name] = found
            for s in found:
                self._by_id[s.id] = s  # type: ignore[index]
        return found

    def by_id(self, symbol_id: int | None) -> Symbol | None:
        """The definition with row id ``symbol_id``."""
        if symbol_id is None:
            return None
        found = self._by_id.get(symbol_id)
        if found is None:
            rows = self.query(f"SELECT {_SYMBOL_COLUMNS} FROM symbols WHERE id = ?", (symbol_id,))
            if not rows:
                return None
            found = self._by_id[symbol_id] = _symbol(rows[0])
        return found

    def rows_of(self, key: str) -> list[Symbol]:
        """All rows of a logical symbol (overloads share a key)."""
        return self._by_key.get(key, [])

    def remember(self, symbols: list[Symbol]) -> None:
        """Record the rows behind each key seen, so a key can be expanded later."""
        for s in symbols:
            rows = self._by_key.setdefault(s.key, [])
            if s not in rows:
                rows.append(s)

    def module_symbol(self, file_path: str, line: int) -> Symbol:
        """The ``<module>`` pseudo-definition of ``file_path``, with the chunk around ``line``."""
        cache_key = (file_path, line)
        if cache_key not in self._module_chunks:
            try:
                row = self.conn.execute(
                    "SELECT chunk_id FROM chunks WHERE file_path = ? AND start_line <= ? AND end_line >= ? "
                    "ORDER BY end_line - start_line LIMIT 1",
                    (file_path, line, line),
                ).fetchone()
            except sqlite3.Error:
                row = None  # the chunks mirror belongs to the pipeline; the graph answers without it
            self._module_chunks[cache_key] = row[0] if row else None
        return Symbol(None, file_path, MODULE, MODULE, "module", line, line, self._module_chunks[cache_key], None)

    def imports_of(self, file_path: str) -> tuple[frozenset[str], frozenset[str]]:
        """Project files and package folders ``file_path`` imports."""
        found = self._imports.get(file_path)
        if found is None:
            files, dirs = set(), set()
            for path, kind in self.query(
                "SELECT resolved_path, resolved_kind FROM import_edges WHERE file_path = ? AND resolved_path IS NOT NULL",
                (file_path,),
            ):
                (dirs if kind == "directory" else files).add(path)
            found = self._imports[file_path] = (frozenset(files), frozenset(dirs))
        return found

    def edges_calling(self, name: str) -> list[CallEdge]:
        """Static call sites whose callee is written ``name``."""
        return [
            CallEdge(*r)
            for r in self.query(
                f"SELECT {_EDGE_COLUMNS} FROM call_edges WHERE callee_name = ? AND dynamic = 0", (name,)
            )
        ]

    def dynamic_naming(self, name: str) -> list[CallEdge]:
        """Dynamic call sites whose literal names ``name`` (``getattr(o, "name")``)."""
        return [
            CallEdge(*r)
            for r in self.query(
                f"SELECT {_EDGE_COLUMNS} FROM call_edges WHERE callee_name = ? AND dynamic = 1", (name,)
            )
        ]

    def edges_from(self, symbol: Symbol) -> list[CallEdge]:
        """Call sites inside ``symbol`` (static and dynamic)."""
        if symbol.id is None:
            rows = self.query(
                f"SELECT {_EDGE_COLUMNS} FROM call_edges WHERE file_path = ? AND caller_symbol_id IS NULL",
                (symbol.file_path,),
            )
        else:
            rows = self.query(f"SELECT {_EDGE_COLUMNS} FROM call_edges WHERE caller_symbol_id = ?", (symbol.id,))
        return [CallEdge(*r) for r in rows]

    def count_anonymous_dynamic(self) -> int:
        """Dynamic call sites whose target no literal names (``handlers[key]()``)."""
        return int(self.query("SELECT count(*) FROM call_edges WHERE dynamic = 1 AND callee_name = ?", (DYNAMIC,))[0][0])

    # --- resolution ----------------------------------------------------------------------------

    def caller_of(self, edge: CallEdge) -> Symbol:
        """The definition holding the call site (or the file's ``<module>``)."""
        caller = self.by_id(edge.caller_symbol_id)
        return caller if caller is not None else self.module_symbol(edge.file_path, edge.line)

    def resolve(self, edge: CallEdge) -> Resolution:
        """Definitions a static call site lands on (see the module docstring for the order)."""
        cache_key = (edge.file_path, edge.caller_symbol_id, edge.callee_name, edge.callee_text)
        found = self._resolved.get(cache_key)
        if found is None:
            found = self._resolved[cache_key] = self._resolve(edge)
        return found

    def _resolve(self, edge: CallEdge) -> Resolution:
        name = edge.callee_name
        language = edge.language or ""
        candidates = _without_constructors([s for s in self.named(name) if s.kind in CALLABLE_KINDS])
        if not candidates:
            return Resolution((), "external")
        receiver = _receiver(edge.callee_text, name)
        caller = self.by_id(edge.caller_symbol_id)
        caller_class = _enclosing_class(caller)
        is_self = receiver in _SELF_RECEIVERS or (receiver is None and language in _IMPLICIT_THIS)

        if is_self and caller_class is not None:
            own = [c for c in candidates if c.qualified_name == f"{caller_class}.{name}"]
            # the class may be split across files (C++ header + source): the same file first
            here = [c for c in own if c.file_path == edge.file_path]
            files, dirs = self.imports_of(edge.file_path)
            imported = [c for c in own if c.file_path in files]
            for group in (here, imported, own if len(own) == 1 else []):
                if group:
                    return Resolution(tuple(group), "self" if len(group) == 1 else "ambiguous")
        if receiver in _SELF_RECEIVERS:
            # an inherited method: only methods qualify
            candidates = [c for c in candidates if c.kind == "method"]
            return self._tiers(edge, candidates, strict=False)

        if receiver is not None and edge.receiver_type:
            typed = [c for c in candidates if _member_of(c, edge.receiver_type)]
            if typed:
                picked = self._tiers(edge, typed, strict=False)
                return Resolution(picked.targets, "typed" if len(picked.targets) == 1 else "ambiguous")
            if not self.is_project_type(edge.receiver_type):
                return Resolution((), "external")  # sock = Socket(): a type of someone else's
            # a project type that inherits the method: fall through to the name-based tiers

        if receiver is not None:
            last = _SEPARATORS.split(receiver)[-1]
            typed = [c for c in candidates if _member_of(c, last)]
            if typed:
                picked = self._tiers(edge, typed, strict=False)
                return Resolution(picked.targets, "qualified" if len(picked.targets) == 1 else "ambiguous")
            if last[:1].isupper() and last.isidentifier():
                return Resolution((), "external")  # a type of someone else's: Vec::new, Console.WriteLine
            files, dirs = self.imports_of(edge.file_path)
            module_functions = [
                c
                for c in candidates
                if c.kind != "method"
                and (c.file_path in files or posixpath.dirname(c.file_path) in dirs)
                and last in (_stem(c.file_path), posixpath.basename(posixpath.dirname(c.file_path)))
            ]
            if module_functions:  # utils.helper() after `import utils`; db.Connect() in Go
                return self._tiers(edge, module_functions, strict=False)
            # a variable's method: obj.send()
            return self._tiers(edge, [c for c in candidates if c.kind == "method"], strict=False)

        # a bare call: functions and classes; methods only through a static import (Java/Kotlin/C#)
        files, dirs = self.imports_of(edge.file_path)
        bare = [
            c
            for c in candidates
            if c.kind != "method"
            or (language != "python" and (c.file_path in files or language == "ruby"))
        ]
        return self._tiers(edge, bare, strict=language in _SCOPED_LANGUAGES)

    def is_project_type(self, name: str) -> bool:
        """Whether the project defines a class-like type called ``name``."""
        return any(s.kind in _TYPE_KINDS for s in self.named(name))

    def _tiers(self, edge: CallEdge, candidates: list[Symbol], *, strict: bool) -> Resolution:
        if not candidates:
            return Resolution((), "external")
        same_file = [c for c in candidates if c.file_path == edge.file_path]
        if same_file:
            return Resolution(tuple(same_file), "same_file" if len(same_file) == 1 else "ambiguous")
        files, dirs = self.imports_of(edge.file_path)
        imported = [c for c in candidates if c.file_path in files or posixpath.dirname(c.file_path) in dirs]
        if imported:
            return Resolution(tuple(imported), "imported" if len(imported) == 1 else "ambiguous")
        if (edge.language or "") in _PACKAGE_DIR_LANGUAGES:
            folder = posixpath.dirname(edge.file_path)
            same_package = [c for c in candidates if posixpath.dirname(c.file_path) == folder]
            if same_package:
                return Resolution(tuple(same_package), "same_package" if len(same_package) == 1 else "ambiguous")
        if strict:
            return Resolution((), "external")  # a builtin or a name from an unresolved import
        return Resolution(tuple(candidates), "unique" if len(candidates) == 1 else "ambiguous")

    # --- symbol names --------------------------------------------------------------------------

    def lookup(self, spec: str) -> _Lookup:
        """Definitions a user's ``name`` / ``Class.method`` / ``path/to/file.py:Class.method`` means."""
        path, qualified = _parse_spec(spec)
        if qualified == MODULE:
            if path is None:
                return _Lookup("not_found")
            files = [
                r[0]
                for r in self.query(
                    "SELECT DISTINCT file_path FROM call_edges WHERE caller_symbol_id IS NULL AND "
                    "(file_path = ? OR file_path LIKE ?)",
                    (path, f"%/{path}"),
                )
            ]
            if len(files) != 1:
                mods = [self.module_symbol(f, 1) for f in files]
                return _Lookup("ambiguous" if files else "not_found", candidates=mods)
            module = self.module_symbol(files[0], 1)
            self.remember([module])
            return _Lookup("ok", symbols=[module])
        name = _QUALIFIED_SPLIT.sub(".", qualified).split(".")[-1]
        rows = self.named(name)
        if "." in qualified or qualified != name:
            dotted = _QUALIFIED_SPLIT.sub(".", qualified)
            exact = [r for r in rows if r.qualified_name == dotted]
            rows = exact or [r for r in rows if r.qualified_name.endswith("." + dotted)]
        if path is not None:
            rows = [r for r in rows if r.file_path == path or r.file_path.endswith("/" + path)]
        rows = _without_constructors(rows)
        if not rows:
            return _Lookup("not_found")
        keys: dict[str, list[Symbol]] = defaultdict(list)
        for r in rows:
            keys[r.key].append(r)
        self.remember(rows)
        if len(keys) > 1:
            return _Lookup("ambiguous", candidates=[group[0] for group in keys.values()])
        group = next(iter(keys.values()))
        return _Lookup("ok", symbols=group, overloads=len(group))


# --- helpers ------------------------------------------------------------------------------------


def _parse_spec(spec: str) -> tuple[str | None, str]:
    spec = spec.strip()
    match = _SPEC.match(spec)
    if match and ("/" in match["path"] or "." in match["path"]):
        path = match["path"].replace("\\", "/").removeprefix("./")
        return path, match["name"].strip()
    return None, spec


def _receiver(callee_text: str, name: str) -> str | None:
    """The expression a call is made on (``self.client`` in ``self.client.send``), or None."""
    text = callee_text or ""
    if not text or text == name:
        return None
    if text.startswith("@"):  # Ruby instance variable receiver: @conn.write
        head = _SEPARATORS.split(text)[0]
        return "@" if head == text else head
    for sep in ("::", "?->", "->", ".", "\\"):
        if text.endswith(sep + name):
            receiver = text[: -len(sep + name)]
            while True:
                stripped = _GENERICS.sub("", receiver)
                if stripped == receiver:
                    break
                receiver = stripped
            return receiver or None
    return None


def _enclosing_class(caller: Symbol | None) -> str | None:
    if caller is None or caller.kind != "method" or "." not in caller.qualified_name:
        return None
    return caller.qualified_name.rsplit(".", 1)[0]


def _member_of(symbol: Symbol, type_name: str) -> bool:
    """Whether ``symbol`` is defined directly in a type called ``type_name``."""
    parent = symbol.qualified_name.rsplit(".", 1)[0] if "." in symbol.qualified_name else ""
    return parent == type_name or parent.endswith("." + type_name)


def _stem(path: str) -> str:
    base = posixpath.basename(path)
    return base.split(".", 1)[0]


def _without_constructors(symbols: list[Symbol]) -> list[Symbol]:
    """Drop ``Foo.Foo`` constructors when the class ``Foo`` itself is a candidate: ``new Foo()`` is one target."""
    classes = {(s.file_path, s.qualified_name) for s in symbols if s.kind in ("class", "struct")}
    return [
        s
        for s in symbols
        if not (s.kind == "method" and (s.file_path, s.qualified_name.rsplit(".", 1)[0]) in classes
                and s.qualified_name.endswith(f"{s.name}.{s.name}"))
    ]


def _check_symbol_name(value: Any, field_name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{field_name} must be a non-empty symbol name", field=field_name)
    return value.strip()


def _check_depth(value: Any, field_name: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidArgument(f"{field_name} must be an integer from 1 to {maximum}", field=field_name)
    return value


def _check_cap(value: Any, field_name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(f"{field_name} must be a positive integer", field=field_name)
    return value


def _edge_json(edge: CallEdge, caller: str, callee: str, how: str) -> dict[str, Any]:
    return {
        "caller": caller,
        "callee": callee,
        "file_path": edge.file_path,
        "line": edge.line,
        "callee_text": edge.callee_text,
        "resolution": how,
    }


def _site_json(edge: CallEdge, caller: Symbol) -> dict[str, Any]:
    return {"caller": caller.key, "file_path": edge.file_path, "line": edge.line, "callee_text": edge.callee_text}


def _not_resolved_answer(
    lookup: _Lookup, spec: str, base: dict[str, Any], warnings: list[dict[str, str]]
) -> tuple[dict[str, Any], list[dict[str, str]]]:
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
    return base, warnings


def _overload_warning(lookup: _Lookup, warnings: list[dict[str, str]]) -> None:
    if lookup.overloads > 1:
        s = lookup.symbols[0]
        warnings.append(
            warning(W_OVERLOADS, f"{s.key} is defined {lookup.overloads} times (overloads); calls cannot tell them apart")
        )


def resolved_call_edges(conn: sqlite3.Connection) -> list[tuple[str, str, str, CallEdge]]:
    """Every static call site resolved: ``(caller id, callee id, resolution, edge)``; for audits and tests."""
    graph = GraphReader(conn)
    out = []
    for row in graph.query(f"SELECT {_EDGE_COLUMNS} FROM call_edges WHERE dynamic = 0 ORDER BY file_path, line"):
        edge = CallEdge(*row)
        resolution = graph.resolve(edge)
        caller = graph.caller_of(edge)
        for target in resolution.targets:
            out.append((caller.key, target.key, resolution.how, edge))
    return out


# --- the four tools -----------------------------------------------------------------------------


def find_callers(
    conn: sqlite3.Connection, symbol_name: str, depth: int = 1, *, max_nodes: int = DEFAULT_MAX_NODES
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Definitions that call ``symbol_name``, up to ``depth`` (1..3) hops upstream."""
    spec = _check_symbol_name(symbol_name, "symbol_name")
    depth = _check_depth(depth, "depth", MAX_DEPTH)
    max_nodes = _check_cap(max_nodes, "max_nodes")
    graph = GraphReader(conn)
    warnings: list[dict[str, str]] = []
    base: dict[str, Any] = {"query": spec, "depth": depth, "callers": [], "edges": [], "dynamic_sites": []}
    lookup = graph.lookup(spec)
    if lookup.status != "ok":
        return _not_resolved_answer(lookup, spec, base, warnings)
    _overload_warning(lookup, warnings)
    target = lookup.symbols[0]
    base["symbol"] = target.node()

    levels: dict[str, int] = {target.key: 0}
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    ambiguous_edges = 0
    truncated = False
    recursive = False
    frontier = [target.key]
    for level in range(1, depth + 1):
        next_frontier: list[str] = []
        for key in frontier:
            found = _callers_of(graph, key)
            for edge, caller, how in found:
                if caller.key == target.key and key == target.key and not recursive:
                    recursive = True  # it calls itself: say so, once, without walking the cycle
                    nodes.append({**target.node(), "depth": level, "recursive": True})
                if caller.key not in levels:
                    if len(nodes) >= max_nodes:
                        truncated = True
                        continue
                    levels[caller.key] = level
                    graph.remember([caller])
                    nodes.append({**caller.node(), "depth": level})
                    if caller.id is not None:
                        next_frontier.append(caller.key)
                ambiguous_edges += how == "ambiguous"
                edges.append(_edge_json(edge, caller.key, key, how))
        frontier = next_frontier
        if truncated:
            break
    depth_limited = not truncated and any(
        _callers_of(graph, key, first_only=True, exclude=levels.keys()) for key in frontier
    )

    dynamic_sites = [_site_json(e, graph.caller_of(e)) for e in graph.dynamic_naming(target.name)]
    base.update(callers=nodes, edges=edges, dynamic_sites=dynamic_sites[:MAX_LISTED_SITES], truncated=truncated)
    if nodes:
        base.update(status="ok", message=f"{len(nodes)} caller(s) of {target.key} within depth {depth}")
    elif dynamic_sites:
        base.update(
            status="unresolved_dynamic",
            message=(
                f"no static call reaches {target.key}; {len(dynamic_sites)} dynamic call site(s) name "
                f"{target.name!r} (getattr/send/obj[...]()) and may call it: see dynamic_sites"
            ),
        )
    else:
        anonymous = graph.count_anonymous_dynamic()
        note = (
            f"; {anonymous} dynamic call site(s) in the project could not be resolved and might call it"
            if anonymous
            else ""
        )
        base.update(status="no_callers", message=f"{target.key} is defined but no call to it is in the index{note}")
    _traversal_warnings(warnings, truncated, depth_limited, ambiguous_edges, len(dynamic_sites), max_nodes, depth)
    return base, warnings


def _callers_of(
    graph: GraphReader, key: str, *, first_only: bool = False, exclude: Any = ()
) -> list[tuple[CallEdge, Symbol, str]]:
    """Call sites resolving to ``key``, with their callers (``first_only``: one caller not in ``exclude``)."""
    rows = graph.rows_of(key)
    if not rows:
        return []
    ids = {r.id for r in rows}
    out = []
    for edge in graph.edges_calling(rows[0].name):
        resolution = graph.resolve(edge)
        if any(t.id in ids for t in resolution.targets):
            caller = graph.caller_of(edge)
            if first_only and caller.key in exclude:
                continue
            out.append((edge, caller, resolution.how))
            if first_only:
                break
    return out


def find_callees(
    conn: sqlite3.Connection, symbol_name: str, depth: int = 1, *, max_nodes: int = DEFAULT_MAX_NODES
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Definitions ``symbol_name`` calls, up to ``depth`` (1..3) hops downstream."""
    spec = _check_symbol_name(symbol_name, "symbol_name")
    depth = _check_depth(depth, "depth", MAX_DEPTH)
    max_nodes = _check_cap(max_nodes, "max_nodes")
    graph = GraphReader(conn)
    warnings: list[dict[str, str]] = []
    base: dict[str, Any] = {"query": spec, "depth": depth, "callees": [], "edges": [], "external": [], "dynamic_sites": []}
    lookup = graph.lookup(spec)
    if lookup.status != "ok":
        return _not_resolved_answer(lookup, spec, base, warnings)
    _overload_warning(lookup, warnings)
    source = lookup.symbols[0]
    base["symbol"] = source.node()

    levels: dict[str, int] = {source.key: 0}
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    external: list[dict[str, Any]] = []
    dynamic_sites: list[dict[str, Any]] = []
    ambiguous_edges = 0
    truncated = False
    recursive = False
    any_call = False
    frontier = [source.key]
    for level in range(1, depth + 1):
        next_frontier: list[str] = []
        for key in frontier:
            for edge, resolution in _callees_of(graph, key):
                any_call = True
                caller = graph.caller_of(edge)
                if edge.dynamic:
                    dynamic_sites.append(_site_json(edge, caller) | {"named": None if edge.callee_name == DYNAMIC else edge.callee_name})
                    continue
                if not resolution.targets:
                    external.append(
                        {"caller": caller.key, "name": edge.callee_name, "callee_text": edge.callee_text,
                         "file_path": edge.file_path, "line": edge.line}
                    )
                    continue
                ambiguous_edges += resolution.how == "ambiguous"
                for callee in resolution.targets:
                    if callee.key == source.key and key == source.key and not recursive:
                        recursive = True
                        nodes.append({**source.node(), "depth": level, "recursive": True})
                    if callee.key not in levels:
                        if len(nodes) >= max_nodes:
                            truncated = True
                            continue
                        levels[callee.key] = level
                        graph.remember([callee])
                        nodes.append({**callee.node(), "depth": level})
                        next_frontier.append(callee.key)
                    edges.append(_edge_json(edge, key, callee.key, resolution.how))
        frontier = next_frontier
        if truncated:
            break
    depth_limited = not truncated and any(
        target.key not in levels
        for key in frontier
        for _edge, resolution in _callees_of(graph, key)
        for target in resolution.targets
    )
    base.update(
        callees=nodes,
        edges=edges,
        external=external[:MAX_LISTED_SITES],
        dynamic_sites=dynamic_sites[:MAX_LISTED_SITES],
        truncated=truncated,
    )
    if nodes:
        base.update(status="ok", message=f"{source.key} reaches {len(nodes)} definition(s) within depth {depth}")
    elif dynamic_sites:
        base.update(
            status="unresolved_dynamic",
            message=f"{source.key} makes only dynamic or external calls; their targets could not be resolved",
        )
    elif any_call:
        base.update(
            status="external_only",
            message=f"{source.key} only calls code outside the project (standard library, packages): see external",
        )
    else:
        base.update(status="no_callees", message=f"{source.key} makes no calls that the index recorded")
    _traversal_warnings(warnings, truncated, depth_limited, ambiguous_edges, len(dynamic_sites), max_nodes, depth)
    return base, warnings


def _callees_of(graph: GraphReader, key: str) -> list[tuple[CallEdge, Resolution]]:
    out = []
    for row in graph.rows_of(key):
        for edge in graph.edges_from(row):
            out.append((edge, Resolution((), "dynamic") if edge.dynamic else graph.resolve(edge)))
    return out


def _traversal_warnings(
    warnings: list[dict[str, str]],
    truncated: bool,
    depth_limited: bool,
    ambiguous_edges: int,
    dynamic_sites: int,
    max_nodes: int,
    depth: int,
) -> None:
    if truncated:
        warnings.append(warning(W_FANOUT, f"stopped at {max_nodes} nodes: the graph fans out further than listed"))
    if depth_limited:
        hint = f"; raise depth (max {MAX_DEPTH})" if depth < MAX_DEPTH else ""
        warnings.append(warning(W_DEPTH, f"more definitions lie beyond depth {depth}{hint}"))
    if ambiguous_edges:
        warnings.append(
            warning(
                W_AMBIGUOUS_EDGES,
                f"{ambiguous_edges} call(s) match several definitions of the same name; they are listed with "
                "resolution='ambiguous' rather than guessed",
            )
        )
    if dynamic_sites:
        warnings.append(warning(W_DYNAMIC, f"{dynamic_sites} dynamic call site(s) could not be resolved statically"))


def trace_path(
    conn: sqlite3.Connection,
    source_symbol: str,
    target_symbol: str,
    max_depth: int = TRACE_DEFAULT_DEPTH,
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The shortest call chain from ``source_symbol`` to ``target_symbol`` (bidirectional BFS)."""
    source_spec = _check_symbol_name(source_symbol, "source_symbol")
    target_spec = _check_symbol_name(target_symbol, "target_symbol")
    max_depth = _check_depth(max_depth, "max_depth", TRACE_MAX_DEPTH)
    graph = GraphReader(conn)
    warnings: list[dict[str, str]] = []
    base: dict[str, Any] = {"source_query": source_spec, "target_query": target_spec, "max_depth": max_depth, "path": [], "hops": []}
    ends: dict[str, Symbol] = {}
    for side, spec in (("source", source_spec), ("target", target_spec)):
        lookup = graph.lookup(spec)
        if lookup.status != "ok":
            answer, _ = _not_resolved_answer(lookup, spec, dict(base), warnings)
            answer["side"] = side
            answer["message"] = f"{side}: {answer['message']}"
            return answer, warnings
        _overload_warning(lookup, warnings)
        ends[side] = lookup.symbols[0]
    source, target = ends["source"], ends["target"]
    base.update(source=source.node(), target=target.node())
    if source.key == target.key:
        base.update(status="ok", path=[source.node()], hops=[], length=0, message="source and target are the same definition")
        return base, warnings

    # parent links: key -> (neighbour key, edge, how)
    forward: dict[str, tuple[str, CallEdge, str] | None] = {source.key: None}
    backward: dict[str, tuple[str, CallEdge, str] | None] = {target.key: None}
    forward_depth: dict[str, int] = {source.key: 0}
    backward_depth: dict[str, int] = {target.key: 0}
    forward_frontier, backward_frontier = [source.key], [target.key]
    depth_used = 0
    visits = 0
    truncated = False
    meeting: str | None = None
    while forward_frontier and backward_frontier and depth_used < max_depth and meeting is None:
        expand_forward = len(forward_frontier) <= len(backward_frontier)
        next_frontier: list[str] = []
        meets: list[str] = []
        for key in forward_frontier if expand_forward else backward_frontier:
            visits += 1
            if visits > TRACE_MAX_VISITS:
                truncated = True
                break
            if expand_forward:
                neighbours = [
                    (callee.key, edge, r.how, callee)
                    for edge, r in _callees_of(graph, key)
                    if not edge.dynamic
                    for callee in r.targets
                ]
                seen, seen_depth, other = forward, forward_depth, backward
            else:
                neighbours = [(caller.key, edge, how, caller) for edge, caller, how in _callers_of(graph, key)]
                seen, seen_depth, other = backward, backward_depth, forward
            for neighbour, edge, how, symbol in neighbours:
                if neighbour in seen:
                    continue
                graph.remember([symbol])
                seen[neighbour] = (key, edge, how)
                seen_depth[neighbour] = seen_depth[key] + 1
                next_frontier.append(neighbour)
                if neighbour in other:
                    meets.append(neighbour)
        if expand_forward:
            forward_frontier = next_frontier
        else:
            backward_frontier = next_frontier
        depth_used += 1
        if meets:
            meeting = min(meets, key=lambda k: forward_depth[k] + backward_depth[k])
        if truncated:
            break

    if meeting is None:
        reason = (
            f"gave up after {TRACE_MAX_VISITS} definitions (the graph fans out too far to be sure)"
            if truncated
            else f"searched every call chain up to {max_depth} hop(s)"
        )
        base.update(
            status="no_path",
            truncated=truncated,
            message=f"no call path from {source.key} to {target.key}: {reason}",
        )
        if truncated:
            warnings.append(warning(W_TRUNCATED, f"trace stopped after {TRACE_MAX_VISITS} definitions"))
        return base, warnings

    chain: list[str] = []
    hops: list[dict[str, Any]] = []
    key: str | None = meeting
    while key is not None:
        chain.append(key)
        link = forward[key]
        if link is not None:
            hops.append(_edge_json(link[1], link[0], key, link[2]))
        key = link[0] if link else None
    chain.reverse()
    hops.reverse()
    key = meeting
    while (link := backward[key]) is not None:
        hops.append(_edge_json(link[1], key, link[0], link[2]))
        key = link[0]
        chain.append(key)
    path = [graph.rows_of(k)[0].node() for k in chain]
    ambiguous = sum(h["resolution"] == "ambiguous" for h in hops)
    if ambiguous:
        warnings.append(
            warning(W_AMBIGUOUS_EDGES, f"{ambiguous} hop(s) of this path go through a call that matches several definitions")
        )
    base.update(status="ok", path=path, hops=hops, length=len(hops), message=f"{len(hops)}-hop call path found")
    return base, warnings


def get_import_graph(
    conn: sqlite3.Connection, file_path: str | None = None, *, limit: int = DEFAULT_IMPORT_LIMIT
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Import edges of one file (both directions) or, without ``file_path``, of the whole project."""
    if file_path is not None and (not isinstance(file_path, str) or not file_path.strip()):
        raise InvalidArgument("file_path must be a repo-relative path or omitted", field="file_path")
    limit = _check_cap(limit, "limit")
    graph = GraphReader(conn)
    warnings: list[dict[str, str]] = []
    if file_path is None:
        return _project_imports(graph, limit, warnings)
    path = file_path.strip().replace("\\", "/").removeprefix("./")
    if not _known_file(graph, path):
        return (
            {
                "file_path": path,
                "status": "not_found",
                "imports": [],
                "imported_by": [],
                "message": f"{path} is not in the index (paths are repo-relative, with '/')",
            },
            warnings,
        )
    imports = [
        _import_json(row)
        for row in graph.query(
            "SELECT file_path, module, resolved_path, resolved_kind, line, names FROM import_edges "
            "WHERE file_path = ? ORDER BY line, module",
            (path,),
        )
    ]
    importers = [
        _import_json(row)
        for row in graph.query(
            "SELECT file_path, module, resolved_path, resolved_kind, line, names FROM import_edges "
            "WHERE resolved_path = ? OR (resolved_kind = 'directory' AND resolved_path = ?) ORDER BY file_path, line",
            (path, posixpath.dirname(path)),
        )
    ]
    internal = sum(1 for i in imports if i["target"])
    return (
        {
            "file_path": path,
            "status": "ok",
            "imports": imports,
            "imported_by": importers,
            "message": (
                f"{path} imports {len(imports)} module(s) ({internal} in the project) "
                f"and is imported by {len({i['source'] for i in importers})} file(s)"
            ),
        },
        warnings,
    )


def _known_file(graph: GraphReader, path: str) -> bool:
    for sql in (
        "SELECT 1 FROM files WHERE path = ? LIMIT 1",
        "SELECT 1 FROM import_edges WHERE file_path = ? OR resolved_path = ? LIMIT 1",
        "SELECT 1 FROM symbols WHERE file_path = ? LIMIT 1",
        "SELECT 1 FROM call_edges WHERE file_path = ? LIMIT 1",
    ):
        params: tuple[str, ...] = (path, path) if sql.count("?") == 2 else (path,)
        if graph.query(sql, params):
            return True
    return False


def _import_json(row: Any) -> dict[str, Any]:
    source, module, target, kind, line, names = row
    out: dict[str, Any] = {"source": source, "module": module, "target": target, "line": line}
    if target:
        out["target_kind"] = kind or "file"
    imported = json.loads(names or "[]")
    if imported:
        out["names"] = imported
    return out


def _project_imports(
    graph: GraphReader, limit: int, warnings: list[dict[str, str]]
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    rows = graph.query(
        "SELECT file_path, module, resolved_path, resolved_kind, min(line) AS line, names FROM import_edges "
        "WHERE resolved_path IS NOT NULL GROUP BY file_path, resolved_path ORDER BY file_path, line"
    )
    edges = [_import_json(r) for r in rows[:limit]]
    external = graph.query(
        "SELECT module, count(DISTINCT file_path) AS n FROM import_edges WHERE resolved_path IS NULL "
        "GROUP BY module ORDER BY n DESC, module LIMIT ?",
        (limit,),
    )
    files = graph.query("SELECT count(DISTINCT file_path) FROM import_edges")[0][0]
    truncated = len(rows) > limit
    if truncated:
        warnings.append(warning(W_TRUNCATED, f"listed the first {limit} of {len(rows)} internal import edges"))
    data = {
        "status": "ok",
        "edges": edges,
        "external_modules": [{"module": m, "importers": n} for m, n in external],
        "files": files,
        "internal_edges": len(rows),
        "truncated": truncated,
        "message": (
            f"{len(rows)} import edge(s) between project files across {files} importing file(s); "
            f"{len(external)} external module(s)"
        ),
    }
    return data, warnings
