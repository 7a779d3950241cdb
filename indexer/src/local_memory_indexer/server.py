"""MCP server ``local-memory-indexer``: start, watch and cancel indexing; list and delete indexes.

The only process that writes. Tools validate, call the library (:mod:`.jobs`, :mod:`.projects`)
and answer the contract-1.0 envelope; ``delete_project_index`` exists only here.
"""

from __future__ import annotations

import logging
import sys
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from typing import Any

from local_memory_shared.envelope import ok, warning
from local_memory_shared.errors import IndexLocked, InvalidArgument, NotFound
from local_memory_shared.mcp_adapter import EnvelopeServer, ToolDef, run_server, transport_args, validate_args
from local_memory_shared.paths import normalize_project_path
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from .jobs import JobManager
from .memory.tools import default_service, memory_tool_defs, start_memory_background

log = logging.getLogger(__name__)

SERVER_NAME = "local-memory-indexer"
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


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


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


# -- tool bodies --------------------------------------------------------------------------------


class IndexerTools:
    """The indexer's tool bodies over one :class:`JobManager`."""

    def __init__(self, jobs: JobManager | None = None):
        self.jobs = jobs or JobManager()

    def start_indexing(self, args: dict[str, Any]) -> dict[str, Any]:
        """Start (or join) the background job indexing a project."""
        a = validate_args(StartIndexingArgs, args)
        snap, started = self.jobs.start(a.project_path, full=a.full)
        warnings = []
        if not started:
            warnings.append(
                warning(
                    "job_already_running",
                    f"{snap.project_path} is already being indexed by job {snap.job_id}",
                )
            )
        return ok(data={**snap.to_dict(), "started": started}, warnings=warnings)

    def indexing_status(self, args: dict[str, Any]) -> dict[str, Any]:
        """Phase, files done/total, chunks embedded, elapsed, ETA and errors of a job."""
        a = validate_args(JobRefArgs, args)
        try:
            snap = self.jobs.status(job_id=a.job_id, project_path=a.project_path)
        except NotFound:
            if a.job_id or not a.project_path:
                raise
            # Indexed by the CLI (no job recorded): report the index itself rather than nothing.
            project = self._project(a.project_path)
            if project is None:
                raise
            return ok(
                data={
                    "job_id": None,
                    "project_path": project["project_path"],
                    "status": project["status"],
                    "project": project,
                },
                warnings=[
                    warning("no_job_recorded", "no indexing job recorded for this project; showing its index")
                ],
            )
        data = snap.to_dict()
        data["project"] = self._project(snap.project_path)
        return ok(data=data)

    def cancel_indexing(self, args: dict[str, Any]) -> dict[str, Any]:
        """Stop a running job at its next checkpoint; the last published index stays searchable."""
        a = validate_args(JobRefArgs, args)
        snap, was_running = self.jobs.cancel(job_id=a.job_id, project_path=a.project_path, wait=3.0)
        warnings = []
        if not was_running:
            warnings.append(
                warning("job_not_running", f"job {snap.job_id} is not running here (status {snap.status})")
            )
        return ok(data={**snap.to_dict(), "was_running": was_running}, warnings=warnings)

    def list_projects(self, args: dict[str, Any]) -> dict[str, Any]:
        """Every indexed project with file and chunk counts, model, dimension and last indexed time."""
        validate_args(ListProjectsArgs, args)
        from .projects import list_projects

        projects = list_projects(self.jobs.settings)
        for project in projects:
            running = self.jobs.running_job_for(project["project_path"])
            project["running_job_id"] = running.job_id if running else None
        return ok(results=projects, total=len(projects))

    def delete_project_index(self, args: dict[str, Any]) -> dict[str, Any]:
        """Delete a project's index (LanceDB, state DB); refused while it is being indexed."""
        a = validate_args(DeleteProjectIndexArgs, args)
        from .projects import delete_project_index

        try:
            resolved = str(normalize_project_path(a.project_path))
        except InvalidArgument:  # a project folder that is gone may still have an index to delete
            resolved = a.project_path
        running = self.jobs.running_job_for(resolved)
        if running is not None:
            raise IndexLocked(
                f"{resolved} is being indexed by job {running.job_id}; cancel_indexing first",
                field="project_path",
            )
        return ok(data=delete_project_index(self.jobs.settings, a.project_path))

    def _project(self, project_path: str) -> dict[str, Any] | None:
        from .projects import list_projects

        try:
            resolved = str(normalize_project_path(project_path))
        except InvalidArgument:
            return None
        return next((p for p in list_projects(self.jobs.settings) if p["project_path"] == resolved), None)

    def tool_defs(self) -> list[ToolDef]:
        """The five indexer tools with their contracts."""

        def ann(
            title: str, *, read_only: bool, destructive: bool = False, idempotent: bool = False
        ) -> ToolAnnotations:
            return ToolAnnotations(
                title=title,
                read_only_hint=read_only,
                destructive_hint=destructive,
                idempotent_hint=idempotent,
                open_world_hint=False,
            )

        return [
            ToolDef(
                "start_indexing",
                "Index (or incrementally re-index) a project in the background. Returns at once with a job_id; "
                "a project already being indexed returns its running job instead of starting a second writer.",
                StartIndexingArgs.model_json_schema(),
                ann("Start indexing", read_only=False, idempotent=True),
                self.start_indexing,
            ),
            ToolDef(
                "indexing_status",
                "Progress of an indexing job (by job_id, or the latest job of project_path): status, phase, "
                "files done/total, chunks embedded, elapsed seconds, ETA and errors.",
                JobRefArgs.model_json_schema(),
                ann("Indexing status", read_only=True, idempotent=True),
                self.indexing_status,
            ),
            ToolDef(
                "cancel_indexing",
                "Cancel a running indexing job (by job_id or project_path). The last published index stays searchable.",
                JobRefArgs.model_json_schema(),
                ann("Cancel indexing", read_only=False, idempotent=True),
                self.cancel_indexing,
            ),
            ToolDef(
                "list_projects",
                "Every indexed project under the data root with file and chunk counts, embedding model, "
                "dimension, status and last indexed time.",
                ListProjectsArgs.model_json_schema(),
                ann("List indexed projects", read_only=True, idempotent=True),
                self.list_projects,
            ),
            ToolDef(
                "delete_project_index",
                "Delete a project's index (vectors, state, graph). The project's own files are never touched. "
                "Only the indexer can do this.",
                DeleteProjectIndexArgs.model_json_schema(),
                ann("Delete a project's index", read_only=False, destructive=True, idempotent=True),
                self.delete_project_index,
            ),
        ]


def build_server(jobs: JobManager | None = None) -> EnvelopeServer:
    """The indexer MCP server (used by ``main`` and by in-process tests)."""
    tools = IndexerTools(jobs)
    return EnvelopeServer(
        SERVER_NAME, server_version(), INSTRUCTIONS, tools.tool_defs() + memory_tool_defs(default_service())
    )


def main(http: bool = False, port: int = 8765, token: str | None = None) -> None:
    """Run ``local-memory-indexer``: stdio by default, streamable HTTP on 127.0.0.1 with ``http=True``."""
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
        )
    jobs = JobManager()
    start_memory_background()
    try:
        run_server(build_server(jobs), http=http, port=port, token=token)
    finally:
        jobs.shutdown()


if __name__ == "__main__":
    _http, _port, _token = transport_args("python -m local_memory_indexer.server")
    main(http=_http, port=_port, token=_token)
