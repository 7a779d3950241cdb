"""Memory write tools of the ``local-memory-indexer`` MCP server: pydantic params + plain functions.

:class:`MemoryService` owns one :class:`MemoryWriter` (created on first use: it loads the
embedder), the hit channel socket and a background loop that flushes hit counters and picks up
hand edits. ``MEMORY_TOOLS`` are their :class:`ToolSpec` entries, registered by the indexer server.
"""

from __future__ import annotations

import atexit
import logging
import threading
from typing import Any

from local_memory_shared.config import load_memory_settings
from local_memory_shared.contract import MALFORMED_RECORD_WARNING, UNTAGGED
from local_memory_shared.envelope import warning
from local_memory_shared.memory.model import KINDS, SEVERITIES, STATUSES, project_for_cwd, project_slug
from local_memory_shared.memory.schema import memory_paths
from local_memory_shared.tooling import StrictModel, ToolResult, ToolSpec
from pydantic import Field

from .channel import HitChannel
from .hits import flush_hits, record_hits
from .sync import malformed_files, sync_vault
from .writer import MemoryWriter

log = logging.getLogger(__name__)
#: Seconds between two hand-edit scans of the vault by a running server.
WATCH_SECONDS = 5.0


class _Args(StrictModel):
    """Base of the memory tools' arguments (the one strict edge model)."""


class RecordFields(_Args):
    """Fields of a new record (shared by write and supersede)."""

    title: str = Field(description="One line naming the memory (FTS weight 1.5).")
    content: str = Field(default="", description="Markdown body.")
    tags: list[str] = Field(default_factory=list, description="Synonyms the body does not use (weight 0.8).")
    domain: str | None = Field(default=None, description="Tree path such as /acme/api (seed 004 'tree').")
    also: list[str] = Field(default_factory=list, description="Other domains the record belongs to.")
    paths: list[str] = Field(default_factory=list, description="Globs of code paths the record is about.")
    severity: str | None = Field(default=None, description=f"One of {', '.join(SEVERITIES)}.")
    confidence: float | None = Field(default=None, description="0..1.")
    meta: dict[str, Any] | None = Field(default=None, description="Free JSON object.")
    valid_from: str | None = Field(default=None, description="Start of the temporal range (ISO 8601).")
    valid_to: str | None = Field(default=None, description="End of the temporal range (ISO 8601).")
    expires: str | None = Field(default=None, description="Expiry (scratch/review get a default one).")
    created_by: str | None = Field(default=None, description="Agent or person writing it.")
    links: list[str] = Field(default_factory=list, description="Ids of related records.")
    status: str | None = Field(default=None, description=f"One of {', '.join(STATUSES)} (default active).")


class WriteArgs(RecordFields):
    kind: str = Field(description=f"One of {', '.join(KINDS)}.")
    project: str | None = Field(default=None, description="Project name; default: resolved from cwd.")
    cwd: str | None = Field(default=None, description="Working directory used to resolve the project.")


class Section(_Args):
    heading: str = Field(description="Title of the Markdown section to replace (any level).")
    content: str = Field(description="New body of that section.")


class EditArgs(_Args):
    id: str = Field(description="Record id.")
    append: str | None = Field(default=None, description="Markdown appended to the body.")
    replace_section: Section | None = Field(default=None, description="Replace one section's body.")
    set_fields: dict[str, Any] | None = Field(
        default=None, description="Fields to set (title, tags, meta, ...)."
    )
    expected_version: int | None = Field(
        default=None, description="Fail with VERSION_CONFLICT unless current."
    )


class SupersedeArgs(RecordFields):
    old_id: str = Field(description="Id of the record being replaced (kept, gets succeeded_by).")
    expected_version: int | None = Field(default=None, description="Version of old_id you read.")


class StatusArgs(_Args):
    id: str = Field(description="Record id.")
    status: str = Field(description=f"One of {', '.join(STATUSES)}.")
    expected_version: int | None = Field(default=None)


class ArchiveArgs(_Args):
    id: str = Field(description="Record id.")
    expected_version: int | None = Field(default=None)


class HitsArgs(_Args):
    ids: list[str] = Field(description="Record ids the agent actually used.")
    session_id: str | None = Field(default=None, description="Counts each record once per session (7 days).")


class SyncArgs(_Args):
    pass


class MemoryService:
    """The writer, the hit channel and the background loop of one running indexer."""

    def __init__(self) -> None:
        self.settings = load_memory_settings()
        self.paths = memory_paths(self.settings.data_root, self.settings.vault)
        self._writer: MemoryWriter | None = None
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._started = False
        self.channel = HitChannel(self.paths.socket, self._hits_sink)

    def start(self) -> None:
        """Serve the hit channel and run the background loop (a running MCP server / ``serve``)."""
        if self._started:
            return
        self._started = True
        try:
            self.channel.start()
        except OSError as exc:
            log.warning(
                "hit channel %s not started (%s); hits only via memory_record_hits", self.paths.socket, exc
            )
        threading.Thread(target=self._loop, name="memory-background", daemon=True).start()
        atexit.register(self.close)

    @property
    def writer(self) -> MemoryWriter:
        with self._mutex:
            if self._writer is None:
                self._writer = MemoryWriter(self.settings)
            return self._writer

    def _hits_sink(self, ids: list[str], session_id: str | None) -> dict[str, Any]:
        return record_hits(self.writer, ids, session_id)

    def _loop(self) -> None:
        waited = 0.0
        while not self._stop.wait(WATCH_SECONDS):
            waited += WATCH_SECONDS
            try:
                if self._writer is None and not (self.paths.vault / "projects").is_dir():
                    continue
                sync_vault(self.writer)
                if waited >= self.settings.hit_flush_seconds:
                    waited = 0.0
                    flush_hits(self.writer)
            except Exception:  # the loop must survive anything; the next round retries
                log.exception("memory background round failed")

    def close(self) -> None:
        self._stop.set()
        self.channel.close()
        with self._mutex:
            if self._writer is not None:
                self._writer.close()
                self._writer = None

    def malformed(self) -> list[dict[str, Any]]:
        return malformed_files(self.writer)


