"""``meta`` containment, PostgreSQL ``jsonb @>`` semantics: every key of the filter is in the
record's meta with a contained value; an array filter value is contained when each of its
elements is contained in some element of the record's array (so ``{"tags": ["a"]}`` is array
membership); scalars compare equal (numbers by value, never ``1 == true``).
"""

from __future__ import annotations

from typing import Any


def meta_contains(meta: Any, wanted: Any) -> bool:
    """True if ``meta`` contains ``wanted``."""
    if isinstance(wanted, dict):
        return isinstance(meta, dict) and all(
            k in meta and meta_contains(meta[k], v) for k, v in wanted.items()
        )
    if isinstance(wanted, list):
        if not isinstance(meta, list):
            return False
        return all(any(meta_contains(m, w) for m in meta) for w in wanted)
    if isinstance(meta, list) and not isinstance(wanted, dict | list):
        # jsonb: a scalar is contained in an array that holds it (top-level array rule).
        return any(_scalar_eq(m, wanted) for m in meta)
    return _scalar_eq(meta, wanted)


def _scalar_eq(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b
