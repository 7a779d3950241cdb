"""Retrieval and ranking: the semantic and keyword legs, weighted RRF, boosts, the relevance gap.

``rank`` is the one function that scores candidates; ``search_*`` and ``explain_match`` both
call it, so an explanation always reproduces the order a search returned.

Scores, per mode:

- hybrid:   base = alpha * c_sem / (rrf_k + rank_sem) + (1 - alpha) * c_kw / (rrf_k + rank_kw)
            a leg a chunk is absent from contributes 0 (BM25 non-matches never enter), and
            c = (score / best score of that leg) ** RRF_SCORE_EXPONENT is the leg's confidence in
            the hit (see ``RRF_SCORE_EXPONENT`` for why plain RRF is not enough)
- semantic: base = cosine similarity of query and chunk vectors
- keyword:  base = BM25 score (or the SQLite LIKE score when FTS is unavailable)

then ``final = base * identifier_multiplier * recency_multiplier`` where the identifier
multiplier is ``1 + IDENTIFIER_BOOST`` when a query token equals the chunk's symbol, function
or class name, and the recency multiplier is ``1 + recency_weight * 0.5 ** (age_days / 30)``
with the age measured from the newest file of the index. Hits scoring below
``gap_threshold * top score`` are dropped.
"""

from __future__ import annotations

import logging
import math
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
from local_memory_shared.errors import DimensionMismatch, EmbeddingError
from local_memory_shared.schema import FTS_COLUMN, VECTOR_COLUMN, definition_terms

from . import degradation as W
from .encoder import ENCODER, choose_encoder
from .filters import LanceWhere, lance_where, sqlite_where
from .params import Filters
from .store import IndexReader

log = logging.getLogger(__name__)

Mode = Literal["hybrid", "semantic", "keyword"]

#: Candidates each leg contributes (more when a page reaches deeper).
CANDIDATE_DEPTH = 100
#: ``final`` is multiplied by 1 + this when a query token names the chunk's symbol.
IDENTIFIER_BOOST = 1.0
#: Each RRF contribution is scaled by (score / the leg's best score) ** this. With rrf_k = 60,
#: 1/(k + rank) is nearly flat over the top ranks, so plain RRF rewards a chunk for merely
#: appearing in a leg: on CoSQA a weak BM25 match outvotes the dense leg's best hit, and
#: weighted RRF at alpha 0.65 scores nDCG@10 0.562 against the dense leg's 0.597. Scaling by the
#: leg's own confidence restores the order inside each leg (0.603); 0 gives plain weighted RRF.
#: Tuned on CoSQA's dev split, reported on its test split (bench/search_quality.py).
RRF_SCORE_EXPONENT = 4.0
#: Half-life of the recency boost, in days before the newest file of the index.
RECENCY_HALF_LIFE_DAYS = 30.0
#: ANN search knobs used when the table has an IVF index (refine re-ranks with exact distances).
ANN_NPROBES = 20
ANN_REFINE_FACTOR = 5
#: Columns each leg reads: enough to fuse and boost; text is fetched for the page only.
LEG_COLUMNS = ["chunk_id", "symbol_name", "function_name", "class_name", "updated_at"]

_IDENT = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*")
_WORD = re.compile(r"\w+", re.UNICODE)
_CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lm-search-leg")


def candidate_depth(offset: int, limit: int) -> int:
    """How many candidates each leg fetches for a page."""
    return max(CANDIDATE_DEPTH, offset + limit)


def query_words(query: str) -> list[str]:
    """Lower-cased words of ``query`` plus the parts of camelCase / snake_case identifiers."""
    words: list[str] = []
    for word in _WORD.findall(query):
        words.append(word.lower())
        for piece in word.split("_"):
            parts = _CAMEL_PARTS.findall(piece)
            if len(parts) > 1 or (parts and parts[0].lower() != word.lower()):
                words.extend(p.lower() for p in parts)
    return list(dict.fromkeys(w for w in words if w))


#: Queries of at most this many words are taken as names even when a word looks like prose.
SHORT_QUERY_WORDS = 2


def _looks_like_identifier(token: str) -> bool:
    return (
        "_" in token
        or any(c.isdigit() for c in token)
        or any(c.isupper() for c in token[1:])
        or any(sep in token for sep in (".", "::", "#"))
    )


