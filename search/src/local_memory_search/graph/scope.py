"""The data resolution works on: what a file imports, and the definitions of one name indexed for lookup."""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

from .records import Symbol

_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})
SEPARATORS = re.compile(r"::|->|\?->|\.|\\")
_GENERICS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]|\([^()]*\)")


@dataclass
class ImportScope:
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
                by_name[stem(f)].add(f)
                by_name[folder_name(f)].add(f)
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


class View:
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


class Candidates:
    """Callable definitions of one name: all, methods, the rest, and by qualified name / parent type."""

    def __init__(self, symbols: list[Symbol]):
        self.all = View(symbols)
        self.methods = View([s for s in symbols if s.kind == "method"])
        self.non_methods = View([s for s in symbols if s.kind != "method"])
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
            s for s in self._by_parent_last.get(type_name.rpartition(".")[2], ()) if member_of(s, type_name)
        ]


def receiver(callee_text: str, name: str) -> str | None:
    """The expression a call is made on (``self.client`` in ``self.client.send``), or None."""
    text = callee_text or ""
    if not text or text == name:
        return None
    if text.startswith("@"):  # Ruby instance variable receiver: @conn.write
        head = SEPARATORS.split(text)[0]
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


def enclosing_class(caller: Symbol | None) -> str | None:
    """The class a method belongs to (``Client`` for ``Client.send``); None for anything else."""
    if caller is None or caller.kind != "method" or "." not in caller.qualified_name:
        return None
    return caller.qualified_name.rsplit(".", 1)[0]


def member_of(symbol: Symbol, type_name: str) -> bool:
    """Whether ``symbol`` is defined directly in a type called ``type_name``."""
    parent = symbol.qualified_name.rsplit(".", 1)[0] if "." in symbol.qualified_name else ""
    return parent == type_name or parent.endswith("." + type_name)


@lru_cache(maxsize=65536)
def is_test_path(path: str) -> bool:
    """Whether ``path`` is test code (a tests folder, test_x.py, x_test.go, x.spec.ts, FooTest.java...)."""
    folders, _, base = path.rpartition("/")
    if any(part in _TEST_DIRS for part in folders.split("/")):
        return True
    base_stem = base.split(".", 1)[0]
    return (
        base.startswith("test_")
        or base == "conftest.py"
        or base_stem.endswith(("_test", "_spec", "Test", "Tests"))
        or ".test." in base
        or ".spec." in base
    )


def folder_name(path: str) -> str:
    """Name of the folder holding ``path``."""
    return posixpath.basename(posixpath.dirname(path))


def stem(path: str) -> str:
    """File name up to its first dot."""
    base = posixpath.basename(path)
    return base.split(".", 1)[0]


def without_constructors(symbols: list[Symbol]) -> list[Symbol]:
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
