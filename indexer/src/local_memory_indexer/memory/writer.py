"""The memory writer: every vault change goes through here (library API; MCP tools and CLI wrap it).

Each operation takes the writer lock, refreshes the index (another process may have written),
loads the record from disk (picking up a hand edit first), applies the change, writes the file
atomically with a compare-and-swap on the bytes it read (an editor saving in between makes the
operation retry on the new text instead of overwriting it), indexes it at once, regenerates the
kind's compiled view and asks for a batched git commit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from local_memory_shared.config import MemorySettings, load_memory_settings, load_settings
from local_memory_shared.embedding import embedder_from_settings
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.errors import InvalidArgument, NotFound, VersionConflict
from local_memory_shared.memory.frontmatter import FIELD_ORDER, location_of, parse_record, serialise_record
from local_memory_shared.memory.model import (
    EXPIRING_KINDS,
    RECURRING_KINDS,
    TIME_FORMAT,
    MemoryRecord,
    build_record,
    utc_now,
)
from local_memory_shared.memory.schema import MemoryPaths, memory_paths
from local_memory_shared.memory.uid import is_uid, new_uid

from .index import MemoryIndex, sql_str
from .vault import GitBatcher, Vault, WriterLock, file_digest
from .views import render_view

#: Cosine similarity above which a new trap is the same trap happening again (recurrence).
RECURRENCE_SIMILARITY = 0.93
#: How many similar records a write reports back (never a blocking threshold).
SIMILAR_LIMIT = 3
_CAS_RETRIES = 8
#: The writer's bookkeeping (identity, times, supersession links, counters): never set by a caller.
BOOKKEEPING = frozenset(
    {"id", "kind", "created", "updated", "supersedes", "succeeded_by", "occurrences", "last_seen", "hits",
     "last_hit", "version", "version_hash"}
)  # fmt: skip
#: Fields a caller may set through edit(set_fields=...): every frontmatter field but the
#: bookkeeping, and the body.
SETTABLE = (frozenset(FIELD_ORDER) - BOOKKEEPING) | {"content"}


class _Changed(Exception):
    """The file changed on disk between read and write: reload and retry."""


@dataclass(frozen=True)
class WriteResult:
    """What a write/edit answers."""

    record: MemoryRecord
    path: str
    created: bool
    recurred: bool = False
    similar: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        r = self.record
        return {
            "id": r.id,
            "path": self.path,
            "project": r.project,
            "kind": r.kind,
            "title": r.title,
            "status": r.status,
            "version": r.version,
            "version_hash": r.version_hash,
            "tags_indexed": len(r.tags),
            "occurrences": r.occurrences,
            "expires": r.expires,
            "created": self.created,
            "recurred": self.recurred,
            "similar": self.similar,
        }


class MemoryWriter:
    """The vault + index of one data root, opened for writing."""

    def __init__(
        self,
        settings: MemorySettings | None = None,
        *,
        embedder: Embedder | None = None,
        commit_delay: float = 1.0,
    ):
        self.settings = settings or load_memory_settings()
        self.paths: MemoryPaths = memory_paths(self.settings.data_root, self.settings.vault)
        self.vault = Vault(self.paths.vault)
        self.lock = WriterLock(self.paths.lock_file)
        self.embedder = embedder or embedder_from_settings(load_settings())
        with self.lock.hold():
            self.vault.ensure()
            self.index = MemoryIndex(self.paths, self.embedder)
        self.git = GitBatcher(self.vault, self.lock, delay=commit_delay)
        self._closed = False

    # -- public operations ------------------------------------------------------------------------

    def write(self, values: Mapping[str, Any]) -> WriteResult:
        """Create a record (or, for a recurring trap, bump the existing one)."""
        values = dict(values)
        for bad in ("id", "version", "version_hash", "hits", "last_hit", "succeeded_by", "supersedes"):
            if values.get(bad) not in (None, [], ()):
                raise InvalidArgument(f"{bad} is set by the writer, not by the caller", field=bad)
        return self._create(values, supersedes=())

    def _create(self, values: dict[str, Any], *, supersedes: tuple[str, ...]) -> WriteResult:
        now = utc_now()
        values.update(id=new_uid(), created=now, updated=now, version=1, supersedes=list(supersedes))
        values.setdefault("last_seen", now)
        record = self._with_expiry(build_record(values))
        with self.lock.hold():
            self.index.refresh()
            vector = self.index.embed([record])[0]
            similar = self.index.similar(record, vector, SIMILAR_LIMIT)
            if record.kind in RECURRING_KINDS and not supersedes:
                existing = self._recurrence_of(record, similar)
                if existing is not None:
                    return self._recur(existing, record, similar)
            path = self._store(record, None, None)
        return WriteResult(record, path, created=True, similar=similar)

    def edit(
        self,
        record_id: str,
        *,
        append: str | None = None,
        replace_section: tuple[str, str] | None = None,
        set_fields: Mapping[str, Any] | None = None,
        expected_version: int | None = None,
    ) -> WriteResult:
        """Append to the body, replace one ``## heading`` section, and/or set fields."""
        fields = dict(set_fields or {})
        unknown = set(fields) - SETTABLE
        if unknown:
            name = sorted(unknown)[0]
            raise InvalidArgument(
                f"set_fields.{name} cannot be set (allowed: {', '.join(sorted(SETTABLE))})",
                field=f"set_fields.{name}",
            )
        if append is None and replace_section is None and not fields:
            raise InvalidArgument(
                "nothing to change: give append, replace_section or set_fields", field="set_fields"
            )

        def change(rec: MemoryRecord) -> MemoryRecord:
            content = rec.content
            if replace_section is not None:
                content = _replace_section(content, *replace_section)
            if append is not None:
                content = (
                    content.rstrip("\n") + ("\n\n" if content.strip() else "") + append.strip("\n") + "\n"
                )
            return rec.with_changes(**{**fields, "content": fields.get("content", content)})

        return self._update(record_id, change, expected_version=expected_version)

    def set_status(self, record_id: str, status: str, *, expected_version: int | None = None) -> WriteResult:
        """Change a record's status."""
        return self._update(
            record_id, lambda r: r.with_changes(status=status), expected_version=expected_version
        )

    def archive(self, record_id: str, *, expected_version: int | None = None) -> WriteResult:
        """Archive a record: it stays in the vault and its history, hidden from default searches."""
        return self.set_status(record_id, "archived", expected_version=expected_version)

    def supersede(
        self, old_id: str, values: Mapping[str, Any], *, expected_version: int | None = None
    ) -> WriteResult:
        """Write a new record that replaces ``old_id``; both are kept, the old one gets ``succeeded_by``."""
        with self.lock.hold():
            self.index.refresh()
            old, _, _ = self._load(old_id)
            if old.succeeded_by:
                raise InvalidArgument(f"{old.id} is already superseded by {old.succeeded_by}", field="old_id")
            if expected_version is not None and old.version != expected_version:
                raise VersionConflict(
                    f"{old.id} is at version {old.version}, not {expected_version}",
                    field="expected_version",
                    details={"current_version": old.version},
                )
            new_values = {"kind": old.kind, "project": old.project, **dict(values)}
            result = self._create(new_values, supersedes=(old.id,))
            self._update(
                old.id,
                lambda r: r.with_changes(status="superseded", succeeded_by=result.record.id),
                expected_version=None,
            )
            return result

    def get(self, record_id: str) -> MemoryRecord:
        """The record as it is on disk now."""
        with self.lock.hold():
            return self._load(record_id)[0]

    def flush(self) -> None:
        """Write pending hit counters and make the pending git commit now."""
        from .hits import flush_hits

        flush_hits(self)
        self.git.flush()

    def close(self) -> None:
        """Flush and release the index (idempotent)."""
        if self._closed:
            return
        self.flush()
        self.index.close()
        self._closed = True

    # -- internals --------------------------------------------------------------------------------

    def _with_expiry(self, record: MemoryRecord) -> MemoryRecord:
        if record.kind not in EXPIRING_KINDS or record.expires:
            return record
        days = self.settings.scratch_ttl_days if record.kind == "scratch" else self.settings.review_ttl_days
        if days <= 0:
            return record
        created = datetime.strptime(record.created, TIME_FORMAT).replace(tzinfo=UTC)
        return record.with_changes(expires=(created + timedelta(days=days)).strftime(TIME_FORMAT))

    def _recurrence_of(self, record: MemoryRecord, similar: list[dict[str, Any]]) -> str | None:
        title = _norm(record.title)
        where = (
            f"project = {sql_str(record.project)} AND kind = {sql_str(record.kind)} "
            "AND status IN ('active', 'draft')"
        )
        rows = self.index.table.search().where(where).select(["id", "title"]).limit(100_000).to_list()
        same: list[str] = [r["id"] for r in rows if _norm(r["title"]) == title]
        if same:
            return min(same)
        near = [s for s in similar if s["kind"] == record.kind and s["status"] in ("active", "draft")]
        return near[0]["id"] if near and near[0]["similarity"] >= RECURRENCE_SIMILARITY else None

    def _recur(self, existing_id: str, new: MemoryRecord, similar: list[dict[str, Any]]) -> WriteResult:
        def bump(rec: MemoryRecord) -> MemoryRecord:
            tags = list(dict.fromkeys([*rec.tags, *new.tags]))
            paths = list(dict.fromkeys([*rec.paths, *new.paths]))
            return rec.with_changes(
                occurrences=rec.occurrences + 1, last_seen=new.created, tags=tags, paths=paths
            )

        result = self._update(existing_id, bump, expected_version=None)
        return replace(
            result, recurred=True, created=False, similar=[s for s in similar if s["id"] != existing_id]
        )

    def _update(
        self, record_id: str, change: Callable[[MemoryRecord], MemoryRecord], *, expected_version: int | None
    ) -> WriteResult:
        with self.lock.hold():
            self.index.refresh()
            for _ in range(_CAS_RETRIES):
                old, rel, raw = self._load(record_id)
                if expected_version is not None and old.version != expected_version:
                    raise VersionConflict(
                        f"{record_id} is at version {old.version}, not {expected_version}; re-read it and retry",
                        field="expected_version",
                        details={"current_version": old.version},
                    )
                new = change(old)
                new = new.with_changes(version=old.version + 1, updated=max(utc_now(), old.updated))
                try:
                    path = self._store(new, rel, raw)
                except _Changed:
                    continue
                return WriteResult(new, path, created=False)
            raise VersionConflict(f"{record_id} kept changing on disk; retry", field="id")

    def _load(self, record_id: str) -> tuple[MemoryRecord, str, bytes]:
        """The record on disk; a hand edit is validated (MalformedRecord names path and line) and indexed."""
        if not isinstance(record_id, str) or not is_uid(record_id):
            raise InvalidArgument(f"not a record id: {record_id!r}", field="id")
        record_id = record_id.strip().upper()
        rel = self.index.path_of(record_id)
        raw = self.vault.read(rel) if rel else None
        if raw is None:
            found = sorted((self.vault.root / "projects").glob(f"*/*/{record_id}-*.md"))
            if not found:
                raise NotFound(f"no memory record {record_id}", field="id")
            rel = found[0].relative_to(self.vault.root).as_posix()
            raw = self.vault.read(rel) or b""
        assert rel is not None
        from .sync import sync_file

        record = sync_file(self, rel, raw)
        return record, rel, raw

    def _store(self, record: MemoryRecord, old_rel: str | None, expected_raw: bytes | None) -> str:
        """Write ``record`` (CAS against ``expected_raw`` at ``old_rel``), index it, refresh its view."""
        if old_rel is not None and self.vault.read(old_rel) != expected_raw:
            raise _Changed(old_rel)
        rel = record.rel_path
        text = serialise_record(record)
        self.vault.write_atomic(rel, text)
        if old_rel is not None and old_rel != rel:
            self.vault.remove(old_rel)
        mtime, size = self.vault.stat(rel)
        self.index.upsert([(record, rel, file_digest(text.encode()), mtime, size)])
        if old_rel is not None and old_rel != rel:
            self.index.remove_paths([old_rel])
        self.refresh_view(record.project, record.kind)
        self.git.request()
        return rel

    def refresh_view(self, project: str, kind: str) -> None:
        """Regenerate ``projects/<project>/<kind>.md`` from the index."""
        where = f"project = {sql_str(project)} AND kind = {sql_str(kind)}"
        cols = ["id", "title", "status", "severity", "updated", "tags", "succeeded_by"]
        rows = self.index.table.search().where(where).select(cols).limit(1_000_000).to_list()
        self.vault.write_atomic(f"projects/{project}/{kind}.md", render_view(project, kind, rows))


def _norm(title: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", title.lower()))


def _replace_section(content: str, heading: str, text: str) -> str:
    """Replace the body of the Markdown section titled ``heading`` (any level); append it if absent."""
    name = heading.lstrip("#").strip()
    lines = content.split("\n")
    start = next(
        (i for i, ln in enumerate(lines) if re.match(r"^#{1,6}\s", ln) and ln.lstrip("#").strip() == name),
        None,
    )
    if start is None:
        raise InvalidArgument(f"no section titled {name!r} in the record", field="replace_section.heading")
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    end = next(
        (j for j in range(start + 1, len(lines)) if re.match(rf"^#{{1,{level}}}\s", lines[j])), len(lines)
    )
    return "\n".join([*lines[: start + 1], text.strip("\n"), "", *lines[end:]]).rstrip("\n") + "\n"


__all__ = ["MemoryWriter", "WriteResult", "location_of", "parse_record"]
