"""The three diagnostics as tools: thin wrappers (their argument models are in ``params``).

Each wrapper validates nothing itself (the registry validated ``params``), calls the plain
library function and shapes its ``{"data", "warnings"}`` answer as a ``ToolOutput``.
"""

from __future__ import annotations

from local_memory_shared.config import Settings

from ..api import ToolOutput
from ..params import DoctorIndexParams, HealthCheckParams, IndexStatusParams
from .doctor import doctor_index
from .health import health_check
from .status import index_status


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
