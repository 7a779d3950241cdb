"""Arguments of the memory reading tools (pydantic at the edge only).

Apart from ``memory/tools.py`` (the tools themselves) so that a server publishes the tools'
schemas (``tools/list``) without importing the memory reader, its search and their libraries:
``memory/register.py`` names each tool body, imported on its first call.
"""

from __future__ import annotations

from typing import Any, Literal

from local_memory_shared.tooling import StrictModel
from pydantic import ConfigDict, Field

_CFG = ConfigDict(extra="forbid", frozen=True, defer_build=True)
Kind = Literal[
    "trap", "decision", "spec", "plan", "scratch", "state", "review", "log", "prompt", "session", "note"
]
Status = Literal["active", "draft", "resolved", "superseded", "archived"]


class Weights(StrictModel):
    """Hybrid weights (each in [0, 1])."""

    model_config = _CFG
    fulltext: float | None = Field(None, ge=0, le=1)
    semantic: float | None = Field(None, ge=0, le=1)


class MemorySearchParams(StrictModel):
    """Arguments of ``memory_search`` (seed 000 names and seed 004 names side by side)."""

    model_config = _CFG
    query: str | None = Field(
        None, max_length=4000, description="Plain query: hybrid (both legs). A pasted uid comes first."
    )
    semantic: str | None = Field(
        None, max_length=4000, description="Natural-language query for the vector leg."
    )
    fulltext: str | None = Field(
        None,
        max_length=4000,
        description="Keywords/phrases for BM25 (OR, stemmed, quoted phrases, AND/OR/NOT).",
    )
    mode: Literal["hybrid", "semantic", "fulltext"] | None = Field(
        None, description="Force one mode for `query`."
    )
    kinds: list[Kind] | None = None
    status: Status | None = None
    tags: list[str] | None = Field(None, description="All must match.")
    path: str | None = Field(None, description="Code path matched against each record's path globs (* ** ?).")
    tree: str | None = Field(None, description="Domain tree filter (seed 004 syntax).")
    meta: dict[str, Any] | None = Field(None, description="Metadata containment (jsonb @>).")
    metaPredicate: str | None = Field(None, description="PostgreSQL SQL/JSON path predicate over meta.")
    temporal: dict[str, Any] | None = Field(None, description="before/after/contains/overlaps/within.")
    grep: str | None = Field(
        None, description="Case-insensitive regex on content; needs a search or tree/meta/temporal."
    )
    asOf: str | None = Field(None, description="Point in time: what was true then.")
    includeExpired: bool = False
    includeScratch: bool = False
    includeSuperseded: bool = False
    crossProject: bool = False
    projectId: str | None = None
    cwd: str | None = None
    sort: Literal["relevance", "updated", "occurrences", "hits"] = "relevance"
    order_by: Literal["asc", "desc"] | None = None
    weights: Weights | None = None
    candidateLimit: int | None = Field(None, ge=1, le=1000)
    semanticThreshold: float | None = Field(None, description="Minimum cosine similarity in [0, 1].")
    limit: int | None = Field(None, ge=1, le=1000)
    offset: int = Field(0, ge=0)
    select: list[str] | None = None
    format: Literal["yaml", "json", "compact"] | None = None
    explain: bool = False
    hitIds: list[str] | None = None
    sessionId: str | None = None


class GetMemoryParams(StrictModel):
    """Arguments of ``get_memory``."""

    model_config = _CFG
    uid: str = Field(..., description="Record id (26 characters).")
    offset: int = Field(0, ge=0, description="Content offset (characters) for the next page.")
    sessionId: str | None = None


class ListParams(StrictModel):
    """Arguments of the listing tools (creation order, never similarity)."""

    model_config = _CFG
    domain: str | None = Field(None, description="Domain path; everything under it.")
    type: Kind | None = Field(None, description="must_read: kind to list.")
    projectId: str | None = None
    cwd: str | None = None
    crossProject: bool = False
    limit: int = Field(20, ge=1, le=1000)
    offset: int = Field(0, ge=0)


class TimelineParams(StrictModel):
    """Arguments of ``timeline``."""

    model_config = _CFG
    uid: str
    before: int = Field(5, ge=0, le=100)
    after: int = Field(5, ge=0, le=100)
