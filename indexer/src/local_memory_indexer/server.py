"""MCP server ``local-memory-indexer``: start, watch and cancel indexing; list and delete indexes.

The only process that writes. Its tools live in :data:`REGISTRY` (the shared tool layer: one
validation path, one error boundary, one result type); each body calls the library
(:mod:`.jobs`, :mod:`.projects`) with the server's :class:`JobManager` as its context.
``delete_project_index`` exists only here.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from typing import Any

from local_memory_shared.contract import (
    INDEXER_HTTP_PORT,
    INDEXER_SERVER,
    JOB_ALREADY_RUNNING,
    JOB_NOT_RUNNING,
    NO_JOB_RECORDED,
)
from local_memory_shared.envelope import warning
from local_memory_shared.errors import IndexLocked, InvalidArgument, NotFound
from local_memory_shared.heap import limit_malloc_arenas_from_settings
from local_memory_shared.mcp_adapter import build_mcp_server, run_server, transport_args
from local_memory_shared.paths import normalize_project_path
from local_memory_shared.priority import lower_indexer_priority
from local_memory_shared.tooling import StrictModel, ToolRegistry, ToolResult, ToolSpec
from mcp.server.lowlevel import Server
from pydantic import Field

from .jobs import JobManager
from .memory.tools import MEMORY_TOOLS, MemoryService, default_service, start_memory_background

log = logging.getLogger(__name__)

SERVER_NAME = INDEXER_SERVER
INSTRUCTIONS = (
    "Writer half of Local Memory. start_indexing(project_path) indexes a project in the background and "
    "returns a job id at once; poll indexing_status until status is done, then query the project with the "
    "read-only local-memory-search server. list_projects shows what is indexed; delete_project_index "
    "removes an index (the project files are never touched)."
)


def server_version() -> str:
    """Installed version of this distribution."""
    try:
        return dist_version("local-memory-indexer")
    except PackageNotFoundError:
        return "0.0.0"


# -- input models (their JSON schemas are the published contract) ------------------------------


class _Args(StrictModel):
    """Base of the indexer tools' arguments."""


class StartIndexingArgs(_Args):
    project_path: str = Field(description="Absolute path to the project root to index.")
    full: bool = Field(
        default=False,
        description="Re-parse every file instead of only changed ones (embeddings still come from the cache).",
    )


class JobRefArgs(_Args):
    project_path: str | None = Field(default=None, description="Project whose latest job to report.")
    job_id: str | None = Field(
        default=None, description="Job id returned by start_indexing (wins over project_path)."
    )


class ListProjectsArgs(_Args):
    pass


class DeleteProjectIndexArgs(_Args):
    project_path: str = Field(description="Absolute path of the project whose index to delete.")


# -- tool bodies: fn(params, jobs) -> ToolResult ---------------------------------------------------


def start_indexing(a: StartIndexingArgs, jobs: JobManager) -> ToolResult:
    """Start (or join) the background job indexing a project."""
    snap, started = jobs.start(a.project_path, full=a.full)
    warnings = []
    if not started:
        warnings.append(
            warning(JOB_ALREADY_RUNNING, f"{snap.project_path} is already being indexed by job {snap.job_id}")
        )
    return ToolResult(data={**snap.to_dict(), "started": started}, warnings=warnings)


def indexing_status(a: JobRefArgs, jobs: JobManager) -> ToolResult:
    """Phase, files done/total, chunks embedded, elapsed, ETA and errors of a job."""
    try:
        snap = jobs.status(job_id=a.job_id, project_path=a.project_path)
    except NotFound:
        if a.job_id or not a.project_path:
            raise
        # Indexed by the CLI (no job recorded): report the index itself rather than nothing.
        project = _project(jobs, a.project_path)
        if project is None:
            raise
        data = {
            "job_id": None,
            "project_path": project["project_path"],
            "status": project["status"],
            "project": project,
        }
        note = warning(NO_JOB_RECORDED, "no indexing job recorded for this project; showing its index")
        return ToolResult(data=data, warnings=[note])
    data = snap.to_dict()
    data["project"] = _project(jobs, snap.project_path)
    return ToolResult(data=data)


def cancel_indexing(a: JobRefArgs, jobs: JobManager) -> ToolResult:
    """Stop a running job at its next checkpoint; the last published index stays searchable."""
    snap, was_running = jobs.cancel(job_id=a.job_id, project_path=a.project_path, wait=3.0)
    warnings = []
    if not was_running:
        warnings.append(
            warning(JOB_NOT_RUNNING, f"job {snap.job_id} is not running here (status {snap.status})")
        )
    return ToolResult(data={**snap.to_dict(), "was_running": was_running}, warnings=warnings)


