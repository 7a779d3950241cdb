"""Definitions, call sites and imports of one file, from tree-sitter tag queries kept as data.

Each language has ``queries/<language>-tags.scm`` (the aider / GitHub "tags" convention,
extended so calls can be attributed function to function):

- ``@definition.<kind>`` on a definition node (its span) and ``@name.definition.<kind>`` on its
  name; ``@qualifier.definition.<kind>`` on a type that qualifies the name (Go receiver,
  Kotlin extension receiver, ``Foo.prototype.bar``).
- ``@scope`` / ``@name.scope``: a container that qualifies nested definitions without being one
  (a Rust ``impl`` block).
- ``@reference.call`` on a call site and ``@name.reference.call`` on the callee's last identifier.
- ``@reference.dynamic_call``: a call whose target is computed at run time (``getattr``,
  ``obj[key]()``, ``send``); ``@name.reference.dynamic_call`` when a literal spells the target.
- ``@name.local`` / ``@type.local``: a variable (``x``, ``self.x``, ``@x``) and the type it is
  declared or constructed with; a later ``x.send()`` in the same definition (or ``self.x.send()``
  in the same class) records that type as the call's ``receiver_type``.
- ``@reference.import`` on an import statement, ``@name.reference.import`` on the module as
  written, ``@imported.reference.import`` on each imported name (``@alias.reference.import`` on its
  local alias: stored as ``"name as alias"``; an alias of the whole module is ``"* as alias"``,
  a JS default import ``"default as name"`` via ``@default.reference.import``), and
  ``@prefix.reference.import`` on the namespace prefix of a grouped import (PHP ``use A\\{B, C}``).

Captures starting with ``_`` only feed predicates. When several patterns capture the same
definition node, the first pattern in the file wins, so specific patterns come first. A query
file may start with ``; inherits: <language>`` to include another language's patterns first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from local_memory_shared.languages import GRAPH_LANGUAGES, LANGUAGES, modules_hold_methods, syntax_of
from local_memory_shared.languages import SYMBOL_CONTAINER_KINDS as CONTAINER_KINDS

from .. import treesitter

MODULE_CALLER = "<module>"
DYNAMIC_CALLEE = "<dynamic>"

_INHERITS = re.compile(r"^;\s*inherits:\s*([a-z_]+)\s*$", re.MULTILINE)
_QUALIFIER_SPLIT = re.compile(r"::|\.|#|->|\\")
_WHITESPACE = re.compile(r"\s+")
_LEADING_NOISE = re.compile(r"^(?:\s*(?:new\s+|<|await\s+))+")
_MAX_CALLEE_TEXT = 200
_SELF_PREFIX = re.compile(r"^(?:self\.|this\.|cls\.|\$this->|@)")
_RECEIVER_SPLIT = re.compile(r"(?:::|\?->|->|\.|\\)(?=[^.:>\\]*$)")
_SCALA_AS = re.compile(r"\s+as\s+")
#: one clause of a Scala import: a dotted path, optionally ending in a ``{...}`` selector group
_SCALA_CLAUSES = re.compile(r"[^,{}]+(?:\{[^}]*\})?")
#: placeholder "types" of inferred declarations
_NOT_TYPES = frozenset({"var", "val", "let", "auto", "const", "Self", "self"})


@dataclass(frozen=True)
class SymbolDef:
    """A definition: ``qualified_name`` nests classes within the file (``Client.send``)."""

    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class CallSite:
    """A call attributed to its enclosing definition (``<module>`` at top level)."""

    caller_qualified: str
    callee_name: str
    callee_text: str
    line: int
    #: the target is computed at run time; ``callee_name`` is the literal that names it, if any
    dynamic: bool = False
    #: declared or constructed type of the receiver (``c = Client(); c.send()`` → ``Client``)
    receiver_type: str | None = None


@dataclass(frozen=True)
class ImportRef:
    """A module the file imports, as written, with the names it takes from it."""

    module: str
    line: int
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class FileGraph:
    """Everything the graph keeps about one file."""

    symbols: tuple[SymbolDef, ...] = ()
    calls: tuple[CallSite, ...] = ()
    imports: tuple[ImportRef, ...] = ()


EMPTY_GRAPH = FileGraph()


def supported_languages() -> frozenset[str]:
    """Languages that ship a tags query (``Language.tags`` in the shared language data)."""
    return GRAPH_LANGUAGES


def query_source(language: str) -> str:
    """Text of the tags query for ``language``, with inherited languages' patterns first."""
    text = resources.files(__package__).joinpath("queries", f"{language}-tags.scm").read_text("utf-8")
    parents = _INHERITS.findall(text)
    return "".join(query_source(parent) + "\n" for parent in parents) + text


