"""``local-memory-search memory search|get``: seed 000's CLI over the memory tools (thin wrapper).

local-memory-search memory search QUERY [--kind K]... [--tag T]... [--path P] [--scratch] [--all]
    [--limit N] [--sort relevance|updated|occurrences|hits] [--hit-ids a,b] [--session-id S]
    [--include-expired] [--as-of T] [--explain] [--project P] [--json]
local-memory-search memory get UID [--session-id S] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape

from ..tools import call_tool


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="local-memory-search memory", description="Read agent memory.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("search", help="search memories (hybrid by default)")
    s.add_argument("query", nargs="*", help="query words (a pasted uid comes first)")
    s.add_argument("--kind", action="append", dest="kinds", help="kind filter (repeatable)")
    s.add_argument("--tag", "--tags", action="append", dest="tags", help="tag that must match (repeatable)")
    s.add_argument("--path", help="code path matched against records' path globs")
    s.add_argument("--scratch", action="store_true", help="include scratch notes")
    s.add_argument("--all", "--cross-project", action="store_true", dest="cross", help="search every project")
    s.add_argument("--project", help="project id (default: from the working directory)")
    s.add_argument("--limit", type=int, default=50, help="max results (seed 000 CLI default 50)")
    s.add_argument("--sort", default="relevance", help="relevance | updated | occurrences | hits")
    s.add_argument("--hit-ids", help="comma-separated ids you used (counts hits)")
    s.add_argument("--session-id", help="session id for hit de-dupe")
    s.add_argument("--include-expired", action="store_true")
    s.add_argument("--as-of", help="point in time (ISO 8601)")
    s.add_argument("--explain", action="store_true", help="attach the score breakdown")
    s.add_argument("--json", action="store_true", help="print the envelope JSON")
    g = sub.add_parser("get", help="one memory in full")
    g.add_argument("uid")
    g.add_argument("--session-id")
    g.add_argument("--json", action="store_true")
    return p


def _search_args(a: argparse.Namespace) -> dict[str, Any]:
    args: dict[str, Any] = {"limit": a.limit, "sort": a.sort, "explain": a.explain}
    if a.query:
        args["query"] = " ".join(a.query)
    for key, value in (("kinds", a.kinds), ("tags", a.tags), ("path", a.path), ("asOf", a.as_of),
                       ("sessionId", a.session_id), ("projectId", a.project)):  # fmt: skip
        if value:
            args[key] = value
    if a.hit_ids:
        args["hitIds"] = [x.strip() for x in a.hit_ids.split(",") if x.strip()]
    args.update(includeScratch=a.scratch, crossProject=a.cross, includeExpired=a.include_expired)
    return args


def _render(env: dict[str, Any], out: Console, err: Console) -> None:
    for w in env.get("warnings", []):
        err.print(f"[yellow]warning[/] [bold]{w['code']}[/]: {escape(w['message'])}")
    if not env.get("ok"):
        e = env["error"]
        where = f" (field {e['field']})" if e.get("field") else ""
        err.print(f"[red]error[/] [bold]{e['code']}[/]{where}: {escape(e['message'])}")
        return
    for i, hit in enumerate(env.get("results") or [], start=env.get("offset", 0) + 1):
        mark = " [red](contradicted)[/]" if hit.get("contradicted_by") else ""
        out.print(f"[bold]{i:>2}.[/] [cyan]{hit['id']}[/] [{hit['kind']}] {escape(hit['title'])}{mark}  "
                  f"[dim]{hit.get('project')} · {hit.get('match_source')} · score {hit.get('score', 0):.4f}[/]")  # fmt: skip
        for key, value in (hit.get("explain") or {}).items():
            out.print(f"      [dim]├─ {key}: {value}[/]")


def main(argv: list[str]) -> int:
    """Run ``memory search`` / ``memory get``."""
    a = _parser().parse_args(argv)
    if a.command == "search":
        env = call_tool("memory_search", _search_args(a))
    else:
        env = call_tool("get_memory", {"uid": a.uid, **({"sessionId": a.session_id} if a.session_id else {})})
    if a.json:
        sys.stdout.write(json.dumps(env, indent=2, ensure_ascii=False) + "\n")
    elif a.command == "get" and env.get("ok"):
        d = env["data"]
        Console(soft_wrap=True).print(
            f"[bold]{escape(d['title'])}[/] [dim]{d['id']} {d['kind']} {d['status']}[/]"
        )
        sys.stdout.write((d.get("content") or "") + "\n")
    else:
        _render(env, Console(soft_wrap=True), Console(stderr=True, soft_wrap=True))
    return 0 if env.get("ok") else 1
