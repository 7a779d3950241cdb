"""Chunk source code along its syntax tree: one chunk per function, method and type, the rest as module chunks.

How a file is cut:

* Every definition found at the top level, or inside a type, is one chunk spanning its node plus the
  decorators/annotations in it and the comment/attribute block directly above it (no blank line between).
  ``symbol_name`` is qualified by the enclosing types within the file (``Outer.Inner.method``; Go
  receivers, Rust impl types and C++ ``Foo::bar`` qualify too); ``class_name`` is the type that owns
  the code: the enclosing type for a method, the type itself for a type chunk, ``""`` for free functions.
* Function bodies are atomic: closures and local classes stay inside their function's chunk.
* A type (class, struct, interface, impl, trait, object, Ruby module, Rust ``mod``) gets a *skeleton*
  chunk: its full line range, with the body of each member definition that sits on lines of its own
  replaced by one marker line naming the member and its lines (``# ... Client.send (lines 18-22)``).
  Members keep their signature and decorators in the skeleton (their leading comments go with the
  member chunk), and a lone closing ``}``/``end`` line is kept, so the class chunk shows header, fields
  and the method list without repeating method bodies. Every kept line is verbatim at its true line
  number; a marker is numbered as the last line it stands for, so ``start_line``/``end_line`` are the
  class's real first and last lines. Members so short that eliding saves nothing stay verbatim.
* Namespaces (C++/C#/PHP/TS) and preprocessor blocks are walked through without qualifying names.
* Lines outside every top-level definition become ``module`` chunks (imports, constants, top-level code),
  one per contiguous run; runs made only of blank lines or closing braces are dropped.
* Runs of adjacent (only blank lines between) tiny siblings of the same kind, each shorter than
  ``min_chunk_lines`` and at most ``MAX_MERGED_SIBLINGS`` of them, merge into one chunk whose symbol
  and function names are joined with ``+`` (``Point.x+Point.y``); the class skeleton keeps them verbatim.
* Oversized chunks are split later by ``window.finalize``.
* Syntax errors: ERROR nodes are walked through like namespaces, so definitions tree-sitter recovered
  keep their chunks; lines outside them that touch an ERROR node become ``window`` chunks instead of
  ``module`` ones. A broken file with no definition recovered returns ``None`` (the caller windows it).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from .. import treesitter
from ._model import Piece, Row
from .languages import (
    CONTAINER_KINDS,
    FUNCTION_KINDS,
    JS_CLASS_VALUES,
    JS_FUNCTION_VALUES,
    SyntaxSpec,
    modules_hold_methods,
    syntax_of,
)
from .window import clip, first_line_summary, is_blank, trim_blank, window_bounds

log = logging.getLogger(__name__)

Node = Any  # tree_sitter.Node (0.21 ships no type stubs)

#: at most this many tiny siblings merge into one chunk, so merged symbol names stay readable
MAX_MERGED_SIBLINGS = 8
#: transparent nodes and containers deeper than this are not searched for definitions
MAX_NESTING = 64
#: code outside every definition (imports, constants, config tables, doc blocks) is cut into
#: balanced runs of at most this many lines: the embedding model reads about the first 256 tokens
#: of a chunk, so a 120-line run of module code is mostly unread
MODULE_RUN_LINES = 60
#: signature lines kept in a summary
MAX_SIGNATURE_ROWS = 12
#: room left in the summary for the doc line
MAX_SIGNATURE_CHARS = 200

_CLOSER = re.compile(r"[})\]]+[;,]?|end|end;")
_COMMENT_MARKERS = re.compile(r"^\s*(/\*\*+|/\*!?|\*/|\*|///?!?|//|#+|---?(?:\s?\|)?)\s?")
_XML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_OPEN_SPACE = re.compile(r"([(\[])\s+")
_SPACE_CLOSE = re.compile(r",?\s+([)\]])")
_GENERIC_ARGS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")


@dataclass(frozen=True)
class _Owner:
    """The container a definition sits in."""

    name: str
    holds_methods: bool


@dataclass(frozen=True)
class _Def:
    """One definition found in the tree (rows are 0-based)."""

    kind: str
    qualified: str
    class_name: str
    function_name: str
    start_row: int  # first row of its chunk: leading comments / attributes included
    outer_start_row: int  # first row of the definition node (decorators / annotations included)
    end_row: int
    header_end_row: int  # last row of the signature (where the body opens)
    owns_lines: bool  # nothing else shares its first and last line
    signature: str
    doc: str
    members: tuple[_Def, ...] = ()
    overload: bool = False  # a bodiless overload signature (``SyntaxSpec.overloads``)

    @property
    def summary(self) -> str:
        """Signature line(s) plus the first doc line."""
        return clip(f"{self.signature}\n{self.doc}" if self.doc else self.signature)


def chunk_code(
    lines: Sequence[str], source: bytes, language: str, *, min_chunk_lines: int
) -> list[Piece] | None:
    """Pieces for a code file, or ``None`` when its syntax tree is too broken to be useful."""
    spec = syntax_of(language)
    tree = treesitter.parse(language, source)
    return _CodeChunker(lines, source, language, spec, min_chunk_lines).run(tree.root_node)


@cache
def _capture_query(language: str, node_types: frozenset[str]) -> Any:
    """A compiled query capturing every node of the given types."""
    patterns = " ".join(f"({node_type})" for node_type in sorted(node_types))
    return treesitter.query(language, f"[{patterns}] @node")


class _Source:
    """One parsed file's text and the per-file lookups the walk fills in; text helpers."""

    def __init__(
        self, lines: Sequence[str], source: bytes, language: str, spec: SyntaxSpec, min_chunk_lines: int
    ):
        self.lines = lines
        self.source = source
        self.language = language
        self.spec = spec
        self.min_chunk_lines = min_chunk_lines
        self.modules_hold_methods = modules_hold_methods(language)
        # end row → (start row, is_comment) of comments/attributes alone on their lines
        self.leading: dict[int, tuple[int, bool]] = {}
        self.comment_rows: set[int] = set()
        self.byte_lines = source.split(b"\n")
        self.error_rows: set[int] = set()

    def _text(self, node: Node) -> str:
        return " ".join(treesitter.node_text(node, self.source).split())

    def _owns_lines(self, node: Node) -> bool:
        """True when only whitespace precedes the node on its first line and at most ``;``/``,`` follows on its last."""
        start_row, start_col = node.start_point
        end_row, end_col = node.end_point
        before = self.source_line(start_row)[:start_col]
        after = self.source_line(end_row)[end_col:]
        return not before.strip() and after.strip() in (b"", b";", b",")

    def source_line(self, row: int) -> bytes:
        """Raw bytes of one row (tree-sitter columns are byte offsets)."""
        return self.byte_lines[row] if row < len(self.byte_lines) else b""

    def _rows(self, first: int, last: int) -> list[Row]:
        return [(row + 1, self.lines[row]) for row in range(first, min(last, len(self.lines) - 1) + 1)]

    def _signature(self, first: int, last: int) -> str:
        parts = [
            self.lines[row].strip()
            for row in range(first, min(last, first + MAX_SIGNATURE_ROWS - 1) + 1)
            if row < len(self.lines)
        ]
        signature = " ".join(part for part in parts if part)
        # a parameter list spread over lines reads as one line: ``f( a, b, )`` → ``f(a, b)``
        signature = _OPEN_SPACE.sub(r"\1", _SPACE_CLOSE.sub(r"\1", signature))
        return clip(signature.removesuffix("{").rstrip(), MAX_SIGNATURE_CHARS)

    def _docstring(self, body: Node | None) -> str:
        """First line of a Python docstring (other languages document with comments above)."""
        if self.language != "python" or body is None or body.type != "block" or not body.named_children:
            return ""
        first = body.named_children[0]
        if (
            first.type != "expression_statement"
            or not first.named_children
            or first.named_children[0].type != "string"
        ):
            return ""
        text = treesitter.node_text(first.named_children[0], self.source)
        text = re.sub(r"^[rRbBuUfF]*('''|\"\"\"|'|\")", "", text)
        text = re.sub(r"('''|\"\"\"|'|\")$", "", text)
        return _first_meaningful(text.splitlines())

    def _comment_doc(self, first: int, last: int) -> str:
        """First meaningful line of the comment rows in ``[first, last)``."""
        rows = [self.lines[row] for row in range(first, last) if row in self.comment_rows]
        cleaned = [
            _XML_TAG.sub("", _COMMENT_MARKERS.sub("", text.strip())).removesuffix("*/") for text in rows
        ]
        return _first_meaningful(cleaned)