@cache
def _compiled_query(language: str) -> Any:
    return treesitter.query(language, query_source(language))


def _key(node: Any) -> tuple[int, int, str]:
    # Node objects are re-created on each access; the span and type identify one.
    return (node.start_byte, node.end_byte, node.type)


def _clean(text: str) -> str:
    return _WHITESPACE.sub("", text)


def _unquote(text: str) -> str:
    text = text.strip()
    if text.startswith(":"):  # Ruby symbol
        text = text[1:]
    return text.strip("\"'`<>")


@dataclass
class _Def:
    node: Any
    name: str
    kind: str
    qualifier: str
    pattern: int
    is_scope: bool = False
    qualified: str = ""
    #: last line (1-based); clauses joined into one definition extend it
    end_line: int = 0

    def __post_init__(self) -> None:
        self.end_line = self.end_line or self.node.end_point[0] + 1


@dataclass
class _Matches:
    """What the tag query captured in one file, keyed by node span."""

    defs: dict[tuple[int, int, str], _Def] = field(default_factory=dict)
    calls: dict[tuple[int, int, str], tuple[Any, Any]] = field(default_factory=dict)
    dynamic: dict[tuple[int, int, str], tuple[Any, Any | None]] = field(default_factory=dict)
    imports: dict[tuple[Any, ...], tuple[Any, list[str]]] = field(default_factory=dict)
    import_nodes: set[tuple[int, int, str]] = field(default_factory=set)
    local_types: list[tuple[Any, str, str]] = field(default_factory=list)
    #: name nodes of definitions: an Elixir ``def f(x)`` head is a call node, not a call
    def_names: set[tuple[int, int, str]] = field(default_factory=set)


def extract_file_graph(file_path: str, source: bytes, language: str) -> FileGraph:
    """Symbols, call sites and imports of one file; syntax errors only lose what they hide."""
    if language not in supported_languages():
        return EMPTY_GRAPH
    tree = treesitter.parse(language, source)
    found = _Matches()
    for pattern, captures in _compiled_query(language).matches(tree.root_node):
        if captures:  # no captures: a predicate (#eq?, #match?) rejected the match
            _take_match(found, pattern, captures, source)
    defs = found.defs
    _qualify(defs, language)
    kept = sorted(
        (d for d in defs.values() if not d.is_scope), key=lambda d: (d.node.start_byte, d.qualified)
    )
    if syntax_of(language).joins_clauses:
        kept = _join_clauses(kept)
    symbols = tuple(
        sorted(
            (
                SymbolDef(
                    name=d.name,
                    qualified_name=d.qualified,
                    kind=d.kind,
                    start_line=d.node.start_point[0] + 1,
                    end_line=d.end_line,
                )
                for d in kept
            ),
            key=lambda s: (s.start_line, s.qualified_name),
        )
    )
    types = _local_types(defs, found.local_types)
    calls = {key: call for key, call in found.calls.items() if _key(call[1]) not in found.def_names}
    call_sites = _call_sites(defs, calls, found.dynamic, found.import_nodes, types, source, language)
    import_refs = _import_refs(found.imports, source, language)
    return FileGraph(symbols=symbols, calls=call_sites, imports=import_refs)


def _join_clauses(defs: list[_Def]) -> list[_Def]:
    """Consecutive sibling definitions of one name are one: Haskell equations, Elixir function clauses."""
    out: list[_Def] = []
    for d in defs:
        last = out[-1] if out else None
        if (
            last is not None
            and (last.qualified, last.kind) == (d.qualified, d.kind)
            and last.node.parent is not None
            and d.node.parent is not None
            and _key(last.node.parent) == _key(d.node.parent)
        ):
            last.end_line = max(last.end_line, d.end_line)
        else:
            out.append(d)
    return out