def query_identifiers(query: str) -> set[str]:
    """Tokens of ``query`` that name a symbol (``parseConfig``, ``Client.send``, ``os::path``).

    In a prose question ("check file is readonly") plain words are words, not names: boosting a
    function called ``check`` there would bury the answer. They count as names only in short
    queries ("connect", "LruCache get").
    """
    tokens = _IDENT.findall(query)
    short = len(_WORD.findall(query)) <= SHORT_QUERY_WORDS
    out: set[str] = set()
    for token in tokens:
        if not (short or _looks_like_identifier(token)):
            continue
        out.add(token)
        for sep in ("::", "#"):
            token = token.replace(sep, ".")
        out.add(token)
        out.add(token.rsplit(".", 1)[-1])
    return {t for t in out if len(t) > 1}


@dataclass(frozen=True)
class LegHit:
    """One chunk as one leg ranked it."""

    chunk_id: str
    rank: int
    score: float


@dataclass(frozen=True)
class LegResult:
    """What one leg returned, and from where (``lance_ann``, ``lance_flat``, ``lance_fts``, ``sqlite_like``)."""

    name: str
    source: str
    hits: tuple[LegHit, ...]
    seconds: float
    meta: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)
    encode_seconds: float = 0.0


@dataclass(frozen=True)
class Scored:
    """A candidate with every number that produced its final score."""

    chunk_id: str
    semantic: LegHit | None
    keyword: LegHit | None
    semantic_confidence: float
    keyword_confidence: float
    semantic_rrf: float
    keyword_rrf: float
    base: float
    identifier_match: str | None
    identifier_multiplier: float
    updated_at: str | None
    age_days: float | None
    recency: float
    recency_multiplier: float
    score: float


@dataclass(frozen=True)
class RankRequest:
    """Everything that decides a ranking (the explain tool rebuilds the same request)."""

    query: str
    mode: Mode
    alpha: float = 0.65
    rrf_k: int = 60
    recency_weight: float = 0.1
    gap_threshold: float = 0.25
    filters: Filters | None = None
    depth: int = CANDIDATE_DEPTH


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


class LegFailed(Exception):
    """A leg could not run; ``warning`` says why (internal, never leaves this module)."""

    def __init__(self, warning: dict[str, str]):
        super().__init__(warning["message"])
        self.warning = warning


# -- legs ----------------------------------------------------------------------------------


def _rows_to_leg(
    name: str,
    source: str,
    rows: list[dict[str, Any]],
    score_of: Callable[[dict[str, Any]], float],
    started: float,
    encode_seconds: float = 0.0,
) -> LegResult:
    hits: list[LegHit] = []
    meta: dict[str, dict[str, Any]] = {}
    for row in rows:
        cid = row["chunk_id"]
        if cid in meta:
            continue
        meta[cid] = {k: row.get(k) for k in LEG_COLUMNS}
        hits.append(LegHit(cid, len(hits) + 1, finite(float(score_of(row)))))
    return LegResult(name, source, tuple(hits), time.perf_counter() - started, meta, encode_seconds)


def vector_search(
    reader: IndexReader, vector: np.ndarray, where: LanceWhere, depth: int, warnings: list[dict[str, str]]
) -> tuple[list[dict[str, Any]], str]:
    """Nearest chunks to ``vector`` (cosine); falls back to an exact scan when the ANN index fails."""
    table = reader.table
    assert table is not None
    columns = [*LEG_COLUMNS, "_distance"]

    def build() -> Any:
        return (
            table.search(vector, vector_column_name=VECTOR_COLUMN, query_type="vector")
            .distance_type("cosine")
            .where(where.sql, prefilter=where.prefilter)
            .limit(depth)
            .select(columns)
        )

    if reader.has_vector_index:
        try:
            return build().nprobes(ANN_NPROBES).refine_factor(
                ANN_REFINE_FACTOR
            ).to_arrow().to_pylist(), "lance_ann"
        except Exception as exc:  # a corrupt or unreadable index must only cost speed
            log.warning("ANN search failed, falling back to a flat scan: %s", exc)
            warnings.append(W.warn(W.ANN_INDEX_UNUSABLE, f"({type(exc).__name__}: {str(exc)[:200]})"))
    try:
        return build().bypass_vector_index().to_arrow().to_pylist(), "lance_flat"
    except Exception as exc:
        raise LegFailed(
            W.warn(W.VECTOR_LEG_UNAVAILABLE, f"({type(exc).__name__}: {str(exc)[:200]})")
        ) from exc


