"""``local-memory-search``: the MCP server (no arguments) and a thin CLI over the tool registry.

local-memory-search                                   serve MCP over stdio
local-memory-search serve [--http --port N --token T]  serve MCP (stdio, or streamable HTTP on 127.0.0.1:8766)
local-memory-search query "TEXT" [--project P] [--mode hybrid|keyword|semantic] [--limit N] [--json]
local-memory-search tool NAME --args '{"query": "..."}'   print exactly the tool's envelope
local-memory-search tools [--json]                    list the tools
local-memory-search monitor [--port 3124] [--token T]  the read-only status monitor web page
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from local_memory_shared.contract import MONITOR_HTTP_PORT, SEARCH_HTTP_PORT
from local_memory_shared.envelope import error
from local_memory_shared.errors import InvalidArgument
from local_memory_shared.transport_args import add_transport_args

if TYPE_CHECKING:  # rich renders the readable output only; --json and serve never import it
    from rich.console import Console

MODES = {"hybrid": "search_hybrid", "keyword": "search_keyword", "semantic": "search_semantic"}
SNIPPET_LINES = 4


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="local-memory-search", description="Read-only Local Memory searcher.")
    sub = p.add_subparsers(dest="command")

    q = sub.add_parser("query", help="search the index and print readable hits")
    q.add_argument("text", help="the query: identifiers, keywords or natural language")
    q.add_argument(
        "--project", "-p", help="project root (default: LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT, then cwd)"
    )
    q.add_argument("--mode", "-m", choices=sorted(MODES), default="hybrid")
    q.add_argument("--limit", "-n", type=int, default=10)
    q.add_argument("--offset", type=int, default=0)
    q.add_argument("--filters", help='filters as a JSON object, e.g. \'{"language": "python"}\'')
    q.add_argument("--json", action="store_true", help="print the envelope JSON instead")

    t = sub.add_parser("tool", help="call any tool of this server in-process and print its envelope")
    t.add_argument("name", help="tool name, e.g. search_hybrid")
    t.add_argument("--args", "-a", default="{}", help="tool arguments as a JSON object")
    t.add_argument("--json", action="store_true", help="(default) print the envelope JSON")

    ls = sub.add_parser("tools", help="list the tools")
    ls.add_argument("--json", action="store_true", help="print names, descriptions and input schemas as JSON")

    sv = sub.add_parser("serve", help="run the MCP server (stdio by default)")
    add_transport_args(sv, SEARCH_HTTP_PORT)
    mon = sub.add_parser("monitor", help="serve the read-only status monitor web page on 127.0.0.1")
    mon.add_argument("--port", type=int, default=MONITOR_HTTP_PORT)
    mon.add_argument("--token", default=None, help="bearer token for /api/* (or LOCAL_MEMORY_HTTP_TOKEN)")
    mon.add_argument("--json", action="store_true", help="print the monitor's address as JSON before serving")
    return p


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def _render_hits(envelope: dict[str, Any], console: Console, err: Console) -> None:
    from rich.markup import escape

    for w in envelope.get("warnings", []):
        err.print(f"[yellow]warning[/] [bold]{w['code']}[/]: {escape(w['message'])}")
    if not envelope.get("ok"):
        e = envelope["error"]
        where = f" (field {e['field']})" if e.get("field") else ""
        err.print(f"[red]error[/] [bold]{e['code']}[/]{where}: {escape(e['message'])}")
        return
    results = envelope.get("results") or []
    offset = envelope.get("offset", 0)
    for i, hit in enumerate(results, start=offset + 1):
        symbol = hit.get("symbol_name") or hit.get("chunk_kind") or ""
        console.print(
            f"[bold]{i:>2}.[/] [cyan]{escape(hit['file_path'])}:{hit['start_line']}-{hit['end_line']}[/]  "
            f"[green]{escape(symbol)}[/]  [dim]score {hit.get('score', 0):.4f}  id {hit['chunk_id']}[/]"
        )
        lines = [ln for ln in (hit.get("text") or hit.get("summary") or "").splitlines() if ln.strip()]
        for line in lines[:SNIPPET_LINES]:
            console.print(f"      [dim]{escape(line[:160])}[/]", highlight=False)
    meta = envelope.get("search", {})
    more = f"; more from --offset {envelope['next_offset']}" if envelope.get("has_more") else ""
    err.print(
        f"[dim]{len(results)} of {envelope.get('total', len(results))} hits ({meta.get('mode', '?')}, "
        f"{meta.get('timings_ms', {}).get('total', 0):.0f} ms){more}[/]"
    )


def cmd_serve(args: argparse.Namespace) -> int:
    """``serve``: the MCP server over stdio or streamable HTTP."""
    from .server import main as serve

    serve(http=args.http, port=args.port, token=args.token)
    return 0


def cmd_monitor(args: argparse.Namespace) -> int:
    """``monitor``: the read-only status monitor web page."""
    from .monitor import serve as serve_monitor

    if args.json:
        _print_json({"ok": True, "data": {"url": f"http://127.0.0.1:{args.port}/"}})
    serve_monitor(port=args.port, token=args.token)
    return 0


def cmd_tool(args: argparse.Namespace) -> int:
    """``tool NAME --args JSON``: one tool in-process, its exact envelope printed."""
    try:
        tool_args = json.loads(args.args)
    except json.JSONDecodeError as exc:
        envelope = error(InvalidArgument(f"--args is not valid JSON: {exc}", field="args"))
    else:
        from .tools import call_tool

        envelope = call_tool(args.name, tool_args)
    _print_json(envelope)
    return 0 if envelope.get("ok") else 1


def cmd_tools(args: argparse.Namespace) -> int:
    """``tools``: the tool list (names and descriptions, or full schemas with --json)."""
    from .tools import TOOLS

    if args.json:
        specs = [
            {
                "name": s.name,
                "description": s.description,
                "read_only": s.read_only,
                "input_schema": s.input_schema(),
            }
            for s in TOOLS.values()
        ]
        _print_json(specs)
        return 0
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    for spec in TOOLS.values():
        console.print(f"[bold]{spec.name}[/]: {escape(spec.description)}")
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    """``query TEXT``: one search, printed readably (or its envelope with --json)."""
    query_args: dict[str, Any] = {"query": args.text, "limit": args.limit, "offset": args.offset}
    if args.project:
        query_args["project_path"] = args.project
    if args.filters:
        try:
            query_args["filters"] = json.loads(args.filters)
        except json.JSONDecodeError:
            query_args["filters"] = args.filters  # let validation name the field
    from .tools import call_tool

    envelope = call_tool(MODES[args.mode], query_args)
    if args.json:
        _print_json(envelope)
    else:
        from rich.console import Console

        # Piped output keeps whole lines (no wrapping at rich's default 80 columns).
        _render_hits(envelope, Console(soft_wrap=True), Console(stderr=True, soft_wrap=True))
    return 0 if envelope.get("ok") else 1


COMMANDS = {
    "serve": cmd_serve,
    "monitor": cmd_monitor,
    "tool": cmd_tool,
    "tools": cmd_tools,
    "query": cmd_query,
}


#: Commands whose process answers once and exits, or serves (settling the collector once built):
#: the cyclic GC stays off while they import (heap.pause_gc).
GC_PAUSED_COMMANDS = {"serve", "query", "tool", "tools"}


def _start_process(prewarm: bool, pause_gc: bool = False) -> None:
    """Cap malloc arenas before any thread starts, then load the query model on a thread while
    the tool layer (LanceDB) imports (issue 14: resident memory, first answer). With ``pause_gc``
    the cyclic collector is off until the server settles it (``server.main``) or the command exits."""
    from local_memory_shared.config import load_settings
    from local_memory_shared.heap import limit_malloc_arenas
    from local_memory_shared.heap import pause_gc as pause_collector

    if pause_gc:
        pause_collector()

    try:
        settings = load_settings()
    except Exception:  # a bad setting is reported by the command itself, with its field
        return
    limit_malloc_arenas(settings.malloc_arenas)
    if prewarm:
        from .encoder import ENCODER

        ENCODER.prewarm(settings)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``local-memory-search`` script."""
    argv = sys.argv[1:] if argv is None else argv
    _start_process(
        prewarm=not argv or argv[0] == "serve" or (argv[0] == "query" and "keyword" not in argv),
        pause_gc=not argv or argv[0] in GC_PAUSED_COMMANDS,
    )
    if not argv:
        from .server import main as serve

        serve()
        return 0
    if argv[0] == "memory":  # agent memory: local-memory-search memory search|get (memory/cli.py)
        from .memory.cli import main as memory_main

        return memory_main(argv[1:])
    args = _parser().parse_args(argv)
    command = COMMANDS.get(args.command)
    if command is None:
        _parser().print_help()
        return 2
    return command(args)


if __name__ == "__main__":
    sys.exit(main())
