"""Read-only call-graph and import-graph queries: find_callers, find_callees, trace_path, get_import_graph.

The indexer stores definitions (``symbols``), call sites by callee *name* (``call_edges``) and
imports (``import_edges``). A call site is resolved to definitions here, at query time, so an
edited file never leaves other files' edges pointing at dead rows. Resolution, strongest first:

1. an import alias (``from .errors import Boom as LibBoom``; ``LibBoom()`` is ``Boom()``);
2. ``self.x()`` / ``this.x()`` (or a bare call where the language has an implicit ``this``) → the
   method of the caller's own class, else an inherited one from the same file or an import;
   ``super().x()`` → a method of another class, never the caller's own;
3. a receiver whose type the extractor saw (``c = Client(); c.send()``, ``def f(c: Client)``) →
   ``Client.send``; a type the project does not define means external;
4. ``Foo.x()`` / ``Foo::x()`` → a definition qualified ``Foo.x``; an upper-case receiver that is
   no class of ours is an external type (``Vec::new``, ``Console.WriteLine``); a receiver bound to
   an external import (``copy.copy``, ``np.array``) is external; a module receiver
   (``utils.helper()``, Go ``db.Connect()``) → the function in that module, through re-exports;
5. any other receiver (a variable of unknown type): a builtin collection/string/file method name
   (``headers.get``) is external; otherwise every method of that name except the caller itself;
6. a bare call: the caller's file, then the files it imports (one hop through ``__init__`` /
   ``index`` re-exports), then (Go, Java, Kotlin, C#) its package folder, then — only where the
   language allows a bare call to reach it (C, C++, Ruby, PHP) — the one definition project-wide.

Several survivors are reported as ``ambiguous`` candidates, never merged or guessed; none means
``external``. Code outside the tests never resolves into test files.

Every answer is ``(data, warnings)``; ``data["status"]`` tells apart "not found", "ambiguous",
"no callers", "only dynamic call sites" and "no path within depth N". Traversals are breadth
first over visited sets (recursion never loops) and cut at a node cap that is reported.
Resolutions are cached per graph version (``graph_version``), never across a change.
"""

from __future__ import annotations

import json
import posixpath
import re
import sqlite3
import threading
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

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

#: kinds a call can land on (a call never runs an interface, trait, enum, type alias or module)
CALLABLE_KINDS = frozenset({"function", "method", "class", "struct"})
_TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type"})
_SUPER_RECEIVERS = frozenset({"super", "parent", "base"})
#: methods of the languages' own collections, strings and files: an untyped receiver calling one of
#: these is far likelier a dict/list/str than the project's class that happens to share the name
_BUILTIN_METHODS: dict[str, frozenset[str]] = {
    "python": frozenset(
        "append extend insert remove pop clear copy count index sort reverse get items keys values update "
        "setdefault popitem join split rsplit splitlines strip lstrip rstrip startswith endswith lower upper "
        "replace format format_map encode decode find rfind partition rpartition add discard union "
        "intersection difference issubset issuperset read readline readlines write writelines close flush "
        "seek tell fileno group groups groupdict match search sub fullmatch finditer findall isdigit isalpha "
        "isalnum isspace title capitalize zfill ljust rjust center casefold translate hex total_seconds "
        "isoformat strftime exists is_file is_dir mkdir unlink read_text write_text read_bytes write_bytes".split()
    ),
    "javascript": frozenset(
        "push pop shift unshift slice splice map filter reduce forEach find findIndex some every includes "
        "indexOf join split replace replaceAll trim toLowerCase toUpperCase startsWith endsWith then catch "
        "finally get set has delete add keys values entries toString concat flat flatMap sort reverse fill "
        "apply call bind log error warn info debug stringify parse match matchAll test exec charAt "
        "substring substr padStart padEnd repeat at".split()
    ),
}
_BUILTIN_METHODS["typescript"] = _BUILTIN_METHODS["tsx"] = _BUILTIN_METHODS["javascript"]
_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})
_SELF_RECEIVERS = frozenset({"self", "this", "cls", "Self", "$this", "static", "@"})
#: a bare call may be a method of the caller's class
_IMPLICIT_THIS = frozenset({"java", "csharp", "cpp", "kotlin", "ruby"})
#: a bare call needs a local definition or an import (or the package, where packages are folders)
_SCOPED_LANGUAGES = frozenset(
    {"python", "javascript", "typescript", "tsx", "rust", "go", "java", "kotlin", "csharp"}
)
_PACKAGE_DIR_LANGUAGES = frozenset({"go", "java", "kotlin", "csharp"})
_SEPARATORS = re.compile(r"::|->|\?->|\.|\\")
_GENERICS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]|\([^()]*\)")
_QUALIFIED_SPLIT = re.compile(r"::|#|->|\\")
_SPEC = re.compile(r"^(?P<path>[^:]+?):(?!:)(?P<name>.+)$")


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
class _Lookup:
    """Outcome of turning a user's symbol name into definitions."""

    status: str  # ok | not_found | ambiguous
    symbols: list[Symbol] = field(default_factory=list)  # every row of the one logical symbol
    candidates: list[Symbol] = field(default_factory=list)
    overloads: int = 0


