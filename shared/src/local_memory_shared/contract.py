"""Contract 1.2 (1.1 with the search tools' ``gap_threshold`` default 0.15): every fact a client of either server may rely on, in one place.

``scripts/manifest.py`` only reads this module (and the live tool lists) to write
``server.manifest.json``; the servers, CLIs and docs take their defaults from it. Changing a
tool's name, required params, input schema, or the envelope shape needs a ``CONTRACT_VERSION``
bump; codes are never renamed, only added.

* the contract version and each server's name and default HTTP port (indexer 8765, search 8766);
* the response envelope (:data:`ENVELOPE`, with its JSON schema and paging fields);
* every error code (:func:`error_codes`, from the exception tree in :mod:`.errors`, plus the
  HTTP-only ``UNAUTHORIZED``);
* every warning code of each server (:data:`SEARCH_WARNING_CODES`, :data:`INDEXER_WARNING_CODES`).
"""

from __future__ import annotations

from typing import Any

from .errors import LocalMemoryError

CONTRACT_VERSION = "1.2"

INDEXER_SERVER = "local-memory-indexer"
SEARCH_SERVER = "local-memory-search"
#: One default streamable-HTTP port per server, so both can run side by side.
HTTP_PORTS: dict[str, int] = {INDEXER_SERVER: 8765, SEARCH_SERVER: 8766}
INDEXER_HTTP_PORT = HTTP_PORTS[INDEXER_SERVER]
SEARCH_HTTP_PORT = HTTP_PORTS[SEARCH_SERVER]
#: The searcher's read-only status monitor web page (seed 000's port).
MONITOR_HTTP_PORT = 3124
HTTP_HOST = "127.0.0.1"
HTTP_PATH = "/mcp"
TOKEN_ENV = "LOCAL_MEMORY_HTTP_TOKEN"

# -- errors -------------------------------------------------------------------------------------

#: The HTTP transport's only error of its own: no or wrong bearer token (status 401).
UNAUTHORIZED = "UNAUTHORIZED"
UNAUTHORIZED_MEANING = "HTTP transport only: missing or wrong bearer token (401)."
#: The status monitor refuses a Host header that is not the loopback address (DNS rebinding, 403).
FORBIDDEN_HOST = "FORBIDDEN_HOST"
FORBIDDEN_HOST_MEANING = "Status monitor only: the Host header is not the loopback address (403)."


def error_codes() -> dict[str, str]:
    """Every stable error code with its meaning: the exception tree (breadth first), then UNAUTHORIZED."""
    out: dict[str, str] = {}
    stack: list[type[LocalMemoryError]] = [LocalMemoryError]
    while stack:
        cls = stack.pop(0)
        out.setdefault(cls.code, (cls.__doc__ or "").strip().splitlines()[0])
        stack.extend(cls.__subclasses__())
    out[UNAUTHORIZED] = UNAUTHORIZED_MEANING
    out[FORBIDDEN_HOST] = FORBIDDEN_HOST_MEANING
    return out


# -- warnings -----------------------------------------------------------------------------------

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
VECTORS_PENDING = "vectors_pending"

#: Every warning code the search tools emit, with what it means for the answer.
#: Memory search (contract 1.1): hit events could not reach the indexer; a quoted phrase needs positions.
HITS_NOT_RECORDED = "hits_not_recorded"
FTS_PHRASE_UNSUPPORTED = "fts_phrase_unsupported"

SEARCH_WARNING_CODES: dict[str, str] = {
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
    VECTORS_PENDING: "Part of the project is published without vectors yet (an index run publishes rows and the "
    "full-text index first, then embeds): the keyword leg covers it, the semantic leg cannot find it yet.",
    HITS_NOT_RECORDED: "Memory hits (hitIds / get_memory) could not be handed to the indexer (not running); "
    "the answer is complete, only the hit counters were not bumped.",
    FTS_PHRASE_UNSUPPORTED: "The memory full-text index has no positions: a quoted phrase matched as all of "
    "its words instead.",
}

JOB_ALREADY_RUNNING = "job_already_running"
JOB_NOT_RUNNING = "job_not_running"
NO_JOB_RECORDED = "no_job_recorded"
UNTAGGED = "untagged"
MALFORMED_RECORD_WARNING = "malformed_record"

#: Every warning code the indexer tools emit.
INDEXER_WARNING_CODES: dict[str, str] = {
    JOB_ALREADY_RUNNING: "start_indexing found a running job for the project and returned it (no second writer).",
    JOB_NOT_RUNNING: "cancel_indexing found the job already finished (or run by another process).",
    NO_JOB_RECORDED: "indexing_status found no job for the project (indexed by the CLI); the index itself is shown.",
    UNTAGGED: "memory_write stored a memory without tags: it answers only queries that quote its wording.",
    MALFORMED_RECORD_WARNING: "memory_sync found a vault file whose frontmatter does not validate (path:line given).",
}

WARNING_CODES: dict[str, dict[str, str]] = {
    INDEXER_SERVER: INDEXER_WARNING_CODES,
    SEARCH_SERVER: SEARCH_WARNING_CODES,
}

# -- the response envelope ----------------------------------------------------------------------

PAGING_FIELDS: tuple[str, ...] = ("offset", "limit", "total", "has_more", "next_offset")

_WARNING = {
    "type": "object",
    "required": ["code", "message"],
    "properties": {
        "code": {"type": "string", "description": "Stable snake_case code (see warning_codes)."},
        "message": {"type": "string"},
    },
}
_SUCCESS_SCHEMA = {
    "type": "object",
    "required": ["ok", "warnings"],
    "properties": {
        "ok": {"const": True},
        "results": {"type": "array"},
        "data": {"type": "object"},
        "warnings": {"type": "array", "items": _WARNING},
        "offset": {"type": "integer", "minimum": 0},
        "limit": {"type": "integer", "minimum": 0},
        "total": {"type": "integer", "minimum": 0},
        "has_more": {"type": "boolean"},
        "next_offset": {"type": ["integer", "null"]},
    },
}
_ERROR_SCHEMA = {
    "type": "object",
    "required": ["ok", "error", "warnings"],
    "properties": {
        "ok": {"const": False},
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "field": {"type": "string"},
                "details": {"type": "object"},
            },
        },
        "warnings": {"type": "array", "items": _WARNING},
    },
}
#: The one answer shape of every tool of both servers (published in the manifest).
ENVELOPE: dict[str, Any] = {
    "description": (
        "Every tool of both servers answers this one JSON object, as structuredContent and as the same JSON in "
        "one text content block. isError is true exactly when ok is false: only for bad arguments and hard "
        "failures. Degradation is never an error: it adds a warnings[] entry and still answers."
    ),
    "success": {
        "ok": "true",
        "results": "array — list answers (search hits, neighbours, graph edges, projects)",
        "data": "object — single-object answers (a chunk, a status, a job, a context pack)",
        "warnings": "array of {code, message}; empty when nothing degraded",
        "paging": "on paged list answers: offset, limit, total, has_more, next_offset",
    },
    "error": {
        "ok": "false",
        "error": "{code, message, field?, details?} — field is the offending argument as a dotted path "
        "(e.g. filters.file_path, fields[2]) for INVALID_ARGUMENT; details.errors lists every problem",
        "warnings": "array of {code, message}",
    },
    "paging_fields": list(PAGING_FIELDS),
    "schema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "oneOf": [_SUCCESS_SCHEMA, _ERROR_SCHEMA],
    },
}