class _Syntax(_Source):
    """How one definition node reads: what it wraps, its kind, its name parts, its body and header."""

    def _unwrap(self, node: Node) -> tuple[Node, str | None, Node | None] | None:
        """(definition node, kind override, name node override) for a definition or a wrapper of one."""
        if node.type in self.spec.definitions:
            return node, None, None
        strategy = self.spec.wrappers.get(node.type)
        if strategy == "call_definition":  # Elixir ``def f(x) do``: a macro call defines
            return self._call_definition(node)
        if strategy == "definition":  # Python decorators
            inner = node.child_by_field_name("definition")
            return self._unwrap(inner) if inner is not None else None
        if strategy == "declaration":  # JS/TS ``export ...``
            inner = node.child_by_field_name("declaration")
            return self._unwrap(inner) if inner is not None else None
        if strategy == "template":  # C++ ``template <...>`` before a function or class
            for child in reversed(node.named_children):
                found = self._unwrap(child)
                if found is not None:
                    return found
            return None
        if strategy == "type_specifier":  # C ``struct x {...};``, ``typedef struct {...} x;``
            inner = node.child_by_field_name("type")
            if inner is None or inner.type not in self.spec.definitions or not _has_body(inner):
                return None
            name = inner.child_by_field_name("name")
            if name is None:  # ``typedef struct {...} point_t;`` is named by its declarator
                name = node.child_by_field_name("declarator")
            return inner, None, name
        if strategy == "container_value":  # Zig ``const Client = struct { ... };``
            inner = next((c for c in node.named_children if c.type in self.spec.definitions), None)
            name = next((c for c in node.named_children if c.type == "identifier"), None)
            if inner is None or name is None:
                return None
            return inner, None, name
        if strategy == "function_value":  # ``const f = () => {}``
            declarators = [c for c in node.named_children if c.type == "variable_declarator"]
            if len(declarators) != 1:
                return None
            return _function_value(
                declarators[0].child_by_field_name("value"), declarators[0].child_by_field_name("name")
            )
        if strategy == "assignment":  # ``exports.f = function () {}``
            expression = node.named_children[0] if node.named_children else None
            if expression is None or expression.type != "assignment_expression":
                return None
            return _function_value(
                expression.child_by_field_name("right"), expression.child_by_field_name("left")
            )
        if strategy == "lua_assignment":  # Lua ``M.f = function() end``, ``local f = function() end``
            if node.type == "variable_declaration":  # ``local``: the assignment is its child
                node = next((c for c in node.named_children if c.type == "assignment_statement"), None)
            targets = node.named_children if node is not None and node.type == "assignment_statement" else []
            if (
                len(targets) != 2
                or len(targets[0].named_children) != 1
                or len(targets[1].named_children) != 1
            ):
                return None  # one name, one value (``a, b = f, g`` defines nothing)
            value, name = targets[1].named_children[0], targets[0].named_children[0]
            if value.type != "function_definition" or name.type not in ("identifier", "dot_index_expression"):
                return None
            return value, "function", name
        if strategy == "field_value":  # class fields holding arrow functions
            name = node.child_by_field_name("property")  # JS
            if name is None:
                name = node.child_by_field_name("name")  # TS
            return _function_value(node.child_by_field_name("value"), name)
        return None

    def _refine(
        self, inner: Node, kind: str, name_node: Node | None
    ) -> tuple[str, Node | None, list[str]] | None:
        """Final kind, the node naming it and its name parts (more than one for ``Owner.name`` forms)."""
        if self.spec.kind_keywords:  # Kotlin ``enum class``, Swift ``struct``: the keyword says the kind
            keyword = inner.child_by_field_name(self.spec.kind_field)
            if keyword is not None:
                kind = self.spec.kind_keywords.get(keyword.type, kind)
        if name_node is not None:
            text = self._text(name_node)
            if ".prototype." in text:
                owner, _, name = text.partition(".prototype.")
                return "method", name_node, [owner, name]
            return kind, name_node, self._parts(text)
        if inner.type == "method_declaration" and self.language == "go":
            name_node = inner.child_by_field_name("name")
            receiver = self._go_receiver(inner.child_by_field_name("receiver"))
            if not receiver or name_node is None:
                return None
            return kind, name_node, [receiver, self._text(name_node)]
        if inner.type == "type_declaration":  # Go ``type X struct {...}``
            specs = [c for c in inner.named_children if c.type in ("type_spec", "type_alias")]
            if len(specs) != 1:
                return None
            name_node = specs[0].child_by_field_name("name")
            type_node = specs[0].child_by_field_name("type")
            type_kind = {"struct_type": "struct", "interface_type": "interface"}.get(
                type_node.type if type_node is not None else "", "type"
            )
            return type_kind, name_node, [self._text(name_node)] if name_node is not None else []
        if inner.type == "impl_item":  # Rust: named after the implementing type
            type_node = inner.child_by_field_name("type")
            return kind, type_node, [_base_type_name(self._text(type_node))] if type_node is not None else []
        if inner.type == "function_definition" and self.language in ("c", "cpp"):
            declarator = _function_declarator(inner)
            name_node = declarator.child_by_field_name("declarator") if declarator is not None else None
            if name_node is None:
                return None
            text = self._text(name_node)
            if "operator" not in text:  # ``operator<=>`` / ``operator[]`` are names, not template arguments
                text = _GENERIC_ARGS.sub("", text)
            return kind, name_node, self._parts(text)
        if inner.type == "secondary_constructor":
            return kind, None, ["constructor"]
        name_node = inner.child_by_field_name("name")
        if name_node is None and inner.type in self.spec.name_paths:
            name_node = _follow(inner, self.spec.name_paths[inner.type])
        return kind, name_node, self._parts(self._text(name_node)) if name_node is not None else []

    def _parts(self, text: str) -> list[str]:
        return _qualified_parts(text, self.spec.qualifier_split)

    def _call_definition(self, node: Node) -> tuple[Node, str, Node] | None:
        """``(call, kind, name node)`` when ``node`` is a defining macro call (``def``, ``defmodule``)."""
        target = node.child_by_field_name("target")
        kind = self.spec.call_definitions.get(self._text(target)) if target is not None else None
        arguments = next((c for c in node.named_children if c.type == "arguments"), None)
        if kind is None or arguments is None or not arguments.named_children:
            return None
        name: Node | None = arguments.named_children[0]
        if name is not None and name.type == "binary_operator":  # ``def f(x) when is_integer(x)``
            name = name.child_by_field_name("left")
        if name is not None and name.type == "call":  # ``f(x)``: named by its target
            name = name.child_by_field_name("target")
        if name is None or name.type not in ("identifier", "alias"):
            return None
        return node, kind, name

    def _go_receiver(self, receiver: Node | None) -> str:
        if receiver is None:
            return ""
        for parameter in receiver.named_children:
            type_node = parameter.child_by_field_name("type")
            if type_node is not None:
                return _base_type_name(self._text(type_node))
        return ""

    def _body(self, inner: Node) -> Node | None:
        body = inner.child_by_field_name(self.spec.body_field)
        if body is None and inner.type in self.spec.self_bodied:
            return inner  # Haskell ``instance``: its equations are its children
        if body is None and self.spec.body_nodes:
            body = next((c for c in inner.named_children if c.type in self.spec.body_nodes), None)
        if body is None and inner.type == "type_declaration":
            spec = next((c for c in inner.named_children if c.type in ("type_spec", "type_alias")), None)
            body = spec.child_by_field_name("type") if spec is not None else None
        return body

    def _header_end(self, inner: Node, body: Node | None) -> int:
        """Last row of the signature: the row where the body opens (a brace) or the row before its first statement."""
        if body is None or body.type == ";":
            return int(inner.end_point[0])
        body_row = body.start_point[0]
        if body.type in self.spec.statement_bodies:
            body_row -= 1
        return int(max(inner.start_point[0], min(body_row, inner.end_point[0])))


