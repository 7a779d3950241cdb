"""Call resolution: which definitions a stored call site lands on, with each language's policy.

A call site is resolved to definitions here, at query time, so an edited file never leaves other
files' edges pointing at dead rows. Resolution, strongest first:

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
   ``index`` re-exports), then (package-folder languages) its package folder, then — only where the
   language allows a bare call to reach it (not ``scoped``) — the one definition project-wide.

What each language allows (implicit ``this``, scoped bare calls, package folders, builtin method
names) is ``GraphPolicy`` data in ``local_memory_shared.languages``. Several survivors are reported
as ``ambiguous`` candidates, never merged or guessed; none means ``external``. Code outside the tests
never resolves into test files.
"""

from __future__ import annotations

import posixpath

from local_memory_shared.languages import (
    CALLABLE_KINDS,
    SELF_RECEIVERS,
    SUPER_RECEIVERS,
    SYMBOL_TYPE_KINDS,
    graph_policy,
)

from .lookup import lookup_symbol
from .reader import SqlReader
from .records import MAX_AMBIGUOUS, TOO_AMBIGUOUS, CallEdge, Lookup, Resolution, Symbol
from .scope import (
    SEPARATORS,
    Candidates,
    ImportScope,
    View,
    enclosing_class,
    is_test_path,
    receiver,
    without_constructors,
)

_EXTERNAL = Resolution((), "external")


def _one_or_ambiguous(found: list[Symbol], how: str) -> Resolution:
    if not found:
        return _EXTERNAL
    return Resolution(tuple(found), how if len(found) == 1 else "ambiguous")


