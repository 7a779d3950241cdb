"""``metaPredicate``: the subset of PostgreSQL's SQL/JSON path dialect that seed 004 uses, parsed
and evaluated over a record's ``meta`` as ``meta @@ predicate`` would be.

No PyPI package implements this dialect (DESIGN.md), so this is a small recursive-descent parser.

Supported: ``$`` and ``@``; accessors ``.key``, ``."quoted key"``, ``[*]``, ``[n]``, ``[n, m]``;
filters ``? ( … )``; ``&&``, ``||``, ``!``, parentheses, ``( … ) is unknown``; comparisons
``== != <> < <= > >=``; ``exists( … )``; ``like_regex "re" [flag "imsxq"]``; ``starts with``;
literals (numbers, double-quoted strings, ``true``, ``false``, ``null``); the ``lax`` prefix.
Semantics are lax mode: member access unwraps arrays, structural errors yield nothing, a
comparison is true if any pair of items compares true and *unknown* when a pair is not comparable
(string vs number) and none is true; ``!unknown`` is unknown; only a *true* result matches.

Anything else (arithmetic, item methods such as ``.size()`` / ``.type()``, ``.*``, ``**``,
``last``, ``$variables``, ``strict``) is an INVALID_ARGUMENT error on ``metaPredicate`` naming the
construct — never silently true.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import InvalidArgument

FIELD = "metaPredicate"
_TOKEN_RE = re.compile(
    r"""\s*(?:
    (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<op>&&|\|\||==|!=|<>|<=|>=|<|>|!|\(|\)|\[|\]|,|\?|\$[A-Za-z_]\w*|\$|@|\.\*\*|\*\*|\.\*|\.|\*|\+|-|/|%)
  | (?P<word>[A-Za-z_]\w*)
    )""",
    re.VERBOSE,
)
_COMPARE = {"==", "!=", "<>", "<", "<=", ">", ">="}
_METHODS = {
    "type", "size", "double", "ceiling", "floor", "abs", "keyvalue", "datetime", "bigint", "boolean",
    "date", "decimal", "integer", "number", "string", "time", "time_tz", "timestamp", "timestamp_tz",
}  # fmt: skip
_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE}

Tri = bool | None  # True, False, None = unknown
_Eval = Callable[[Any, Any], Tri]  # (root, current @) -> truth
_PathFn = Callable[[Any, Any], list[Any]]  # (root, current @) -> items


def _unsupported(construct: str, text: str) -> InvalidArgument:
    return InvalidArgument(
        f"metaPredicate uses {construct}, which is not supported (supported: accessors, [*], ? () filters, "
        f"&& || !, comparisons, exists, like_regex, starts with): {text!r}",
        field=FIELD,
        details={"unsupported": construct},
    )


@dataclass(frozen=True)
class MetaPredicate:
    """A parsed predicate; ``matches(meta)`` is ``meta @@ predicate`` (only true matches)."""

    text: str
    _fn: _Eval

    def matches(self, meta: Any) -> bool:
        """True when the predicate evaluates to true for ``meta``."""
        return self._fn(meta, meta) is True


def parse_meta_predicate(text: str) -> MetaPredicate:
    """Parse ``text``; a syntax error or unsupported construct raises INVALID_ARGUMENT."""
    parser = _Parser(text)
    fn = parser.parse()
    return MetaPredicate(text, fn)


class _Parser:
    """Recursive descent over the tokens; builds closures, so evaluation needs no tree walk.

    One recursive-descent parser of one grammar (about 250 lines, over the 250-line class limit on
    purpose): each grammar rule is a method, and splitting the rules across classes would scatter
    the grammar a reader must see in one place.
    """

    def __init__(self, text: str):
        self.text = text
        self.tokens = self._lex(text)
        self.pos = 0

    def _lex(self, text: str) -> list[tuple[str, str]]:
        out, pos = [], 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN_RE.match(text, pos)
            if not m or m.end() == pos:
                raise InvalidArgument(f"metaPredicate: cannot read {text[pos : pos + 20]!r}", field=FIELD)
            kind = m.lastgroup or "op"
            out.append((kind, m.group(kind)))
            pos = m.end()
        return out

    # -- token helpers
    def peek(self, offset: int = 0) -> str | None:
        i = self.pos + offset
        return self.tokens[i][1] if i < len(self.tokens) else None

    def kind(self) -> str | None:
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            want = f"{expected!r}" if expected else "more input"
            raise InvalidArgument(
                f"metaPredicate: expected {want}, got {tok!r} in {self.text!r}", field=FIELD
            )
        self.pos += 1
        return tok

    def parse(self) -> _Eval:
        if self.peek() == "strict":
            raise _unsupported("strict mode", self.text)
        if self.peek() == "lax":
            self.pos += 1
        if not self.tokens:
            raise InvalidArgument("metaPredicate is empty", field=FIELD)
        fn = self.or_expr()
        if self.peek() is not None:
            tok = self.peek()
            raise self._construct_error(tok) or InvalidArgument(
                f"metaPredicate: unexpected {tok!r} in {self.text!r}", field=FIELD
            )
        return fn

    def _construct_error(self, tok: str | None) -> InvalidArgument | None:
        if tok in {"+", "-", "*", "/", "%"}:
            return _unsupported(f"arithmetic operator {tok!r}", self.text)
        return None

    # -- boolean layer
    def or_expr(self) -> _Eval:
        left = self.and_expr()
        while self.peek() == "||":
            self.pos += 1
            right = self.and_expr()
            left = _or(left, right)
        return left

    def and_expr(self) -> _Eval:
        left = self.unary()
        while self.peek() == "&&":
            self.pos += 1
            right = self.unary()
            left = _and(left, right)
        return left

    def unary(self) -> _Eval:
        if self.peek() == "!":
            self.pos += 1
            inner = self.unary()
            return lambda root, cur: None if (v := inner(root, cur)) is None else not v
        return self.primary()

    def primary(self) -> _Eval:
        tok = self.peek()
        if tok == "(" and self._paren_is_boolean():
            self.pos += 1
            inner = self.or_expr()
            self.take(")")
            if self.peek() == "is":
                self.pos += 1
                self.take("unknown")
                return lambda root, cur: inner(root, cur) is None
            return inner
        if tok == "exists":
            self.pos += 1
            self.take("(")
            path = self.value()
            self.take(")")
            return lambda root, cur: bool(path(root, cur))
        return self.predicate()

    def _paren_is_boolean(self) -> bool:
        """``(`` opens a boolean group unless it only wraps a value (``($.a) == 1``)."""
        depth, i = 0, self.pos
        while i < len(self.tokens):
            tok = self.tokens[i][1]
            depth += tok == "("
            depth -= tok == ")"
            if depth == 0:
                nxt = self.tokens[i + 1][1] if i + 1 < len(self.tokens) else None
                return nxt not in _COMPARE and nxt not in {"like_regex", "starts"}
            i += 1
        return True

    def predicate(self) -> _Eval:
        left = self.value()
        tok = self.peek()
        if tok in _COMPARE:
            self.pos += 1
            right = self.value()
            return _compare(tok, left, right)
        if tok == "like_regex":
            self.pos += 1
            pattern = self._string_literal("like_regex pattern")
            flags = 0
            if self.peek() == "flag":
                self.pos += 1
                for ch in self._string_literal("like_regex flag"):
                    if ch == "q":
                        pattern = re.escape(pattern)
                    elif ch in _FLAGS:
                        flags |= _FLAGS[ch]
                    else:
                        raise _unsupported(f"like_regex flag {ch!r}", self.text)
            try:
                rx = re.compile(pattern, flags)
            except re.error as exc:
                raise InvalidArgument(f"metaPredicate: bad like_regex pattern: {exc}", field=FIELD) from exc
            return _items_test(left, lambda v: rx.search(v) is not None)
        if tok == "starts":
            self.pos += 1
            self.take("with")
            right = self.value()
            return _starts_with(left, right)
        if tok is not None and (err := self._construct_error(tok)):
            raise err
        # A bare path: its first item decides when it is a boolean, else unknown (PostgreSQL @@).
        return lambda root, cur: v[0] if (v := left(root, cur)) and isinstance(v[0], bool) else None

    def _string_literal(self, what: str) -> str:
        if self.kind() != "string":
            raise InvalidArgument(f"metaPredicate: {what} must be a string literal", field=FIELD)
        literal: str = json.loads(self.take())
        return literal

    # -- values: paths and literals
    def value(self) -> _PathFn:
        kind, tok = self.kind(), self.peek()
        if tok is None:
            raise InvalidArgument(f"metaPredicate ends early: {self.text!r}", field=FIELD)
        if kind == "string":
            lit = json.loads(self.take())
            return lambda root, cur: [lit]
        if kind == "number":
            raw = self.take()
            num: Any = float(raw) if any(c in raw for c in ".eE") else int(raw)
            return lambda root, cur: [num]
        if tok in {"true", "false", "null"}:
            self.pos += 1
            lit = {"true": True, "false": False, "null": None}[tok]
            return lambda root, cur: [lit]
        if tok == "last":
            raise _unsupported("'last'", self.text)
        if tok == "(":
            self.pos += 1
            inner = self.value()
            self.take(")")
            return inner
        if tok in {"$", "@"}:
            self.pos += 1
            return self.accessors(tok)
        if tok.startswith("$"):
            raise _unsupported(f"variable {tok}", self.text)
        if tok == "-":
            raise _unsupported("arithmetic operator '-'", self.text)
        raise InvalidArgument(f"metaPredicate: unexpected {tok!r} in {self.text!r}", field=FIELD)

    def accessors(self, start: str) -> _PathFn:
        steps: list[Callable[[list[Any], Any], list[Any]]] = []
        while True:
            tok = self.peek()
            if tok == ".":
                self.pos += 1
                steps.append(self._member())
            elif tok in {".*", ".**", "**"}:
                raise _unsupported(f"wildcard accessor {tok!r}", self.text)
            elif tok == "[":
                self.pos += 1
                steps.append(self._subscript())
            elif tok == "?":
                self.pos += 1
                self.take("(")
                cond = self.or_expr()
                self.take(")")
                steps.append(_filter_step(cond))
            else:
                break
            if self.peek() in {"+", "-", "*", "/", "%"}:
                raise _unsupported(f"arithmetic operator {self.peek()!r}", self.text)

        def run(root: Any, cur: Any) -> list[Any]:
            items = [root if start == "$" else cur]
            for step in steps:
                items = step(items, root)
            return items

        return run

    def _member(self) -> Callable[[list[Any], Any], list[Any]]:
        kind, tok = self.kind(), self.take()
        key = json.loads(tok) if kind == "string" else tok
        if kind not in {"string", "word"}:
            raise InvalidArgument(f"metaPredicate: expected a key after '.', got {tok!r}", field=FIELD)
        if self.peek() == "(" and kind == "word":
            name = f".{key}()" if key in _METHODS else f"method .{key}()"
            raise _unsupported(f"item method {name}", self.text)
        return lambda items, root: [i[key] for i in _unwrap(items) if isinstance(i, dict) and key in i]

    def _subscript(self) -> Callable[[list[Any], Any], list[Any]]:
        if self.peek() == "*":
            self.pos += 1
            self.take("]")
            return lambda items, root: _unwrap(items)
        indexes: list[int] = []
        while True:
            if self.kind() != "number" or not re.fullmatch(r"\d+", self.peek() or ""):
                tok = self.peek()
                what = "'last'" if tok == "last" else f"subscript {tok!r}"
                raise _unsupported(what, self.text)
            indexes.append(int(self.take()))
            if self.peek() == "to":
                raise _unsupported("subscript range 'to'", self.text)
            if self.peek() == ",":
                self.pos += 1
                continue
            self.take("]")
            break
        return lambda items, root: [
            seq[n]
            for i in items
            for seq in [i if isinstance(i, list) else [i]]
            for n in indexes
            if n < len(seq)
        ]


def _filter_step(cond: _Eval) -> Callable[[list[Any], Any], list[Any]]:
    return lambda items, root: [i for i in _unwrap(items) if cond(root, i) is True]


def _unwrap(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for i in items:
        out.extend(i if isinstance(i, list) else [i])
    return out


def _or(a: _Eval, b: _Eval) -> _Eval:
    def run(root: Any, cur: Any) -> Tri:
        x, y = a(root, cur), b(root, cur)
        return True if x is True or y is True else (None if x is None or y is None else False)

    return run


def _and(a: _Eval, b: _Eval) -> _Eval:
    def run(root: Any, cur: Any) -> Tri:
        x, y = a(root, cur), b(root, cur)
        return False if x is False or y is False else (None if x is None or y is None else True)

    return run


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    return "container"


def _cmp_pair(op: str, x: Any, y: Any) -> Tri:
    kx, ky = _kind(x), _kind(y)
    if "container" in (kx, ky):
        return None
    if kx == "null" or ky == "null":
        same = kx == ky
        return (same if op == "==" else not same) if op in {"==", "!=", "<>"} else False
    if kx != ky:
        return None
    if kx == "bool" and op not in {"==", "!=", "<>"}:
        return None
    return bool({
        "==": x == y, "!=": x != y, "<>": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y,
    }[op])  # fmt: skip


def _compare(op: str, left: _PathFn, right: _PathFn) -> _Eval:
    def run(root: Any, cur: Any) -> Tri:
        unknown = False
        for x in _unwrap(left(root, cur)):
            for y in _unwrap(right(root, cur)):
                r = _cmp_pair(op, x, y)
                if r is True:
                    return True
                unknown |= r is None
        return None if unknown else False

    return run


def _items_test(left: _PathFn, test: Callable[[str], bool]) -> _Eval:
    def run(root: Any, cur: Any) -> Tri:
        unknown = False
        for x in _unwrap(left(root, cur)):
            if not isinstance(x, str):
                unknown = True
            elif test(x):
                return True
        return None if unknown else False

    return run


def _starts_with(left: _PathFn, right: _PathFn) -> _Eval:
    def run(root: Any, cur: Any) -> Tri:
        prefixes = [p for p in right(root, cur) if isinstance(p, str)]
        return _items_test(left, lambda s: any(s.startswith(p) for p in prefixes))(root, cur)

    return run