def _take_match(found: _Matches, pattern: int, captures: dict[str, Any], source: bytes) -> None:
    """Fold one query match into ``found``."""
    local_name, local_type = captures.get("name.local"), captures.get("type.local")
    if local_name is not None and local_type is not None:
        found.local_types.append(
            (
                local_name,
                _clean(treesitter.node_text(local_name, source)),
                treesitter.node_text(local_type, source),
            )
        )
    for capture, node in captures.items():
        if capture.startswith("definition."):
            _take_definition(found.defs, pattern, capture, node, captures, source)
            if (name_node := captures.get("name." + capture)) is not None:
                found.def_names.add(_key(name_node))
        elif capture == "scope":
            name_node = captures.get("name.scope")
            key = _key(node)
            if name_node is not None and key not in found.defs:
                name = treesitter.node_text(name_node, source)
                found.defs[key] = _Def(node, name, "scope", "", pattern, is_scope=True)
        elif capture == "reference.call":
            name_node = captures.get("name.reference.call")
            if name_node is not None:
                found.calls.setdefault(_key(node), (node, name_node))
        elif capture == "reference.dynamic_call":
            key = _key(node)
            name_node = captures.get("name.reference.dynamic_call")
            if key not in found.dynamic or (found.dynamic[key][1] is None and name_node is not None):
                found.dynamic[key] = (node, name_node)
        elif capture == "reference.import":
            _take_import(found, node, captures, source)


def _take_definition(
    defs: dict[tuple[int, int, str], _Def],
    pattern: int,
    capture: str,
    node: Any,
    captures: dict[str, Any],
    source: bytes,
) -> None:
    name_node = captures.get("name." + capture)
    if name_node is None:
        return
    key = _key(node)
    if key in defs and defs[key].pattern <= pattern:
        return  # the first pattern in the file wins
    qualifier_node = captures.get("qualifier." + capture)
    defs[key] = _Def(
        node=node,
        name=treesitter.node_text(name_node, source),
        kind=capture.removeprefix("definition."),
        qualifier=treesitter.node_text(qualifier_node, source) if qualifier_node else "",
        pattern=pattern,
    )


def _take_import(found: _Matches, node: Any, captures: dict[str, Any], source: bytes) -> None:
    found.import_nodes.add(_key(node))
    module_node = captures.get("name.reference.import")
    imported = captures.get("imported.reference.import")
    alias = captures.get("alias.reference.import")
    prefix = captures.get("prefix.reference.import")
    module = treesitter.node_text(module_node, source) if module_node is not None else None
    if module is not None and prefix is not None:
        module = treesitter.node_text(prefix, source) + "\\" + module
    group = found.imports.setdefault((_key(node), module), (node, []))
    default = captures.get("default.reference.import")
    if imported is not None:
        name = treesitter.node_text(imported, source)
        if alias is not None:
            name += " as " + treesitter.node_text(alias, source)
        group[1].append(name)
    elif alias is not None:  # import numpy as np; import * as ns from 'x'
        group[1].append("* as " + treesitter.node_text(alias, source))
    elif default is not None:  # import React from 'react'
        group[1].append("default as " + treesitter.node_text(default, source))


def _enclosing(node: Any, defs: dict[tuple[int, int, str], _Def]) -> _Def | None:
    parent = node.parent
    while parent is not None:
        found = defs.get(_key(parent))
        if found is not None:
            return found
        parent = parent.parent
    return None


def _qualify(defs: dict[tuple[int, int, str], _Def], language: str) -> None:
    """Give each definition its in-file qualified name and promote nested functions to methods."""
    for d in sorted(defs.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte)):
        parts = [p for p in _QUALIFIER_SPLIT.split(d.name) if p]
        if len(parts) > 1:  # C++ `Client::flush`, Ruby `class Foo::Bar`
            d.name = parts[-1]
            d.qualifier = ".".join(parts[:-1]) if not d.qualifier else d.qualifier
        parent = _enclosing(d.node, defs)
        prefix = parent.qualified if parent is not None else ""
        own = f"{d.qualifier}.{d.name}" if d.qualifier else d.name
        d.qualified = f"{prefix}.{own}" if prefix else own
        if d.kind == "function" and (
            d.qualifier or (parent is not None and _holds_methods(parent, language))
        ):
            d.kind = "method"
        if d.kind == "constructor":
            d.kind = "method"


def _holds_methods(container: _Def, language: str) -> bool:
    # A Ruby module's defs are methods (mixins); a Rust `mod` or TS namespace holds functions.
    if container.kind == "module":
        return modules_hold_methods(language)
    return container.is_scope or container.kind in CONTAINER_KINDS


def _callee_text(call_node: Any, name_node: Any, source: bytes) -> str:
    if call_node.start_byte >= name_node.start_byte:
        return treesitter.node_text(name_node, source)
    text = source[call_node.start_byte : name_node.end_byte].decode("utf-8", errors="replace")
    return _clean(_LEADING_NOISE.sub("", text))[:_MAX_CALLEE_TEXT]