class _Finder(_Syntax):
    """Finds the file's definitions (nested in containers) with their leading comments and attributes."""

    def _error_rows(self, root: Node) -> set[int]:
        rows: set[int] = set()
        for node, _ in _capture_query(self.language, frozenset({"ERROR"})).captures(root):
            rows.update(range(node.start_point[0], node.end_point[0] + 1))
        return rows

    def _index_leading(self, root: Node) -> None:
        types = self.spec.comments | self.spec.attachable
        for node, _ in _capture_query(self.language, types).captures(root):
            if not self._owns_lines(node):
                continue  # a trailing comment documents the code before it, not the next definition
            start, end = node.start_point[0], node.end_point[0]
            is_comment = node.type in self.spec.comments
            if is_comment:
                self.comment_rows.update(range(start, end + 1))
            known = self.leading.get(end)
            if known is None or start < known[0]:
                self.leading[end] = (start, is_comment)

    def _collect(
        self, parent: Node, scope: tuple[str, ...], owner: _Owner | None, depth: int = 0
    ) -> list[_Def]:
        found: list[_Def] = []
        if depth > MAX_NESTING:
            return found  # pathological nesting: the lines still land in the enclosing chunk
        for child in parent.named_children:
            definition = self._definition(child, scope, owner, depth)
            if definition is not None:
                found.append(definition)
            elif child.type in self.spec.transparent or child.type == "ERROR":
                found.extend(self._collect(child, scope, owner, depth + 1))
        if self.spec.overloads:
            found = _join_overloads(found)
        return _join_clauses(found) if self.spec.joins_clauses else found

    def _attach_leading(self, defs: list[_Def], floor: int) -> list[_Def]:
        """Extend each definition upwards over the comment/attribute block directly above it."""
        out = []
        previous_end = floor - 1
        for definition in sorted(defs, key=lambda d: (d.outer_start_row, d.end_row)):
            row = definition.outer_start_row
            while row - 1 > previous_end and (row - 1) in self.leading:
                start, _ = self.leading[row - 1]
                if start <= previous_end:
                    break
                row = start
            doc = definition.doc or self._comment_doc(row, definition.outer_start_row)
            out.append(replace(definition, start_row=row, doc=doc))
            previous_end = max(previous_end, definition.end_row)
        return out

    def _definition(
        self, node: Node, scope: tuple[str, ...], owner: _Owner | None, depth: int
    ) -> _Def | None:
        unwrapped = self._unwrap(node)
        if unwrapped is None:
            return None
        inner, kind, name_node = unwrapped
        kind = kind or self.spec.definitions[inner.type]
        if inner.type in self.spec.requires_body and not _has_body(inner):
            return None
        refined = self._refine(inner, kind, name_node)
        if refined is None:
            return None
        kind, name_node, parts = refined
        if not parts or not all(parts):
            return None

        if kind in FUNCTION_KINDS:
            if len(parts) > 1:  # Go receivers, C++ ``Foo::bar``, JS ``Foo.prototype.bar``
                kind, class_name = "method", parts[-2]
            elif owner is not None and owner.holds_methods:
                kind, class_name = "method", owner.name
            else:
                class_name = ""
            function_name = parts[-1].rsplit(".", 1)[-1]  # JS ``exports.send = function`` → ``send``
        else:
            # a type chunk is its own class; a Rust ``mod`` is no class at all
            owns_methods = kind != "namespace" or self.modules_hold_methods
            class_name, function_name = (parts[-1] if owns_methods else ""), ""
        qualified = ".".join((*scope, *parts))

        body = self._body(inner)
        sig_start = name_node.start_point[0] if name_node is not None else inner.start_point[0]
        header_end = self._header_end(inner, body)
        sig_start = min(max(sig_start, node.start_point[0]), header_end)
        members: tuple[_Def, ...] = ()
        if kind in CONTAINER_KINDS and body is not None:
            owner_here = _Owner(parts[-1], holds_methods=bool(class_name))
            found = self._collect(body, (*scope, *parts), owner_here, depth + 1)
            members = tuple(self._attach_leading(found, floor=header_end + 1))
        return _Def(
            kind=kind,
            qualified=qualified,
            class_name=class_name,
            function_name=function_name,
            start_row=node.start_point[0],
            outer_start_row=node.start_point[0],
            end_row=node.end_point[0],
            header_end_row=header_end,
            owns_lines=self._owns_lines(node),
            signature=self._signature(sig_start, header_end),
            doc=self._docstring(body),
            members=members,
            overload=inner.type in self.spec.overloads,
        )


