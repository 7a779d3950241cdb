"""The memory reading tools as plain functions over pydantic params (the tool layer's edge).

``memory_search``, ``get_memory``, ``list_by_domain``, ``must_read``, ``timeline``, ``pulse``.
Each opens the index read-only, calls the library (``search``/``reader``) and shapes a
``ToolOutput``. Hit events go to the writer's socket (``hits``); the searcher writes nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from local_memory_shared.config import Settings, load_memory_settings
from local_memory_shared.errors import InvalidArgument, NotFound
from local_memory_shared.memory.model import KINDS, STATUSES, canonical_time, project_for_cwd, project_slug
from local_memory_shared.memory.query import (
    compile_tree,
    ignored_area,
    parse_meta_predicate,
    parse_select,
    parse_temporal,
    render,
)
from local_memory_shared.memory.uid import is_uid

from ..api import ToolOutput
from . import hits as H
from .filters import MemoryFilters, check_grep
from .params import GetMemoryParams, ListParams, MemorySearchParams, TimelineParams, Weights
from .ranking import Candidate
from .reader import ROW_COLUMNS, MemoryReader, open_reader, sql_in, sql_str
from .search import DEFAULT_CANDIDATES, SearchRequest, search
from .shape import RESULT_FIELDS, page, record_dict, shape_hit


def _project(p: MemorySearchParams | Any, settings: Settings) -> str | None:
    if getattr(p, "crossProject", False):
        return None
    if p.projectId:
        return project_slug(p.projectId)
    return project_for_cwd(p.cwd or settings.default_project)


def build_request(p: MemorySearchParams, settings: Settings) -> SearchRequest:
    """Validate everything pydantic cannot and build the library request."""
    if p.semanticThreshold is not None and not 0 <= p.semanticThreshold <= 1:
        raise InvalidArgument("semanticThreshold must be in [0, 1] (not clamped)", field="semanticThreshold")
    semantic, fulltext = p.semantic, p.fulltext
    if p.query:
        mode = p.mode or "hybrid"
        semantic = semantic or (p.query if mode in ("hybrid", "semantic") else None)
        fulltext = fulltext or (p.query if mode in ("hybrid", "fulltext") else None)
    temporal = parse_temporal(p.temporal)
    tree = compile_tree(p.tree) if p.tree is not None else None
    if p.grep is not None and not (semantic or fulltext or tree or p.meta is not None or temporal):
        raise InvalidArgument("grep must accompany a search or a tree, meta or temporal filter", field="grep")
    as_of = canonical_time(p.asOf, field_name="asOf") if p.asOf else None
    filters = MemoryFilters(
        project=_project(p, settings), kinds=tuple(p.kinds) if p.kinds else None, status=p.status,
        tags=tuple(t.lower() for t in p.tags or ()), path=p.path, tree=tree, meta=p.meta,
        meta_predicate=parse_meta_predicate(p.metaPredicate) if p.metaPredicate is not None else None,
        temporal=temporal, grep=check_grep(p.grep), as_of=as_of, include_expired=p.includeExpired,
        include_scratch=p.includeScratch, include_superseded=p.includeSuperseded, sort=p.sort,
    )  # fmt: skip
    w = p.weights or Weights(fulltext=None, semantic=None)
    return SearchRequest(
        filters=filters, fulltext=fulltext, semantic=semantic,
        weights=(1.0 if w.fulltext is None else w.fulltext, 1.0 if w.semantic is None else w.semantic),
        candidate_limit=p.candidateLimit or DEFAULT_CANDIDATES, semantic_threshold=p.semanticThreshold,
        limit=p.limit or 10, offset=p.offset, order_by=p.order_by or "desc",
    )  # fmt: skip


def make_encoder(reader: MemoryReader, settings: Settings) -> Any:
    """The query encoder of the memory index's own model (None when it cannot be built)."""
    from ..encoder import ENCODER, EncoderChoice

    backend, model, dim = reader.meta.get("backend"), reader.meta.get("model"), reader.meta.get("dimension")
    if not (backend and model and dim):
        return None
    choice = EncoderChoice(backend, model, int(dim), inferred=False)
    return lambda text: np.asarray(ENCODER.encode(choice, text, int(dim), settings), dtype=np.float32)


def memory_search(p: MemorySearchParams, settings: Settings) -> ToolOutput:
    """The ``memory_search`` tool."""
    req = build_request(p, settings)
    sel = parse_select(p.select, RESULT_FIELDS)
    area = ignored_area(p.path, load_memory_settings().ignored_areas) if p.path else None
    if area is not None:  # seed 000: a path inside a capture-ignored product area answers nothing
        return ToolOutput(
            results=[],
            extra={"total": 0, "limit": req.limit, "offset": req.offset, "next_offset": None, "has_more": False,
                   "mode": req.mode, "superseded": [], "ignored_area": area},
        )  # fmt: skip
    with open_reader(settings.data_root) as reader:
        answer = search(reader, req, make_encoder(reader, settings))
        results, next_offset = page(answer.hits, req.offset, req.limit, sel, p.explain)
        warnings = list(answer.warnings)
        if p.hitIds:
            in_results = {c.id: c.row for c in answer.hits}
            ids = H.eligible([in_results[i.upper()] for i in p.hitIds if i.upper() in in_results])
            w = H.send_hits(reader.paths.socket, ids, p.sessionId)
            warnings += [w] if w else []
    extra: dict[str, Any] = {
        "total": answer.total, "limit": req.limit, "offset": req.offset, "next_offset": next_offset,
        "has_more": next_offset is not None, "mode": answer.mode, "superseded": answer.superseded,
    }  # fmt: skip
    fmt = p.format or ("yaml" if (p.semantic or p.fulltext) and not p.query else None)
    if fmt:
        extra["format"] = fmt
        extra["text"] = render({"results": results, "total": answer.total, "limit": req.limit}, fmt)
    return ToolOutput(results=results, warnings=warnings, extra=extra)


