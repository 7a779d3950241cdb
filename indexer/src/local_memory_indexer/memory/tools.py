"""Memory write tools of the ``local-memory-indexer`` MCP server: pydantic params + plain functions.

:class:`MemoryService` owns one :class:`MemoryWriter` (created on first use: it loads the
embedder), the hit channel socket and a background loop that flushes hit counters and picks up
hand edits. ``memory_tool_defs`` returns the :class:`ToolDef` list the server registers.
"""

from __future__ import annotations

import atexit
import logging
import threading
from typing import Any

from local_memory_shared.config import load_memory_settings
from local_memory_shared.envelope import ok, warning
from local_memory_shared.mcp_adapter import ToolDef, validate_args
from local_memory_shared.memory.model import KINDS, SEVERITIES, STATUSES, project_for_cwd, project_slug
from local_memory_shared.memory.schema import memory_paths
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from .channel import HitChannel
from .hits import flush_hits, record_hits
from .sync import malformed_files, sync_vault
from .writer import MemoryWriter

log = logging.getLogger(__name__)
#: Seconds between two hand-edit scans of the vault by a running server.
WATCH_SECONDS = 5.0


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


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

    # -- tool bodies ------------------------------------------------------------------------------

    def memory_write(self, args: dict[str, Any]) -> dict[str, Any]:
        """Write a record; answers uid, tags indexed and the most similar existing records."""
        a = validate_args(WriteArgs, args)
        values = a.model_dump(exclude_none=True, exclude={"cwd"})
        values["project"] = project_slug(a.project) if a.project else project_for_cwd(a.cwd or ".")
        result = self.writer.write(values)
        warnings = []
        if not result.record.tags:
            warnings.append(
                warning("untagged", "no tags: this memory answers only queries that quote its wording")
            )
        return ok(data=result.to_dict(), warnings=warnings)

    def memory_edit(self, args: dict[str, Any]) -> dict[str, Any]:
        """Append, replace a section, or set fields (optimistic expected_version)."""
        a = validate_args(EditArgs, args)
        section = (a.replace_section.heading, a.replace_section.content) if a.replace_section else None
        result = self.writer.edit(
            a.id,
            append=a.append,
            replace_section=section,
            set_fields=a.set_fields,
            expected_version=a.expected_version,
        )
        return ok(data=result.to_dict())

    def memory_supersede(self, args: dict[str, Any]) -> dict[str, Any]:
        """Write the successor of a record; both are kept."""
        a = validate_args(SupersedeArgs, args)
        values = a.model_dump(exclude_none=True, exclude={"old_id", "expected_version"})
        result = self.writer.supersede(a.old_id, values, expected_version=a.expected_version)
        return ok(data={**result.to_dict(), "supersedes": a.old_id.upper()})

    def memory_set_status(self, args: dict[str, Any]) -> dict[str, Any]:
        a = validate_args(StatusArgs, args)
        return ok(data=self.writer.set_status(a.id, a.status, expected_version=a.expected_version).to_dict())

    def memory_archive(self, args: dict[str, Any]) -> dict[str, Any]:
        a = validate_args(ArchiveArgs, args)
        return ok(data=self.writer.archive(a.id, expected_version=a.expected_version).to_dict())

    def memory_record_hits(self, args: dict[str, Any]) -> dict[str, Any]:
        a = validate_args(HitsArgs, args)
        return ok(data=record_hits(self.writer, a.ids, a.session_id))

    def memory_sync(self, args: dict[str, Any]) -> dict[str, Any]:
        validate_args(SyncArgs, args)
        report = sync_vault(self.writer)
        warnings = [
            warning("malformed_record", f"{m['path']}:{m['line']}: {m['message']}")
            for m in report["malformed"]
        ]
        return ok(data=report, warnings=warnings)

    def malformed(self) -> list[dict[str, Any]]:
        return malformed_files(self.writer)


def _ann(
    title: str, *, read_only: bool = False, destructive: bool = False, idempotent: bool = False
) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


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


def memory_tool_defs(service: MemoryService | None = None) -> list[ToolDef]:
    """The memory tools of the indexer server (``destructiveHint`` only on memory_archive)."""
    s = service or MemoryService()
    return [
        ToolDef(
            "memory_write",
            "Write an agent memory (trap, decision, spec, plan, scratch, ...) to the vault. Returns "
            "its uid, how many tags it indexed and the most similar existing records (a likely duplicate is "
            "shown, never refused). A trap matching an existing one bumps its occurrences instead.",
            WriteArgs.model_json_schema(),
            _ann("Write a memory"),
            s.memory_write,
        ),
        ToolDef(
            "memory_edit",
            "Edit a memory: append to its body, replace one Markdown section, or set fields. "
            "Pass expected_version to fail with VERSION_CONFLICT if it changed since you read it.",
            EditArgs.model_json_schema(),
            _ann("Edit a memory"),
            s.memory_edit,
        ),
        ToolDef(
            "memory_supersede",
            "Write a new memory that replaces old_id. Both are kept; the old one gets "
            "status superseded and succeeded_by pointing at the new one.",
            SupersedeArgs.model_json_schema(),
            _ann("Supersede a memory"),
            s.memory_supersede,
        ),
        ToolDef(
            "memory_set_status",
            "Set a memory's status (active, draft, resolved, superseded, archived).",
            StatusArgs.model_json_schema(),
            _ann("Set memory status", idempotent=True),
            s.memory_set_status,
        ),
        ToolDef(
            "memory_archive",
            "Archive a memory: hidden from default searches; the file and its history stay in the vault.",
            ArchiveArgs.model_json_schema(),
            _ann("Archive a memory", destructive=True, idempotent=True),
            s.memory_archive,
        ),
        ToolDef(
            "memory_record_hits",
            "Record that these memories were actually used (hit-eligible kinds trap, "
            "decision, spec, plan; once per session_id for 7 days; unknown ids ignored).",
            HitsArgs.model_json_schema(),
            _ann("Record memory hits"),
            s.memory_record_hits,
        ),
        ToolDef(
            "memory_sync",
            "Pick up hand edits, new and deleted files in the vault; reports malformed files "
            "by path and line (their content stays on disk).",
            SyncArgs.model_json_schema(),
            _ann("Sync the memory vault", idempotent=True),
            s.memory_sync,
        ),
    ]