def _call_sites(
    defs: dict[tuple[int, int, str], _Def],
    calls: dict[tuple[int, int, str], tuple[Any, Any]],
    dynamic: dict[tuple[int, int, str], tuple[Any, Any | None]],
    import_nodes: set[tuple[int, int, str]],
    types: dict[tuple[str, str], str],
    source: bytes,
    language: str,
) -> tuple[CallSite, ...]:
    out: set[CallSite] = set()
    constructor = LANGUAGES[language].constructor_call if language in LANGUAGES else None
    for key, (node, name_node) in calls.items():
        if key in import_nodes or key in dynamic:
            continue  # require('x') is an import; send(:x) is a dynamic call
        name = treesitter.node_text(name_node, source)
        text = _callee_text(node, name_node, source)
        if language == "lua":
            text = text.replace(":", ".")  # `obj:method()` passes obj as self: a method call on obj
        if name == constructor and "." in text:
            # Foo.new constructs Foo: the call goes to the class
            name = _QUALIFIER_SPLIT.split(text)[-2] or name
        receiver_type = _receiver_type(node, text, defs, types)
        out.add(
            CallSite(_caller_of(node, defs), name, text, node.start_point[0] + 1, receiver_type=receiver_type)
        )

    named_spans = [
        (node.start_byte, node.end_byte) for node, name_node in dynamic.values() if name_node is not None
    ]
    for node, name_node in dynamic.values():
        if name_node is None and any(
            node.start_byte <= start
            and end <= node.end_byte
            and (start, end) != (node.start_byte, node.end_byte)
            for start, end in named_spans
        ):
            continue  # getattr(o, "x")() is already known by the name inside it
        name = _unquote(treesitter.node_text(name_node, source)) if name_node is not None else ""
        text = _clean(treesitter.node_text(node, source))[:_MAX_CALLEE_TEXT]
        out.add(
            CallSite(
                _caller_of(node, defs), name or DYNAMIC_CALLEE, text, node.start_point[0] + 1, dynamic=True
            )
        )
    return tuple(sorted(out, key=lambda c: (c.line, c.caller_qualified, c.callee_text, c.dynamic)))


def _def_chain(node: Any, defs: dict[tuple[int, int, str], _Def]) -> list[_Def]:
    chain = []
    enclosing = _enclosing(node, defs)
    while enclosing is not None:
        if not enclosing.is_scope:
            chain.append(enclosing)
        enclosing = _enclosing(enclosing.node, defs)
    return chain


def _class_scope(d: _Def) -> str | None:
    """Qualified name of the class whose members ``d`` sees (itself, or a method's class)."""
    if d.kind in CONTAINER_KINDS:
        return d.qualified
    if d.kind == "method" and "." in d.qualified:
        return d.qualified.rsplit(".", 1)[0]
    return None


def _local_types(
    defs: dict[tuple[int, int, str], _Def], found: list[tuple[Any, str, str]]
) -> dict[tuple[str, str], str]:
    """``(scope, variable) → type``: a definition's locals, or a class's attributes and fields."""
    types: dict[tuple[str, str], str] = {}
    for name_node, variable, type_name in found:
        if type_name in _NOT_TYPES or not type_name[:1].isupper() or not type_name.isidentifier():
            continue  # only class-like names say what a receiver is
        chain = _def_chain(name_node, defs)
        if not chain:
            types.setdefault(("", variable), type_name)
            continue
        innermost = chain[0]
        attribute = _SELF_PREFIX.sub("", variable)
        if attribute != variable or innermost.kind in CONTAINER_KINDS:
            attribute = attribute.lstrip("$")  # a PHP property is declared $x, used $this->x
            scope = _class_scope(innermost)
            if scope is not None:
                types.setdefault((scope, attribute), type_name)
            continue
        types.setdefault((innermost.qualified, variable), type_name)
    return types


def _receiver_type(
    node: Any, callee_text: str, defs: dict[tuple[int, int, str], _Def], types: dict[tuple[str, str], str]
) -> str | None:
    if not types:
        return None
    parts = _RECEIVER_SPLIT.split(callee_text, maxsplit=1)
    if len(parts) != 2 or not parts[0]:
        return None
    receiver = parts[0]
    chain = _def_chain(node, defs)
    for d in chain:
        found = types.get((d.qualified, receiver))
        if found:
            return found
    attribute = _SELF_PREFIX.sub("", receiver).lstrip("$")
    for d in chain:
        scope = _class_scope(d)
        if scope is not None and (found := types.get((scope, attribute))):
            return found
    return types.get(("", receiver))


