"""Record files: YAML frontmatter + Markdown body, parsed with errors that name path and line.

    ---
    id: 01JD3M8Z6Q9V7X2C4B5N8P0RST
    kind: trap
    title: Stripe retries webhooks
    tags: [stripe, webhook]
    ...
    ---
    Dedupe on the event id.

The project comes from the file's folder (``projects/<project>/<kind>/``); ``kind`` in the
frontmatter must agree with the folder. Serialising a parsed record gives back the same record.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from ..errors import InvalidArgument, MalformedRecord
from .model import MemoryRecord, build_record

#: Frontmatter key order on disk (fields with their default value are omitted).
FIELD_ORDER: tuple[str, ...] = (
    "id",
    "kind",
    "title",
    "status",
    "tags",
    "domain",
    "also",
    "paths",
    "severity",
    "confidence",
    "meta",
    "created",
    "updated",
    "created_by",
    "valid_from",
    "valid_to",
    "expires",
    "supersedes",
    "succeeded_by",
    "contradicted_by",
    "links",
    "occurrences",
    "last_seen",
    "hits",
    "last_hit",
    "version",
    "version_hash",
)
_ALWAYS = {"id", "kind", "title", "status", "created", "updated", "version", "version_hash"}
_PATH_RE = re.compile(r"^projects/([^/]+)/([^/]+)/[^/]+\.md$")


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as text (we canonicalise them ourselves)."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def location_of(rel_path: str) -> tuple[str, str]:
    """``projects/acme/trap/X-y.md`` → ``("acme", "trap")``; other paths are not records."""
    m = _PATH_RE.match(rel_path)
    if not m:
        raise MalformedRecord(
            f"{rel_path}: not a record path (projects/<project>/<kind>/<file>.md)",
            field="path",
            details={"path": rel_path, "line": 0},
        )
    return m.group(1), m.group(2)


def parse_record(text: str, rel_path: str) -> MemoryRecord:
    """Parse one record file; raises MalformedRecord (details.path, details.line) on any fault."""
    project, folder_kind = location_of(rel_path)
    head, body, body_line = _split(text, rel_path)
    try:
        data = yaml.load(head, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        # The construct that failed (an unclosed "[") is where a human must look; fall back to
        # where the parser noticed.
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        raise _malformed(
            rel_path, line, f"YAML error: {getattr(exc, 'problem', exc)}", "frontmatter"
        ) from exc
    if not isinstance(data, dict):
        raise _malformed(rel_path, 2, "frontmatter must be a mapping of fields", "frontmatter")
    data = {str(k): v for k, v in data.items()}
    if str(data.get("kind", "")).lower() != folder_kind:
        raise _malformed(
            rel_path,
            _line_of(head, "kind"),
            f"kind {data.get('kind')!r} does not match its folder {folder_kind!r}",
            "kind",
        )
    stated_hash = data.pop("version_hash", None)
    del stated_hash  # always recomputed: a hand edit changes it
    try:
        return build_record({**data, "project": project, "content": body})
    except InvalidArgument as exc:
        name = (exc.field or "").split(".")[0]
        line = _line_of(head, name) if name in data else 1
        raise _malformed(rel_path, line, exc.message, exc.field or "frontmatter") from exc


def serialise_record(record: MemoryRecord) -> str:
    """The file text of ``record`` (frontmatter in FIELD_ORDER, then the body)."""
    values = record.to_dict()
    defaults = MemoryRecord(id=record.id, project=record.project, kind=record.kind, title="x").to_dict()
    head: dict[str, Any] = {}
    for key in FIELD_ORDER:
        if key in _ALWAYS or values[key] != defaults[key]:
            head[key] = values[key]
    text = yaml.safe_dump(head, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=None)
    return f"---\n{text}---\n{record.content}"


def _split(text: str, rel_path: str) -> tuple[str, str, int]:
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise _malformed(rel_path, 1, "file must start with a '---' frontmatter line", "frontmatter")
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]), i + 2
    raise _malformed(rel_path, len(lines), "frontmatter is not closed by a '---' line", "frontmatter")


def _line_of(head: str, key: str) -> int:
    for i, line in enumerate(head.split("\n")):
        if re.match(rf"^{re.escape(key)}\s*:", line):
            return i + 2  # +1 for 1-based, +1 for the opening '---'
    return 1


def _malformed(path: str, line: int, message: str, field: str) -> MalformedRecord:
    return MalformedRecord(f"{path}:{line}: {message}", field=field, details={"path": path, "line": line})
