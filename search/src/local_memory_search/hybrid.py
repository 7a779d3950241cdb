"""The search entry point: run the legs a mode needs (in parallel), degrade, fuse, rank.

``rank`` is the one function that scores candidates; ``search_*`` and ``explain_match`` both
call it, so an explanation always reproduces the order a search returned. The jobs live apart:
query-text analysis in :mod:`.query_text`, the legs (I/O) in :mod:`.legs`, the pure fusion in
:mod:`.fusion`. The names below are re-exported so callers keep one import place.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from . import degradation as W
from . import ranking
from .fusion import (
    CANDIDATE_DEPTH,
    IDENTIFIER_BOOST,
    RECENCY_HALF_LIFE_DAYS,
    RRF_SCORE_EXPONENT,
    Mode,
    RankRequest,
    Scored,
    candidate_depth,
    confidence,
    fuse,
)
from .legs import (
    LEG_COLUMNS,
    LegFailed,
    LegHit,
    LegResult,
    definition_leg,
    finite,
    index_languages,
    keyword_leg,
    like_search,
    newest_updated_at,
    semantic_leg,
    vector_search,
)
from .query_text import (
    QUERY_STOPWORDS,
    SHORT_QUERY_WORDS,
    fts_query_text,
    query_identifiers,
    query_words,
)
from .store import IndexReader

__all__ = [
    "CANDIDATE_DEPTH",
    "IDENTIFIER_BOOST",
    "LEG_COLUMNS",
    "QUERY_STOPWORDS",
    "RECENCY_HALF_LIFE_DAYS",
    "RRF_SCORE_EXPONENT",
    "SHORT_QUERY_WORDS",
    "LegFailed",
    "LegHit",
    "LegResult",
    "Mode",
    "RankRequest",
    "Ranking",
    "Scored",
    "candidate_depth",
    "confidence",
    "finite",
    "fts_query_text",
    "fuse",
    "index_languages",
    "like_search",
    "newest_updated_at",
    "query_identifiers",
    "query_words",
    "rank",
    "vector_search",
]

log = logging.getLogger(__name__)

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lm-search-leg")


@dataclass(frozen=True)
class Ranking:
    """Candidates in final order; the first ``kept`` survive the relevance gap."""

    request: RankRequest
    mode: str
    alpha_effective: float
    ranked: tuple[Scored, ...]
    kept: int
    legs: dict[str, str]
    warnings: tuple[dict[str, str], ...]
    timings_ms: dict[str, float]
    newest_updated_at: str | None

    def position(self, chunk_id: str) -> int | None:
        """1-based position of ``chunk_id`` in the final order, or None."""
        for i, s in enumerate(self.ranked, start=1):
            if s.chunk_id == chunk_id:
                return i
        return None


@dataclass
class _LegOutcome:
    """One leg's result (or failure) and the warnings it raised."""

    result: LegResult | None = None
    failed: bool = False
    warnings: list[dict[str, str]] | None = None


def _collect(
    future: Future[LegResult] | None, warnings: list[dict[str, str]], code: str, label: str
) -> _LegOutcome:
    """Wait for one leg; a failure costs only that leg and becomes a warning."""
    if future is None:
        return _LegOutcome(warnings=warnings)
    try:
        return _LegOutcome(future.result(), warnings=warnings)
    except LegFailed as exc:
        if exc.warning not in warnings:
            warnings.append(exc.warning)
    except Exception as exc:  # an unforeseen failure still costs only this leg
        log.exception("%s leg failed", label)
        prefix = "(and the SQLite fallback failed: " if label == "keyword" else f"({type(exc).__name__}: "
        warnings.append(W.warn(code, f"{prefix}{str(exc)[:200]})"))
    return _LegOutcome(failed=True, warnings=warnings)


def _inline(fn: Callable[..., LegResult], *args: Any) -> Future[LegResult]:
    """Run ``fn`` in the calling thread, as a finished future (its result or its exception)."""
    done: Future[LegResult] = Future()
    try:
        done.set_result(fn(*args))
    except Exception as exc:  # _collect turns it into the leg's warning, as for a pool thread's
        done.set_exception(exc)
    return done


