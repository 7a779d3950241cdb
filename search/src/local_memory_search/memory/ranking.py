"""Ranking of memory hits: the two legs, weighted RRF, seed 000's multipliers and orderings.

    m       = path(1.25|1) * severity(1.4|1.3|1|0.9) * hits(1 + min(h,20)*0.02)
              * occurrences(1 + min(max(o-1,0),20)*0.03) * feedback
    final   = BM25 * m                                                          (fulltext)
            = cosine similarity * m                                             (semantic)
            = w_fulltext / (RRF_K + rank'_fts) + w_semantic / (RRF_K + rank'_vector)  (hybrid)
    order   = records that still hold before contradicted ones, then final desc, updated desc, id.

In hybrid mode the multipliers act on each leg's own score (BM25 * m, similarity * m) and RRF
fuses the ranks ``rank'`` of those boosted lists — i.e. it fuses the two orders that fulltext and
semantic mode would return. Multiplying the fused RRF score instead let a ×1.3 severity outweigh
any rank difference within the top 10 (RRF squeezes ranks 1..10 into a ±15 % band: 2/61 vs 2/70),
so a record both legs put first fell behind a 7th-ranked high-severity one. ``base`` keeps the
un-boosted score (the fused one of the legs' own ranks in hybrid) for ``explain``.

``feedback`` is seed 000's salience multiplier (the seed names it, not its formula; see
:func:`salience`): what the record's writer and its readers said about it — the writer's
``confidence`` and how recently an agent acknowledged using it (``last_hit``). ``explain`` reads
the same numbers and never changes the order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

RRF_K = 60
SEVERITY = {"critical": 1.4, "high": 1.3, "medium": 1.0, "low": 0.9}
SEVERITY_ORDER = {"critical": 0, "high": 1, "medium": 2, "low": 3}
PATH_BOOST = 1.25
#: salience: the most a just-acknowledged use adds, and its half-life in days
SALIENCE_USE_BOOST = 0.1
SALIENCE_HALF_LIFE_DAYS = 30.0


@dataclass
class Candidate:
    """One record on its way to the answer."""

    row: dict[str, Any]
    fts_score: float | None = None
    fts_rank: int | None = None
    similarity: float | None = None
    vector_rank: int | None = None
    match_source: str = "fts"
    base: float = 0.0
    factors: dict[str, float] = field(default_factory=dict)
    final: float = 0.0
    collapsed: list[str] = field(default_factory=list)
    replaces: list[str] = field(default_factory=list)
    #: hybrid: the ranks within each leg after the multipliers (what RRF fused)
    boosted_ranks: tuple[int | None, int | None] | None = None
    #: a successor that was no candidate itself: the superseded hit whose place and score it took
    score_from: str | None = None

    @property
    def id(self) -> str:
        return str(self.row["id"])

    @property
    def holds(self) -> bool:
        return not self.row.get("contradicted_by")


def neutral(value: float) -> float:
    """Seed 000: any non-finite factor falls back to 1."""
    return value if math.isfinite(value) else 1.0


def _days_between(earlier: str, later: str) -> float:
    a = datetime.fromisoformat(earlier.replace("Z", "+00:00"))
    b = datetime.fromisoformat(later.replace("Z", "+00:00"))
    return (b - a).total_seconds() / 86_400


def salience(row: dict[str, Any], now: str | None) -> float:
    """Seed 000's feedback multiplier, in [0.8, 1.32]; 1 for a record nobody said anything about.

    * ``confidence`` (the writer's, 0..1): ``0.8 + 0.4 * confidence`` — 0.5 is neutral, a sure
      record gains up to 20 %, a doubtful one loses up to 20 %; unset = 1.
    * use: an acknowledged hit (``last_hit``, set when an agent lists the record in ``hitIds`` or
      reads it with ``get_memory``) adds up to 10 %, halving every ``SALIENCE_HALF_LIFE_DAYS``
      days since — ``hitsBoost`` counts how often, this says how recently.
    Any value that cannot be read counts as neutral.
    """
    factor = 1.0
    conf = row.get("confidence")
    if isinstance(conf, int | float) and math.isfinite(conf):
        factor *= 0.8 + 0.4 * min(max(float(conf), 0.0), 1.0)
    last_hit = row.get("last_hit")
    if last_hit and now:
        try:
            age = max(_days_between(str(last_hit), now), 0.0)
        except ValueError:
            age = math.inf
        factor *= 1 + SALIENCE_USE_BOOST * 0.5 ** (age / SALIENCE_HALF_LIFE_DAYS)
    return neutral(factor)


def multipliers(row: dict[str, Any], path_matched: bool, now: str | None = None) -> dict[str, float]:
    """Seed 000's multipliers for one record (``now``: the moment the search is about)."""
    hits = int(row.get("hits") or 0)
    occ = int(row.get("occurrences") or 1)
    return {
        "pathPatternBoost": PATH_BOOST if path_matched else 1.0,
        "severityMultiplier": SEVERITY.get(row.get("severity") or "medium", 1.0),
        "hitsBoost": neutral(1 + min(hits, 20) * 0.02),
        "occurrencesBoost": neutral(1 + min(max(occ - 1, 0), 20) * 0.03),
        "feedbackMultiplier": salience(row, now),
    }


def fuse(cands: dict[str, Candidate], mode: str, weights: tuple[float, float]) -> None:
    """Set ``base`` per candidate for ``mode`` (weights = fulltext, semantic)."""
    wf, ws = weights
    for c in cands.values():
        if mode == "hybrid":
            c.base = (wf / (RRF_K + c.fts_rank) if c.fts_rank else 0.0) + (
                ws / (RRF_K + c.vector_rank) if c.vector_rank else 0.0
            )
        elif mode == "fulltext":
            c.base = c.fts_score or 0.0
        else:
            c.base = c.similarity or 0.0


def score(
    cands: list[Candidate],
    path_matched: set[str],
    fusion: tuple[float, float] | None = None,
    now: str | None = None,
) -> None:
    """Apply the multipliers to every candidate; ``fusion`` (hybrid weights) fuses the boosted legs."""
    for c in cands:
        c.factors = multipliers(c.row, c.id in path_matched, now)
        c.final = neutral(c.base * math.prod(c.factors.values()))
    if fusion is None:
        return
    boosted_fts = _boosted_ranks(cands, lambda c: c.fts_score, lambda c: c.fts_rank)
    boosted_vec = _boosted_ranks(cands, lambda c: c.similarity, lambda c: c.vector_rank)
    wf, ws = fusion
    for c in cands:
        rf, rv = boosted_fts.get(c.id), boosted_vec.get(c.id)
        c.boosted_ranks = (rf, rv)
        c.final = (wf / (RRF_K + rf) if rf else 0.0) + (ws / (RRF_K + rv) if rv else 0.0)


def _boosted_ranks(
    cands: list[Candidate],
    leg_score: Callable[[Candidate], float | None],
    leg_rank: Callable[[Candidate], int | None],
) -> dict[str, int]:
    """Ranks within one leg after the multipliers (ties keep the leg's own order)."""
    found = [c for c in cands if leg_rank(c)]
    found.sort(key=lambda c: (-neutral((leg_score(c) or 0.0) * math.prod(c.factors.values())), leg_rank(c)))
    return {c.id: n for n, c in enumerate(found, start=1)}


def _desc(text: str | None) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in (text or ""))


