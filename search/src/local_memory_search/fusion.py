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

This is on every search call's path, so it is written for speed: what depends only on the query,
a leg, a file or a timestamp is computed once per call, candidates are plain mutable records
while the list is ranked, and each becomes its frozen ``Scored`` once, at the end. The arithmetic
keeps the formula's order, and ``tests/test_search_fusion_reference.py`` holds the result equal,
bit for bit, to the formula written the plain way.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, fields
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
    alpha: float = ranking.DEFAULT_ALPHA
    rrf_k: int = ranking.DEFAULT_RRF_K
    recency_weight: float = ranking.DEFAULT_RECENCY_WEIGHT
    gap_threshold: float = ranking.DEFAULT_GAP_THRESHOLD
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


#: A leg's entry for a chunk it did not return: (hit, confidence, RRF contribution, rank).
_ABSENT: tuple[None, float, float, float] = (None, 0.0, 0.0, math.inf)
_NO_DEFINITION: tuple[None, float, float] = (None, 0.0, math.inf)
_NO_ROW: dict[str, Any] = {}


class _Candidate:
    """One candidate while the list is ranked. ``score``, ``factors`` and ``diversity`` change
    under the file-level factors; the other numbers are final once scored (``fixed``, in
    ``Scored``'s field order). Built into its frozen :class:`Scored` once, when the order is final.
    """

    __slots__ = ("score", "base", "best_rank", "chunk_id", "file_path", "factors", "diversity", "fixed")

    def __init__(
        self,
        score: float,
        base: float,
        best_rank: int,
        chunk_id: str,
        file_path: str,
        factors: tuple[tuple[str, float], ...],
        fixed: tuple[Any, ...],
    ) -> None:
        self.score = score
        self.base = base
        self.best_rank = best_rank
        self.chunk_id = chunk_id
        self.file_path = file_path
        self.factors = factors
        self.diversity = 1.0
        self.fixed = fixed

    def order(self) -> tuple[float, float, int, str]:
        """The sort key of the final order: score, then base, then best leg rank, then id."""
        return (-self.score, -self.base, self.best_rank, self.chunk_id)

    def multiply(self, name: str, value: float) -> bool:
        """Apply one more named factor; a factor of 1.0 is left out (explain shows it as 1.0)."""
        if value == 1.0:
            return False
        self.score *= value
        self.factors = (*self.factors, (name, value))
        return True

    def scored(self) -> Scored:
        """The frozen record of this candidate."""
        s, k, s_conf, k_conf, s_rrf, k_rrf, match, ident_mult, updated, age, recency, rec_mult, d, d_rrf = (
            self.fixed
        )
        return _frozen_scored((
            self.chunk_id, s, k, s_conf, k_conf, s_rrf, k_rrf, self.base, match, ident_mult,
            updated, age, recency, rec_mult, self.score, d, d_rrf, self.file_path or None, self.factors,
        ))  # fmt: skip


_SCORED_FIELDS = tuple(f.name for f in fields(Scored))
_new = object.__new__


def _frozen_scored(values: tuple[Any, ...]) -> Scored:
    """``Scored(*values)`` without the frozen ``__init__``'s one ``object.__setattr__`` per field:
    the fusion builds ~200 per call, and that ``__init__`` was a third of a keyword call's fusion.
    ``values`` holds every field, in field order (the reference test compares whole records)."""
    out: Scored = _new(Scored)
    out.__dict__.update(zip(_SCORED_FIELDS, values, strict=True))
    return out


def _leg_weights(
    hits: dict[str, LegHit], exponent: float, weight: float, rrf_k: int, hybrid: bool
) -> dict[str, tuple[LegHit, float, float, float]]:
    """Each hit of a leg with its confidence, (hybrid) its weighted RRF contribution and its rank."""
    best = max((h.score for h in hits.values()), default=0.0)
    out: dict[str, tuple[LegHit, float, float, float]] = {}
    for cid, h in hits.items():
        conf = confidence(h.score, best, exponent)
        out[cid] = (h, conf, weight * conf / (rrf_k + h.rank) if hybrid else 0.0, h.rank)
    return out


