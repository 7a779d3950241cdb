"""Source rewrites for leakage control: blank out docstrings, mask definition names.

Both keep every line where it was (docstrings become blank lines, a body left empty gets
``pass``), so answer spans computed on the original file stay valid on the rewritten one.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass

_DEF_NAME = re.compile(r"(\s*(?:async\s+)?def\s+)([A-Za-z_][A-Za-z0-9_]*)")
_TRIPLE = re.compile(r'(?ms)^([ \t]*)[rRuUbB]{0,2}("""|\'\'\').*?\2[ \t]*$')


@dataclass(frozen=True)
class Docstring:
    """The docstring of one definition."""

    qualname: str
    text: str
    def_start: int
    def_end: int


_Owner = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _docstring_nodes(tree: ast.AST) -> list[tuple[_Owner, ast.Expr]]:
    out: list[tuple[_Owner, ast.Expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                out.append((node, first))
    return out


def strip_docstrings(source: str) -> str:
    """``source`` with every module/class/function docstring blanked, line numbers unchanged."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        # Python 2 code (CoSQA has some): blank statement-level triple-quoted strings instead.
        return _TRIPLE.sub(lambda m: "\n" * m.group(0).count("\n"), source)
    lines = source.splitlines(keepends=True)
    for owner, doc in sorted(_docstring_nodes(tree), key=lambda nd: -nd[1].lineno):
        start, end = doc.lineno - 1, (doc.end_lineno or doc.lineno) - 1
        # ast columns are UTF-8 byte offsets.
        prefix = lines[start].encode("utf-8")[: doc.col_offset].decode("utf-8", errors="replace")
        suffix = lines[end].encode("utf-8")[doc.end_col_offset or 0 :].decode("utf-8", errors="replace")
        if not suffix.endswith("\n"):
            suffix += "\n"
        needs_pass = len(owner.body) == 1 and not isinstance(owner, ast.Module)
        if prefix.strip():  # `def f(): "doc"` — the docstring shares the def line
            lines[start] = prefix + "pass" + suffix
        else:
            lines[start] = (prefix + "pass" if needs_pass else "") + suffix
        for i in range(start + 1, end + 1):
            lines[i] = "\n"
    return "".join(lines)


def docstrings(source: str) -> list[Docstring]:
    """Docstring of every function/method (qualified name, cleaned text, span of the def)."""
    tree = ast.parse(source)
    out: list[Docstring] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    doc = ast.get_docstring(child, clean=True)
                    if doc:
                        start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                        out.append(Docstring(name, doc, start, child.end_lineno or child.lineno))
                visit(child, name + ".")
            elif not isinstance(child, ast.expr):
                visit(child, prefix)

    visit(tree, "")
    return out


def masked_name(name: str) -> str:
    """An opaque, stable stand-in for a definition name."""
    return "fn_" + hashlib.sha1(name.encode()).hexdigest()[:8]


def mask_definition_names(source: str) -> str:
    """Rename every ``def NAME`` to an opaque ``fn_xxxxxxxx`` (calls elsewhere are left alone)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines(keepends=True)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            i = node.lineno - 1
            lines[i] = _DEF_NAME.sub(lambda m: m.group(1) + masked_name(m.group(2)), lines[i], count=1)
    return "".join(lines)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(doc: str) -> str:
    """First sentence of the first paragraph of a cleaned docstring, on one line."""
    paragraph = doc.strip().split("\n\n", 1)[0]
    paragraph = " ".join(paragraph.split())
    return _SENTENCE_END.split(paragraph, 1)[0].strip()