def read_record(
    reader: MemoryReader, uid: str, offset: int = 0
) -> tuple[dict[str, Any], int | None, dict[str, Any]]:
    """One record in full (content paged at 40,000 characters), counting nothing: (record, next_offset, row)."""
    if not is_uid(uid):
        raise InvalidArgument(f"uid must be a 26-character record id, got {uid!r}", field="uid")
    rows = reader.by_ids([uid.upper()])
    if not rows:
        raise NotFound(f"no memory {uid}", field="uid")
    row = next(iter(rows.values()))
    live = reader.live_hits([row["id"]])
    if row["id"] in live:
        row["hits"], row["last_hit"] = live[row["id"]]
    rec = shape_hit(Candidate(row, match_source="uid"), with_explain=False, truncate=False)
    for k in ("score", "fts_rank", "scores", "collapsed", "replaces", "content_truncated"):
        rec.pop(k, None)
    from .shape import PAGE_CHARS

    full = rec["content"] or ""
    rec["content"] = full[offset : offset + PAGE_CHARS]
    nxt = offset + PAGE_CHARS if offset + PAGE_CHARS < len(full) else None
    return rec, nxt, row


def get_memory(p: GetMemoryParams, settings: Settings) -> ToolOutput:
    """The full record (content paged at 40,000 characters); a hit-eligible get counts a hit."""
    with open_reader(settings.data_root) as reader:
        rec, nxt, row = read_record(reader, p.uid, p.offset)
        w = H.send_hits(reader.paths.socket, H.eligible([row]), p.sessionId)
    return ToolOutput(
        data=rec, warnings=[w] if w else [], extra={"next_offset": nxt, "has_more": nxt is not None}
    )


def _listing(reader: MemoryReader, where: str, p: ListParams, headers: bool = False) -> ToolOutput:
    rows = reader.rows(where)
    rows.sort(key=lambda r: (r["created"], r["id"]), reverse=True)
    cands = [Candidate(r, match_source="filter") for r in rows]
    results, nxt = page(cands, p.offset, p.limit, None, False)
    if headers:
        keep = ("id", "kind", "title", "status", "domain", "tags", "created", "updated", "est_tokens")
        results = [{k: r.get(k) for k in keep} for r in results]
    return ToolOutput(
        results=results, extra={"total": len(rows), "next_offset": nxt, "has_more": nxt is not None}
    )


def _scope(p: ListParams, settings: Settings) -> str:
    project = _project(p, settings)
    parts = ["schema_version = 1", "status NOT IN ('superseded', 'archived')"]
    if project:
        parts.append(f"project = {sql_str(project)}")
    if p.domain:
        parts.append(compile_tree(p.domain if p.domain.startswith("/") else "/" + p.domain).where)
    return " AND ".join(parts)


def list_by_domain(p: ListParams, settings: Settings) -> ToolOutput:
    """Everything under ``domain``, newest first."""
    if not p.domain:
        raise InvalidArgument("domain is required", field="domain")
    with open_reader(settings.data_root) as reader:
        return _listing(reader, _scope(p, settings), p)


def must_read(p: ListParams, settings: Settings) -> ToolOutput:
    """Headers of what is open (active/draft) in a scope, newest first."""
    where = _scope(p, settings) + " AND status IN ('active', 'draft')"
    if p.type:
        where += f" AND kind = {sql_str(p.type)}"
    with open_reader(settings.data_root) as reader:
        return _listing(reader, where, p, headers=True)


def pulse(p: ListParams, settings: Settings) -> ToolOutput:
    """The newest records of the project (the latest checkpoint first)."""
    with open_reader(settings.data_root) as reader:
        return _listing(reader, _scope(p, settings), p, headers=True)


def timeline(p: TimelineParams, settings: Settings) -> ToolOutput:
    """What was written in the same project just before and after a record (creation order)."""
    if not is_uid(p.uid):
        raise InvalidArgument(f"uid must be a 26-character record id, got {p.uid!r}", field="uid")
    with open_reader(settings.data_root) as reader:
        found = reader.by_ids([p.uid.upper()])
        if not found:
            raise NotFound(f"no memory {p.uid}", field="uid")
        row = next(iter(found.values()))
        rows = reader.rows(f"project = {sql_str(row['project'])}", ROW_COLUMNS)
    rows.sort(key=lambda r: (r["created"], r["id"]))
    i = next(n for n, r in enumerate(rows) if r["id"] == row["id"])
    window = rows[max(0, i - p.before) : i + p.after + 1]
    keep = ("id", "kind", "title", "status", "created", "domain")
    results = [{**{k: r.get(k) for k in keep}, "anchor": r["id"] == row["id"]} for r in window]
    return ToolOutput(results=results, extra={"total": len(results)})


__all__ = [
    "GetMemoryParams", "ListParams", "MemorySearchParams", "TimelineParams", "get_memory", "list_by_domain",
    "memory_search", "must_read", "pulse", "record_dict", "sql_in", "timeline", "KINDS", "STATUSES",
]  # fmt: skip
