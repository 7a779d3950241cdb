"""``local-memory-indexer``: a thin CLI over the library. With no arguments it serves MCP over stdio."""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import sys
from typing import TYPE_CHECKING, Any

from local_memory_shared.config import load_settings
from local_memory_shared.contract import INDEXER_HTTP_PORT
from local_memory_shared.envelope import error, ok  # ok(): the envelope ToolResult gives, without pydantic
from local_memory_shared.errors import InvalidArgument, LocalMemoryError, StoreError
from local_memory_shared.heap import limit_malloc_arenas_from_settings
from local_memory_shared.priority import lower_cpu_priority
from local_memory_shared.transport_args import add_transport_args

from .memory.cli import add_doctor_parser, add_memory_parser

if TYPE_CHECKING:
    # Imported by ``cmd_index``: a run that writes pulls in LanceDB and pyarrow, whose threads
    # must start after ``main`` has capped the malloc arenas.
    from .plan import IndexSummary


class RichProgress:
    """A progress bar on a terminal (stderr), one task per phase."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description:<8}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._files = self._progress.add_task("files", total=None)
        self._chunks = self._progress.add_task("embed", total=None)
        self._phase = self._progress.add_task("walk", total=None, visible=False)

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def phase(self, name: str) -> None:
        self._progress.update(self._phase, description=name)

    def files(self, done: int, total: int) -> None:
        self._progress.update(self._files, completed=done, total=total)

    def chunks(self, embedded: int, total: int) -> None:
        self._progress.update(self._chunks, completed=embedded, total=total)


def _print_summary(summary: IndexSummary) -> None:
    s = summary
    skipped = ", ".join(f"{k} {v}" for k, v in s.files_skipped.items()) or "none"
    langs = ", ".join(f"{k} {v}" for k, v in s.languages.items()) or "none"
    phases = ", ".join(f"{k} {v:.2f}s" for k, v in s.seconds.items())
    state = "cancelled" if s.cancelled else "done"
    print(f"{state}: {s.project_path}  ({s.backend}/{s.model}, {s.dimension}d)")
    print(
        f"  files: {s.files_parsed} parsed, {s.files_unchanged} unchanged, {s.files_deleted} deleted, {s.files_failed} failed"
    )
    print(f"  skipped: {skipped}")
    print(
        f"  chunks: {s.chunks_written} written, {s.chunks_embedded} embedded, {s.chunks_reused} reused, "
        f"{s.chunks_deleted} deleted, {s.chunks_total} in index"
    )
    print(f"  languages: {langs}")
    print(f"  phases: {phases}")
    for err in s.errors[:20]:
        print(f"  error: {err}")


def _emit(obj: Any) -> None:
    print(json.dumps(obj, indent=2, sort_keys=False, default=str))


def cmd_index(args: argparse.Namespace) -> int:
    paths = list(args.path)
    for path in paths:
        if not path.strip():  # Path("") would resolve to the working directory
            raise InvalidArgument("path is empty: pass the project folder (e.g. '.')", field="path")
    if (args.address or args.ray_actors is not None) and not args.ray:
        raise InvalidArgument("--address and --ray-actors need --ray", field="address")
    settings = load_settings()
    # Searches first: a (re-)index is throughput work beside a person waiting (shared.priority).
    lower_cpu_priority(settings.index_nice, idle=settings.index_idle)
    embedder = None
    parser = None
    if args.ray:
        from .distributed import RayEmbedder, RayParser

        embedder = RayEmbedder(args.address, args.ray_actors)
        parser = RayParser()
    summaries: list[IndexSummary] = []
    try:
        for path in paths:
            summaries.append(_index_one(args, path, settings, embedder, parser))
    finally:
        if embedder is not None:
            embedder.close()
    if args.json:
        if len(summaries) == 1:
            _emit(ok(data=summaries[0].to_dict(), warnings=[]))
        else:
            _emit(ok(results=[s.to_dict() for s in summaries], warnings=[]))
    elif not args.quiet:
        for summary in summaries:
            _print_summary(summary)
    return 0


def _index_one(
    args: argparse.Namespace, path: str, settings: Any, embedder: Any, parser: Any
) -> IndexSummary:
    """One project of an ``index`` command (``embedder`` None = the local model, opened per project;
    ``parser`` None = parse here or in a local pool)."""
    from .indexing import index_project

    show_bar = not args.json and not args.quiet and sys.stderr.isatty()
    kwargs: dict[str, Any] = {
        "full": args.full,
        "rebuild": args.rebuild,
        "embedder": embedder,
        "parser": parser,
    }
    if show_bar:
        with RichProgress() as bar:
            return index_project(path, settings=settings, progress=bar, **kwargs)
    return index_project(path, settings=settings, **kwargs)


def cmd_list(args: argparse.Namespace) -> int:
    from .projects import list_projects

    projects = list_projects(load_settings())
    if args.json:
        _emit(ok(results=projects, warnings=[]))
    else:
        if not projects:
            print("no indexed projects under", load_settings().data_root)
        for p in projects:
            print(
                f"{p['project_path']}  files={p['files']} chunks={p['chunks']} "
                f"{p['backend']}/{p['model']} {p['dimension']}d  last={p['last_indexed_at']} status={p['status']}"
            )
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from .projects import delete_project_index

    result = delete_project_index(load_settings(), args.path)
    if args.json:
        _emit(ok(data=result, warnings=[]))
    else:
        print(f"deleted index of {result['project_path']}" if result["deleted"] else "no index to delete")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used by the docs test)."""
    parser = argparse.ArgumentParser(
        prog="local-memory-indexer",
        description="Index projects for Local Memory search. With no arguments: MCP server over stdio.",
    )
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("index", help="index (or incrementally re-index) one or more projects")
    p.add_argument("path", nargs="+", help="project folder(s), indexed one after another")
    p.add_argument(
        "--full", action="store_true", help="re-parse every file (embeddings still come from the cache)"
    )
    p.add_argument(
        "--rebuild", action="store_true", help="drop the index and rebuild it (required to switch model)"
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.add_argument(
        "--ray",
        action="store_true",
        help="parse and embed on a Ray cluster (needs local-memory-indexer[distributed]); this process commits",
    )
    p.add_argument(
        "--address", default=None, help="Ray cluster to join (ray://host:10001); default: start one"
    )
    p.add_argument(
        "--ray-actors", type=int, default=None, help="embedding actors (default: the cluster's CPUs - 1)"
    )
    p.set_defaults(func=cmd_index)
    p = sub.add_parser("list", help="list indexed projects")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("delete", help="delete a project's index")
    p.add_argument("path")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_delete)
    p = sub.add_parser("serve", help="run the MCP server (stdio by default)")
    add_transport_args(p, INDEXER_HTTP_PORT)
    p.set_defaults(func=cmd_serve)
    add_memory_parser(sub)
    add_doctor_parser(sub)
    p = sub.add_parser("setup-client", help="add both MCP servers to a client's config (merged, backed up)")
    p.add_argument("client", choices=["claude-desktop", "claude-code", "cursor", "vscode"])
    p.add_argument("--print", action="store_true", help="print the entries instead of writing the config")
    p.add_argument("--config", default=None, help="config file to merge into (default: the client's own)")
    p.add_argument("--project", default=None, help="default project for the searcher (optional)")
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p.set_defaults(func=cmd_setup_client)
    return parser


