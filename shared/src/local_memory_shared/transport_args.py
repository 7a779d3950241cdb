"""``--http``, ``--port`` and ``--token`` of every MCP server's command line.

Apart from :mod:`.mcp_adapter` (which re-exports both functions) so that a CLI can build its
parser without importing the MCP SDK.
"""

from __future__ import annotations

from typing import Any

from .contract import HTTP_HOST, TOKEN_ENV

__all__ = ["add_transport_args", "transport_args"]


def add_transport_args(parser: Any, default_port: int) -> None:
    """Add ``--http``, ``--port`` (default: the server's contract port) and ``--token`` to ``parser``."""
    parser.add_argument(
        "--http", action="store_true", help=f"serve streamable HTTP on {HTTP_HOST} instead of stdio"
    )
    parser.add_argument("--port", type=int, default=default_port, help=f"HTTP port (default {default_port})")
    parser.add_argument("--token", default=None, help=f"bearer token required on HTTP (or {TOKEN_ENV})")


def transport_args(
    prog: str, default_port: int, argv: list[str] | None = None
) -> tuple[bool, int, str | None]:
    """Parse ``[--http] [--port N] [--token T]`` for ``python -m <server module>``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog=prog, description="Serve MCP over stdio (default) or streamable HTTP."
    )
    add_transport_args(parser, default_port)
    args = parser.parse_args(argv)
    return args.http, args.port, args.token