def _semantic_leg(reader: IndexReader, req: RankRequest, warnings: list[dict[str, str]]) -> LegResult:
    started = time.perf_counter()
    if reader.table is None:
        raise LegFailed(W.warn(W.VECTOR_LEG_UNAVAILABLE, "(no LanceDB table to search)."))
    choice, notes = choose_encoder(reader.meta, reader.vector_dim)
    warnings.extend(notes)
    if choice is None:
        raise LegFailed(notes[-1])
    enc_start = time.perf_counter()
    try:
        vector = ENCODER.encode(choice, req.query, reader.vector_dim, reader.settings)
    except DimensionMismatch as exc:
        raise LegFailed(W.warn(W.QUERY_DIMENSION_MISMATCH, exc.message)) from exc
    except EmbeddingError as exc:
        raise LegFailed(W.warn(W.EMBEDDING_UNAVAILABLE, exc.message)) from exc
    encode_seconds = time.perf_counter() - enc_start
    rows, source = vector_search(
        reader, vector, lance_where(reader.project, req.filters), req.depth, warnings
    )
    return _rows_to_leg(
        "semantic", source, rows, lambda r: 1.0 - float(r["_distance"]), started, encode_seconds
    )


#: Function words dropped from natural-language keyword queries: BM25 gives them weight in code
#: (where they are rare), which lets "how to ... in ..." match noise. Code keywords such as
#: ``for``, ``if``, ``not``, ``return`` and ``in`` are deliberately absent.
QUERY_STOPWORDS = frozenset(
    "a an the how to of is are was were be been do does did i me my we you your what which who whom whose "
    "when where why can could should would will shall may might must this that these those it its "
    "there their then than so such very just also about on at by into onto from with without way ways "
    "using use want need something anything".split()
)
#: Language names that are also ordinary words; they stay in keyword queries.
_AMBIGUOUS_LANGUAGE_WORDS = frozenset({"go", "c", "text", "r", "d"})


def fts_query_text(query: str, languages: frozenset[str] = frozenset()) -> str:
    """The BM25 query: the query's words plus identifier parts, minus the function words of prose.

    In prose-like queries (three or more words) function words are dropped, and so are names of
    languages the index holds ("... in python" over Python code scopes the question; as a BM25
    term it only matches stray mentions). Never all words: ``"to do"`` still searches.
    """
    words = query_words(query)
    if len(_WORD.findall(query)) >= 3:
        drop = QUERY_STOPWORDS | (languages - _AMBIGUOUS_LANGUAGE_WORDS)
        kept = [w for w in words if w not in drop]
        if kept:
            words = kept
    # An exact name also asks for its definition (terms the indexer adds to defining chunks).
    defines = [term for ident in sorted(query_identifiers(query)) for term in definition_terms(ident)]
    return " ".join(dict.fromkeys(words + defines))


def _keyword_leg(reader: IndexReader, req: RankRequest, warnings: list[dict[str, str]]) -> LegResult:
    started = time.perf_counter()
    text = fts_query_text(req.query, index_languages(reader))
    if not text:
        return LegResult("keyword", "none", (), 0.0)
    if reader.table is not None:
        if not reader.has_fts_index:
            warnings.append(W.warn(W.FTS_UNAVAILABLE, "(no FTS index on the published version)."))
        else:
            where = lance_where(reader.project, req.filters)
            try:
                rows = (
                    reader.table.search(text, query_type="fts", fts_columns=FTS_COLUMN)
                    .where(where.sql, prefilter=where.prefilter)
                    .limit(req.depth)
                    .select([*LEG_COLUMNS, "_score"])
                    .to_arrow()
                    .to_pylist()
                )
                return _rows_to_leg("keyword", "lance_fts", rows, lambda r: float(r["_score"]), started)
            except Exception as exc:
                log.warning("FTS query failed, falling back to SQLite LIKE: %s", exc)
                warnings.append(W.warn(W.FTS_UNAVAILABLE, f"({type(exc).__name__}: {str(exc)[:200]})"))
    rows = like_search(reader, query_words(req.query), req.filters, req.depth)
    return _rows_to_leg("keyword", "sqlite_like", rows, lambda r: float(r["_score"]), started)


#: Weight of a word found in each mirror column, for the SQLite LIKE fallback's crude relevance.
LIKE_WEIGHTS = (("symbol_name", 3), ("summary", 2), ("file_path", 1), ("text", 1))
_MAX_LIKE_WORDS = 16


def like_search(
    reader: IndexReader, words: list[str], filters: Filters | None, depth: int
) -> list[dict[str, Any]]:
    """Keyword fallback over the SQLite mirror: weighted count of words found per column."""
    words = [w for w in words if len(w) > 1][:_MAX_LIKE_WORDS]
    if not words:
        return []
    terms: list[str] = []
    args: list[Any] = []
    for word in words:
        pattern = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        for column, weight in LIKE_WEIGHTS:
            terms.append(f"(CASE WHEN c.{column} LIKE ? ESCAPE '\\' THEN {weight} ELSE 0 END)")
            args.append(pattern)
    where, where_args = sqlite_where(filters, alias="c")
    sql = (
        f"SELECT * FROM (SELECT c.chunk_id, c.symbol_name, c.function_name, c.class_name, c.updated_at, "  # noqa: S608
        f"c.file_path, c.chunk_index, ({' + '.join(terms)}) AS _score FROM chunks c WHERE {where}) "
        "WHERE _score > 0 ORDER BY _score DESC, file_path, chunk_index LIMIT ?"
    )
    return [dict(r) for r in reader.conn.execute(sql, [*args, *where_args, depth])]


