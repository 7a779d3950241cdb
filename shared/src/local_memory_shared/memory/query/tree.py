"""Seed 004's ``tree`` filter over a record's ``domain`` (``/a/b/c``), compiled to a LanceDB ``where``.

Syntax is auto-detected from the pattern:

* bare path ``/work/projects`` — that node and all its descendants;
* wildcard ``/work/projects/*`` — ``*`` stands for any number of labels (lquery: zero or more),
  so the node and every descendant at any depth;
* depth limit ``/work/*{2}`` — up to 2 labels (``*{m,n}`` from m to n, ``*{n,}`` at least n);
* negation ``*/!draft/*`` — ``!label`` is one label other than ``label``; beside a ``*`` it means
  the path contains no ``label`` at all (seed 004: "paths that do NOT contain draft");
* pattern ``*/api/*`` — any path containing the label ``api`` (a pattern may start with ``*``);
* label search ``api & v2`` — ``&``, ``|``, ``!`` and parentheses over the labels (a single word
  without ``/`` is a label search too).

LanceDB's regex engine (Rust ``regex``) has no look-around, so negation compiles to a regex slot
``[^/]+`` plus ``NOT array_has(tree_labels, ...)`` or an anchored ``NOT regexp_like``.
:meth:`TreeFilter.matches` evaluates the same semantics in Python (the tests hold both equal).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ...errors import InvalidArgument

_LABEL_RE = re.compile(r"^[^/*!{}&|()\s]+$")
_STAR_RE = re.compile(r"^\*(?:\{(\d+)?(,)?(\d+)?\})?$")


def _q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _bad(pattern: str, why: str) -> InvalidArgument:
    return InvalidArgument(f"tree {pattern!r}: {why}", field="tree")


@dataclass(frozen=True)
class _Seg:
    kind: str  # label | star | not
    label: str = ""
    lo: int = 0
    hi: int | None = None


@dataclass(frozen=True)
class TreeFilter:
    """A compiled tree pattern: ``where`` is a LanceDB SQL predicate."""

    pattern: str
    where: str
    _segs: tuple[_Seg, ...] = ()
    _labels_pred: Callable[[frozenset[str]], bool] | None = None

    def matches(self, domain: str | None) -> bool:
        """Python evaluation of the same pattern (for candidate checks and tests)."""
        labels = [p for p in (domain or "").split("/") if p]
        if self._labels_pred is not None:
            return domain is not None and self._labels_pred(frozenset(labels))
        if domain is None:
            return False
        for seg in self._segs:
            if seg.kind == "not" and _beside_star(self._segs, seg) and seg.label in labels:
                return False
        return _match(self._segs, tuple(labels))


def _beside_star(segs: tuple[_Seg, ...], seg: _Seg) -> bool:
    i = segs.index(seg)
    return any(0 <= j < len(segs) and segs[j].kind == "star" for j in (i - 1, i + 1))


def _match(segs: tuple[_Seg, ...], labels: tuple[str, ...]) -> bool:
    if not segs:
        return not labels
    seg, rest = segs[0], segs[1:]
    if seg.kind == "star":
        hi = len(labels) if seg.hi is None else min(seg.hi, len(labels))
        return any(_match(rest, labels[n:]) for n in range(seg.lo, hi + 1))
    if not labels:
        return False
    if seg.kind == "label" and labels[0] != seg.label:
        return False
    if seg.kind == "not" and labels[0] == seg.label:
        return False
    return _match(rest, labels[1:])


def compile_tree(pattern: str) -> TreeFilter:
    """Parse and compile ``pattern``; an invalid pattern raises INVALID_ARGUMENT on ``tree``."""
    text = pattern.strip()
    if not text:
        raise _bad(pattern, "empty pattern")
    if "/" not in text and "*" not in text:
        expr = _labels_sql(text, pattern)
        return TreeFilter(pattern, expr[0], (), expr[1])
    if not any(c in text for c in "*!{"):
        labels = [_label(p, pattern) for p in text.strip("/").split("/")]
        path = "/" + "/".join(labels)
        segs = (*(_Seg("label", x) for x in labels), _Seg("star"))
        return TreeFilter(pattern, f"(domain = {_q(path)} OR starts_with(domain, {_q(path + '/')}))", segs)
    segs = tuple(_segment(p, pattern) for p in text.strip("/").split("/"))
    return TreeFilter(pattern, _segs_sql(segs), segs)


def _label(part: str, pattern: str) -> str:
    part = part.strip()
    if not _LABEL_RE.match(part):
        raise _bad(pattern, f"{part!r} is not a label")
    return part


def _segment(part: str, pattern: str) -> _Seg:
    part = part.strip()
    star = _STAR_RE.match(part)
    if star:
        first, comma, second = star.groups()
        if part == "*":
            return _Seg("star")
        if first is None and second is None:
            raise _bad(pattern, f"{part!r} needs a number, e.g. *{{2}}")
        if comma is None:
            return _Seg("star", lo=0, hi=int(first))  # seed 004: *{n} = up to n levels
        lo, hi = int(first or 0), (int(second) if second else None)
        if hi is not None and hi < lo:
            raise _bad(pattern, f"{part!r}: upper bound below lower bound")
        return _Seg("star", lo=lo, hi=hi)
    if part.startswith("!"):
        return _Seg("not", _label(part[1:], pattern))
    return _Seg("label", _label(part, pattern))


def _segs_sql(segs: tuple[_Seg, ...]) -> str:
    regex = ["^"]
    clauses: list[str] = []
    for i, seg in enumerate(segs):
        if seg.kind == "label":
            regex.append("/" + re.escape(seg.label))
        elif seg.kind == "not":
            regex.append("/[^/]+")
            if _beside_star(segs, seg):
                clauses.append(f"NOT array_has(tree_labels, {_q(seg.label)})")
            else:
                prefix = "".join(_seg_regex(s) for s in segs[:i])
                clauses.append(
                    f"NOT regexp_like(domain, {_q('^' + prefix + '/' + re.escape(seg.label) + '(/|$)')})"
                )
        else:
            regex.append(_seg_regex(seg))
    regex.append("$")
    return "(" + " AND ".join([f"regexp_like(domain, {_q(''.join(regex))})", *clauses]) + ")"


def _seg_regex(seg: _Seg) -> str:
    if seg.kind == "label":
        return "/" + re.escape(seg.label)
    if seg.kind == "not":
        return "/[^/]+"
    hi = "" if seg.hi is None else str(seg.hi)
    return f"(/[^/]+){{{seg.lo},{hi}}}"


# -- label search: & | ! ( ) -----------------------------------------------------------------

_LABEL_TOKEN = re.compile(r"\s*(\(|\)|&|\||!|[^\s()&|!]+)")
_Pred = Callable[[frozenset[str]], bool]


def _labels_sql(text: str, pattern: str) -> tuple[str, _Pred]:
    tokens = _LABEL_TOKEN.findall(text)
    if "".join(tokens) != re.sub(r"\s+", "", text):
        raise _bad(pattern, "unexpected characters in label search")
    pos, sql, pred = _parse_or(tokens, 0, pattern)
    if pos != len(tokens):
        raise _bad(pattern, f"unexpected {tokens[pos]!r}")
    return f"(domain IS NOT NULL AND {sql})", pred


def _parse_or(tokens: list[str], pos: int, pattern: str) -> tuple[int, str, _Pred]:
    pos, left, lf = _parse_and(tokens, pos, pattern)
    while pos < len(tokens) and tokens[pos] == "|":
        pos, right, rf = _parse_and(tokens, pos + 1, pattern)
        left, lf = f"({left} OR {right})", (lambda a, b: lambda ls: a(ls) or b(ls))(lf, rf)
    return pos, left, lf


def _parse_and(tokens: list[str], pos: int, pattern: str) -> tuple[int, str, _Pred]:
    pos, left, lf = _parse_not(tokens, pos, pattern)
    while pos < len(tokens) and tokens[pos] == "&":
        pos, right, rf = _parse_not(tokens, pos + 1, pattern)
        left, lf = f"({left} AND {right})", (lambda a, b: lambda ls: a(ls) and b(ls))(lf, rf)
    return pos, left, lf


def _parse_not(tokens: list[str], pos: int, pattern: str) -> tuple[int, str, _Pred]:
    if pos >= len(tokens):
        raise _bad(pattern, "expression ends early")
    tok = tokens[pos]
    if tok == "!":
        pos, inner, f = _parse_not(tokens, pos + 1, pattern)
        return pos, f"(NOT {inner})", (lambda g: lambda ls: not g(ls))(f)
    if tok == "(":
        pos, inner, f = _parse_or(tokens, pos + 1, pattern)
        if pos >= len(tokens) or tokens[pos] != ")":
            raise _bad(pattern, "missing ')'")
        return pos + 1, inner, f
    if tok in {")", "&", "|"}:
        raise _bad(pattern, f"unexpected {tok!r}")
    label = _label(tok, pattern)
    return pos + 1, f"array_has(tree_labels, {_q(label)})", lambda ls: label in ls
