"""Retrieval as a library, and the search tools as thin wrappers over it.

:func:`search` is the plain entry point: an open :class:`IndexReader`, a query and keyword
arguments (mode, limit, offset, filters, a frozen :class:`Shape`…) in, a
:class:`~local_memory_shared.tooling.ToolResult` (one page, paging, warnings) out. The tool
functions (``search_hybrid``…, ``fn(params, settings)``) only open the index named by their
pydantic params and call the library. Unknown ids raise ``NotFound``; unknown projects raise
``NotIndexed``; every degradation is a warning, never an error.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from local_memory_shared.config import Settings
from local_memory_shared.errors import NotFound
from local_memory_shared.schema import CHUNK_FIELDS, VECTOR_COLUMN
from local_memory_shared.tooling import Paging, ToolResult

from . import degradation as W
from . import ranking as _knobs
from .filters import SearchFilters, lance_where
from .fusion import FILE_FACTORS
from .hybrid import (
    CANDIDATE_DEPTH,
    LegFailed,
    LegHit,
    LegResult,
    Mode,
    Ranking,
    RankRequest,
    Scored,
    candidate_depth,
    finite,
    fuse,
    like_search,
    query_identifiers,
    query_words,
    rank,
    vector_search,
)
from .params import (
    ExplainMatchParams,
    GetChunkParams,
    ReadChunkNeighborsParams,
    SearchHybridParams,
    SearchKeywordParams,
    SearchParams,
    SearchSemanticParams,
    SearchSimilarParams,
)
from .ranking import DEFAULT_ALPHA, DEFAULT_GAP_THRESHOLD, DEFAULT_RECENCY_WEIGHT, DEFAULT_RRF_K
from .runtime import register_cache
from .store import IndexReader, open_index, sql_str
from .store import clear_caches as clear_table_caches

log = logging.getLogger(__name__)


#: The result type every tool answers (kept under its old name for existing imports).
ToolOutput = ToolResult

# -- result cache ---------------------------------------------------------------------------


class ResultCache:
    """LRU of tool answers keyed by (index snapshot, tool, arguments); degraded answers are not kept.

    An answer is kept pickled: a hit is a fresh copy the caller may change, and pickling is
    several times cheaper than ``copy.deepcopy`` of the same answer (every search call stores one).
    """

    def __init__(self, size: int = 256):
        self._size = size
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(reader: IndexReader, tool: str, args: Any) -> str:
        """The cache key of one answer: snapshot, tool and its (JSON-able) arguments."""
        return json.dumps([list(reader.cache_token), tool, _jsonable(args)], sort_keys=True, default=str)

    def get(self, key: str) -> ToolResult | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
        answer: ToolResult = pickle.loads(hit)  # noqa: S301 - bytes this process pickled itself
        return answer

    def put(self, key: str, value: ToolResult) -> None:
        if any(w["code"] in W.DEGRADED for w in value.warnings):
            return
        frozen = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self._items[key] = frozen
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


RESULT_CACHE = register_cache("results", ResultCache())
# Caches of modules that keep their own state: owned by the runtime through these hooks.
register_cache("tables", clear_table_caches)


def _jsonable(value: Any) -> Any:
    """Plain JSON of arguments that may hold frozen dataclasses or (edge) pydantic models."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # field by field: ``dataclasses.asdict`` deep-copies every value first (same JSON, slower)
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


# -- shaping --------------------------------------------------------------------------------


def shape_chunk(
    chunk: dict[str, Any],
    *,
    fields: list[str] | None = None,
    exclude_fields: list[str] | None = None,
    max_chars: int = 0,
    summary_only: bool = False,
    score: float | None = None,
) -> dict[str, Any]:
    """Select fields, truncate text to ``max_chars`` and drop text for ``summary_only``."""
    out: dict[str, Any] = {}
    wanted = set(fields) if fields else None
    excluded = set(exclude_fields or ())
    for name in CHUNK_FIELDS:
        if name != "chunk_id" and ((wanted is not None and name not in wanted) or name in excluded):
            continue
        out[name] = chunk.get(name)
    if summary_only:
        text = chunk.get("text") or ""
        if "summary" in out or wanted is None:
            out["summary"] = chunk.get("summary") or next(
                (ln.strip() for ln in text.splitlines() if ln.strip()), ""
            )
        out.pop("text", None)
    elif "text" in out and max_chars and isinstance(out["text"], str) and len(out["text"]) > max_chars:
        out["text_chars"] = len(out["text"])
        out["text"] = out["text"][:max_chars]
        out["truncated"] = True
    if score is not None and (wanted is None or "score" in wanted) and "score" not in excluded:
        out["score"] = score
    return out


