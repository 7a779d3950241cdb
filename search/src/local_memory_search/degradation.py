"""Stable warning codes of the searcher: degradation is never an error, it is one of these.

The codes and their meanings are owned by :mod:`local_memory_shared.contract` (never rename
one); this module re-exports them under short names and says which ones mark a degraded answer.
The cascade of seed 003: index lock → brute-force ANN → FTS → SQLite LIKE; embedding down →
keyword-only (alpha = 0); LanceDB missing → SQLite fallback.
"""

from __future__ import annotations

from local_memory_shared.contract import (
    ANN_INDEX_UNUSABLE,
    EMBEDDING_UNAVAILABLE,
    FTS_UNAVAILABLE,
    INDEX_BUILDING,
    INDEX_INCOMPLETE,
    INDEX_PROVENANCE_INFERRED,
    INDEX_PROVENANCE_UNKNOWN,
    INDEX_UPDATING,
    LANCE_MISSING,
    LANCE_UNAVAILABLE,
    NO_MATCHES,
    PAGE_EMPTY,
    QUERY_DIMENSION_MISMATCH,
    RERANK_UNAVAILABLE,
    SCHEMA_VERSION_MISMATCH,
    VECTOR_LEG_UNAVAILABLE,
    VECTORS_PENDING,
)
from local_memory_shared.contract import SEARCH_WARNING_CODES as WARNING_CODES
from local_memory_shared.envelope import warning

__all__ = [
    "ANN_INDEX_UNUSABLE",
    "DEGRADED",
    "EMBEDDING_UNAVAILABLE",
    "FTS_UNAVAILABLE",
    "INDEX_BUILDING",
    "INDEX_INCOMPLETE",
    "INDEX_PROVENANCE_INFERRED",
    "INDEX_PROVENANCE_UNKNOWN",
    "INDEX_UPDATING",
    "LANCE_MISSING",
    "LANCE_UNAVAILABLE",
    "NO_MATCHES",
    "PAGE_EMPTY",
    "QUERY_DIMENSION_MISMATCH",
    "RERANK_UNAVAILABLE",
    "SCHEMA_VERSION_MISMATCH",
    "VECTORS_PENDING",
    "VECTOR_LEG_UNAVAILABLE",
    "WARNING_CODES",
    "warn",
]

#: Codes that describe a degraded answer (such answers are never cached).
DEGRADED: frozenset[str] = frozenset(
    {
        INDEX_BUILDING,
        INDEX_INCOMPLETE,
        INDEX_PROVENANCE_UNKNOWN,
        ANN_INDEX_UNUSABLE,
        VECTOR_LEG_UNAVAILABLE,
        EMBEDDING_UNAVAILABLE,
        QUERY_DIMENSION_MISMATCH,
        FTS_UNAVAILABLE,
        LANCE_MISSING,
        LANCE_UNAVAILABLE,
        VECTORS_PENDING,
    }
)


def warn(code: str, detail: str = "") -> dict[str, str]:
    """A ``warnings[]`` entry for ``code``; ``detail`` says what happened this time."""
    base = WARNING_CODES[code]
    return warning(code, f"{base} {detail}".strip())
