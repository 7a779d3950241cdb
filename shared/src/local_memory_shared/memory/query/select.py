"""``select`` (seed 004) and the text ``format`` of listings.

Selectors name result fields (``id``, ``title``…; seed 004's camelCase names such as
``versionHash``, ``tree``, ``name``, ``createdAt`` are accepted as aliases), ``meta.<key>`` (the
whole suffix is the key, ``$thread`` and punctuation included) and at most one content slice:
``content:N`` (first N), ``content:M:N`` (``[M, N)``), ``content:M:`` (M to the end), counted in
UTF-16 code units as JavaScript does; a slice adds ``contentLength`` (full UTF-16 length).
An empty selection, an unknown field or two different slices are INVALID_ARGUMENT on ``select``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from ...errors import InvalidArgument

ALIASES: dict[str, str] = {
    "tree": "domain",
    "name": "title",
    "versionHash": "version_hash",
    "createdAt": "created",
    "updatedAt": "updated",
    "createdBy": "created_by",
    "succeededBy": "succeeded_by",
    "contradictedBy": "contradicted_by",
    "matchSource": "match_source",
    "estTokens": "est_tokens",
    "lastHit": "last_hit",
    "lastSeen": "last_seen",
    "validFrom": "valid_from",
    "validTo": "valid_to",
    "space": "project",
}
_SLICE_RE = re.compile(r"^content:(\d+)(?::(\d*))?$")


@dataclass(frozen=True)
class Selection:
    """Parsed selectors: result fields, meta keys, and an optional content slice."""

    fields: tuple[str, ...]
    meta_keys: tuple[str, ...]
    content_slice: tuple[int, int | None] | None


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def utf16_slice(text: str, start: int, end: int | None) -> str:
    """``text[start:end]`` in UTF-16 code units (a split surrogate pair becomes U+FFFD)."""
    data = text.encode("utf-16-le")
    stop = len(data) if end is None else min(end * 2, len(data))
    return data[min(start * 2, len(data)) : stop].decode("utf-16-le", errors="replace")


def parse_select(select: Iterable[str] | None, known_fields: Iterable[str]) -> Selection | None:
    """Validate ``select`` against ``known_fields``; None means complete objects."""
    if select is None:
        return None
    items = list(select)
    if not items:
        raise InvalidArgument("select must name at least one field", field="select")
    known = set(known_fields)
    fields: list[str] = []
    metas: list[str] = []
    slices: set[tuple[int, int | None]] = set()
    for i, raw in enumerate(items):
        if not isinstance(raw, str) or not raw:
            raise InvalidArgument("select entries must be non-empty strings", field=f"select[{i}]")
        if raw.startswith("meta."):
            metas.append(raw[5:])
            continue
        m = _SLICE_RE.match(raw)
        if m:
            first, second = int(m.group(1)), m.group(2)
            if second is None:
                slices.add((0, first))
            else:
                end = int(second) if second else None
                if end is not None and end < first:
                    raise InvalidArgument(f"select {raw!r}: end before start", field=f"select[{i}]")
                slices.add((first, end))
            continue
        if raw.startswith("content:"):
            raise InvalidArgument(
                f"select {raw!r}: use content:N, content:M:N or content:M:", field=f"select[{i}]"
            )
        name = ALIASES.get(raw, raw)
        if name not in known:
            raise InvalidArgument(f"select: unknown field {raw!r}", field=f"select[{i}]")
        fields.append(name)
    if len(slices) > 1:
        raise InvalidArgument("select may hold only one content slice", field="select")
    return Selection(tuple(dict.fromkeys(fields)), tuple(dict.fromkeys(metas)), next(iter(slices), None))


def apply_selection(result: Mapping[str, Any], full_content: str, sel: Selection | None) -> dict[str, Any]:
    """The selected view of one result (``full_content`` feeds content slices)."""
    if sel is None:
        return dict(result)
    out = {f: result.get(f) for f in sel.fields}
    meta = result.get("meta") or {}
    for key in sel.meta_keys:
        out[f"meta.{key}"] = meta.get(key)
    if sel.content_slice is not None:
        start, end = sel.content_slice
        out["content"] = utf16_slice(full_content, start, end)
        out["contentLength"] = utf16_len(full_content)
    return out


def render(payload: Any, fmt: str) -> str:
    """``yaml`` (block style, keys in order) or ``json``/``compact`` (compact JSON)."""
    if fmt == "yaml":
        text: str = yaml.safe_dump(payload, sort_keys=False, allow_unicode=True, default_flow_style=False)
        return text
    if fmt in {"json", "compact"}:
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
    raise InvalidArgument(f"format must be yaml, json or compact; got {fmt!r}", field="format")
