"""``local-memory-indexer memory …``: thin CLI over :class:`MemoryWriter` (``--json`` on each command)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from local_memory_shared.memory.model import KINDS, STATUSES, project_for_cwd, project_slug

if TYPE_CHECKING:
    from .writer import MemoryWriter


def _emit(args: argparse.Namespace, data: Any, human: str) -> int:
    if args.json:
        print(json.dumps({"ok": True, "data": data, "warnings": []}, indent=2, default=str))
    else:
        print(human)
    return 0


def _content(value: str | None) -> str | None:
    return sys.stdin.read() if value == "-" else value


def _fields(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"title": args.title, "content": _content(args.content) or ""}
    for key, attr in (("tags", "tag"), ("also", "also"), ("paths", "path"), ("links", "link")):
        if getattr(args, attr):
            out[key] = getattr(args, attr)
    for key in (
        "domain",
        "severity",
        "confidence",
        "expires",
        "valid_from",
        "valid_to",
        "created_by",
        "status",
    ):
        if getattr(args, key) is not None:
            out[key] = getattr(args, key)
    if args.meta:
        out["meta"] = json.loads(args.meta)
    return out


def _with_writer(fn: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        # Imported here: the writer pulls in LanceDB and the embedder, which `index` and `--help` need not pay for.
        from .writer import MemoryWriter

        writer = MemoryWriter(commit_delay=3600)  # one commit for the whole command, made by close()
        try:
            return int(fn(writer, args))
        finally:
            writer.close()

    return run


@_with_writer
def cmd_write(w: MemoryWriter, args: argparse.Namespace) -> int:
    values = {**_fields(args), "kind": args.kind}
    values["project"] = project_slug(args.project) if args.project else project_for_cwd(".")
    r = w.write(values).to_dict()
    verb = "recurred" if r["recurred"] else "wrote"
    similar = "".join(f"\n  similar: {s['id']} {s['title']} ({s['similarity']})" for s in r["similar"])
    return _emit(args, r, f"{verb} {r['id']} v{r['version']} ({r['tags_indexed']} tags) {r['path']}{similar}")


@_with_writer
def cmd_edit(w: MemoryWriter, args: argparse.Namespace) -> int:
    sets = {k: _json_or_text(v) for k, v in (s.split("=", 1) for s in args.set or [])}
    section = (args.section, _content(args.section_text) or "") if args.section else None
    r = w.edit(
        args.id,
        append=_content(args.append),
        replace_section=section,
        set_fields=sets,
        expected_version=args.expected_version,
    ).to_dict()
    return _emit(args, r, f"edited {r['id']} -> v{r['version']}")


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


@_with_writer
def cmd_supersede(w: MemoryWriter, args: argparse.Namespace) -> int:
    r = w.supersede(args.old_id, _fields(args), expected_version=args.expected_version).to_dict()
    return _emit(args, r, f"{args.old_id.upper()} superseded by {r['id']}")


@_with_writer
def cmd_status(w: MemoryWriter, args: argparse.Namespace) -> int:
    r = w.set_status(args.id, args.status, expected_version=args.expected_version).to_dict()
    return _emit(args, r, f"{r['id']} is {r['status']} (v{r['version']})")


@_with_writer
def cmd_archive(w: MemoryWriter, args: argparse.Namespace) -> int:
    r = w.archive(args.id, expected_version=args.expected_version).to_dict()
    return _emit(args, r, f"archived {r['id']} (v{r['version']})")


@_with_writer
def cmd_hits(w: MemoryWriter, args: argparse.Namespace) -> int:
    from .hits import record_hits

    r = record_hits(w, args.ids, args.session_id)
    return _emit(args, r, f"recorded {len(r['recorded'])}, ignored {len(r['ignored'])}")


@_with_writer
def cmd_sync(w: MemoryWriter, args: argparse.Namespace) -> int:
    from .sync import sync_vault

    r = sync_vault(w)
    _emit(
        args, r, f"indexed {r['indexed']}, unchanged {r['unchanged']}, removed {r['removed']}{_malformed(r)}"
    )
    return 1 if r["malformed"] else 0


@_with_writer
def cmd_rebuild(w: MemoryWriter, args: argparse.Namespace) -> int:
    from .sync import rebuild

    r = rebuild(w)
    _emit(
        args, r, f"rebuilt {r['indexed']} records from {r['files']} files in {r['seconds']}s{_malformed(r)}"
    )
    return 1 if r["malformed"] else 0


def _malformed(report: dict[str, Any]) -> str:
    """One indented line per vault file whose frontmatter did not validate (path:line: why)."""
    return "".join(f"\n  malformed: {m['path']}:{m['line']}: {m['message']}" for m in report["malformed"])


@_with_writer
def cmd_get(w: MemoryWriter, args: argparse.Namespace) -> int:
    r = w.get(args.id)
    return _emit(args, r.to_dict(), f"{r.id} [{r.kind}/{r.status}] v{r.version} {r.title}\n\n{r.content}")


def _record_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--title", required=True)
    p.add_argument("--content", help="Markdown body ('-' reads stdin)")
    p.add_argument("--tag", action="append", help="repeatable")
    p.add_argument("--domain", help="tree path, e.g. /acme/api")
    p.add_argument("--also", action="append", help="another domain (repeatable)")
    p.add_argument("--path", action="append", help="code path glob the record is about (repeatable)")
    p.add_argument("--link", action="append", help="related record id (repeatable)")
    p.add_argument("--severity", choices=["critical", "high", "medium", "low"])
    p.add_argument("--confidence", type=float)
    p.add_argument("--meta", help="JSON object")
    p.add_argument("--expires")
    p.add_argument("--valid-from", dest="valid_from")
    p.add_argument("--valid-to", dest="valid_to")
    p.add_argument("--created-by", dest="created_by")
    p.add_argument("--status", choices=STATUSES)


def add_memory_parser(sub: Any) -> None:
    """Register ``memory`` and its subcommands on the top-level subparsers."""
    mem = sub.add_parser("memory", help="agent memory: write, edit, supersede, archive, hits, sync, rebuild")
    msub = mem.add_subparsers(dest="memory_command", required=True)
    p = msub.add_parser("write", help="write a record")
    p.add_argument("--kind", required=True, choices=KINDS)
    p.add_argument("--project", help="project name (default: from the working directory)")
    _record_flags(p)
    p.set_defaults(func=cmd_write)
    p = msub.add_parser("edit", help="append / replace a section / set fields")
    p.add_argument("id")
    p.add_argument("--append", help="Markdown to append ('-' reads stdin)")
    p.add_argument("--section", help="heading of the section to replace")
    p.add_argument("--section-text", dest="section_text", help="its new body ('-' reads stdin)")
    p.add_argument("--set", action="append", help="field=value (value parsed as JSON when it is JSON)")
    p.add_argument("--expected-version", dest="expected_version", type=int)
    p.set_defaults(func=cmd_edit)
    p = msub.add_parser("supersede", help="write the successor of a record")
    p.add_argument("old_id")
    p.add_argument("--expected-version", dest="expected_version", type=int)
    _record_flags(p)
    p.set_defaults(func=cmd_supersede)
    p = msub.add_parser("status", help="set a record's status")
    p.add_argument("id")
    p.add_argument("status", choices=STATUSES)
    p.add_argument("--expected-version", dest="expected_version", type=int)
    p.set_defaults(func=cmd_status)
    p = msub.add_parser("archive", help="archive a record")
    p.add_argument("id")
    p.add_argument("--expected-version", dest="expected_version", type=int)
    p.set_defaults(func=cmd_archive)
    p = msub.add_parser("hits", help="record retrieval hits")
    p.add_argument("ids", nargs="+")
    p.add_argument("--session-id", dest="session_id")
    p.set_defaults(func=cmd_hits)
    p = msub.add_parser("get", help="show a record")
    p.add_argument("id")
    p.set_defaults(func=cmd_get)
    p = msub.add_parser("sync", help="pick up hand edits; report malformed files")
    p.set_defaults(func=cmd_sync)
    p = msub.add_parser("rebuild", help="recreate the memory index from the vault")
    p.set_defaults(func=cmd_rebuild)
    for action in msub.choices.values():
        action.add_argument("--json", action="store_true", help="print the JSON envelope")


def cmd_doctor(args: argparse.Namespace) -> int:
    """``doctor [--rebuild]``: seed 000's memo doctor — re-check the vault, or rebuild the memory index."""
    return int(cmd_rebuild(args) if args.rebuild else cmd_sync(args))


def add_doctor_parser(sub: Any) -> None:
    """Register ``doctor`` (seed 000's ``memo doctor [--rebuild]``) on the top-level subparsers."""
    p = sub.add_parser(
        "doctor", help="re-check the memory vault (report malformed files); --rebuild recreates its index"
    )
    p.add_argument("--rebuild", action="store_true", help="recreate the memory index from the vault")
    p.add_argument("--json", action="store_true", help="print the JSON envelope")
    p.set_defaults(func=cmd_doctor)