def _run_legs(reader: IndexReader, req: RankRequest) -> tuple[_LegOutcome, _LegOutcome, _LegOutcome]:
    """Run the legs ``req`` needs, in parallel; returns (semantic, keyword, definition) outcomes.

    The other legs go to the pool first and the keyword leg (else the only one) runs in the
    calling thread meanwhile: a leg handed to a pool thread costs a wake-up and a hand-back of the
    GIL, which a keyword or semantic search with a single leg need not pay.
    """
    want_sem = req.mode == "semantic" or (req.mode == "hybrid" and req.alpha > 0)
    want_kw = req.mode == "keyword" or (req.mode == "hybrid" and req.alpha < 1)
    names = query_identifiers(req.query, ranking.plain_words(ranking.KNOBS))
    want_dfn = req.mode == "hybrid" and bool(names) and bool(ranking.KNOBS.definition_weight)
    sem_warn: list[dict[str, str]] = []
    kw_warn: list[dict[str, str]] = []
    sem_f = kw_f = dfn_f = None
    if reader.version is not None:  # None: first index still running, nothing to search
        if want_dfn:
            dfn_f = _POOL.submit(definition_leg, reader, req, names)
        if want_kw:
            sem_f = _POOL.submit(semantic_leg, reader, req, sem_warn) if want_sem else None
            kw_f = _inline(keyword_leg, reader, req, kw_warn)
        elif want_sem:  # alone, or beside the definition leg's pool thread
            sem_f = _inline(semantic_leg, reader, req, sem_warn)
    sem = _collect(sem_f, sem_warn, W.VECTOR_LEG_UNAVAILABLE, "semantic")
    kw = _collect(kw_f, kw_warn, W.FTS_UNAVAILABLE, "keyword")
    dfn = _collect(dfn_f, [], W.FTS_UNAVAILABLE, "definition")
    return sem, kw, dfn


def _degrade(
    reader: IndexReader, req: RankRequest, sem: _LegOutcome, kw: _LegOutcome, warnings: list[dict[str, str]]
) -> tuple[str, float, LegResult | None]:
    """The cascade: vector leg down -> keyword only (never empty); BM25 down -> semantic only."""
    mode: str = req.mode
    alpha = req.alpha if mode == "hybrid" else (1.0 if mode == "semantic" else 0.0)
    if mode == "hybrid" and 0.0 < alpha < 1.0:
        alpha = ranking.shifted_alpha(req.query, alpha, ranking.KNOBS)
    keyword = kw.result
    if sem.failed and reader.version is not None:
        alpha = 0.0
        if keyword is None and not kw.failed:
            try:
                keyword = keyword_leg(reader, req, warnings)
            except Exception as exc:
                log.exception("keyword leg failed")
                warnings.append(
                    W.warn(W.FTS_UNAVAILABLE, f"(and the SQLite fallback failed: {str(exc)[:200]})")
                )
        if mode == "semantic":
            mode = "keyword"
    elif kw.failed and sem.result is not None and mode == "hybrid":
        alpha = 1.0
    return mode, alpha, keyword


def rank(reader: IndexReader, req: RankRequest) -> Ranking:
    """Run the legs ``req.mode`` needs (in parallel), degrade as the cascade says, fuse and boost."""
    started = time.perf_counter()
    sem, kw, dfn = _run_legs(reader, req)
    warnings: list[dict[str, str]] = [*(sem.warnings or []), *(kw.warnings or [])]
    mode, alpha_eff, keyword = _degrade(reader, req, sem, kw, warnings)
    semantic = sem.result
    effective = replace(req, mode=mode)  # type: ignore[arg-type]
    newest = newest_updated_at(reader) if reader.version is not None else None
    t_fuse = time.perf_counter()
    ranked, kept = fuse(effective, alpha_eff, semantic, keyword, newest, dfn.result)
    timings = {
        "encode": round((semantic.encode_seconds if semantic else 0.0) * 1000, 3),
        "semantic": round((semantic.seconds if semantic else 0.0) * 1000, 3),
        "keyword": round((keyword.seconds if keyword else 0.0) * 1000, 3),
        "fuse": round((time.perf_counter() - t_fuse) * 1000, 3),
        "rank_total": round((time.perf_counter() - started) * 1000, 3),
    }
    legs = {}
    if semantic is not None:
        legs["semantic"] = semantic.source
    if keyword is not None:
        legs["keyword"] = keyword.source
    return Ranking(req, mode, alpha_eff, ranked, kept, legs, tuple(warnings), timings, newest)