class GraphReader(SqlReader):
    """The graph tables plus call resolution; what it resolves is memoised per graph version."""

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

    def candidates(self, name: str, in_tests: bool = True) -> Candidates:
        """Callable definitions named ``name``, indexed for resolution (built once per name).

        Code outside the tests never calls into them: test helpers are candidates only for tests.
        """
        found = self._candidates.get((name, in_tests))
        if found is None:
            symbols = [s for s in self.named(name) if s.kind in CALLABLE_KINDS]
            if not in_tests:
                symbols = [s for s in symbols if not is_test_path(s.file_path)]
            found = self._candidates[(name, in_tests)] = Candidates(without_constructors(symbols))
        return found

    def is_project_type(self, name: str) -> bool:
        """Whether the project defines a class-like type called ``name``."""
        return any(s.kind in SYMBOL_TYPE_KINDS for s in self.named(name))

    def lookup(self, spec: str) -> Lookup:
        """Definitions a user's ``name`` / ``Class.method`` / ``path/to/file.py:Class.method`` means."""
        return lookup_symbol(self, spec)

    # --- the resolution order ------------------------------------------------------------------

    def _resolve(self, edge: CallEdge) -> Resolution:
        scope = self.scope(edge.file_path)
        on = receiver(edge.callee_text, edge.callee_name)
        in_tests = is_test_path(edge.file_path)
        if on is None and edge.callee_name in scope.aliases:
            return self._aliased(scope, edge.callee_name, in_tests)
        candidates = self.candidates(edge.callee_name, in_tests)
        if not candidates.all.symbols:
            return _EXTERNAL
        found = self._on_self(edge, on, candidates, scope)
        if found is None and on is not None and edge.receiver_type:
            found = self._typed(edge, candidates)
        if found is None and on is not None:
            found = self._on_receiver(edge, on, candidates, scope)
        return found if found is not None else self._bare(edge, candidates, scope)

    def _aliased(self, scope: ImportScope, name: str, in_tests: bool) -> Resolution:
        # `from .exceptions import SSLError as RequestsSSLError`: RequestsSSLError() is SSLError()
        exported, targets = scope.aliases[name]
        view = self.candidates(exported, in_tests).non_methods
        found = view.imported(frozenset(targets), frozenset()) or view.imported(
            self.reexported(frozenset(targets), exported), frozenset()
        )
        return _one_or_ambiguous(found, "imported")

    def _on_self(
        self, edge: CallEdge, on: str | None, candidates: Candidates, scope: ImportScope
    ) -> Resolution | None:
        """``self.x()`` / an implicit ``this``: the caller's own class first, then inherited; super: a base's."""
        name = edge.callee_name
        caller_class = enclosing_class(self.by_id(edge.caller_symbol_id))
        is_self = on in SELF_RECEIVERS or (on is None and graph_policy(edge.language).implicit_this)
        if is_self and caller_class is not None:
            own = candidates.by_qualified.get(f"{caller_class}.{name}", [])
            # the class may be split across files (C++ header + source): the same file first
            here = [c for c in own if c.file_path == edge.file_path]
            imported = [c for c in own if c.file_path in scope.files]
            for group in (here, imported, own if len(own) == 1 else []):
                if group:
                    return Resolution(tuple(group), "self" if len(group) == 1 else "ambiguous")
        if on in SELF_RECEIVERS:
            # an inherited method: a base class is local or imported, never "anywhere"
            return self._tiers(edge, candidates.methods, strict=True)
        if on in SUPER_RECEIVERS:
            # a base class's method: never the caller's own
            bases = [c for c in candidates.methods.symbols if c.qualified_name != f"{caller_class}.{name}"]
            return self._tiers(edge, View(bases), strict=False)
        return None

    def _typed(self, edge: CallEdge, candidates: Candidates) -> Resolution | None:
        """A receiver whose type the extractor saw."""
        assert edge.receiver_type is not None
        picked = self._members(edge, candidates, edge.receiver_type, "typed")
        if picked is not None:
            return picked
        if not self.is_project_type(edge.receiver_type):
            return _EXTERNAL  # sock = Socket(): a type of someone else's
        return None  # a project type that inherits the method: fall through to the name-based tiers

    def _members(self, edge: CallEdge, candidates: Candidates, type_name: str, how: str) -> Resolution | None:
        typed = candidates.members_of(type_name)
        if len(typed) == 1:
            return Resolution((typed[0],), how)
        if typed:
            picked = self._tiers(edge, View(typed), strict=False)
            return Resolution(picked.targets, how if len(picked.targets) == 1 else "ambiguous")
        return None

    def _on_receiver(self, edge: CallEdge, on: str, candidates: Candidates, scope: ImportScope) -> Resolution:
        """``Foo.x()``, ``module.f()``, or a variable's method of unknown type."""
        name = edge.callee_name
        parts = SEPARATORS.split(on)
        head, last = parts[0], parts[-1]
        if head in scope.external and head not in scope.module_aliases:
            return _EXTERNAL  # copy.copy(), os.path.join(), np.array()
        picked = self._members(edge, candidates, last, "qualified")
        if picked is not None:
            return picked
        if last[:1].isupper() and last.isidentifier():
            return _EXTERNAL  # a type of someone else's: Vec::new, Console.WriteLine
        module_files = scope.modules_named(last)
        module_dirs = frozenset(d for d in scope.dirs if posixpath.basename(d) == last)
        module_functions = candidates.non_methods.imported(module_files, module_dirs) or (
            candidates.non_methods.imported(self.reexported(module_files, name), frozenset())
        )
        if module_functions:  # utils.helper() after `import utils`; db.Connect() in Go
            return self._tiers(edge, View(module_functions), strict=False)
        if name in graph_policy(edge.language).builtin_methods:
            return _EXTERNAL  # headers.get(), parts.append(): a builtin type's method
        # a variable's method, type unknown: any method of that name, and nearness proves nothing;
        # never the caller itself (x.close() inside close() delegates, it does not recurse)
        if len(candidates.methods.symbols) > MAX_AMBIGUOUS + 1:
            return Resolution((), TOO_AMBIGUOUS, len(candidates.methods.symbols))
        methods = [m for m in candidates.methods.symbols if m.id != edge.caller_symbol_id]
        return _one_or_ambiguous(methods, "unique")

    def _bare(self, edge: CallEdge, candidates: Candidates, scope: ImportScope) -> Resolution:
        """A bare call: functions and classes; methods only where the language lets a bare call reach them."""
        policy = graph_policy(edge.language)
        if policy.bare_call_methods == "all":
            bare = candidates.all
        elif policy.bare_call_methods == "imported" and (
            imported_methods := candidates.methods.imported(frozenset(scope.files), frozenset())
        ):
            bare = View(candidates.non_methods.symbols + imported_methods)  # a static import
        else:
            bare = candidates.non_methods
        return self._tiers(edge, bare, strict=policy.scoped)

    def _tiers(self, edge: CallEdge, view: View, *, strict: bool) -> Resolution:
        """Same file, then imports (and re-exports), then the package folder, then anywhere unless strict."""
        if not view.symbols:
            return _EXTERNAL
        same_file = view.by_file.get(edge.file_path)
        if same_file:
            return _one_or_ambiguous(same_file, "same_file")
        files, dirs = self.imports_of(edge.file_path)
        imported = view.imported(files, dirs) or view.imported(
            self.reexported(files, edge.callee_name), frozenset()
        )
        if imported:
            return _one_or_ambiguous(imported, "imported")
        if graph_policy(edge.language).package_dirs:
            same_package = view.by_dir.get(edge.file_path.rpartition("/")[0])
            if same_package:
                return _one_or_ambiguous(same_package, "same_package")
        if strict:
            return _EXTERNAL  # a builtin or a name from an unresolved import
        return _one_or_ambiguous(view.symbols, "unique")
