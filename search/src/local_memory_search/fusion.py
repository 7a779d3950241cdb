"""The pure fusion: weighted RRF with leg confidence, identifier and recency boosts, the relevance gap.

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
``gap_threshold * top score`` are dropped. No I/O here: the legs' results come in as values.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from . import ranking
from .filters import SearchFilters
from .legs import LegHit, LegResult
from .query_text import query_identifiers

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
#: 4 was tuned on CoSQA's dev split; on the semble benchmark's tuning half 2 ranks better (see
#: ``RankingKnobs.confidence_exponent``, the one owner of the value in force).
RRF_SCORE_EXPONENT = ranking.RankingKnobs().confidence_exponent
#: Half-life of the recency boost, in days before the newest file of the index.
RECENCY_HALF_LIFE_DAYS = 30.0


def candidate_depth(offset: int, limit: int) -> int:
    """How many candidates each leg fetches for a page."""
    return max(CANDIDATE_DEPTH, offset + limit)


@dataclass(frozen=True)
class RankRequest:
    """Everything that decides a ranking (the explain tool rebuilds the same request)."""

    query: str
    mode: Mode
    alpha: float = 0.65
    rrf_k: int = 60
    recency_weight: float = 0.1
    gap_threshold: float = 0.25
    filters: SearchFilters | None = None
    depth: int = CANDIDATE_DEPTH


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
    definition: LegHit | None = None
    definition_rrf: float = 0.0
    file_path: str | None = None
    factors: tuple[tuple[str, float], ...] = ()


def _parse_ts(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def confidence(score: float, best: float, exponent: float | None = None) -> float:
    """A hit's weight inside its leg: (score / best) ** exponent, in [0, 1] (``RRF_SCORE_EXPONENT``
    unless given; the ranking uses ``RankingKnobs.confidence_exponent``)."""
    if best <= 0:
        return 1.0
    p = RRF_SCORE_EXPONENT if exponent is None else exponent
    return float(min(1.0, max(0.0, score) / best) ** p)


@dataclass(frozen=True)
class _Context:
    """What every candidate's score reads: the request, the leg maxima, the query names, the clock."""

    req: RankRequest
    alpha: float
    best_sem: float
    best_kw: float
    idents: set[str]
    newest: datetime | None
    knobs: ranking.RankingKnobs
    shape: ranking.QueryShape


def _score_one(
    ctx: _Context, cid: str, s: LegHit | None, k: LegHit | None, d: LegHit | None, row: dict[str, Any]
) -> Scored:
    req = ctx.req
    p = ctx.knobs.confidence_exponent
    s_conf = confidence(s.score, ctx.best_sem, p) if s else 0.0
    k_conf = confidence(k.score, ctx.best_kw, p) if k else 0.0
    if req.mode == "hybrid":
        s_rrf = ctx.alpha * s_conf / (req.rrf_k + s.rank) if s else 0.0
        k_rrf = (1.0 - ctx.alpha) * k_conf / (req.rrf_k + k.rank) if k else 0.0
        d_rrf = ctx.knobs.definition_weight / (req.rrf_k + d.rank) if d else 0.0
        base = s_rrf + k_rrf + d_rrf
    else:
        d_rrf = 0.0
        s_rrf = k_rrf = 0.0
        hit = s if s is not None else k if k is not None else d
        assert hit is not None
        base = max(0.0, hit.score)
    match = identifier_match(ctx.idents, row)
    ident_mult = 1.0 + IDENTIFIER_BOOST if match else 1.0
    updated = row.get("updated_at")
    age = None
    recency = 0.0
    ts = _parse_ts(updated)
    if ts is not None and ctx.newest is not None:
        age = max(0.0, (ctx.newest - ts).total_seconds() / 86400.0)
        recency = 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)
    rec_mult = 1.0 + req.recency_weight * recency
    path = row.get("file_path") or ""
    factors: tuple[tuple[str, float], ...] = ()
    if req.mode == "hybrid":
        name_match, name_precision = ranking.name_factors(path, ctx.shape, ctx.knobs)
        factors = (
            ("path_prior", ranking.path_factor(path, ctx.shape, ctx.knobs)),
            ("doc_prior", ranking.doc_factor(path, ctx.shape, ctx.knobs)),
            ("name_match", name_match),
            ("name_precision", name_precision),
        )
    score = base * ident_mult * rec_mult * math.prod(v for _, v in factors)
    return Scored(
        cid, s, k, s_conf, k_conf, s_rrf, k_rrf, base, match, ident_mult,
        updated, age, recency, rec_mult, score, d, d_rrf, path or None, factors,
    )  # fmt: skip


