"""Seed 000's path-pattern globs: ``*`` (one path segment), ``**`` (any depth), ``?`` (one char).

A record's ``paths`` are patterns of the code paths it is about; a search's ``path`` is a concrete
path. A pattern without glob characters also matches everything under it (``src/api`` covers
``src/api/x.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=4096)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch))
        i += 1
    return re.compile("".join(out) + r"\Z")


def _norm(path: str) -> str:
    path = path.replace("\\", "/").strip()
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") if len(path) > 1 else path


def glob_match(pattern: str, path: str) -> bool:
    """True if ``path`` matches ``pattern`` (see module docstring)."""
    pattern, path = _norm(pattern), _norm(path)
    if not any(c in pattern for c in "*?"):
        return path == pattern or path.startswith(pattern.rstrip("/") + "/")
    return bool(_glob_regex(pattern).match(path))


def matches_any_pattern(path: str, patterns: Iterable[str]) -> bool:
    """Seed 000's ``matchesAnyPattern``."""
    return any(glob_match(p, path) for p in patterns if p)


def ignored_area(path: str, areas: Iterable[str]) -> str | None:
    """The first capture-ignored area ``path`` lies inside (seed 000: a search there answers
    nothing), or None. An area is a folder (``vendor``) or a glob (``apps/*/generated``); inside
    means the path matches it or lies below what it matches."""
    for area in areas:
        area = area.strip()
        if area and (glob_match(area, path) or glob_match(area.rstrip("/") + "/**", path)):
            return area
    return None