def _no_match_warning(reader: IndexReader, query: str, filtered: bool) -> dict[str, str]:
    try:
        count = reader.mirror_count()
    except Exception:  # the count only decorates the message
        count = -1
    where = " with these filters" if filtered else ""
    what = f"{count} chunks are indexed" if count >= 0 else "the index is readable"
    return W.warn(
        W.NO_MATCHES, f"({what} at version {reader.version}; nothing matched {query[:80]!r}{where}.)"
    )


@dataclass(frozen=True)
class Shape:
    """How each hit is shaped: selected or excluded fields, text truncation, summaries only."""

    fields: tuple[str, ...] | None = None
    exclude_fields: tuple[str, ...] | None = None
    max_chars: int = 800
    summary_only: bool = False

    def apply(self, chunk: dict[str, Any], score: float | None) -> dict[str, Any]:
        """``shape_chunk`` with these settings."""
        return shape_chunk(
            chunk,
            fields=list(self.fields) if self.fields is not None else None,
            exclude_fields=list(self.exclude_fields or ()),
            max_chars=self.max_chars,
            summary_only=self.summary_only,
            score=score,
        )


def _page_from_ranking(
    reader: IndexReader,
    ranking: Ranking,
    *,
    offset: int,
    limit: int,
    shape: Shape,
    filtered: bool,
    label: str,
) -> ToolResult:
    warnings = [*reader.warnings, *ranking.warnings]
    kept = ranking.ranked[: ranking.kept]
    page = kept[offset : offset + limit]
    rows = reader.fetch_chunks(s.chunk_id for s in page)
    results = []
    for s in page:
        chunk = rows.get(s.chunk_id)
        if chunk is None:  # published rows always have a mirror row; skip rather than invent one
            log.warning("chunk %s missing from both stores", s.chunk_id)
            continue
        results.append(shape.apply(chunk, s.score))
    if not kept and reader.version is not None:
        warnings.append(_no_match_warning(reader, label, filtered))
    elif kept and not page:
        warnings.append(W.warn(W.PAGE_EMPTY, f"({len(kept)} results; offset {offset})."))
    meta = {
        "mode": ranking.mode,
        "alpha_effective": ranking.alpha_effective,
        "legs": ranking.legs,
        "published_version": reader.version,
        "timings_ms": ranking.timings_ms,
        "cached": False,
    }
    return ToolResult(
        results=results, warnings=warnings, paging=Paging(offset, limit, len(kept)), extra={"search": meta}
    )


# -- search ---------------------------------------------------------------------------------


def search(
    reader: IndexReader,
    query: str,
    *,
    mode: Mode = "hybrid",
    limit: int = 10,
    offset: int = 0,
    filters: SearchFilters | None = None,
    shape: Shape = Shape(),
    alpha: float = DEFAULT_ALPHA,
    rrf_k: int = DEFAULT_RRF_K,
    recency_weight: float = DEFAULT_RECENCY_WEIGHT,
    gap_threshold: float = DEFAULT_GAP_THRESHOLD,
    use_cache: bool = True,
) -> ToolResult:
    """One page of ranked hits for ``query`` over an open index (hybrid, semantic or keyword)."""
    started = time.perf_counter()
    req = RankRequest(
        query=query,
        mode=mode,
        alpha=alpha,
        rrf_k=rrf_k,
        recency_weight=recency_weight,
        gap_threshold=gap_threshold,
        filters=filters,
        depth=candidate_depth(offset, limit),
    )
    args = {"req": dataclasses.replace(req, depth=0), "limit": limit, "offset": offset, "shape": shape}
    key = ResultCache.key(reader, f"search_{mode}", args)
    hit = RESULT_CACHE.get(key) if use_cache else None
    if hit is not None:
        hit.extra["search"]["cached"] = True
        hit.extra["search"]["timings_ms"] = {"total": round((time.perf_counter() - started) * 1000, 3)}
        return hit
    out = _page_from_ranking(
        reader,
        rank(reader, req),
        offset=offset,
        limit=limit,
        shape=shape,
        filtered=filters is not None,
        label=query,
    )
    out.extra["search"]["timings_ms"]["total"] = round((time.perf_counter() - started) * 1000, 3)
    RESULT_CACHE.put(key, out)
    return out