def order_key(c: Candidate, sort: str) -> tuple[Any, ...]:
    """Sort key of one candidate for ``sort`` (seed 000's orderings and tie-breaks)."""
    r = c.row
    if sort == "occurrences":
        sev = SEVERITY_ORDER.get(r.get("severity") or "medium", 2)
        return (-int(r.get("occurrences") or 1), _desc(r.get("last_seen")), sev, c.id)
    if sort == "hits":
        return (-int(r.get("hits") or 0), _desc(r.get("last_hit")), _desc(r.get("updated")), c.id)
    if sort == "updated":
        return (_desc(r.get("updated")), c.id)
    if sort in ("created_desc", "created_asc"):
        key = r.get("created") or ""
        return ((_desc(key) if sort == "created_desc" else tuple(map(ord, key))), c.id)
    return (0 if c.holds else 1, -c.final, _desc(r.get("updated")), c.id)


def explain(c: Candidate) -> dict[str, Any]:
    """Seed 000's per-hit breakdown (2 decimals; raw leg scores keep 4)."""
    out: dict[str, Any] = {
        "ftsBm25": None if c.fts_score is None else round(c.fts_score, 4),
        "ftsRank": c.fts_rank,
        "vectorSimilarity": None if c.similarity is None else round(c.similarity, 4),
        "vectorRank": c.vector_rank,
        "baseScore": round(c.base, 4),
    }
    if c.boosted_ranks is not None:
        out["ftsRankBoosted"], out["vectorRankBoosted"] = c.boosted_ranks
    out.update({k: round(v, 2) for k, v in c.factors.items()})
    out["finalScore"] = round(c.final, 4)
    if c.score_from is not None:
        out["scoreFrom"] = c.score_from
    out["contradicted"] = not c.holds
    return out
