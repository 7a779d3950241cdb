"""Find the 1-based inclusive line span of a named definition (``Class.method`` or ``name``).

Python uses ``ast`` (decorators included in the span). TypeScript/JavaScript use the indexer's
tree-sitter adapter; with overloads, the implementation (the declaration with a body) wins.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

_TS_FUNCS = ("function_declaration", "generator_function_declaration")
_TS_CLASSES = ("class_declaration", "abstract_class_declaration", "interface_declaration")


def python_definitions(source: str) -> dict[str, tuple[int, int]]:
    """Qualified name → (first line incl. decorators, last line) for every def/class in ``source``."""
    out: dict[str, tuple[int, int]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                # The last definition wins, as at run time (typing.overload stubs come first).
                out[name] = (start, child.end_lineno or child.lineno)
                visit(child, name + ".")
            elif not isinstance(child, ast.expr):
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def _ts_name(node: Any, source: bytes) -> str:
    name = node.child_by_field_name("name")
    return source[name.start_byte : name.end_byte].decode() if name is not None else ""


def typescript_definitions(source: bytes, language: str = "typescript") -> dict[str, tuple[int, int]]:
    """Qualified name → span for functions, classes, methods and top-level consts in TS/JS."""
    from local_memory_indexer import treesitter

    tree = treesitter.parse(language, source)
    out: dict[str, tuple[int, int]] = {}
    has_body: set[str] = set()

    def record(name: str, node: Any, body: bool) -> None:
        span = (node.start_point[0] + 1, node.end_point[0] + 1)
        if body or name not in has_body:
            if body:
                has_body.add(name)
            out[name] = span

    def visit(node: Any, prefix: str) -> None:
        for child in node.children:
            kind = child.type
            if kind in _TS_FUNCS:
                record(prefix + _ts_name(child, source), child, True)
            elif kind == "function_signature":
                record(prefix + _ts_name(child, source), child, False)
            elif kind in _TS_CLASSES:
                name = prefix + _ts_name(child, source)
                record(name, child, True)
                body = child.child_by_field_name("body")
                if body is not None:
                    visit(body, name + ".")
            elif kind in ("method_definition", "method_signature"):
                record(prefix + _ts_name(child, source), child, kind == "method_definition")
            elif kind in ("lexical_declaration", "variable_declaration") and not prefix:
                for decl in child.children:
                    if decl.type == "variable_declarator":
                        record(_ts_name(decl, source), child, True)
            elif kind in ("export_statement", "program", "statement_block"):
                visit(child, prefix)

    visit(tree.root_node, "")
    return out


def definition_span(root: Path, rel_path: str, symbol: str) -> tuple[int, int]:
    """Span of ``symbol`` in ``root/rel_path``; KeyError when it is not defined there."""
    path = root / rel_path
    if path.suffix == ".py":
        spans = python_definitions(path.read_text(encoding="utf-8"))
    else:
        language = "tsx" if path.suffix == ".tsx" else "typescript" if path.suffix == ".ts" else "javascript"
        spans = typescript_definitions(path.read_bytes(), language)
    if symbol not in spans:
        raise KeyError(f"{symbol} is not defined in {rel_path}")
    return spans[symbol]