class _CodeChunker(_Finder):
    """Walks one parsed file and emits its pieces: definitions, class skeletons, module gaps."""

    def run(self, root: Node) -> list[Piece] | None:
        self._index_leading(root)
        defs = self._attach_leading(self._collect(root, (), None), floor=0)
        if root.has_error:
            if not defs:
                log.debug(
                    "no definition recovered from a broken %s file; falling back to windows", self.language
                )
                return None
            self.error_rows = self._error_rows(root)
        pieces: list[Piece] = []
        self._emit_level(defs, pieces)
        pieces.extend(self._module_pieces(defs))
        return pieces

    def _emit_level(self, defs: Sequence[_Def], pieces: list[Piece]) -> None:
        for group in self._merge_tiny(defs):
            if len(group) > 1:
                pieces.append(self._merged_piece(group))
                continue
            definition = group[0]
            rows = (
                self._skeleton(definition)
                if definition.members
                else self._rows(definition.start_row, definition.end_row)
            )
            pieces.append(
                Piece(
                    chunk_kind=definition.kind,
                    symbol_name=definition.qualified,
                    class_name=definition.class_name,
                    function_name=definition.function_name,
                    rows=tuple(rows),
                    summary=definition.summary,
                )
            )
            self._emit_level(definition.members, pieces)

    def _is_tiny(self, definition: _Def) -> bool:
        return not definition.members and definition.end_row - definition.start_row + 1 < self.min_chunk_lines

    def _merge_tiny(self, defs: Sequence[_Def]) -> list[list[_Def]]:
        groups: list[list[_Def]] = []
        for definition in defs:
            last = groups[-1] if groups else None
            if (
                last is not None
                and len(last) < MAX_MERGED_SIBLINGS
                and self._is_tiny(last[-1])
                and self._is_tiny(definition)
                and last[-1].kind == definition.kind
                and definition.start_row > last[-1].end_row
                and all(
                    is_blank(self.lines[row]) for row in range(last[-1].end_row + 1, definition.start_row)
                )
            ):
                last.append(definition)
            else:
                groups.append([definition])
        return groups

    def _merged_piece(self, group: Sequence[_Def]) -> Piece:
        class_names = {d.class_name for d in group}
        return Piece(
            chunk_kind=group[0].kind,
            symbol_name="+".join(d.qualified for d in group),
            class_name=class_names.pop() if len(class_names) == 1 else "",
            function_name="+".join(d.function_name for d in group) if group[0].function_name else "",
            rows=tuple(self._rows(group[0].start_row, group[-1].end_row)),
            summary=clip("\n".join(d.signature for d in group)),
        )

    def _skeleton(self, container: _Def) -> list[Row]:
        """The container's rows with each member body that owns its lines replaced by a marker line."""
        rows: list[Row] = []
        cursor = container.start_row
        for member in container.members:
            if (
                not member.owns_lines
                or member.start_row < cursor
                or member.start_row <= container.header_end_row
            ):
                continue  # shares lines with other code: stays verbatim
            elided = self._elided(member)
            if elided is None:
                continue
            rows.extend(self._rows(cursor, member.start_row - 1))
            rows.extend(elided)
            cursor = member.end_row + 1
        rows.extend(self._rows(cursor, container.end_row))
        return rows

    def _elided(self, member: _Def) -> list[Row] | None:
        """Signature, marker and closing line of a member; ``None`` when that would not be shorter."""
        closer = member.end_row if _CLOSER.fullmatch(self.lines[member.end_row].strip()) else None
        body_first = member.header_end_row + 1
        kept = self._rows(member.outer_start_row, member.header_end_row)
        if len(kept) + 1 + (closer is not None) >= member.end_row - member.start_row + 1:
            return None
        body_line = self.lines[body_first] if body_first < len(self.lines) else ""
        if is_blank(body_line):
            header = self.lines[member.outer_start_row]
            indent = header[: len(header) - len(header.lstrip())] + "    "
        else:
            indent = body_line[: len(body_line) - len(body_line.lstrip())]
        marker = f"{indent}{self.spec.comment_prefix} ... {member.qualified} (lines {member.start_row + 1}-{member.end_row + 1})"
        # numbered as the last elided line, so a skeleton ending in a member still ends at the true last line
        body_last = closer - 1 if closer is not None else member.end_row
        kept.append((body_last + 1, marker))
        if closer is not None:
            kept.append((closer + 1, self.lines[closer]))
        return kept

    def _module_pieces(self, defs: Sequence[_Def]) -> list[Piece]:
        """``module`` chunks for each run of lines outside every top-level definition."""
        covered = [False] * len(self.lines)
        for definition in defs:
            for row in range(definition.start_row, min(definition.end_row, len(self.lines) - 1) + 1):
                covered[row] = True
        pieces = []
        run: list[Row] = []
        for row, text in enumerate(self.lines):
            if covered[row]:
                if run:
                    pieces.extend(self._module_piece(run))
                    run = []
            else:
                run.append((row + 1, text))
        pieces.extend(self._module_piece(run))
        return pieces

    def _module_piece(self, run: list[Row]) -> list[Piece]:
        rows = trim_blank(run)
        if not rows or all(self.spec.structural_line.fullmatch(text) for _, text in rows):
            return []
        pieces = []
        for start, end in window_bounds(len(rows), MODULE_RUN_LINES, 0):
            part = trim_blank(rows[start:end])
            if not part:
                continue
            # text the parser could not make sense of is labelled a plain window, not module code
            kind = "window" if any(row - 1 in self.error_rows for row, _ in part) else "module"
            pieces.append(Piece(kind, "", "", "", part, first_line_summary(part)))
        return pieces


