"""Stable warning codes of the searcher: degradation is never an error, it is one of these.

Each code is part of the frozen contract (never rename one). The cascade of seed 003:
index lock → brute-force ANN → FTS → SQLite LIKE; embedding down → keyword-only (alpha = 0);
LanceDB missing → SQLite fallback.
"""

from __future__ import annotations

from local_memory_shared.envelope import warning

INDEX_BUILDING = "index_building"
INDEX_UPDATING = "index_updating"
INDEX_INCOMPLETE = "index_incomplete"
INDEX_PROVENANCE_INFERRED = "index_provenance_inferred"
INDEX_PROVENANCE_UNKNOWN = "index_provenance_unknown"
SCHEMA_VERSION_MISMATCH = "schema_version_mismatch"
ANN_INDEX_UNUSABLE = "ann_index_unusable"
VECTOR_LEG_UNAVAILABLE = "vector_leg_unavailable"
EMBEDDING_UNAVAILABLE = "embedding_unavailable"
QUERY_DIMENSION_MISMATCH = "query_dimension_mismatch"
FTS_UNAVAILABLE = "fts_unavailable"
LANCE_MISSING = "lance_missing"
LANCE_UNAVAILABLE = "lance_unavailable"
NO_MATCHES = "no_matches"
PAGE_EMPTY = "page_empty"
RERANK_UNAVAILABLE = "rerank_unavailable"

#: Every warning code the search tools emit, with what it means for the answer.
WARNING_CODES: dict[str, str] = {
    INDEX_BUILDING: "The project's first index is still running: results cover only what is published so far.",
    INDEX_UPDATING: "An index run is in progress; results come from the last published version.",
    INDEX_INCOMPLETE: "The last index run stopped before it finished (no indexer is running): results cover only "
    "what it published. The next index run completes and repairs it.",
    INDEX_PROVENANCE_INFERRED: "No index_meta row: the query encoder was inferred from the vector dimension.",
    INDEX_PROVENANCE_UNKNOWN: "Neither index_meta nor a known vector dimension: the semantic leg was skipped.",
    SCHEMA_VERSION_MISMATCH: "The index was written with another schema version; re-index the project.",
    ANN_INDEX_UNUSABLE: "The vector (ANN) index failed; an exact brute-force vector scan answered instead.",
    VECTOR_LEG_UNAVAILABLE: "Vector search failed; results come from the keyword leg only.",
    EMBEDDING_UNAVAILABLE: "The index's embedding backend is unreachable; keyword-only search (alpha = 0).",
    QUERY_DIMENSION_MISMATCH: "The query vector's dimension differs from the index's; the semantic leg was skipped.",
    FTS_UNAVAILABLE: "The full-text (BM25) index is missing or failed; SQLite LIKE over the chunk mirror answered.",
    LANCE_MISSING: "The LanceDB folder is missing; every answer comes from the SQLite chunk mirror.",
    LANCE_UNAVAILABLE: "LanceDB could not be opened at the published version; SQLite chunk mirror fallback.",
    NO_MATCHES: "The index is healthy but nothing matched this query (and filters).",
    PAGE_EMPTY: "The offset is past the last result.",
    RERANK_UNAVAILABLE: "The LLM re-ranker (Ollama) could not answer; results keep their retrieval order.",
}

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
    }
)


def warn(code: str, detail: str = "") -> dict[str, str]:
    """A ``warnings[]`` entry for ``code``; ``detail`` says what happened this time."""
    base = WARNING_CODES[code]
    return warning(code, f"{base} {detail}".strip())