def cmd_setup_client(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .clients import CLIENTS, setup_client

    result = setup_client(
        args.client,
        data_root=load_settings().data_root,
        config_path=Path(args.config).expanduser() if args.config else None,
        default_project=args.project,
        write=not args.print,
    )
    if args.json:
        _emit({"ok": True, "data": result.to_dict(), "warnings": []})
    elif args.print:
        _emit({CLIENTS[args.client].servers_key: result.servers})
    else:
        backup = f" (backup: {result.backup_path})" if result.backup_path else ""
        print(f"wrote {', '.join(result.servers)} to {result.config_path}{backup}", file=sys.stderr)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from .server import main as serve

    serve(http=args.http, port=args.port, token=args.token)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``local-memory-indexer``."""
    # Before LanceDB starts its writer threads: they would otherwise spread the heap over up to
    # 8 arenas per core and keep each one's freed pages (peak RSS, issue 14; shared.heap).
    limit_malloc_arenas_from_settings()
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    if not argv:
        from .server import main as serve

        serve()
        return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except LocalMemoryError as exc:
        return _fail(args, exc)
    except (
        OSError,
        sqlite3.Error,
    ) as exc:  # a read-only data root, a full disk: an envelope, not a traceback
        return _fail(args, StoreError(f"{type(exc).__name__}: {exc}"))


def _fail(args: argparse.Namespace, exc: LocalMemoryError) -> int:
    """Report a fatal error (the JSON error envelope with --json) and give the exit code."""
    if getattr(args, "json", False):
        _emit(error(exc))
    else:
        print(f"error [{exc.code}]: {exc.message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