def _shape(params: SearchParams | SearchSimilarParams) -> Shape:
    return Shape(
        fields=tuple(params.fields) if params.fields is not None else None,
        exclude_fields=tuple(params.exclude_fields) if params.exclude_fields is not None else None,
        max_chars=params.max_chars,
        summary_only=params.summary_only,
    )


def _search_tool(params: SearchParams, mode: Mode, settings: Settings | None) -> ToolResult:
    with open_index(params.project_path, settings) as reader:
        return search(
            reader,
            params.query,
            mode=mode,
            limit=params.limit,
            offset=params.offset,
            filters=SearchFilters.of(params.filters),
            shape=_shape(params),
            alpha=getattr(params, "alpha", DEFAULT_ALPHA),
            rrf_k=getattr(params, "rrf_k", DEFAULT_RRF_K),
            recency_weight=params.recency_weight,
            gap_threshold=params.gap_threshold,
            use_cache=not params.cache_bust,
        )


def search_hybrid(params: SearchHybridParams, settings: Settings | None = None) -> ToolResult:
    """The search_hybrid tool: vector ANN + BM25 fused with weighted RRF, identifier and recency boosts."""
    return _search_tool(params, "hybrid", settings)


def search_semantic(params: SearchSemanticParams, settings: Settings | None = None) -> ToolResult:
    """The search_semantic tool: pure vector search with the index's own embedding model."""
    return _search_tool(params, "semantic", settings)


def search_keyword(params: SearchKeywordParams, settings: Settings | None = None) -> ToolResult:
    """The search_keyword tool: pure BM25 (full-text) search."""
    return _search_tool(params, "keyword", settings)


# -- chunk navigation -----------------------------------------------------------------------


def _require_chunk(reader: IndexReader, chunk_id: str) -> dict[str, Any]:
    chunk = reader.fetch_chunks([chunk_id]).get(chunk_id)
    if chunk is None:
        raise NotFound(
            f"no chunk {chunk_id!r} in {reader.project} (ids change only when code moves; search again)",
            field="chunk_id",
        )
    return chunk


def get_chunk(params: GetChunkParams, settings: Settings | None = None) -> ToolResult:
    """One chunk by its stable id (whole text unless ``max_chars``)."""
    with open_index(params.project_path, settings) as reader:
        chunk = _require_chunk(reader, params.chunk_id)
        return ToolResult(
            data=shape_chunk(chunk, fields=params.fields, max_chars=params.max_chars),
            warnings=list(reader.warnings),
        )


def read_chunk_neighbors(params: ReadChunkNeighborsParams, settings: Settings | None = None) -> ToolResult:
    """The chunks just before and after one chunk in its file."""
    with open_index(params.project_path, settings) as reader:
        chunk = _require_chunk(reader, params.chunk_id)
        siblings = reader.file_chunks(chunk["file_path"])
        index = next((i for i, c in enumerate(siblings) if c["chunk_id"] == params.chunk_id), None)
        if index is None:
            siblings, index = [chunk], 0
        before = siblings[max(0, index - params.before) : index] if params.before else []
        after = siblings[index + 1 : index + 1 + params.after]

        def shape(c: dict[str, Any]) -> dict[str, Any]:
            return shape_chunk(c, max_chars=params.max_chars)

        data = {
            "file_path": chunk["file_path"],
            "chunk": shape(chunk),
            "before": [shape(c) for c in before],
            "after": [shape(c) for c in after],
            "file_chunk_count": len(siblings),
        }
        return ToolResult(data=data, warnings=list(reader.warnings))


def _seed_chunks(reader: IndexReader, params: SearchSimilarParams) -> list[dict[str, Any]]:
    path = params.file_path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    chunks = reader.file_chunks(path)
    if not chunks:
        raise NotFound(f"{params.file_path!r} has no indexed chunks in {reader.project}", field="file_path")
    if params.function_name:
        name = params.function_name
        chunks = [
            c
            for c in chunks
            if name
            in (c.get("function_name"), c.get("symbol_name"), (c.get("symbol_name") or "").rsplit(".", 1)[-1])
        ]
        if not chunks:
            raise NotFound(f"no function {name!r} in {params.file_path!r}", field="function_name")
    return chunks


