"""The memory record: one frozen dataclass that unites seeds 000, 001 and 004 (see DESIGN.md "Memory").

A record is one Markdown file ``<vault>/projects/<project>/<kind>/<uid>-<slug>.md``: YAML
frontmatter (every field below except ``project`` and ``content``, which come from the file's
place and body) plus the body. Timestamps are canonical UTC strings ``YYYY-MM-DDTHH:MM:SSZ``
(fixed width, so they sort as text); :func:`canonical_time` normalises anything a human writes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument
from .uid import is_uid

KINDS: tuple[str, ...] = (
    "trap",
    "decision",
    "spec",
    "plan",
    "scratch",
    "state",
    "review",
    "log",
    "prompt",
    "session",
    "note",
)
STATUSES: tuple[str, ...] = ("active", "draft", "resolved", "superseded", "archived")
SEVERITIES: tuple[str, ...] = ("critical", "high", "medium", "low")
#: Seed 000: only these kinds count retrieval hits.
HIT_ELIGIBLE_KINDS: frozenset[str] = frozenset({"trap", "decision", "spec", "plan"})
#: Seed 000: excluded from cross-project search unless kinds are given.
EPHEMERAL_KINDS: frozenset[str] = frozenset({"scratch", "state", "review"})
#: Seed 000: kinds that expire (the TTL is configurable, see config.ENV_VARS).
EXPIRING_KINDS: frozenset[str] = frozenset({"scratch", "review"})
#: Seed 000: recurrence on upsert applies to these kinds.
RECURRING_KINDS: frozenset[str] = frozenset({"trap"})

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_PROJECT_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_TAG_RE = re.compile(r"^[^\s,]{1,64}$")


def utc_now() -> str:
    """Now as a canonical timestamp."""
    return datetime.now(UTC).strftime(TIME_FORMAT)


def canonical_time(value: Any, *, field_name: str) -> str | None:
    """``2025-04-15``, ``2025-04-15T14:00:00+02:00``, a datetime… → ``2025-04-15T12:00:00Z``."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        try:
            dt = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError as exc:
            raise InvalidArgument(
                f"{field_name}: not an ISO 8601 date or time: {value!r}", field=field_name
            ) from exc
    else:
        raise InvalidArgument(f"{field_name}: expected an ISO 8601 time, got {value!r}", field=field_name)
    dt = dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    return dt.strftime(TIME_FORMAT)


def project_slug(name: str) -> str:
    """A project name as it appears in the vault: lower-case, ``[a-z0-9._-]``."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.strip().lower()).strip("-.")
    return slug[:64] or "default"


def title_slug(title: str) -> str:
    """The file name part after the uid: ``Stripe retries webhooks`` → ``stripe-retries-webhooks``."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "untitled"


def domain_labels(domain: str | None) -> tuple[str, ...]:
    """``/acme/api/v2`` → ``("acme", "api", "v2")`` (the ``tree_labels`` column)."""
    return tuple(p for p in (domain or "").split("/") if p)


