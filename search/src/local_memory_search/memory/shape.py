"""What a memory result carries (seeds 001/004) and how a listing is paged.

Listings truncate content at ``LISTING_CHARS`` characters and point at ``get_memory(uid)``; an
answer that would pass ``PAGE_CHARS`` characters stops there and returns ``next_offset``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from local_memory_shared.memory.query import Selection, apply_selection

from .ranking import Candidate, explain

LISTING_CHARS = 400
PAGE_CHARS = 40_000
RESULT_FIELDS: tuple[str, ...] = (
    "id", "project", "kind", "status", "title", "content", "tags", "domain", "also", "paths", "severity",
    "confidence", "meta", "created", "updated", "created_by", "valid_from", "valid_to", "expires", "supersedes",
    "succeeded_by", "contradicted_by", "links", "occurrences", "last_seen", "hits", "last_hit", "version",
    "version_hash", "file_path", "match_source", "score", "fts_rank", "scores", "est_tokens", "collapsed",
    "replaces", "content_truncated", "content_length", "explain",
)  # fmt: skip


def _meta(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    try:
        return json.loads(value) if value else {}
    except (TypeError, ValueError):
        return {}


def record_dict(row: dict[str, Any]) -> dict[str, Any]:
    """A stored row as a plain record dict (lists, parsed meta, no vector/score columns)."""
    out = {k: v for k, v in row.items() if k not in ("vector", "_score", "_distance", "_relevance_score")}
    out["meta"] = _meta(out.get("meta"))
    for k, v in out.items():
        if isinstance(v, tuple):
            out[k] = list(v)
    return out


def est_tokens(rec: dict[str, Any]) -> int:
    """What a ``get_memory`` of the whole record would cost (about 4 characters a token)."""
    return math.ceil(len(json.dumps(rec, ensure_ascii=False, default=str)) / 4)


def shape_hit(c: Candidate, *, with_explain: bool, truncate: bool = True) -> dict[str, Any]:
    """One listing entry."""
    rec = record_dict(c.row)
    full = rec.get("content") or ""
    out = {**rec, "match_source": c.match_source, "score": round(c.final, 6)}
    out["fts_rank"] = (
        None if c.fts_score is None else -round(c.fts_score, 4)
    )  # FTS5 convention: lower is better
    out["scores"] = {
        "fts_bm25": None if c.fts_score is None else round(c.fts_score, 4),
        "vector_similarity": None if c.similarity is None else round(c.similarity, 4),
        "fused": round(c.base, 6),
    }
    out["est_tokens"] = est_tokens(rec)
    out["collapsed"] = list(c.collapsed)
    out["replaces"] = list(c.replaces)
    out["content_length"] = len(full)
    out["content_truncated"] = truncate and len(full) > LISTING_CHARS
    if out["content_truncated"]:
        out["content"] = full[:LISTING_CHARS] + f"… [truncated: get_memory('{rec['id']}') for the rest]"
    if with_explain:
        out["explain"] = explain(c)
    return out


def page(
    hits: list[Candidate], offset: int, limit: int, sel: Selection | None, with_explain: bool
) -> tuple[list[dict[str, Any]], int | None]:
    """Shape ``hits[offset:offset+limit]``, stopping before ``PAGE_CHARS``; returns next_offset."""
    out: list[dict[str, Any]] = []
    used = 0
    window = hits[offset : offset + limit]
    for i, c in enumerate(window):
        item = apply_selection(shape_hit(c, with_explain=with_explain), c.row.get("content") or "", sel)
        size = len(json.dumps(item, ensure_ascii=False, default=str))
        if out and used + size > PAGE_CHARS:
            return out, offset + i
        out.append(item)
        used += size
    end = offset + len(window)
    return out, (end if end < len(hits) and len(window) == limit else None)