def search_similar(params: SearchSimilarParams, settings: Settings | None = None) -> ToolResult:
    """Chunks whose vectors lie nearest a file's (or one function's) stored vector."""
    started = time.perf_counter()
    with open_index(params.project_path, settings) as reader:
        seeds = _seed_chunks(reader, params)
        key = ResultCache.key(
            reader, "search_similar", params.model_dump(exclude={"cache_bust"}, mode="json")
        )
        if not params.cache_bust:
            hit = RESULT_CACHE.get(key)
            if hit is not None:
                hit.extra["search"]["cached"] = True
                return hit
        filters = SearchFilters.of(params.filters)
        depth = params.offset + params.limit
        warnings: list[dict[str, str]] = []
        leg = _similar_leg(reader, params, seeds, filters, depth, warnings)
        req = RankRequest(
            query="",
            mode="semantic" if leg.name == "semantic" else "keyword",
            recency_weight=0.0,
            gap_threshold=0.0,
            filters=filters,
            depth=depth,
        )
        ranked, kept = fuse(
            req, 1.0, leg if leg.name == "semantic" else None, leg if leg.name == "keyword" else None, None
        )
        timings = {"total": round((time.perf_counter() - started) * 1000, 3)}
        ranking = Ranking(
            req, req.mode, 1.0, ranked, kept, {leg.name: leg.source}, tuple(warnings), timings, None
        )
        out = _page_from_ranking(
            reader,
            ranking,
            offset=params.offset,
            limit=params.limit,
            shape=_shape(params),
            filtered=params.filters is not None,
            label=f"similar to {params.file_path}",
        )
        seed_ids = [c["chunk_id"] for c in seeds]
        out.extra["seed"] = {
            "file_path": seeds[0]["file_path"],
            "function_name": params.function_name,
            "chunk_ids": seed_ids,
        }
        RESULT_CACHE.put(key, out)
        return out


def _similar_leg(
    reader: IndexReader,
    params: SearchSimilarParams,
    seeds: list[dict[str, Any]],
    filters: SearchFilters | None,
    depth: int,
    warnings: list[dict[str, str]],
) -> LegResult:
    """The one leg of ``search_similar``: the seed's stored vector, else the seed's own words (LIKE)."""
    seed_ids = [c["chunk_id"] for c in seeds]
    exclude = (
        f"chunk_id NOT IN ({', '.join(sql_str(c) for c in seed_ids)})"
        if params.function_name
        else f"file_path != {sql_str(seeds[0]['file_path'])}"
    )
    t0 = time.perf_counter()
    vector = _seed_vector(reader, seed_ids, warnings)
    if vector is not None:
        try:
            where = lance_where(reader.project, filters, extra=[exclude])
            rows, source = vector_search(reader, vector, where, depth, warnings)
            hits = tuple(
                LegHit(r["chunk_id"], i + 1, finite(1.0 - float(r["_distance"]))) for i, r in enumerate(rows)
            )
            return LegResult(
                "semantic", source, hits, time.perf_counter() - t0, {r["chunk_id"]: r for r in rows}
            )
        except LegFailed as exc:
            warnings.append(exc.warning)
    # No vectors to compare: fall back to the seed's own words over the keyword store.
    source_query = " ".join(
        dict.fromkeys(
            w for c in seeds for w in query_words(f"{c.get('symbol_name') or ''} {c.get('summary') or ''}")
        )
    )
    rows = [
        r
        for r in like_search(reader, query_words(source_query), filters, depth + len(seed_ids))
        if r["chunk_id"] not in seed_ids and (params.function_name or r["file_path"] != seeds[0]["file_path"])
    ]
    hits = tuple(LegHit(r["chunk_id"], i + 1, float(r["_score"])) for i, r in enumerate(rows[:depth]))
    return LegResult(
        "keyword", "sqlite_like", hits, time.perf_counter() - t0, {r["chunk_id"]: r for r in rows}
    )