@dataclass(frozen=True)
class MemoryRecord:
    """One memory; ``version_hash`` is computed, never trusted from input."""

    id: str
    project: str
    kind: str
    title: str
    content: str = ""
    status: str = "active"
    tags: tuple[str, ...] = ()
    domain: str | None = None
    also: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    severity: str | None = None
    confidence: float | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    created: str = ""
    updated: str = ""
    created_by: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    expires: str | None = None
    supersedes: tuple[str, ...] = ()
    succeeded_by: str | None = None
    contradicted_by: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    occurrences: int = 1
    last_seen: str | None = None
    hits: int = 0
    last_hit: str | None = None
    version: int = 1
    version_hash: str = ""

    @property
    def rel_path(self) -> str:
        """Vault-relative path of the record's file."""
        return f"projects/{self.project}/{self.kind}/{self.id}-{title_slug(self.title)}.md"

    @property
    def tree_labels(self) -> tuple[str, ...]:
        return domain_labels(self.domain)

    def embed_text(self) -> str:
        """What is embedded: title, tags, domain and body — never counters (hits never re-embed)."""
        head = " ".join(p for p in (self.title, " ".join(self.tags), self.domain or "") if p)
        return f"{head}\n{self.content}".strip()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples become lists)."""
        out = asdict(self)
        out["meta"] = dict(self.meta)
        for key, value in out.items():
            if isinstance(value, tuple):
                out[key] = list(value)
        return out

    def with_changes(self, **changes: Any) -> MemoryRecord:
        """A copy with ``changes`` applied and re-validated (version hash recomputed)."""
        return build_record({**self.to_dict(), **changes})


#: Fields excluded from the version hash: bookkeeping that is not the record's meaning.
_UNHASHED = {"version", "version_hash", "hits", "last_hit", "updated", "occurrences", "last_seen"}


def compute_version_hash(record: MemoryRecord) -> str:
    """32 hex characters over everything a reader relies on (not counters or timestamps of edits)."""
    data = {k: v for k, v in record.to_dict().items() if k not in _UNHASHED}
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def build_record(values: Mapping[str, Any]) -> MemoryRecord:
    """Validate raw values (from frontmatter or a tool) into a record; errors name the field."""
    v = dict(values)
    unknown = set(v) - set(MemoryRecord.__dataclass_fields__)
    if unknown:
        name = sorted(unknown)[0]
        raise InvalidArgument(f"unknown field {name!r}", field=name)
    rec = MemoryRecord(
        id=_uid(v.get("id"), "id"),
        project=_project(v.get("project")),
        kind=_choice(v.get("kind"), KINDS, "kind"),
        title=_title(v.get("title")),
        content=_body(v.get("content", "")),
        status=_choice(v.get("status") or "active", STATUSES, "status"),
        tags=_tags(v.get("tags")),
        domain=_domain(v.get("domain"), "domain"),
        also=tuple(d for d in (_domain(x, "also") for x in _list(v.get("also"), "also")) if d),
        paths=tuple(_text(p, "paths") for p in _list(v.get("paths"), "paths") if p),
        severity=_choice(v.get("severity"), SEVERITIES, "severity") if v.get("severity") else None,
        confidence=_confidence(v.get("confidence")),
        meta=_meta(v.get("meta")),
        created=canonical_time(v.get("created"), field_name="created") or utc_now(),
        updated=canonical_time(v.get("updated"), field_name="updated") or "",
        created_by=_opt_text(v.get("created_by"), "created_by"),
        valid_from=canonical_time(v.get("valid_from"), field_name="valid_from"),
        valid_to=canonical_time(v.get("valid_to"), field_name="valid_to"),
        expires=canonical_time(v.get("expires"), field_name="expires"),
        supersedes=_uids(v.get("supersedes"), "supersedes"),
        succeeded_by=_uid(v.get("succeeded_by"), "succeeded_by") if v.get("succeeded_by") else None,
        contradicted_by=_uids(v.get("contradicted_by"), "contradicted_by"),
        links=_uids(v.get("links"), "links"),
        occurrences=_count(v.get("occurrences", 1), "occurrences", minimum=1),
        last_seen=canonical_time(v.get("last_seen"), field_name="last_seen"),
        hits=_count(v.get("hits", 0), "hits", minimum=0),
        last_hit=canonical_time(v.get("last_hit"), field_name="last_hit"),
        version=_count(v.get("version", 1), "version", minimum=1),
    )
    if rec.valid_from and rec.valid_to and rec.valid_to < rec.valid_from:
        raise InvalidArgument("valid_to is before valid_from", field="valid_to")
    rec = replace(rec, updated=rec.updated or rec.created)
    return replace(rec, version_hash=compute_version_hash(rec))


def _choice(value: Any, allowed: tuple[str, ...], name: str) -> str:
    if not isinstance(value, str) or value.strip().lower() not in allowed:
        raise InvalidArgument(f"{name} must be one of {', '.join(allowed)}; got {value!r}", field=name)
    return value.strip().lower()


def _uid(value: Any, name: str) -> str:
    if not isinstance(value, str) or not is_uid(value):
        raise InvalidArgument(f"{name} must be a 26-character record id, got {value!r}", field=name)
    return value.strip().upper()


def _uids(value: Any, name: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_uid(x, name) for x in _list(value, name)))


def _project(value: Any) -> str:
    if not isinstance(value, str) or not _PROJECT_RE.match(value):
        raise InvalidArgument(f"project must match [a-z0-9][a-z0-9._-]*, got {value!r}", field="project")
    return value


def _title(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or "\n" in value.strip():
        raise InvalidArgument("title must be a non-empty single line", field="title")
    if len(value) > 300:
        raise InvalidArgument("title is longer than 300 characters", field="title")
    return value.strip()


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} must be text, got {type(value).__name__}", field=name)
    return value


def _body(value: Any) -> str:
    """Bodies end with exactly one newline (empty stays empty), so files round-trip exactly."""
    text = _text(value if value is not None else "", "content").replace("\r\n", "\n")
    return text.rstrip("\n") + "\n" if text.strip() else ""


def _opt_text(value: Any, name: str) -> str | None:
    return None if value in (None, "") else _text(value, name)


def _list(value: Any, name: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return list(value)
    raise InvalidArgument(f"{name} must be a list, got {type(value).__name__}", field=name)


def _tags(value: Any) -> tuple[str, ...]:
    out: list[str] = []
    for tag in _list(value, "tags"):
        if not isinstance(tag, str | int | float) or not _TAG_RE.match(str(tag).strip()):
            raise InvalidArgument(f"tags: {tag!r} is not a tag (no spaces or commas)", field="tags")
        out.append(str(tag).strip().lower())
    return tuple(dict.fromkeys(out))


def _domain(value: Any, name: str) -> str | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str) or any(not p.strip() for p in value.strip("/").split("/")):
        raise InvalidArgument(f"{name} must be a /-separated path like /acme/api, got {value!r}", field=name)
    return "/" + "/".join(p.strip() for p in value.strip("/").split("/"))


def _confidence(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidArgument(f"confidence must be a number in [0, 1], got {value!r}", field="confidence")
    return float(value)


def _meta(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidArgument("meta must be a JSON object", field="meta")
    try:
        plain: dict[str, Any] = json.loads(json.dumps(dict(value), default=_json_default))
        return plain
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"meta is not JSON-serialisable: {exc}", field="meta") from exc


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _count(value: Any, name: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidArgument(f"{name} must be an integer >= {minimum}, got {value!r}", field=name)
    return value


def project_for_cwd(cwd: str | Path) -> str:
    """The active project of a working directory: the slug of its git root's folder name (else its own)."""
    try:
        start = Path(cwd).expanduser().resolve()
    except (RuntimeError, OSError, ValueError) as exc:  # "~user" of no such user, a NUL byte, ...
        raise InvalidArgument(f"cwd {str(cwd)[:200]!r} is not a usable path: {exc}", field="cwd") from exc
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return project_slug(folder.name)
    return project_slug(start.name)
