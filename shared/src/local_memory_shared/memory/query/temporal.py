"""Seed 004's ``temporal`` filter over a record's range (``valid_from``, ``valid_to``).

A record with both ends has the half-open range ``[valid_from, valid_to)``; with only
``valid_from`` it is the instant ``valid_from``; without ``valid_from`` it has no range and every
temporal predicate excludes it (seed 004: ``before``/``after`` are strict and exclude memories
without a range). All populated predicates must match.

* ``before T``  — the range ends at or before T (a half-open range ending exactly at T matches;
  one beginning at or containing T does not); an instant strictly before T.
* ``after T``   — the range begins strictly after T.
* ``contains T`` — ``valid_from <= T < valid_to`` (an instant: equal to T).
* ``overlaps {start, end}`` — shares some time with ``[start, end)``.
* ``within {start, end}``   — lies entirely inside ``[start, end]``.

Times are canonical ``YYYY-MM-DDTHH:MM:SSZ`` strings, so they compare as text in SQL and Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import InvalidArgument
from ..model import canonical_time

_KEYS = ("before", "after", "contains", "overlaps", "within")
_END = "COALESCE(valid_to, valid_from)"


def _q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@dataclass(frozen=True)
class TemporalFilter:
    """Validated temporal predicates (canonical times)."""

    before: str | None = None
    after: str | None = None
    contains: str | None = None
    overlaps: tuple[str, str] | None = None
    within: tuple[str, str] | None = None

    def where(self) -> str:
        """LanceDB SQL for every populated predicate."""
        parts = ["valid_from IS NOT NULL"]
        if self.before:
            b = _q(self.before)
            parts.append(
                f"((valid_to IS NULL AND valid_from < {b}) OR (valid_to IS NOT NULL AND valid_to <= {b}))"
            )
        if self.after:
            parts.append(f"valid_from > {_q(self.after)}")
        if self.contains:
            c = _q(self.contains)
            parts.append(
                f"((valid_to IS NULL AND valid_from = {c}) OR (valid_from <= {c} AND valid_to > {c}))"
            )
        if self.overlaps:
            s, e = map(_q, self.overlaps)
            parts.append(
                f"((valid_to IS NULL AND valid_from >= {s} AND valid_from < {e}) "
                f"OR (valid_to IS NOT NULL AND valid_from < {e} AND valid_to > {s}))"
            )
        if self.within:
            s, e = map(_q, self.within)
            parts.append(f"(valid_from >= {s} AND {_END} <= {e})")
        return "(" + " AND ".join(parts) + ")"

    def matches(self, valid_from: str | None, valid_to: str | None) -> bool:
        """Python evaluation of the same predicates."""
        if not valid_from:
            return False
        start, end = valid_from, valid_to
        checks = []
        if self.before:
            checks.append(start < self.before if end is None else end <= self.before)
        if self.after:
            checks.append(start > self.after)
        if self.contains:
            checks.append(start == self.contains if end is None else start <= self.contains < end)
        if self.overlaps:
            s, e = self.overlaps
            checks.append(s <= start < e if end is None else (start < e and end > s))
        if self.within:
            s, e = self.within
            checks.append(start >= s and (end or start) <= e)
        return all(checks)


def _time(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{name} must be an ISO 8601 time string", field=name)
    out = canonical_time(value, field_name=name)
    assert out is not None
    return out


def _range(value: Any, name: str) -> tuple[str, str]:
    if not isinstance(value, dict) or set(value) - {"start", "end"} or not {"start", "end"} <= set(value):
        raise InvalidArgument(f"{name} must be an object {{start, end}}", field=name)
    start, end = _time(value["start"], f"{name}.start"), _time(value["end"], f"{name}.end")
    if end < start:
        raise InvalidArgument(f"{name}.end is before {name}.start", field=f"{name}.end")
    return start, end


def parse_temporal(value: Any, field: str = "temporal") -> TemporalFilter | None:
    """Validate a ``temporal`` object; None when it sets nothing."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidArgument(f"{field} must be an object", field=field)
    unknown = set(value) - set(_KEYS)
    if unknown:
        key = sorted(unknown)[0]
        raise InvalidArgument(
            f"unknown {field} key {key!r}; allowed: {', '.join(_KEYS)}", field=f"{field}.{key}"
        )
    given = {k: v for k, v in value.items() if v is not None}
    if not given:
        return None
    return TemporalFilter(
        before=_time(given["before"], f"{field}.before") if "before" in given else None,
        after=_time(given["after"], f"{field}.after") if "after" in given else None,
        contains=_time(given["contains"], f"{field}.contains") if "contains" in given else None,
        overlaps=_range(given["overlaps"], f"{field}.overlaps") if "overlaps" in given else None,
        within=_range(given["within"], f"{field}.within") if "within" in given else None,
    )