def _symbol(row: sqlite3.Row | tuple[Any, ...]) -> Symbol:
    return Symbol(*row)


_SYMBOL_COLUMNS = "id, file_path, name, qualified_name, kind, start_line, end_line, chunk_id, language"
_EDGE_COLUMNS = "id, file_path, caller_symbol_id, caller_qualified, callee_name, callee_text, line, dynamic, language, receiver_type"


@dataclass
class _ImportScope:
    """What one file imports: project files/folders, names it takes (and their aliases), externals."""

    files: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)
    #: imported name → project files it comes from (re-exports are followed through these)
    names: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    #: local alias → (exported name, project files): `from x import a as b`
    aliases: dict[str, tuple[str, set[str]]] = field(default_factory=dict)
    #: local name of a whole project module → its files: `import pkg.mod as m`, `import * as m`
    module_aliases: dict[str, set[str]] = field(default_factory=dict)
    #: local names bound to code outside the project: `import copy`, `from os import path`, `np`
    external: set[str] = field(default_factory=set)
    _by_module_name: dict[str, frozenset[str]] | None = None

    def modules_named(self, name: str) -> frozenset[str]:
        """Imported files a receiver called ``name`` can mean: ``utils`` → utils.py, pkg/__init__.py, an alias."""
        if self._by_module_name is None:
            by_name: dict[str, set[str]] = defaultdict(set)
            for f in self.files:
                by_name[_stem(f)].add(f)
                by_name[_folder_name(f)].add(f)
            for alias, targets in self.module_aliases.items():
                by_name[alias] |= targets
            self._by_module_name = {k: frozenset(v) for k, v in by_name.items()}
        return self._by_module_name.get(name, frozenset())

    def add(self, module: str, target: str | None, kind: str | None, names: list[str]) -> None:
        """Fold one ``import_edges`` row in."""
        if target is None:
            head = re.split(r"[./:\\]", module.lstrip("."), maxsplit=1)[0]
            self.external.update(n for n in (head, module.rsplit(".", 1)[-1]) if n)
            for name in names:
                self.external.add(name.split(" as ")[-1])
            return
        (self.dirs if kind == "directory" else self.files).add(target)
        for name in names:
            exported, _, local = name.partition(" as ")
            if exported in ("*", "default"):
                self.module_aliases.setdefault(local, set()).add(target)
            elif local:
                self.aliases[local] = (exported, self.aliases.get(local, (exported, set()))[1] | {target})
                self.names[exported].add(target)
            else:
                self.names[exported].add(target)


class _View:
    """Definitions of one name, indexed by file and folder on first use (``run`` may have hundreds)."""

    def __init__(self, symbols: list[Symbol]):
        self.symbols = symbols
        self._by_file: dict[str, list[Symbol]] | None = None
        self._by_dir: dict[str, list[Symbol]] | None = None

    @property
    def by_file(self) -> dict[str, list[Symbol]]:
        """Definitions per file."""
        if self._by_file is None:
            self._by_file = defaultdict(list)
            for s in self.symbols:
                self._by_file[s.file_path].append(s)
        return self._by_file

    @property
    def by_dir(self) -> dict[str, list[Symbol]]:
        """Definitions per folder (a Go / Java package)."""
        if self._by_dir is None:
            self._by_dir = defaultdict(list)
            for s in self.symbols:
                self._by_dir[s.file_path.rpartition("/")[0]].append(s)
        return self._by_dir

    def imported(self, files: frozenset[str], dirs: frozenset[str]) -> list[Symbol]:
        """Those defined in one of ``files`` or directly in one of ``dirs``."""
        out: list[Symbol] = []
        if files:
            by_file = self.by_file
            for f in files:
                out += by_file.get(f, ())
        if dirs:
            by_dir = self.by_dir
            for d in dirs:
                out += by_dir.get(d, ())
        return out


class _Candidates:
    """Callable definitions of one name: all, methods, the rest, and by qualified name / parent type."""

    def __init__(self, symbols: list[Symbol]):
        self.all = _View(symbols)
        self.methods = _View([s for s in symbols if s.kind == "method"])
        self.non_methods = _View([s for s in symbols if s.kind != "method"])
        self.by_qualified: dict[str, list[Symbol]] = defaultdict(list)
        self._by_parent_last: dict[str, list[Symbol]] = defaultdict(list)
        for s in symbols:
            self.by_qualified[s.qualified_name].append(s)
            parent, _, _ = s.qualified_name.rpartition(".")
            if parent:
                self._by_parent_last[parent.rpartition(".")[2]].append(s)

    def members_of(self, type_name: str) -> list[Symbol]:
        """Those defined directly in a type called ``type_name``."""
        return [
            s for s in self._by_parent_last.get(type_name.rpartition(".")[2], ()) if _member_of(s, type_name)
        ]


