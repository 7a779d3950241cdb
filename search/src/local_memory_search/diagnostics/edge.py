"""The three diagnostics as tools: pydantic argument models (the edge only) and thin wrappers.

Each wrapper validates nothing itself (the registry validated ``params``), calls the plain
library function and shapes its ``{"data", "warnings"}`` answer as a ``ToolOutput``.
"""

from __future__ import annotations

from local_memory_shared.config import Settings
from pydantic import BaseModel, ConfigDict, Field

from ..api import ToolOutput
from .doctor import doctor_index
from .health import health_check
from .status import index_status

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)
_PROJECT_DESCRIPTION = (
    "Absolute path of the indexed project root (default: LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT)."
)


class HealthCheckParams(BaseModel):
    """health_check: seed 003's parameters."""

    model_config = _STRICT

    project_path: str | None = Field(None, description=_PROJECT_DESCRIPTION)
    verbose: bool = Field(
        False, description="Include capabilities (what works now, what is degraded) and diagnostics."
    )


class IndexStatusParams(BaseModel):
    """index_status: seed 003's parameters."""

    model_config = _STRICT

    project_path: str | None = Field(None, description=_PROJECT_DESCRIPTION)


class DoctorIndexParams(BaseModel):
    """doctor_index: seed 003's parameters."""

    model_config = _STRICT

    project_path: str | None = Field(None, description=_PROJECT_DESCRIPTION)
    auto_fix: bool = Field(
        False,
        description="Accepted and ignored: the searcher is read-only; findings name the indexer command to run.",
    )


def health_check_tool(params: HealthCheckParams, settings: Settings | None = None) -> ToolOutput:
    """The health_check tool."""
    out = health_check(params.project_path, verbose=params.verbose, settings=settings)
    return ToolOutput(data=out["data"], warnings=out["warnings"])


def index_status_tool(params: IndexStatusParams, settings: Settings | None = None) -> ToolOutput:
    """The index_status tool."""
    out = index_status(params.project_path, settings=settings)
    return ToolOutput(data=out["data"], warnings=out["warnings"])


def doctor_index_tool(params: DoctorIndexParams, settings: Settings | None = None) -> ToolOutput:
    """The doctor_index tool."""
    out = doctor_index(params.project_path, auto_fix=params.auto_fix, settings=settings)
    return ToolOutput(data=out["data"], warnings=out["warnings"])