_default: MemoryService | None = None


def default_service() -> MemoryService:
    """The process's memory service (the server's tools and its background share it)."""
    global _default
    if _default is None or _default.settings != load_memory_settings():  # tests switch data roots
        _default = MemoryService()
    return _default


def start_memory_background() -> None:
    """Called by the indexer server's ``main``: hit channel + flush/watch loop while it runs."""
    default_service().start()


# -- tool bodies: fn(params, service) -> ToolResult ------------------------------------------------


def memory_write(a: WriteArgs, service: MemoryService) -> ToolResult:
    """Write a record; answers uid, tags indexed and the most similar existing records."""
    values = a.model_dump(exclude_none=True, exclude={"cwd"})
    values["project"] = project_slug(a.project) if a.project else project_for_cwd(a.cwd or ".")
    result = service.writer.write(values)
    warnings = []
    if not result.record.tags:
        warnings.append(warning(UNTAGGED, "no tags: this memory answers only queries that quote its wording"))
    return ToolResult(data=result.to_dict(), warnings=warnings)


def memory_edit(a: EditArgs, service: MemoryService) -> ToolResult:
    """Append, replace a section, or set fields (optimistic expected_version)."""
    section = (a.replace_section.heading, a.replace_section.content) if a.replace_section else None
    result = service.writer.edit(
        a.id,
        append=a.append,
        replace_section=section,
        set_fields=dict(a.set_fields) if a.set_fields is not None else None,
        expected_version=a.expected_version,
    )
    return ToolResult(data=result.to_dict())


def memory_supersede(a: SupersedeArgs, service: MemoryService) -> ToolResult:
    """Write the successor of a record; both are kept."""
    values = a.model_dump(exclude_none=True, exclude={"old_id", "expected_version"})
    result = service.writer.supersede(a.old_id, values, expected_version=a.expected_version)
    return ToolResult(data={**result.to_dict(), "supersedes": a.old_id.upper()})


def memory_set_status(a: StatusArgs, service: MemoryService) -> ToolResult:
    """Set a record's status."""
    result = service.writer.set_status(a.id, a.status, expected_version=a.expected_version)
    return ToolResult(data=result.to_dict())


def memory_archive(a: ArchiveArgs, service: MemoryService) -> ToolResult:
    """Archive a record (the file stays in the vault)."""
    return ToolResult(data=service.writer.archive(a.id, expected_version=a.expected_version).to_dict())


def memory_record_hits(a: HitsArgs, service: MemoryService) -> ToolResult:
    """Count hits on hit-eligible records (de-duped per session)."""
    return ToolResult(data=record_hits(service.writer, list(a.ids), a.session_id))


def memory_sync(a: SyncArgs, service: MemoryService) -> ToolResult:
    """Pick up hand edits; report malformed files."""
    report = sync_vault(service.writer)
    warnings = [
        warning(MALFORMED_RECORD_WARNING, f"{m['path']}:{m['line']}: {m['message']}")
        for m in report["malformed"]
    ]
    return ToolResult(data=report, warnings=warnings)


#: The memory tools of the indexer server (``destructiveHint`` only on memory_archive).
MEMORY_TOOLS: tuple[ToolSpec[MemoryService], ...] = (
    ToolSpec(
        "memory_write",
        memory_write,
        WriteArgs,
        "Write an agent memory (trap, decision, spec, plan, scratch, ...) to the vault. Returns "
        "its uid, how many tags it indexed and the most similar existing records (a likely duplicate is "
        "shown, never refused). A trap matching an existing one bumps its occurrences instead.",
        read_only=False,
        idempotent=False,
        title="Write a memory",
    ),
    ToolSpec(
        "memory_edit",
        memory_edit,
        EditArgs,
        "Edit a memory: append to its body, replace one Markdown section, or set fields. "
        "Pass expected_version to fail with VERSION_CONFLICT if it changed since you read it.",
        read_only=False,
        idempotent=False,
        title="Edit a memory",
    ),
    ToolSpec(
        "memory_supersede",
        memory_supersede,
        SupersedeArgs,
        "Write a new memory that replaces old_id. Both are kept; the old one gets "
        "status superseded and succeeded_by pointing at the new one.",
        read_only=False,
        idempotent=False,
        title="Supersede a memory",
    ),
    ToolSpec(
        "memory_set_status",
        memory_set_status,
        StatusArgs,
        "Set a memory's status (active, draft, resolved, superseded, archived).",
        read_only=False,
        title="Set memory status",
    ),
    ToolSpec(
        "memory_archive",
        memory_archive,
        ArchiveArgs,
        "Archive a memory: hidden from default searches; the file and its history stay in the vault.",
        read_only=False,
        destructive=True,
        title="Archive a memory",
    ),
    ToolSpec(
        "memory_record_hits",
        memory_record_hits,
        HitsArgs,
        "Record that these memories were actually used (hit-eligible kinds trap, "
        "decision, spec, plan; once per session_id for 7 days; unknown ids ignored).",
        read_only=False,
        idempotent=False,
        title="Record memory hits",
    ),
    ToolSpec(
        "memory_sync",
        memory_sync,
        SyncArgs,
        "Pick up hand edits, new and deleted files in the vault; reports malformed files "
        "by path and line (their content stays on disk).",
        read_only=False,
        title="Sync the memory vault",
    ),
)