def fuse(
    req: RankRequest,
    alpha_effective: float,
    semantic: LegResult | None,
    keyword: LegResult | None,
    newest: str | None,
    definition: LegResult | None = None,
    knobs: ranking.RankingKnobs | None = None,
) -> tuple[tuple[Scored, ...], int]:
    """Score every candidate of the legs, apply the ranking factors and the gap filter; returns (ranked, kept)."""
    legs = [leg for leg in (semantic, keyword, definition) if leg is not None]
    sem = {h.chunk_id: h for h in semantic.hits} if semantic else {}
    kw = {h.chunk_id: h for h in keyword.hits} if keyword else {}
    dfn = {h.chunk_id: h for h in definition.hits} if definition and req.mode == "hybrid" else {}
    meta: dict[str, dict[str, Any]] = {}
    for leg in reversed(legs):
        meta.update(leg.meta)
    knobs = knobs or ranking.KNOBS
    shape = ranking.QueryShape.of(req.query)
    ctx = _Context(
        req,
        alpha_effective,
        max((h.score for h in sem.values()), default=0.0),
        max((h.score for h in kw.values()), default=0.0),
        query_identifiers(req.query),
        _parse_ts(newest),
        knobs,
        shape,
    )
    ids = dict.fromkeys([*sem, *kw, *dfn])
    out = [_score_one(ctx, c, sem.get(c), kw.get(c), dfn.get(c), meta.get(c, {})) for c in ids]
    out.sort(key=_order)
    if req.mode == "hybrid":
        out = _per_file(out, ctx.knobs, ctx.shape)
    return tuple(out), gap_kept(out, req.gap_threshold)


def _order(x: Scored) -> tuple[float, float, int, str]:
    return (-x.score, -x.base, _best_rank(x), x.chunk_id)


def _with_factor(s: Scored, name: str, value: float) -> Scored:
    """``s`` with one more factor (a factor of 1.0 is left out: explain shows it as 1.0)."""
    if value == 1.0:
        return s
    return replace(s, score=s.score * value, factors=(*s.factors, (name, value)))


#: The list-level factors; explain_match shows 1.0 for those a candidate did not get.
FILE_FACTORS = ("file_bonus", "diversity")


def _per_file(ranked: list[Scored], knobs: ranking.RankingKnobs, shape: ranking.QueryShape) -> list[Scored]:
    """The file-level factors over a list in score order: ``file_bonus`` then ``diversity``
    (``prose_diversity`` for a prose query: :func:`ranking.file_diversity`)."""
    if not ranked:
        return ranked
    out = ranked
    if knobs.file_bonus:
        top = ranked[0].score or 1.0
        mass: dict[str, float] = defaultdict(float)
        for s in ranked:
            if s.file_path:
                mass[s.file_path] += s.score / top
        bonus = knobs.file_bonus
        out = [
            _with_factor(s, "file_bonus", 1.0 + bonus * min(1.0, mass[s.file_path] - s.score / top))
            if s.file_path
            else s
            for s in ranked
        ]
        if any(a is not b for a, b in zip(out, ranked, strict=True)):
            out.sort(key=_order)
    diversity = ranking.file_diversity(shape, knobs)
    if diversity != 1.0:
        seen: dict[str, int] = defaultdict(int)
        final = []
        for s in out:
            if s.file_path:
                final.append(_with_factor(s, "diversity", diversity ** seen[s.file_path]))
                seen[s.file_path] += 1
            else:
                final.append(s)
        if any(a is not b for a, b in zip(final, out, strict=True)):
            final.sort(key=_order)
        out = final
    return out


def gap_kept(ranked: list[Scored], gap_threshold: float) -> int:
    """How many of ``ranked`` (best first) to keep: up to the last one whose relevance is at least
    ``gap_threshold`` x the top relevance. Relevance is the score without the ``diversity``
    discount: diversity orders results, it does not make a chunk less relevant.
    """
    if not ranked or gap_threshold <= 0:
        return len(ranked)
    relevance = [x.score / dict(x.factors).get("diversity", 1.0) for x in ranked]
    floor = max(relevance) * gap_threshold
    return max(i + 1 for i, r in enumerate(relevance) if r >= floor)


def _best_rank(s: Scored) -> int:
    return min(h.rank for h in (s.semantic, s.keyword, s.definition) if h is not None)


def identifier_match(idents: set[str], row: dict[str, Any]) -> str | None:
    """The longest query name equal to the chunk's symbol, function (or, for a class chunk, class) name."""
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