# -- fusion --------------------------------------------------------------------------------


def _parse_ts(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


_NEWEST: dict[tuple[Any, ...], str | None] = {}
_NEWEST_LOCK = threading.Lock()


def newest_updated_at(reader: IndexReader) -> str | None:
    """The recency boost's reference point: the newest indexed file's mtime, cached per version.

    Read from ``files`` (one row per file) rather than ``MAX(chunks.updated_at)``, a full scan of
    the mirror that costs ~70 ms at 55k chunks; a chunk's updated_at is never newer than its file.
    """
    key = reader.cache_token
    with _NEWEST_LOCK:
        if key in _NEWEST:
            return _NEWEST[key]
    value: str | None = None
    try:
        newest = reader.conn.execute("SELECT MAX(mtime) FROM files").fetchone()[0]
        if newest is not None:
            value = datetime.fromtimestamp(float(newest), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        else:
            value = reader.conn.execute("SELECT MAX(updated_at) FROM chunks").fetchone()[0]
    except sqlite3.Error:
        value = None
    with _NEWEST_LOCK:
        if len(_NEWEST) > 256:
            _NEWEST.clear()
        _NEWEST[key] = value
    return value


_LANGUAGES: dict[tuple[Any, ...], frozenset[str]] = {}


def index_languages(reader: IndexReader) -> frozenset[str]:
    """Language tags present in the index (lower-case), cached per published version."""
    key = reader.cache_token
    with _NEWEST_LOCK:
        if key in _LANGUAGES:
            return _LANGUAGES[key]
    try:
        rows = reader.conn.execute("SELECT DISTINCT language FROM files").fetchall()
        value = frozenset(str(r[0]).lower() for r in rows if r[0])
    except sqlite3.Error:
        value = frozenset()
    with _NEWEST_LOCK:
        if len(_LANGUAGES) > 256:
            _LANGUAGES.clear()
        _LANGUAGES[key] = value
    return value


def confidence(score: float, best: float) -> float:
    """A hit's weight inside its leg: (score / best) ** RRF_SCORE_EXPONENT, in [0, 1]."""
    if best <= 0:
        return 1.0
    return min(1.0, max(0.0, score) / best) ** RRF_SCORE_EXPONENT


def fuse(
    req: RankRequest,
    alpha_effective: float,
    semantic: LegResult | None,
    keyword: LegResult | None,
    newest: str | None,
) -> tuple[tuple[Scored, ...], int]:
    """Score every candidate of both legs and apply the gap filter; returns (ranked, kept)."""
    sem = {h.chunk_id: h for h in semantic.hits} if semantic else {}
    kw = {h.chunk_id: h for h in keyword.hits} if keyword else {}
    meta: dict[str, dict[str, Any]] = {}
    for leg in (keyword, semantic):
        if leg is not None:
            meta.update(leg.meta)
    best_sem = max((h.score for h in sem.values()), default=0.0)
    best_kw = max((h.score for h in kw.values()), default=0.0)
    idents = query_identifiers(req.query)
    newest_ts = _parse_ts(newest)
    out: list[Scored] = []
    for cid in dict.fromkeys([*sem, *kw]):
        s, k = sem.get(cid), kw.get(cid)
        s_conf = confidence(s.score, best_sem) if s else 0.0
        k_conf = confidence(k.score, best_kw) if k else 0.0
        if req.mode == "hybrid":
            s_rrf = alpha_effective * s_conf / (req.rrf_k + s.rank) if s else 0.0
            k_rrf = (1.0 - alpha_effective) * k_conf / (req.rrf_k + k.rank) if k else 0.0
            base = s_rrf + k_rrf
        else:
            s_rrf = k_rrf = 0.0
            hit = s if s is not None else k
            assert hit is not None
            base = max(0.0, hit.score)
        row = meta.get(cid, {})
        match = _identifier_match(idents, row)
        ident_mult = 1.0 + IDENTIFIER_BOOST if match else 1.0
        updated = row.get("updated_at")
        age = None
        recency = 0.0
        ts = _parse_ts(updated)
        if ts is not None and newest_ts is not None:
            age = max(0.0, (newest_ts - ts).total_seconds() / 86400.0)
            recency = 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)
        rec_mult = 1.0 + req.recency_weight * recency
        out.append(
            Scored(
                cid,
                s,
                k,
                s_conf,
                k_conf,
                s_rrf,
                k_rrf,
                base,
                match,
                ident_mult,
                updated,
                age,
                recency,
                rec_mult,
                base * ident_mult * rec_mult,
            )
        )
    out.sort(key=lambda x: (-x.score, -x.base, _best_rank(x), x.chunk_id))
    kept = len(out)
    if out and req.gap_threshold > 0:
        floor = out[0].score * req.gap_threshold
        kept = sum(1 for x in out if x.score >= floor)
    return tuple(out), kept


def _best_rank(s: Scored) -> int:
    return min(h.rank for h in (s.semantic, s.keyword) if h is not None)


def _identifier_match(idents: set[str], row: dict[str, Any]) -> str | None:
    if not idents:
        return None
    symbol = row.get("symbol_name") or ""
    function = row.get("function_name") or ""
    names = {symbol, symbol.rsplit(".", 1)[-1], function}
    if not function:
        # A class's own chunk; its methods carry class_name too, but naming a class should lift
        # the class, not every method in it.
        names.add(row.get("class_name") or "")
    names.discard("")
    for token in sorted(idents, key=lambda t: (-len(t), t)):
        if token in names:
            return token
    return None


# -- the entry point -----------------------------------------------------------------------


def rank(reader: IndexReader, req: RankRequest) -> Ranking:
    """Run the legs ``req.mode`` needs (in parallel), degrade as the cascade says, fuse and boost."""
    started = time.perf_counter()
    warnings: list[dict[str, str]] = []
    want_sem = req.mode == "semantic" or (req.mode == "hybrid" and req.alpha > 0)
    want_kw = req.mode == "keyword" or (req.mode == "hybrid" and req.alpha < 1)
    sem_warn: list[dict[str, str]] = []
    kw_warn: list[dict[str, str]] = []
    futures: dict[str, Future[LegResult]] = {}
    if reader.version is None:
        pass  # first index still running: nothing published, nothing to search
    else:
        if want_sem:
            futures["semantic"] = _POOL.submit(_semantic_leg, reader, req, sem_warn)
        if want_kw:
            futures["keyword"] = _POOL.submit(_keyword_leg, reader, req, kw_warn)
    semantic = keyword = None
    sem_failed = kw_failed = False
    if "semantic" in futures:
        try:
            semantic = futures["semantic"].result()
        except LegFailed as exc:
            sem_failed = True
            if exc.warning not in sem_warn:
                sem_warn.append(exc.warning)
        except Exception as exc:  # an unforeseen failure still costs only this leg
            log.exception("semantic leg failed")
            sem_failed = True
            sem_warn.append(W.warn(W.VECTOR_LEG_UNAVAILABLE, f"({type(exc).__name__}: {str(exc)[:200]})"))
    if "keyword" in futures:
        try:
            keyword = futures["keyword"].result()
        except LegFailed as exc:
            kw_failed = True
            kw_warn.append(exc.warning)
        except Exception as exc:
            log.exception("keyword leg failed")
            kw_failed = True
            kw_warn.append(W.warn(W.FTS_UNAVAILABLE, f"(and the SQLite fallback failed: {str(exc)[:200]})"))
    warnings.extend(sem_warn)
    warnings.extend(kw_warn)
    mode = req.mode
    alpha_eff = req.alpha if mode == "hybrid" else (1.0 if mode == "semantic" else 0.0)
    if sem_failed and reader.version is not None:
        # Vector leg unavailable → keyword results (alpha = 0), never an empty answer.
        alpha_eff = 0.0
        if keyword is None and not kw_failed:
            try:
                keyword = _keyword_leg(reader, req, warnings)
            except Exception as exc:
                log.exception("keyword leg failed")
                warnings.append(
                    W.warn(W.FTS_UNAVAILABLE, f"(and the SQLite fallback failed: {str(exc)[:200]})")
                )
        if mode == "semantic":
            mode = "keyword"
    elif kw_failed and semantic is not None and mode == "hybrid":
        alpha_eff = 1.0
    effective = RankRequest(**{**req.__dict__, "mode": mode})
    newest = newest_updated_at(reader) if reader.version is not None else None
    t_fuse = time.perf_counter()
    ranked, kept = fuse(effective, alpha_eff, semantic, keyword, newest)
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


def finite(x: float) -> float:
    """JSON-safe float."""
    return x if math.isfinite(x) else 0.0