def _seed_vector(
    reader: IndexReader, seed_ids: list[str], warnings: list[dict[str, str]]
) -> np.ndarray | None:
    if reader.table is None:
        warnings.append(
            W.warn(W.VECTOR_LEG_UNAVAILABLE, "(no LanceDB table: similarity uses the seed's words).")
        )
        return None
    try:
        rows = (
            reader.table.search()
            .where(f"chunk_id IN ({', '.join(sql_str(c) for c in seed_ids)})")
            .select(["chunk_id", VECTOR_COLUMN])
            .limit(len(seed_ids))
            .to_arrow()
        )
        vectors = np.asarray(rows.column(VECTOR_COLUMN).to_pylist(), dtype=np.float32)
    except Exception as exc:
        warnings.append(W.warn(W.VECTOR_LEG_UNAVAILABLE, f"(cannot read seed vectors: {str(exc)[:200]})"))
        return None
    if vectors.size == 0 or not np.any(vectors):
        warnings.append(W.warn(W.VECTOR_LEG_UNAVAILABLE, "(the seed chunks have no vectors yet)."))
        return None
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else None


# -- explain --------------------------------------------------------------------------------


def _leg_dict(
    hit: LegHit | None, conf: float, contribution: float, weight: float, score_name: str
) -> dict[str, Any]:
    return {
        "rank": hit.rank if hit else None,
        score_name: hit.score if hit else None,
        "confidence": conf if hit else None,
        "weight": weight,
        "contribution": contribution,
    }


def explain_scored(ranking: Ranking, scored: Scored, verbosity: str) -> dict[str, Any]:
    """The score breakdown of one candidate of ``ranking``."""
    req = ranking.request
    alpha = ranking.alpha_effective
    position = ranking.position(scored.chunk_id)
    top = ranking.ranked[0].score if ranking.ranked else 0.0
    out: dict[str, Any] = {
        "rank": position,
        "in_results": position is not None and position <= ranking.kept,
        "final_score": scored.score,
        "semantic": _leg_dict(
            scored.semantic, scored.semantic_confidence, scored.semantic_rrf, alpha, "cosine_similarity"
        ),
        "keyword": _leg_dict(
            scored.keyword, scored.keyword_confidence, scored.keyword_rrf, 1.0 - alpha, "bm25"
        ),
        "rrf_score": scored.base,
        "identifier_boost": {"matched": scored.identifier_match, "multiplier": scored.identifier_multiplier},
        "recency_boost": {"multiplier": scored.recency_multiplier},
        "definition": {
            "rank": scored.definition.rank if scored.definition else None,
            "contribution": scored.definition_rrf,
        },
        "ranking_factors": {**dict.fromkeys(FILE_FACTORS, 1.0), **dict(scored.factors)},
    }
    shape = _knobs.QueryShape.of(req.query) if ranking.mode == "hybrid" else None
    exponent = _knobs.leg_confidence_exponent(shape, _knobs.KNOBS)
    if shape is not None:
        # what the query-shape rules read: a question weighs file names by question_name_boost
        # and the legs' confidence by question_confidence_exponent
        out["query_shape"] = {
            "prose": shape.prose,
            "question": shape.question,
            "file_name_boost": _knobs.name_boost(shape, _knobs.KNOBS),
            "name_stem": _knobs.name_stem_for(shape, _knobs.KNOBS),
            "confidence_exponent": exponent,
            # a question's per-file discount is question_diversity, other prose may use prose_diversity
            "diversity": _knobs.file_diversity(shape, _knobs.KNOBS),
            # what a test file's name match is scaled by for this query (a question not about tests)
            "test_name_share": _knobs.name_share_of_tests(shape, _knobs.KNOBS),
            # the words taken as names (identifier boost, definition leg, BM25 definition terms)
            "names": sorted(query_identifiers(req.query, _knobs.plain_words(_knobs.KNOBS))),
            "plain_name_words": _knobs.plain_words(_knobs.KNOBS),
        }
    if verbosity == "full":
        out["recency_boost"].update(
            {
                "updated_at": scored.updated_at,
                "newest_file": ranking.newest_updated_at,
                "age_days": None if scored.age_days is None else round(scored.age_days, 3),
                "recency": scored.recency,
                "weight": req.recency_weight,
            }
        )
        out["gap"] = {
            "threshold": req.gap_threshold,
            "top_score": top,
            "ratio": scored.score / top if top else None,
            "kept": ranking.kept,
        }
        out["formula"] = (
            "final = (alpha*confidence_semantic/(rrf_k + rank_semantic) + "
            "(1 - alpha)*confidence_keyword/(rrf_k + rank_keyword) + definition_weight/(rrf_k + rank_definition)) "
            "x identifier_multiplier x recency_multiplier x each ranking factor; "
            f"confidence = (score / best score of the leg) ** {exponent:g}"
        )
        out["legs"] = ranking.legs
        if position is not None:
            around = ranking.ranked[max(0, position - 2) : position + 1]
            out["neighbors"] = [
                {"rank": ranking.position(s.chunk_id), "chunk_id": s.chunk_id, "final_score": s.score}
                for s in around
                if s.chunk_id != scored.chunk_id
            ]
    return out


