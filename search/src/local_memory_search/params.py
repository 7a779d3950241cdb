"""Arguments of every search tool, with seed 003's defaults and bounds (pydantic at the edge only).

Every model is a :class:`~local_memory_shared.tooling.StrictModel` (no ``"10"`` for an integer,
no unknown keys) validated by the one path, :func:`local_memory_shared.tooling.validate_args`:
a failure is ``InvalidArgument`` whose ``field`` is the dotted path of the offending argument,
e.g. ``filters.file_path`` or ``fields[2]``. Library code never sees these models: the tool
layer turns them into frozen dataclasses (:meth:`Filters.to_spec`, ``api.Shape``…).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from local_memory_shared.schema import CHUNK_FIELDS
from local_memory_shared.tooling import NotBlank, StrictModel
from local_memory_shared.tooling import validate_args as validate
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .ranking import DEFAULT_ALPHA, DEFAULT_GAP_THRESHOLD, DEFAULT_RECENCY_WEIGHT, DEFAULT_RRF_K

__all__ = ["validate"]  # plus the models below

#: Extra per-hit fields a search result carries beside the chunk's own.
RESULT_EXTRA_FIELDS: tuple[str, ...] = ("score",)
SELECTABLE_FIELDS: tuple[str, ...] = CHUNK_FIELDS + RESULT_EXTRA_FIELDS
#: The eight filter keys of seed 003, exactly.
FILTER_KEYS: tuple[str, ...] = (
    "language",
    "file_extensions",
    "path_prefix",
    "updated_after",
    "tags",
    "class_name",
    "function_name",
    "last_commit_hash",
)

MAX_QUERY_CHARS = 4000
MAX_OFFSET = 1000
MAX_MAX_CHARS = 1_000_000


class Filters(StrictModel):
    """Pre-filters applied to both legs before ranking; any other key is rejected."""

    language: str | None = Field(None, min_length=1, description="Language tag, e.g. python, typescript.")
    file_extensions: list[str] | None = Field(
        None, min_length=1, description='Extensions without the dot, e.g. ["ts", "py"].'
    )
    path_prefix: str | None = Field(
        None, min_length=1, description="Repo-relative path prefix, e.g. src/api/."
    )
    updated_after: str | None = Field(None, description="ISO 8601 datetime; keep chunks updated after it.")
    tags: list[str] | None = Field(None, min_length=1, description="Keep chunks carrying any of these tags.")
    class_name: str | None = Field(None, min_length=1, description="Exact class name.")
    function_name: str | None = Field(None, min_length=1, description="Exact function/method name.")
    last_commit_hash: str | None = Field(None, min_length=1, description="Exact git commit hash.")

    @field_validator("file_extensions")
    @classmethod
    def _strip_dots(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        out = [v.strip().lstrip(".").lower() for v in value]
        if any(not v for v in out):
            raise ValueError("extensions must be non-empty, e.g. 'py'")
        return out

    @field_validator("path_prefix")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.replace("\\", "/")
        while value.startswith("./"):
            value = value[2:]
        if value.startswith("/"):
            raise ValueError("path_prefix is repo-relative (no leading '/')")
        return value

    @field_validator("updated_after")
    @classmethod
    def _iso(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError as exc:
            raise ValueError(f"not an ISO 8601 datetime: {value!r}") from exc
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        # Stored updated_at values are UTC "YYYY-MM-DDTHH:MM:SSZ", which compare correctly as text.
        return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


#: A chunk field name an agent may select (an enum in the JSON schema).
FieldName = Literal[SELECTABLE_FIELDS]  # type: ignore[valid-type]


class _Base(StrictModel):
    project_path: str | None = Field(
        None,
        description="Absolute path of the indexed project root (default: LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT, then cwd).",
    )


class _Shaping(_Base):
    fields: list[FieldName] | None = Field(
        None, description="Include only these chunk fields (chunk_id and score always)."
    )
    exclude_fields: list[FieldName] | None = Field(
        None, description="Omit these fields from the default set."
    )
    summary_only: bool = Field(False, description="Return summaries only; omit chunk text.")


class SearchParams(_Shaping):
    """Arguments shared by search_hybrid, search_semantic and search_keyword."""

    query: NotBlank = Field(
        ...,
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="Identifiers, keywords or natural language.",
    )
    limit: int = Field(10, ge=1, le=50, description="Max results (1-50).")
    offset: int = Field(0, ge=0, le=MAX_OFFSET, description="Skip N results (pagination).")
    max_chars: int = Field(
        800, ge=0, le=MAX_MAX_CHARS, description="Truncate each chunk text (0 = no truncation)."
    )
    filters: Filters | None = Field(
        None, description="Pre-filter hits before ranking (exactly the 8 keys of seed 003)."
    )
    recency_weight: float = Field(
        DEFAULT_RECENCY_WEIGHT, ge=0.0, le=1.0, description="Recency boost weight; 0 disables."
    )
    gap_threshold: float = Field(
        DEFAULT_GAP_THRESHOLD,
        ge=0.0,
        le=1.0,
        description="Drop hits scoring below this fraction of the top hit.",
    )
    cache_bust: bool = Field(False, description="Bypass the result cache.")


class SearchHybridParams(SearchParams):
    """search_hybrid: SearchParams plus the fusion knobs."""

    alpha: float = Field(
        DEFAULT_ALPHA,
        ge=0.0,
        le=1.0,
        description="RRF semantic weight (0 = keyword-only, 1 = semantic-only).",
    )
    rrf_k: int = Field(DEFAULT_RRF_K, ge=1, le=1000, description="RRF k constant.")


class SearchSemanticParams(SearchParams):
    """search_semantic: pure vector search."""


class SearchKeywordParams(SearchParams):
    """search_keyword: pure BM25 search."""


class GetChunkParams(_Base):
    """get_chunk: one chunk by stable id."""

    chunk_id: str = Field(..., min_length=1, description="Stable chunk id from a search result.")
    fields: list[FieldName] | None = Field(None, description="Include only these chunk fields.")
    max_chars: int = Field(0, ge=0, le=MAX_MAX_CHARS, description="Truncate the text (0 = no truncation).")


class ReadChunkNeighborsParams(_Base):
    """read_chunk_neighbors: chunks before/after one chunk in its file."""

    chunk_id: str = Field(..., min_length=1, description="Stable chunk id.")
    before: int = Field(2, ge=0, le=5, description="Chunks before (max 5).")
    after: int = Field(2, ge=0, le=5, description="Chunks after (max 5).")
    max_chars: int = Field(0, ge=0, le=MAX_MAX_CHARS, description="Truncate each text (0 = no truncation).")


class SearchSimilarParams(_Shaping):
    """search_similar: chunks near a file's (or one function's) stored vector."""

    file_path: str = Field(..., min_length=1, description="Repo-relative path of the seed file.")
    function_name: str | None = Field(
        None, min_length=1, description="Restrict the seed to this function/method."
    )
    limit: int = Field(10, ge=1, le=50, description="Max results (1-50).")
    offset: int = Field(0, ge=0, le=MAX_OFFSET, description="Skip N results (pagination).")
    filters: Filters | None = Field(None, description="Pre-filter hits (the 8 keys of seed 003).")
    max_chars: int = Field(
        800, ge=0, le=MAX_MAX_CHARS, description="Truncate each chunk text (0 = no truncation)."
    )
    cache_bust: bool = Field(False, description="Bypass the result cache.")


class ExplainMatchParams(_Base):
    """explain_match: the score breakdown search_hybrid computed for one result."""

    query: NotBlank = Field(
        ..., min_length=1, max_length=MAX_QUERY_CHARS, description="The query that returned the result."
    )
    result_id: str = Field(..., min_length=1, description="chunk_id to explain.")
    alpha: float = Field(DEFAULT_ALPHA, ge=0.0, le=1.0, description="RRF semantic weight used by the search.")
    verbosity: Literal["compact", "full"] = Field("compact", description="compact | full.")
    rrf_k: int = Field(DEFAULT_RRF_K, ge=1, le=1000, description="RRF k constant used by the search.")
    recency_weight: float = Field(
        DEFAULT_RECENCY_WEIGHT, ge=0.0, le=1.0, description="Recency weight used by the search."
    )
    gap_threshold: float = Field(
        DEFAULT_GAP_THRESHOLD, ge=0.0, le=1.0, description="Gap threshold used by the search."
    )
    filters: Filters | None = Field(None, description="Filters used by the search.")


# -- the tools of other modules (published by tools/list without importing those modules) ------

TruncateStrategy = Literal["middle", "tail", "head"]


class ContextPackParams(StrictModel):
    """retrieve_context_pack: seed 003's parameters, defaults and bounds."""

    query: str = Field(..., min_length=1, max_length=MAX_QUERY_CHARS, description="Search query.")
    project_path: str | None = Field(
        None,
        description="Absolute path of the indexed project root (default: LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT).",
    )
    max_files: int = Field(8, ge=1, le=50, description="Max distinct files in the pack.")
    max_chars: int = Field(
        12000,
        ge=1,
        le=1_000_000,
        description="Total character budget for the whole pack (headers and fences included).",
    )
    include_neighbors: bool = Field(True, description="Append adjacent chunks of each hit's file.")
    neighbor_hops: int = Field(1, ge=0, le=3, description="Neighbour expansion depth in chunks (0-3).")
    rerank: bool = Field(False, description="Re-rank candidates with the Ollama LLM (RERANK_MODEL).")
    truncate_strategy: TruncateStrategy = Field(
        "middle",
        description="Which part of an over-long excerpt is cut: middle (keep head+tail), tail, or head.",
    )
    filters: Filters | None = Field(None, description="Pre-filter hits (the 8 keys of seed 003).")
    alpha: float = Field(DEFAULT_ALPHA, ge=0.0, le=1.0, description="RRF semantic weight (0 = keyword-only).")

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must not be blank")
        return value


_DIAGNOSTICS = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)
_DIAGNOSTICS_PROJECT = (
    "Absolute path of the indexed project root (default: LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT)."
)


class HealthCheckParams(BaseModel):
    """health_check: seed 003's parameters."""

    model_config = _DIAGNOSTICS

    project_path: str | None = Field(None, description=_DIAGNOSTICS_PROJECT)
    verbose: bool = Field(
        False, description="Include capabilities (what works now, what is degraded) and diagnostics."
    )


class IndexStatusParams(BaseModel):
    """index_status: seed 003's parameters."""

    model_config = _DIAGNOSTICS

    project_path: str | None = Field(None, description=_DIAGNOSTICS_PROJECT)


class DoctorIndexParams(BaseModel):
    """doctor_index: seed 003's parameters."""

    model_config = _DIAGNOSTICS

    project_path: str | None = Field(None, description=_DIAGNOSTICS_PROJECT)
    auto_fix: bool = Field(
        False,
        description="Accepted and ignored: the searcher is read-only; findings name the indexer command to run.",
    )