def _has_body(node: Node) -> bool:
    body = node.child_by_field_name("body")
    return body is not None and body.type != ";"


def _function_value(value: Node | None, name: Node | None) -> tuple[Node, str, Node] | None:
    if value is None or name is None:
        return None
    if value.type in JS_FUNCTION_VALUES:
        return value, "function", name
    if value.type in JS_CLASS_VALUES:
        return value, "class", name
    return None


def _function_declarator(node: Node) -> Node | None:
    """The ``function_declarator`` under a C/C++ definition's (pointer/reference) declarators."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def _qualified_parts(text: str, separators: re.Pattern[str]) -> list[str]:
    """``Foo::Bar`` / ``A\\B`` → ``["Foo", "Bar"]``; plain names stay one part (JS ``exports.f`` included)."""
    return [part.strip() for part in separators.split(text) if part.strip()] if text else []


def _follow(node: Node, path: tuple[str, ...]) -> Node | None:
    """The node at ``path`` below ``node``: each step a field name, else the first child of that type."""
    for step in path:
        child = node.child_by_field_name(step)
        if child is None:
            child = next((c for c in node.named_children if c.type == step), None)
        if child is None:  # a keyword that names its definition (Swift ``deinit``)
            child = next((c for c in node.children if c.type == step), None)
        if child is None:
            return None
        node = child
    return node


def _join_overloads(defs: list[_Def]) -> list[_Def]:
    """Overload signatures join the definition of their name that follows them; alone they are dropped.

    ``export function timer(due): Observable<0>;`` under its own doc comment, then two more, then
    the implementation: one chunk from the first doc comment to the end of the body, so the
    overloads' prose is read with the code it documents instead of as module code of its own.
    """
    out: list[_Def] = []
    pending: list[_Def] = []  # the overloads just seen, all of one name
    for definition in defs:
        same_name = bool(pending) and (pending[0].qualified, pending[0].kind) == (
            definition.qualified,
            definition.kind,
        )
        if definition.overload:
            pending = [*pending, definition] if same_name else [definition]
            continue
        if same_name:
            first = pending[0]
            definition = replace(
                definition,
                start_row=first.start_row,
                outer_start_row=first.outer_start_row,
                owns_lines=definition.owns_lines and all(p.owns_lines for p in pending),
            )
        pending = []
        out.append(definition)
    return out


def _join_clauses(defs: list[_Def]) -> list[_Def]:
    """Adjacent definitions of one name become one: Haskell equations, Elixir function clauses."""
    out: list[_Def] = []
    for definition in defs:
        last = out[-1] if out else None
        if (
            last is not None
            and not last.members
            and not definition.members
            and (last.qualified, last.kind) == (definition.qualified, definition.kind)
        ):
            out[-1] = replace(
                last, end_row=definition.end_row, owns_lines=last.owns_lines and definition.owns_lines
            )
        else:
            out.append(definition)
    return out


def _base_type_name(text: str) -> str:
    """``*Stack[T]`` / ``Wrapper<T>`` / ``crate::Foo`` → the bare type name."""
    previous = None
    while previous != text:
        previous, text = text, _GENERIC_ARGS.sub("", text)
    text = text.strip().lstrip("*&").strip()
    text = re.sub(r"^(mut|const|dyn)\s+", "", text)
    return re.split(r"::|\.", text)[-1].strip()


def _first_meaningful(lines: Sequence[str]) -> str:
    for line in lines:
        text = line.strip().strip("*").strip()
        if text:
            return clip(text, 200)
    return ""