def list_projects(a: ListProjectsArgs, jobs: JobManager) -> ToolResult:
    """Every indexed project with file and chunk counts, model, dimension and last indexed time."""
    from .projects import list_projects as listed

    projects = listed(jobs.settings)
    for project in projects:
        running = jobs.running_job_for(project["project_path"])
        project["running_job_id"] = running.job_id if running else None
    return ToolResult(results=projects, extra={"total": len(projects)})


def delete_project_index(a: DeleteProjectIndexArgs, jobs: JobManager) -> ToolResult:
    """Delete a project's index (LanceDB, state DB); refused while it is being indexed."""
    from .projects import delete_project_index as delete

    try:
        resolved = str(normalize_project_path(a.project_path))
    except InvalidArgument:  # a project folder that is gone may still have an index to delete
        resolved = a.project_path
    running = jobs.running_job_for(resolved)
    if running is not None:
        raise IndexLocked(
            f"{resolved} is being indexed by job {running.job_id}; cancel_indexing first",
            field="project_path",
        )
    return ToolResult(data=delete(jobs.settings, a.project_path))


def _project(jobs: JobManager, project_path: str) -> dict[str, Any] | None:
    from .projects import list_projects as listed

    try:
        resolved = str(normalize_project_path(project_path))
    except InvalidArgument:
        return None
    return next((p for p in listed(jobs.settings) if p["project_path"] == resolved), None)


#: The five indexer tools, in publication order.
REGISTRY: ToolRegistry[JobManager] = ToolRegistry(
    [
        ToolSpec(
            "start_indexing",
            start_indexing,
            StartIndexingArgs,
            "Index (or incrementally re-index) a project in the background. Returns at once with a job_id; "
            "a project already being indexed returns its running job instead of starting a second writer.",
            read_only=False,
            title="Start indexing",
        ),
        ToolSpec(
            "indexing_status",
            indexing_status,
            JobRefArgs,
            "Progress of an indexing job (by job_id, or the latest job of project_path): status, phase, "
            "files done/total, chunks embedded, elapsed seconds, ETA and errors.",
            title="Indexing status",
        ),
        ToolSpec(
            "cancel_indexing",
            cancel_indexing,
            JobRefArgs,
            "Cancel a running indexing job (by job_id or project_path). The last published index stays searchable.",
            read_only=False,
            title="Cancel indexing",
        ),
        ToolSpec(
            "list_projects",
            list_projects,
            ListProjectsArgs,
            "Every indexed project under the data root with file and chunk counts, embedding model, "
            "dimension, status and last indexed time.",
            title="List indexed projects",
        ),
        ToolSpec(
            "delete_project_index",
            delete_project_index,
            DeleteProjectIndexArgs,
            "Delete a project's index (vectors, state, graph). The project's own files are never touched. "
            "Only the indexer can do this.",
            read_only=False,
            destructive=True,
            title="Delete a project's index",
        ),
    ]
)


def _on_memory_service(spec: ToolSpec[MemoryService]) -> ToolSpec[JobManager]:
    """A memory tool run with the process's memory service (the registry's context is the job manager)."""

    def run(params: Any, _jobs: JobManager) -> ToolResult:
        return spec.fn(params, default_service())

    # dataclasses.replace would keep ToolSpec[MemoryService]; rebuild with the job-manager context instead.
    fields: dict[str, Any] = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)}
    fields["fn"] = run
    return ToolSpec[JobManager](**fields)


# The agent-memory write tools (contract 1.1, additive) follow the five indexing tools.
for _spec in MEMORY_TOOLS:
    REGISTRY.register(_on_memory_service(_spec))


def build_server(jobs: JobManager | None = None) -> Server[Any]:
    """The indexer MCP server (used by ``main`` and by in-process tests)."""
    manager = jobs or JobManager()
    return build_mcp_server(SERVER_NAME, server_version(), INSTRUCTIONS, REGISTRY, lambda: manager)


def main(http: bool = False, port: int = INDEXER_HTTP_PORT, token: str | None = None) -> None:
    """Run ``local-memory-indexer``: stdio by default, streamable HTTP on 127.0.0.1 with ``http=True``."""
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
        )
    limit_malloc_arenas_from_settings()  # also when started as ``python -m …server`` (see cli.main)
    lower_indexer_priority()  # before any thread starts: searches come first (shared.priority)
    jobs = JobManager()
    start_memory_background()
    try:
        run_server(build_server(jobs), http=http, port=port, token=token)
    finally:
        jobs.shutdown()


if __name__ == "__main__":
    _http, _port, _token = transport_args("python -m local_memory_indexer.server", INDEXER_HTTP_PORT)
    main(http=_http, port=_port, token=_token)