class _GraphCache:
    """What resolving calls learns about one version of one graph; shared by the calls that read it."""

    def __init__(self) -> None:
        self.named: dict[str, list[Symbol]] = {}
        self.by_id: dict[int, Symbol] = {}
        self.by_key: dict[str, list[Symbol]] = {}
        self.scopes: dict[str, _ImportScope] = {}
        self.aliases: dict[str, set[str]] = {}
        self.resolved: dict[tuple[Any, ...], Resolution] = {}
        self.candidates: dict[tuple[str, bool], _Candidates] = {}
        self.edges_by_name: dict[str, list[CallEdge]] = {}
        self.edges_by_caller: dict[int | str, list[CallEdge]] = {}


_CACHES: OrderedDict[tuple[Any, ...], _GraphCache] = OrderedDict()
_CACHES_LOCK = threading.Lock()
#: graph versions kept in memory (each holds at most one resolution per stored call site)
MAX_CACHED_GRAPHS = 4


def clear_graph_cache() -> None:
    """Forget every cached graph version (benchmarks measure cold calls with it)."""
    with _CACHES_LOCK:
        _CACHES.clear()


def _graph_token(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
    """``(db file, nonce, version)`` as this connection's snapshot sees it; None when not versioned."""
    try:
        row = conn.execute("SELECT nonce, version FROM graph_version WHERE id = 1").fetchone()
        files = [r[2] for r in conn.execute("PRAGMA database_list").fetchall() if r[1] == "main"]
    except sqlite3.Error:
        return None  # a state DB from before graph_version: no sharing, every call reads afresh
    if row is None or not files or not files[0]:
        return None
    return (files[0], row[0], row[1])


def _cache_for(conn: sqlite3.Connection) -> _GraphCache:
    token = _graph_token(conn)
    if token is None:
        return _GraphCache()
    with _CACHES_LOCK:
        cache = _CACHES.get(token)
        if cache is None:
            cache = _CACHES[token] = _GraphCache()
            while len(_CACHES) > MAX_CACHED_GRAPHS:
                _CACHES.popitem(last=False)
        _CACHES.move_to_end(token)
        return cache


class GraphReader:
    """Read-only access to the graph tables through one connection.

    What it resolves is kept per graph version (``graph_version``, bumped by every indexer write in
    the same transaction), so later calls on an unchanged index skip the work, and a changed
    index is never answered from stale memory.
    """

    def __init__(self, conn: sqlite3.Connection, cache: _GraphCache | None = None):
        self.conn = conn
        shared = cache if cache is not None else _cache_for(conn)
        self._named = shared.named
        self._by_id = shared.by_id
        self._by_key = shared.by_key
        self._scopes = shared.scopes
        self._aliases = shared.aliases
        self._resolved = shared.resolved
        self._candidates = shared.candidates
        self._edges_by_name = shared.edges_by_name
        self._edges_by_caller = shared.edges_by_caller
        # the chunk mirror is the pipeline's, not versioned with the graph: per call only
        self._module_chunks: dict[tuple[str, int], str | None] = {}

    # --- raw access ----------------------------------------------------------------------------

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Rows of ``sql`` as plain tuples (``sqlite3.Row`` costs too much at graph volumes)."""
        try:
            cursor = self.conn.cursor()
            cursor.row_factory = None
            return cursor.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the code graph: {exc}") from exc

    def named(self, name: str) -> list[Symbol]:
        """Every definition called ``name``."""
        found = self._named.get(name)
        if found is None:
            found = [
                _symbol(r)
                for r in self.query(f"SELECT {_SYMBOL_COLUMNS} FROM symbols WHERE name = ?", (name,))
            ]
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
        return Symbol(
            None, file_path, MODULE, MODULE, "module", line, line, self._module_chunks[cache_key], None
        )

    def scope(self, file_path: str) -> _ImportScope:
        """What ``file_path`` imports."""
        found = self._scopes.get(file_path)
        if found is None:
            self._load_scopes([file_path])
            found = self._scopes[file_path]
        return found

    def _load_scopes(self, files: list[str]) -> None:
        missing = sorted(set(files) - self._scopes.keys())
        scopes = {f: _ImportScope() for f in missing}
        for chunk in _chunks(missing):
            for path, module, target, kind, names in self.query(
                "SELECT file_path, module, resolved_path, resolved_kind, names FROM import_edges "
                f"WHERE file_path IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            ):
                scopes[path].add(module, target, kind, json.loads(names or "[]"))
        self._scopes.update(scopes)

    def imports_of(self, file_path: str) -> tuple[frozenset[str], frozenset[str]]:
        """Project files and package folders ``file_path`` imports."""
        scope = self.scope(file_path)
        return frozenset(scope.files), frozenset(scope.dirs)

    def reexported(self, files: frozenset[str], name: str) -> frozenset[str]:
        """Files that ``files`` import ``name`` from: one hop through ``__init__`` / ``index`` re-exports."""
        out: set[str] = set()
        for f in files:
            out |= self.scope(f).names.get(name, set())
        return frozenset(out - files)

    def aliases_of(self, name: str) -> set[str]:
        """Local names ``name`` is imported under somewhere (``from x import name as alias``)."""
        if not self._aliases:
            # one scan per graph version: aliases are few, and every callers query needs them
            self._aliases["\0loaded"] = set()
            for (names,) in self.query(
                "SELECT names FROM import_edges WHERE resolved_path IS NOT NULL AND names LIKE '% as %'"
            ):
                for entry in json.loads(names):
                    exported, _, local = entry.partition(" as ")
                    if local and exported not in ("*", "default"):
                        self._aliases.setdefault(exported, set()).add(local)
        return self._aliases.get(name, set())

    def edges_calling(self, names: list[str]) -> list[CallEdge]:
        """Static call sites whose callee is written as one of ``names`` (one query per 500 new names)."""
        missing = sorted(set(names) - self._edges_by_name.keys())
        fetched: dict[str, list[CallEdge]] = {n: [] for n in missing}
        for chunk in _chunks(missing):
            for r in self.query(
                f"SELECT {_EDGE_COLUMNS} FROM call_edges WHERE dynamic = 0 AND callee_name IN "
                f"({','.join('?' * len(chunk))})",
                tuple(chunk),
            ):
                edge = CallEdge(*r)
                fetched[edge.callee_name].append(edge)
        self._prefetch([e for group in fetched.values() for e in group])
        self._edges_by_name.update(fetched)
        edges = [e for n in set(names) for e in self._edges_by_name[n]]
        edges.sort(key=lambda e: (e.file_path, e.line, e.id))
        return edges

    def dynamic_naming(self, name: str) -> list[CallEdge]:
        """Dynamic call sites whose literal names ``name`` (``getattr(o, "name")``)."""
        return [
            CallEdge(*r)
            for r in self.query(
                f"SELECT {_EDGE_COLUMNS} FROM call_edges WHERE callee_name = ? AND dynamic = 1", (name,)
            )
        ]

    def edges_from(self, symbols: list[Symbol]) -> list[CallEdge]:
        """Call sites inside ``symbols`` (static and dynamic; ``<module>`` means top-level code)."""
        keys: list[int | str] = sorted({s.id if s.id is not None else s.file_path for s in symbols}, key=str)
        ids = [k for k in keys if isinstance(k, int) and k not in self._edges_by_caller]
        fetched: dict[int | str, list[CallEdge]] = {k: [] for k in ids}
        for chunk in _chunks(ids):
            for r in self.query(
                f"SELECT {_EDGE_COLUMNS} FROM call_edges WHERE caller_symbol_id IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            ):
                edge = CallEdge(*r)
                fetched[edge.caller_symbol_id].append(edge)  # type: ignore[index]
        for path in (k for k in keys if isinstance(k, str) and k not in self._edges_by_caller):
            fetched[path] = [
                CallEdge(*r)
                for r in self.query(
                    f"SELECT {_EDGE_COLUMNS} FROM call_edges WHERE file_path = ? AND caller_symbol_id IS NULL",
                    (path,),
                )
            ]
        self._prefetch([e for group in fetched.values() for e in group])
        self._edges_by_caller.update(fetched)
        edges = [e for k in keys for e in self._edges_by_caller[k]]
        edges.sort(key=lambda e: (e.file_path, e.line, e.id))
        return edges

    def _prefetch(self, edges: list[CallEdge]) -> None:
        """Load, in a few queries, the callers, imports and candidates that resolving ``edges`` needs."""
        ids = sorted(
            {e.caller_symbol_id for e in edges if e.caller_symbol_id is not None} - self._by_id.keys()
        )
        for chunk in _chunks(ids):
            for r in self.query(
                f"SELECT {_SYMBOL_COLUMNS} FROM symbols WHERE id IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            ):
                self._by_id[r[0]] = _symbol(r)
        self._load_scopes(sorted({e.file_path for e in edges}))
        names = sorted({e.callee_name for e in edges if not e.dynamic} - self._named.keys())
        fetched: dict[str, list[Symbol]] = {n: [] for n in names}
        for chunk in _chunks(names):
            for r in self.query(
                f"SELECT {_SYMBOL_COLUMNS} FROM symbols WHERE name IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            ):
                symbol = _symbol(r)
                fetched[symbol.name].append(symbol)
                self._by_id[symbol.id] = symbol  # type: ignore[index]
        self._named.update(fetched)

    def count_anonymous_dynamic(self) -> int:
        """Dynamic call sites whose target no literal names (``handlers[key]()``)."""
        return int(
            self.query("SELECT count(*) FROM call_edges WHERE dynamic = 1 AND callee_name = ?", (DYNAMIC,))[
                0
            ][0]
        )

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
            found = self._resolve(edge)
            if found.how == "ambiguous" and len(found.targets) > MAX_AMBIGUOUS:
                found = Resolution((), TOO_AMBIGUOUS, len(found.targets))
            self._resolved[cache_key] = found
        return found

    def candidates(self, name: str, in_tests: bool = True) -> _Candidates:
        """Callable definitions named ``name``, indexed for resolution (built once per name).

        Code outside the tests never calls into them: test helpers are candidates only for tests.
        """
        found = self._candidates.get((name, in_tests))
        if found is None:
            symbols = [s for s in self.named(name) if s.kind in CALLABLE_KINDS]
            if not in_tests:
                symbols = [s for s in symbols if not _is_test_path(s.file_path)]
            found = self._candidates[(name, in_tests)] = _Candidates(_without_constructors(symbols))
        return found

    def _resolve(self, edge: CallEdge) -> Resolution:
        name = edge.callee_name
        language = edge.language or ""
        scope = self.scope(edge.file_path)
        receiver = _receiver(edge.callee_text, name)
        in_tests = _is_test_path(edge.file_path)
        if receiver is None and name in scope.aliases:
            # `from .exceptions import SSLError as RequestsSSLError`: RequestsSSLError() is SSLError()
            exported, targets = scope.aliases[name]
            view = self.candidates(exported, in_tests).non_methods
            found = view.imported(frozenset(targets), frozenset()) or view.imported(
                self.reexported(frozenset(targets), exported), frozenset()
            )
            return Resolution(
                tuple(found), "imported" if len(found) == 1 else "ambiguous" if found else "external"
            )
        candidates = self.candidates(name, in_tests)
        if not candidates.all.symbols:
            return Resolution((), "external")
        caller = self.by_id(edge.caller_symbol_id)
        caller_class = _enclosing_class(caller)
        is_self = receiver in _SELF_RECEIVERS or (receiver is None and language in _IMPLICIT_THIS)
        files, dirs = frozenset(scope.files), frozenset(scope.dirs)

        if is_self and caller_class is not None:
            own = candidates.by_qualified.get(f"{caller_class}.{name}", [])
            # the class may be split across files (C++ header + source): the same file first
            here = [c for c in own if c.file_path == edge.file_path]
            imported = [c for c in own if c.file_path in files]
            for group in (here, imported, own if len(own) == 1 else []):
                if group:
                    return Resolution(tuple(group), "self" if len(group) == 1 else "ambiguous")
        if receiver in _SELF_RECEIVERS:
            # an inherited method: a base class is local or imported, never "anywhere"
            return self._tiers(edge, candidates.methods, strict=True)
        if receiver in _SUPER_RECEIVERS:
            # a base class's method: never the caller's own
            bases = [c for c in candidates.methods.symbols if c.qualified_name != f"{caller_class}.{name}"]
            return self._tiers(edge, _View(bases), strict=False)

        if receiver is not None and edge.receiver_type:
            typed = candidates.members_of(edge.receiver_type)
            if len(typed) == 1:
                return Resolution((typed[0],), "typed")
            if typed:
                picked = self._tiers(edge, _View(typed), strict=False)
                return Resolution(picked.targets, "typed" if len(picked.targets) == 1 else "ambiguous")
            if not self.is_project_type(edge.receiver_type):
                return Resolution((), "external")  # sock = Socket(): a type of someone else's
            # a project type that inherits the method: fall through to the name-based tiers

        if receiver is not None:
            parts = _SEPARATORS.split(receiver)
            head, last = parts[0], parts[-1]
            if head in scope.external and head not in scope.module_aliases:
                return Resolution((), "external")  # copy.copy(), os.path.join(), np.array()
            typed = candidates.members_of(last)
            if len(typed) == 1:
                return Resolution((typed[0],), "qualified")
            if typed:
                picked = self._tiers(edge, _View(typed), strict=False)
                return Resolution(picked.targets, "qualified" if len(picked.targets) == 1 else "ambiguous")
            if last[:1].isupper() and last.isidentifier():
                return Resolution((), "external")  # a type of someone else's: Vec::new, Console.WriteLine
            module_files = scope.modules_named(last)
            module_dirs = frozenset(d for d in dirs if posixpath.basename(d) == last)
            module_functions = candidates.non_methods.imported(module_files, module_dirs) or (
                candidates.non_methods.imported(self.reexported(module_files, name), frozenset())
            )
            if module_functions:  # utils.helper() after `import utils`; db.Connect() in Go
                return self._tiers(edge, _View(module_functions), strict=False)
            if name in _BUILTIN_METHODS.get(language, ()):
                return Resolution((), "external")  # headers.get(), parts.append(): a builtin type's method
            # a variable's method, type unknown: any method of that name, and nearness proves nothing;
            # never the caller itself (x.close() inside close() delegates, it does not recurse)
            if len(candidates.methods.symbols) > MAX_AMBIGUOUS + 1:
                return Resolution((), TOO_AMBIGUOUS, len(candidates.methods.symbols))
            methods = [m for m in candidates.methods.symbols if m.id != edge.caller_symbol_id]
            return Resolution(
                tuple(methods), "unique" if len(methods) == 1 else "ambiguous" if methods else "external"
            )

        # a bare call: functions and classes; methods only through a static import (Java/Kotlin/C#)
        if language == "ruby":
            bare = candidates.all
        elif language != "python" and (imported_methods := candidates.methods.imported(files, frozenset())):
            bare = _View(candidates.non_methods.symbols + imported_methods)
        else:
            bare = candidates.non_methods
        return self._tiers(edge, bare, strict=language in _SCOPED_LANGUAGES)

    def is_project_type(self, name: str) -> bool:
        """Whether the project defines a class-like type called ``name``."""
        return any(s.kind in _TYPE_KINDS for s in self.named(name))

    def _tiers(self, edge: CallEdge, view: _View, *, strict: bool) -> Resolution:
        if not view.symbols:
            return Resolution((), "external")
        same_file = view.by_file.get(edge.file_path)
        if same_file:
            return Resolution(tuple(same_file), "same_file" if len(same_file) == 1 else "ambiguous")
        files, dirs = self.imports_of(edge.file_path)
        imported = view.imported(files, dirs) or view.imported(
            self.reexported(files, edge.callee_name), frozenset()
        )
        if imported:
            return Resolution(tuple(imported), "imported" if len(imported) == 1 else "ambiguous")
        if (edge.language or "") in _PACKAGE_DIR_LANGUAGES:
            same_package = view.by_dir.get(edge.file_path.rpartition("/")[0])
            if same_package:
                return Resolution(
                    tuple(same_package), "same_package" if len(same_package) == 1 else "ambiguous"
                )
        if strict:
            return Resolution((), "external")  # a builtin or a name from an unresolved import
        return Resolution(tuple(view.symbols), "unique" if len(view.symbols) == 1 else "ambiguous")

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


def _chunks(items: list[Any], size: int = 500) -> list[list[Any]]:
    # SQLite caps bound parameters; 500 per IN list stays far below every build's limit
    return [items[i : i + size] for i in range(0, len(items), size)]


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


@lru_cache(maxsize=65536)
def _is_test_path(path: str) -> bool:
    """Whether ``path`` is test code (a tests folder, test_x.py, x_test.go, x.spec.ts, FooTest.java...)."""
    folders, _, base = path.rpartition("/")
    if any(part in _TEST_DIRS for part in folders.split("/")):
        return True
    stem = base.split(".", 1)[0]
    return (
        base.startswith("test_")
        or base == "conftest.py"
        or stem.endswith(("_test", "_spec", "Test", "Tests"))
        or ".test." in base
        or ".spec." in base
    )


def _folder_name(path: str) -> str:
    return posixpath.basename(posixpath.dirname(path))


def _stem(path: str) -> str:
    base = posixpath.basename(path)
    return base.split(".", 1)[0]


def _without_constructors(symbols: list[Symbol]) -> list[Symbol]:
    """Drop ``Foo.Foo`` constructors when the class ``Foo`` itself is a candidate: ``new Foo()`` is one target."""
    classes = {(s.file_path, s.qualified_name) for s in symbols if s.kind in ("class", "struct")}
    return [
        s
        for s in symbols
        if not (
            s.kind == "method"
            and (s.file_path, s.qualified_name.rsplit(".", 1)[0]) in classes
            and s.qualified_name.endswith(f"{s.name}.{s.name}")
        )
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
    return {
        "caller": caller.key,
        "file_path": edge.file_path,
        "line": edge.line,
        "callee_text": edge.callee_text,
    }


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
            warning(
                W_OVERLOADS,
                f"{s.key} is defined {lookup.overloads} times (overloads); calls cannot tell them apart",
            )
        )


def resolved_call_edges(conn: sqlite3.Connection) -> list[tuple[str, str, str, CallEdge]]:
    """Every static call site resolved: ``(caller id, callee id, resolution, edge)``; for audits and tests."""
    graph = GraphReader(conn)
    edges = [
        CallEdge(*row)
        for row in graph.query(
            f"SELECT {_EDGE_COLUMNS} FROM call_edges WHERE dynamic = 0 ORDER BY file_path, line"
        )
    ]
    graph._prefetch(edges)
    out = []
    for edge in edges:
        resolution = graph.resolve(edge)
        caller = graph.caller_of(edge)
        for target in resolution.targets:
            out.append((caller.key, target.key, resolution.how, edge))
    return out


def _callers_level(
    graph: GraphReader, keys: list[str], unresolved: dict[str, list[CallEdge]] | None = None
) -> list[tuple[str, CallEdge, Symbol, str]]:
    """``(callee key, edge, caller, resolution)`` for every static call site landing on one of ``keys``.

    Call sites of the same name too ambiguous to resolve are collected per key in ``unresolved``.
    """
    wanted: dict[str, set[str]] = defaultdict(set)
    for key in keys:
        rows = graph.rows_of(key)
        if rows:
            for written in {rows[0].name} | graph.aliases_of(rows[0].name):
                wanted[written].add(key)
    out = []
    for edge in graph.edges_calling(list(wanted)):
        resolution = graph.resolve(edge)
        if resolution.how == TOO_AMBIGUOUS:
            if unresolved is not None:
                for key in wanted[edge.callee_name]:
                    unresolved.setdefault(key, []).append(edge)
            continue
        for target in resolution.targets:
            if target.key in wanted[edge.callee_name]:
                out.append((target.key, edge, graph.caller_of(edge), resolution.how))
    return out


def _callees_level(graph: GraphReader, keys: list[str]) -> list[tuple[str, CallEdge, Resolution]]:
    """``(caller key, edge, resolution)`` for every call site inside one of ``keys`` (dynamic ones too)."""
    symbols = [row for key in keys for row in graph.rows_of(key)]
    out = []
    for edge in graph.edges_from(symbols):
        caller = graph.caller_of(edge)
        out.append((caller.key, edge, Resolution((), "dynamic") if edge.dynamic else graph.resolve(edge)))
    return out


def find_callers(
    conn: sqlite3.Connection, symbol_name: str, depth: int = 1, *, max_nodes: int = DEFAULT_MAX_NODES
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Definitions that call ``symbol_name``, up to ``depth`` (1..3) hops upstream."""
    spec = _check_symbol_name(symbol_name, "symbol_name")
    depth = _check_depth(depth, "depth", MAX_DEPTH)
    max_nodes = _check_cap(max_nodes, "max_nodes")
    graph = GraphReader(conn)
    warnings: list[dict[str, str]] = []
    base: dict[str, Any] = {
        "query": spec,
        "depth": depth,
        "callers": [],
        "edges": [],
        "dynamic_sites": [],
        "ambiguous_sites": [],
        "unresolved_sites": 0,
    }
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
    truncated = recursive = False
    frontier = [target.key]
    unresolved: dict[str, list[CallEdge]] = {}
    for level in range(1, depth + 1):
        next_frontier: list[str] = []
        for callee_key, edge, caller, how in _callers_level(
            graph, frontier, unresolved if level == 1 else None
        ):
            if caller.key == target.key == callee_key and not recursive:
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
            edges.append(_edge_json(edge, caller.key, callee_key, how))
        frontier = next_frontier
        if truncated or not frontier:
            break
    depth_limited = (
        not truncated
        and bool(frontier)
        and any(c.key not in levels for _, _, c, _ in _callers_level(graph, frontier))
    )

    dynamic_sites = [_site_json(e, graph.caller_of(e)) for e in graph.dynamic_naming(target.name)]
    too_ambiguous = unresolved.get(target.key, [])
    base.update(
        callers=nodes,
        edges=edges,
        dynamic_sites=dynamic_sites[:MAX_LISTED_SITES],
        ambiguous_sites=[_site_json(e, graph.caller_of(e)) for e in too_ambiguous[:MAX_LISTED_SITES]],
        unresolved_sites=len(too_ambiguous),
        truncated=truncated,
    )
    if too_ambiguous:
        warnings.append(
            warning(
                W_UNRESOLVED,
                f"{len(too_ambiguous)} call site(s) of {target.name!r} on receivers of unknown type match more "
                f"than {MAX_AMBIGUOUS} definitions and may call it: listed in ambiguous_sites, not as callers",
            )
        )
    if nodes:
        base.update(status="ok", message=f"{len(nodes)} caller(s) of {target.key} within depth {depth}")
    elif too_ambiguous:
        base.update(
            status="unresolved_ambiguous",
            message=(
                f"no call resolves to {target.key}; {len(too_ambiguous)} call site(s) of {target.name!r} could "
                f"(their receivers' types are unknown and over {MAX_AMBIGUOUS} definitions share the name)"
            ),
        )
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
        base.update(
            status="no_callers", message=f"{target.key} is defined but no call to it is in the index{note}"
        )
    _traversal_warnings(
        warnings, truncated, depth_limited, ambiguous_edges, len(dynamic_sites), max_nodes, depth
    )
    return base, warnings


def find_callees(
    conn: sqlite3.Connection, symbol_name: str, depth: int = 1, *, max_nodes: int = DEFAULT_MAX_NODES
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Definitions ``symbol_name`` calls, up to ``depth`` (1..3) hops downstream."""
    spec = _check_symbol_name(symbol_name, "symbol_name")
    depth = _check_depth(depth, "depth", MAX_DEPTH)
    max_nodes = _check_cap(max_nodes, "max_nodes")
    graph = GraphReader(conn)
    warnings: list[dict[str, str]] = []
    base: dict[str, Any] = {
        "query": spec,
        "depth": depth,
        "callees": [],
        "edges": [],
        "external": [],
        "dynamic_sites": [],
        "ambiguous_sites": [],
    }
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
    ambiguous_sites: list[dict[str, Any]] = []
    ambiguous_edges = 0
    truncated = recursive = any_call = False
    frontier = [source.key]
    for level in range(1, depth + 1):
        next_frontier: list[str] = []
        for caller_key, edge, resolution in _callees_level(graph, frontier):
            any_call = True
            if edge.dynamic:
                named = None if edge.callee_name == DYNAMIC else edge.callee_name
                dynamic_sites.append(_site_json(edge, graph.caller_of(edge)) | {"named": named})
                continue
            if resolution.how == TOO_AMBIGUOUS:
                ambiguous_sites.append(
                    _site_json(edge, graph.caller_of(edge))
                    | {"name": edge.callee_name, "definitions": resolution.candidates}
                )
                continue
            if not resolution.targets:
                external.append(
                    {
                        "caller": caller_key,
                        "name": edge.callee_name,
                        "callee_text": edge.callee_text,
                        "file_path": edge.file_path,
                        "line": edge.line,
                    }
                )
                continue
            ambiguous_edges += resolution.how == "ambiguous"
            for callee in resolution.targets:
                if callee.key == source.key == caller_key and not recursive:
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
                edges.append(_edge_json(edge, caller_key, callee.key, resolution.how))
        frontier = next_frontier
        if truncated or not frontier:
            break
    depth_limited = (
        not truncated
        and bool(frontier)
        and any(t.key not in levels for _, _, r in _callees_level(graph, frontier) for t in r.targets)
    )
    base.update(
        callees=nodes,
        edges=edges,
        external=external[:MAX_LISTED_SITES],
        dynamic_sites=dynamic_sites[:MAX_LISTED_SITES],
        ambiguous_sites=ambiguous_sites[:MAX_LISTED_SITES],
        truncated=truncated,
    )
    if ambiguous_sites:
        warnings.append(
            warning(
                W_UNRESOLVED,
                f"{len(ambiguous_sites)} call site(s) on receivers of unknown type match more than "
                f"{MAX_AMBIGUOUS} definitions each: listed in ambiguous_sites, not followed",
            )
        )
    if nodes:
        base.update(
            status="ok", message=f"{source.key} reaches {len(nodes)} definition(s) within depth {depth}"
        )
    elif dynamic_sites or ambiguous_sites:
        base.update(
            status="unresolved_dynamic" if dynamic_sites else "unresolved_ambiguous",
            message=f"{source.key} makes only dynamic, ambiguous or external calls; none resolves to one definition",
        )
    elif any_call:
        base.update(
            status="external_only",
            message=f"{source.key} only calls code outside the project (standard library, packages): see external",
        )
    else:
        base.update(status="no_callees", message=f"{source.key} makes no calls that the index recorded")
    _traversal_warnings(
        warnings, truncated, depth_limited, ambiguous_edges, len(dynamic_sites), max_nodes, depth
    )
    return base, warnings


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
        warnings.append(
            warning(W_FANOUT, f"stopped at {max_nodes} nodes: the graph fans out further than listed")
        )
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
        warnings.append(
            warning(W_DYNAMIC, f"{dynamic_sites} dynamic call site(s) could not be resolved statically")
        )


#: parent link of a traced definition: (neighbour key, call site, resolution)
_Link = tuple[str, CallEdge, str]


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
    base: dict[str, Any] = {
        "source_query": source_spec,
        "target_query": target_spec,
        "max_depth": max_depth,
        "path": [],
        "hops": [],
    }
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
        base.update(
            status="ok",
            path=[source.node()],
            hops=[],
            length=0,
            message="source and target are the same definition",
        )
        return base, warnings

    # Search from both ends, always widening the smaller frontier: far fewer definitions are
    # touched than by a one-sided search when the graph fans out.
    forward: dict[str, _Link | None] = {source.key: None}
    backward: dict[str, _Link | None] = {target.key: None}
    depth_of = {("f", source.key): 0, ("b", target.key): 0}
    forward_frontier, backward_frontier = [source.key], [target.key]
    hops_searched = visits = 0
    truncated = False
    meeting: str | None = None
    while forward_frontier and backward_frontier and hops_searched < max_depth:
        go_forward = len(forward_frontier) <= len(backward_frontier)
        frontier = forward_frontier if go_forward else backward_frontier
        if visits + len(frontier) > TRACE_MAX_VISITS:
            truncated = True
            break
        visits += len(frontier)
        next_frontier: list[str] = []
        meets: list[str] = []
        if go_forward:
            links = [
                (callee, (caller_key, edge, r.how))
                for caller_key, edge, r in _callees_level(graph, frontier)
                if not edge.dynamic
                for callee in r.targets
            ]
            seen, other, tag = forward, backward, "f"
        else:
            links = [
                (caller, (callee_key, edge, how))
                for callee_key, edge, caller, how in _callers_level(graph, frontier)
            ]
            seen, other, tag = backward, forward, "b"
        for symbol, link in links:
            if symbol.key in seen:
                continue
            graph.remember([symbol])
            seen[symbol.key] = link
            depth_of[(tag, symbol.key)] = depth_of[(tag, link[0])] + 1
            next_frontier.append(symbol.key)
            if symbol.key in other:
                meets.append(symbol.key)
        if go_forward:
            forward_frontier = next_frontier
        else:
            backward_frontier = next_frontier
        hops_searched += 1
        if meets:
            meeting = min(meets, key=lambda k: depth_of[("f", k)] + depth_of[("b", k)])
            break

    if meeting is None:
        reason = (
            f"gave up after {visits} definitions (the graph fans out too far to be sure)"
            if truncated
            else f"searched every call chain up to {max_depth} hop(s)"
        )
        base.update(
            status="no_path",
            truncated=truncated,
            message=f"no call path from {source.key} to {target.key}: {reason}",
        )
        if truncated:
            warnings.append(warning(W_TRUNCATED, f"trace stopped after {visits} definitions"))
        return base, warnings

    chain: list[str] = [meeting]
    hops: list[dict[str, Any]] = []
    key = meeting
    while (parent := forward[key]) is not None:
        hops.append(_edge_json(parent[1], parent[0], key, parent[2]))
        key = parent[0]
        chain.append(key)
    chain.reverse()
    hops.reverse()
    key = meeting
    while (parent := backward[key]) is not None:
        hops.append(_edge_json(parent[1], key, parent[0], parent[2]))
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
        warnings.append(
            warning(W_TRUNCATED, f"listed the first {limit} of {len(rows)} internal import edges")
        )
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