def _caller_of(node: Any, defs: dict[tuple[int, int, str], _Def]) -> str:
    enclosing = _enclosing(node, defs)
    while enclosing is not None and enclosing.is_scope:
        enclosing = _enclosing(enclosing.node, defs)
    return enclosing.qualified if enclosing is not None else MODULE_CALLER


def _import_refs(
    imports: dict[tuple[Any, ...], tuple[Any, list[str]]], source: bytes, language: str
) -> tuple[ImportRef, ...]:
    # Names captured without a module belong to the whole statement (`from m import a, b`,
    # `import * as ns from 'm'`); names captured with one belong to that module only
    # (`import numpy as np, os`).
    statement_names: dict[tuple[int, int, str], list[str]] = {}
    for (statement_key, module), (_node, names) in imports.items():
        if module is None:
            statement_names.setdefault(statement_key, []).extend(names)
    out: list[ImportRef] = []
    for (statement_key, module), (node, names) in imports.items():
        if module is None:
            continue
        merged = list(dict.fromkeys(names + statement_names.get(statement_key, [])))
        aliased = {n.split(" as ")[0] for n in merged if " as " in n}
        # `{ a as b }` also matches the plain-name pattern: keep only the aliased form
        kept = tuple(n for n in merged if " as " in n or n not in aliased)
        out.extend(_normalise_import(language, node, module, kept, node.start_point[0] + 1))
    return tuple(sorted(set(out), key=lambda r: (r.line, r.module, r.names)))


def _normalise_import(
    language: str, node: Any, module: str, names: tuple[str, ...], line: int
) -> list[ImportRef]:
    """The module path as the resolver expects it; one statement may import several."""
    module = _WHITESPACE.sub(" ", module).strip()
    if language == "python":
        if module.strip(".") == "" and names:
            # `from . import a, b as c` imports sibling modules a and b (the latter known as c)
            return [
                ImportRef(
                    module + name.split(" as ")[0],
                    line,
                    (f"* as {name.split(' as ')[1]}",) if " as " in name else (),
                )
                for name in names
            ]
        return [ImportRef(module, line, names)]
    if language == "rust":
        if node.type == "mod_item":
            return [ImportRef(f"self::{module}", line)]
        return _rust_use(module, line)
    if language in ("java", "kotlin"):
        text = _clean(node.text.decode("utf-8", errors="replace"))
        module = _clean(module)
        if ".*" in text and not module.endswith(".*"):
            module += ".*"
        return [ImportRef(module, line)]
    if language == "csharp":
        return [ImportRef(_clean(module), line)]
    if language == "scala":
        return _scala_imports(module, line)
    if language == "elixir" and "{" in module:
        # `alias Shop.{Store, Util}` names Shop.Store and Shop.Util
        base, _, group = _clean(module).partition("{")
        return [ImportRef(base + name, line) for name in group.rstrip("}").split(",") if name]
    if language == "php":
        return [ImportRef(module.lstrip("\\"), line)]
    return [ImportRef(_unquote(module), line, names)]


def _scala_imports(statement: str, line: int) -> list[ImportRef]:
    """``import a.b.{C, D => E}, f.g._`` → ``a.b.C``, ``a.b.D`` (as ``E``), ``f.g.*``; hidden names dropped."""
    text = _clean(_SCALA_AS.sub("=>", statement)).removeprefix("import")
    out: list[ImportRef] = []
    for clause in _SCALA_CLAUSES.findall(text):
        base, _, selectors = clause.partition("{")
        if not selectors:
            base, _, last = clause.rpartition(".")
            selectors = last
        for selector in selectors.rstrip("}").split(","):
            name, _, alias = selector.partition("=>")
            if not name or alias == "_":
                continue  # `{x => _}` hides x
            module = f"{base.rstrip('.')}.{name}" if base else name
            if name in ("_", "*", "given"):
                out.append(ImportRef(f"{base.rstrip('.')}.*", line))
            else:
                out.append(ImportRef(module, line, (f"{name} as {alias}",) if alias else ()))
    return out


def _rust_use(argument: str, line: int) -> list[ImportRef]:
    text = _clean(re.sub(r"\s+as\s+\w+", "", argument))
    if "{" in text:
        base, _, rest = text.partition("{")
        names = tuple(n for n in rest.rstrip("}").split(",") if n and n != "self" and "{" not in n)
        return [ImportRef(base.rstrip(":"), line, names)]
    if text.endswith("::*"):
        return [ImportRef(text[:-3], line)]
    return [ImportRef(text, line)]
