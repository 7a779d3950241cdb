"""Ranking metrics with one relevant answer per query (binary relevance), as CoSQA scores them.

Each query yields the 1-based rank of its first relevant result (``None`` when it is not in the
returned list). nDCG@k with one relevant item is ``1 / log2(rank + 1)``; MRR@k is ``1 / rank``;
Recall@k is whether rank ≤ k. A query with several labelled answers (hand-written questions)
counts its best-ranked answer, so every metric stays in [0, 1].
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

#: Recall cut-offs reported for every method; @100 only where the method returned 100 results.
RECALL_KS = (1, 5, 10, 100)


def first_relevant_rank(ranked: Sequence[T], is_relevant: Callable[[T], bool]) -> int | None:
    """1-based rank of the first item for which ``is_relevant`` holds, else None."""
    for i, item in enumerate(ranked, start=1):
        if is_relevant(item):
            return i
    return None


def score_ranks(ranks: Iterable[int | None], *, depth: int) -> dict[str, float]:
    """nDCG@10, MRR@10 and Recall@k (k ≤ depth) averaged over queries, plus the query count."""
    ranks = list(ranks)
    n = len(ranks)
    if n == 0:
        return {"queries": 0}
    out: dict[str, float] = {
        "ndcg@10": sum(1.0 / math.log2(r + 1) for r in ranks if r is not None and r <= 10) / n,
        "mrr@10": sum(1.0 / r for r in ranks if r is not None and r <= 10) / n,
    }
    for k in RECALL_KS:
        if k <= depth:
            out[f"recall@{k}"] = sum(1 for r in ranks if r is not None and r <= k) / n
    out = {key: round(value, 4) for key, value in out.items()}
    out["queries"] = n
    return out


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/mean/max of latency samples in milliseconds (nearest-rank percentiles)."""
    if not samples_ms:
        return {"n": 0}
    ordered = sorted(samples_ms)

    def pick(p: float) -> float:
        idx = max(0, math.ceil(p / 100.0 * len(ordered)) - 1)
        return round(ordered[idx], 2)

    return {
        "n": len(ordered),
        "p50": pick(50),
        "p95": pick(95),
        "p99": pick(99),
        "mean": round(statistics.fmean(ordered), 2),
        "max": round(ordered[-1], 2),
    }