def explain_match(params: ExplainMatchParams, settings: Settings | None = None) -> ToolResult:
    """Why ``result_id`` ranked where it did for ``query`` in search_hybrid (same numbers, same order)."""
    with open_index(params.project_path, settings) as reader:
        chunk = _require_chunk(reader, params.result_id)
        ranking = rank(reader, _explain_request(params))
        data = _explanation(ranking, params, params.result_id, chunk)
        return ToolResult(data=data, warnings=[*reader.warnings, *ranking.warnings])


def explain_matches(
    params: ExplainMatchParams, result_ids: Sequence[str], settings: Settings | None = None
) -> ToolResult:
    """``explain_match`` for several results of one query with one ranking (``params.result_id`` is
    ignored): ``data["explanations"]`` maps each id to the breakdown ``explain_match`` gives for it,
    or to None when the id is not a chunk of the project."""
    with open_index(params.project_path, settings) as reader:
        ranking = rank(reader, _explain_request(params))
        chunks = reader.fetch_chunks(list(result_ids))
        explanations = {
            rid: _explanation(ranking, params, rid, chunks[rid]) if rid in chunks else None
            for rid in result_ids
        }
        return ToolResult(data={"explanations": explanations}, warnings=[*reader.warnings, *ranking.warnings])


def _explain_request(params: ExplainMatchParams) -> RankRequest:
    """The hybrid ranking ``params`` describe, to the depth explain looks at."""
    return RankRequest(
        query=params.query,
        mode="hybrid",
        alpha=params.alpha,
        rrf_k=params.rrf_k,
        recency_weight=params.recency_weight,
        gap_threshold=params.gap_threshold,
        filters=SearchFilters.of(params.filters),
        depth=CANDIDATE_DEPTH,
    )


def _explanation(
    ranking: Ranking, params: ExplainMatchParams, result_id: str, chunk: dict[str, Any]
) -> dict[str, Any]:
    """The breakdown of ``result_id`` (the chunk ``chunk``) in ``ranking``."""
    scored = next((s for s in ranking.ranked if s.chunk_id == result_id), None)
    data: dict[str, Any] = {
        "result_id": result_id,
        "query": params.query,
        "file_path": chunk["file_path"],
        "symbol_name": chunk["symbol_name"],
        "lines": [chunk["start_line"], chunk["end_line"]],
        "alpha": params.alpha,
        "alpha_effective": ranking.alpha_effective,
        "rrf_k": params.rrf_k,
        "candidates": len(ranking.ranked),
    }
    if scored is None:
        data.update(
            {
                "found": False,
                "rank": None,
                "in_results": False,
                "final_score": 0.0,
                "reason": f"neither leg retrieved this chunk within its top {CANDIDATE_DEPTH}",
            }
        )
    else:
        data["found"] = True
        data.update(explain_scored(ranking, scored, params.verbosity))
    return data


def warm_up(project_path: str | None = None, settings: Settings | None = None) -> dict[str, Any]:
    """Open a project's index and load its FTS index and query encoder, so the first real query is fast.

    Meant for server start-up; never raises (a project that is not indexed yet is simply skipped).
    """
    started = time.perf_counter()
    report: dict[str, Any] = {"project_path": project_path, "ok": False}
    try:
        with open_index(project_path, settings) as reader:
            report["project_path"] = reader.project
            req = RankRequest(query="warm up", mode="hybrid", depth=1)
            ranking = rank(reader, req)
            report.update(ok=True, legs=ranking.legs, warnings=[w["code"] for w in ranking.warnings])
    except Exception as exc:  # warm-up is best effort by design
        report["error"] = f"{type(exc).__name__}: {exc}"
    report["ms"] = round((time.perf_counter() - started) * 1000, 1)
    return report