def _score(
    req: RankRequest,
    alpha: float,
    sem: dict[str, LegHit],
    kw: dict[str, LegHit],
    dfn: dict[str, LegHit],
    meta: dict[str, dict[str, Any]],
    newest: datetime | None,
    knobs: ranking.RankingKnobs,
    shape: ranking.QueryShape | None,
) -> list[_Candidate]:
    """Every candidate's base score and per-chunk factors (see the module docstring); the path
    factors apply when ``shape`` (the query's, hybrid only) is given.

    What depends only on the query, a leg, a file or a timestamp is computed once: the legs'
    confidences and contributions, the query's names, the path factors per file, the recency
    per ``updated_at``. The arithmetic is the formula's, in its order, so the scores are exact.
    """
    hybrid = req.mode == "hybrid"
    p = ranking.leg_confidence_exponent(shape, knobs)
    sem_w = _leg_weights(sem, p, alpha, req.rrf_k, hybrid)
    kw_w = _leg_weights(kw, p, 1.0 - alpha, req.rrf_k, hybrid)
    dfn_w = {cid: (h, knobs.definition_weight / (req.rrf_k + h.rank), h.rank) for cid, h in dfn.items()}
    names = _longest_first(query_identifiers(req.query, ranking.plain_words(knobs)))
    by_path: dict[str, tuple[tuple[tuple[str, float], ...], float]] = {}
    by_time: dict[str | None, tuple[float | None, float, float]] = {}
    recency_weight = req.recency_weight
    out = []
    for cid in dict.fromkeys([*sem, *kw, *dfn]):
        s, s_conf, s_rrf, s_rank = sem_w.get(cid, _ABSENT)
        k, k_conf, k_rrf, k_rank = kw_w.get(cid, _ABSENT)
        d, d_rrf, d_rank = dfn_w.get(cid, _NO_DEFINITION)
        if hybrid:
            base = s_rrf + k_rrf + d_rrf
        else:
            hit = s if s is not None else k if k is not None else d
            assert hit is not None
            base = max(0.0, hit.score)
        row = meta.get(cid, _NO_ROW)
        match = _identifier_match(names, row) if names else None
        ident_mult = 1.0 + IDENTIFIER_BOOST if match else 1.0
        updated = row.get("updated_at")
        timed = by_time.get(updated)
        if timed is None:
            timed = by_time[updated] = _recency(updated, newest, recency_weight)
        age, recency, rec_mult = timed
        path = row.get("file_path") or ""
        score = base * ident_mult * rec_mult
        factors: tuple[tuple[str, float], ...] = ()
        if shape is not None:
            per_file = by_path.get(path)
            if per_file is None:
                found = ranking.path_factors(path, shape, knobs)
                per_file = by_path[path] = (found, math.prod(v for _, v in found))
            factors = per_file[0]
            score *= per_file[1]
        best_rank = int(min(s_rank, k_rank, d_rank))  # every candidate comes from some leg
        fixed = (
            s, k, s_conf, k_conf, s_rrf, k_rrf, match, ident_mult, updated, age, recency, rec_mult, d, d_rrf,
        )  # fmt: skip
        out.append(_Candidate(score, base, best_rank, cid, path, factors, fixed))
    return out


def _recency(
    updated: str | None, newest: datetime | None, weight: float
) -> tuple[float | None, float, float]:
    """(age in days, recency in [0, 1], its multiplier) of a chunk last changed at ``updated``
    (no age and no recency without a timestamp or a newest file)."""
    ts = _parse_ts(updated)
    if ts is None or newest is None:
        return None, 0.0, 1.0 + weight * 0.0
    age = max(0.0, (newest - ts).total_seconds() / 86400.0)
    recency = 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)
    return age, recency, 1.0 + weight * recency


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
    shape = ranking.QueryShape.of(req.query) if req.mode == "hybrid" else None
    out = _score(req, alpha_effective, sem, kw, dfn, meta, _parse_ts(newest), knobs, shape)
    out.sort(key=_Candidate.order)
    if shape is not None:
        out = _per_file(out, knobs, shape)
    kept = gap_kept([c.score / c.diversity for c in out], req.gap_threshold)
    return tuple(c.scored() for c in out), kept


#: The list-level factors; explain_match shows 1.0 for those a candidate did not get.
FILE_FACTORS = ("file_bonus", "diversity")


def _per_file(
    ranked: list[_Candidate], knobs: ranking.RankingKnobs, shape: ranking.QueryShape
) -> list[_Candidate]:
    """The file-level factors over a list in score order: ``file_bonus`` then ``diversity``
    (``prose_diversity`` for a prose query: :func:`ranking.file_diversity`)."""
    if not ranked:
        return ranked
    if knobs.file_bonus:
        top = ranked[0].score or 1.0
        mass: dict[str, float] = defaultdict(float)
        for c in ranked:
            if c.file_path:
                mass[c.file_path] += c.score / top
        bonus = knobs.file_bonus
        changed = False
        for c in ranked:
            if c.file_path:
                # a file's only candidate has no other mass: its factor is 1.0 and is not recorded
                changed |= c.multiply("file_bonus", 1.0 + bonus * min(1.0, mass[c.file_path] - c.score / top))
        if changed:
            ranked.sort(key=_Candidate.order)
    diversity = ranking.file_diversity(shape, knobs)
    if diversity != 1.0:
        seen: dict[str, int] = defaultdict(int)
        changed = False
        for c in ranked:
            if c.file_path:
                value = diversity ** seen[c.file_path]
                if c.multiply("diversity", value):
                    c.diversity = value
                    changed = True
                seen[c.file_path] += 1
        if changed:
            ranked.sort(key=_Candidate.order)
    return ranked


def gap_kept(relevance: Sequence[float], gap_threshold: float) -> int:
    """How many candidates (best first, by their ``relevance``) to keep: up to the last one whose
    relevance is at least ``gap_threshold`` x the top relevance. Relevance is the score without
    the ``diversity`` discount: diversity orders results, it does not make a chunk less relevant.
    """
    if not relevance or gap_threshold <= 0:
        return len(relevance)
    floor = max(relevance) * gap_threshold
    return max(i + 1 for i, r in enumerate(relevance) if r >= floor)


def _longest_first(idents: set[str]) -> tuple[str, ...]:
    """The query's names in the order a match is looked for: longest first, then alphabetical."""
    return tuple(sorted(idents, key=lambda t: (-len(t), t)))


def identifier_match(idents: set[str], row: dict[str, Any]) -> str | None:
    """The longest query name equal to the chunk's symbol, function (or, for a class chunk, class) name."""
    return _identifier_match(_longest_first(idents), row) if idents else None


def _identifier_match(names: tuple[str, ...], row: dict[str, Any]) -> str | None:
    """:func:`identifier_match` with the query's names already in ``_longest_first`` order."""
    symbol = row.get("symbol_name") or ""
    function = row.get("function_name") or ""
    chunk_names = {symbol, symbol.rsplit(".", 1)[-1], function}
    if not function:
        # A class's own chunk; its methods carry class_name too, but naming a class should lift
        # the class, not every method in it.
        chunk_names.add(row.get("class_name") or "")
    chunk_names.discard("")
    for token in names:
        if token in chunk_names:
            return token
    return None
