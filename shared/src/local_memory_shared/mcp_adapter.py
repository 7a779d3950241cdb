"""The one adapter between a :class:`~.tooling.ToolRegistry` and the MCP SDK (``mcp`` 2.x).

:func:`build_mcp_server` makes the SDK's low-level ``Server`` from a registry through its public
hooks (``on_list_tools``, ``on_call_tool``, ``get_tool_input_schema``), so

* the input schema is exactly the one we publish in ``server.manifest.json`` (the tool's
  pydantic model's schema), not one re-derived from a Python signature;
* every call goes through :meth:`ToolRegistry.call` (the one validation path and error
  boundary) on a worker thread, and every answer is the contract-1.0 envelope, as
  ``structuredContent`` and as JSON text, with ``isError`` exactly when ``ok`` is false.

:func:`run_server` serves stdio by default, or streamable HTTP on 127.0.0.1 behind an optional
bearer token (``--token`` / ``LOCAL_MEMORY_HTTP_TOKEN``).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    ToolAnnotations,
)
from mcp_types import Tool as MCPTool

from .config import http_session_idle_seconds
from .contract import HTTP_HOST, HTTP_PATH, TOKEN_ENV, UNAUTHORIZED
from .tooling import ToolRegistry
from .transport_args import add_transport_args, transport_args

log = logging.getLogger(__name__)

__all__ = [
    "HTTP_HOST",
    "HTTP_MAX_SESSIONS",
    "HTTP_PATH",
    "TOKEN_ENV",
    "BearerTokenMiddleware",
    "add_transport_args",
    "build_mcp_server",
    "envelope_result",
    "http_app",
    "read_only_annotations",
    "run_server",
    "transport_args",
]


def read_only_annotations(title: str | None = None) -> ToolAnnotations:
    """Annotations of a tool that never changes anything (every search-server tool)."""
    return ToolAnnotations(
        title=title, read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )


def envelope_result(envelope: dict[str, Any]) -> CallToolResult:
    """The MCP result of one envelope: ``structuredContent`` plus the same JSON as text."""
    text = json.dumps(envelope, ensure_ascii=False, default=str)
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=json.loads(text),  # default=str above made it plain JSON
        is_error=not envelope.get("ok", False),
    )


def mcp_tools(registry: ToolRegistry[Any]) -> list[MCPTool]:
    """``tools/list``: every tool with its published input schema and annotations."""
    return [
        MCPTool(
            name=s.name, description=s.description, input_schema=s.input_schema(), annotations=s.annotations()
        )
        for s in registry
    ]


def build_mcp_server(
    name: str,
    version: str,
    instructions: str,
    registry: ToolRegistry[Any],
    context: Callable[[], Any],
    after_call: Callable[[], None] | None = None,
    before_call: Callable[[], None] | None = None,
) -> Server[Any]:
    """An MCP server publishing ``registry``; each call gets ``context()`` (settings, job manager…).

    ``before_call`` runs on the worker thread before every tool call (the search server waits there
    for its LanceDB warm-up, so no tool imports LanceDB while that thread does); ``after_call`` runs
    there after every call (the search server's idle heap trim).
    """

    async def on_list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=mcp_tools(registry))

    async def on_call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        # Tool bodies do blocking I/O: run them on a worker thread.
        envelope = await anyio.to_thread.run_sync(_call, params.name, params.arguments)
        return envelope_result(envelope)

    def _call(tool: str, arguments: Any) -> dict[str, Any]:
        if before_call is not None:
            before_call()
        try:
            return registry.call(tool, arguments, context)
        finally:
            if after_call is not None:
                after_call()

    def input_schema(tool: str) -> dict[str, Any] | None:
        spec = registry.specs.get(tool)
        return None if spec is None else spec.input_schema()

    return Server(
        name,
        version=version,
        instructions=instructions,
        get_tool_input_schema=input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


class BearerTokenMiddleware:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``, else 401."""

    def __init__(self, app: Any, token: str):
        if not token:
            raise ValueError("empty bearer token")
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            body = json.dumps(
                {
                    "ok": False,
                    "error": {"code": UNAUTHORIZED, "message": "missing or wrong bearer token"},
                    "warnings": [],
                }
            ).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer realm="local-memory"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: dict[str, Any]) -> bool:
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, credential = value.partition(b" ")
                # Constant-time compare so the token cannot be guessed byte by byte from timings.
                return scheme.lower() == b"bearer" and hmac.compare_digest(credential.strip(), self._token)
        return False


#: Most streamable-HTTP sessions open at once; one more is answered 503 until one ends or expires.
HTTP_MAX_SESSIONS = 1000


def http_app(server: Server[Any], token: str | None = None) -> Any:
    """The streamable-HTTP ASGI app at ``/mcp``, behind the bearer check when a token is given.

    Sessions are bounded: one idle for ``LOCAL_MEMORY_HTTP_SESSION_IDLE_SECONDS`` is closed by the
    SDK's session manager (its memory freed), and at most :data:`HTTP_MAX_SESSIONS` are open.
    """
    app = server.streamable_http_app(
        streamable_http_path=HTTP_PATH,
        host=HTTP_HOST,
        session_idle_timeout=http_session_idle_seconds(),
        max_sessions=HTTP_MAX_SESSIONS,
    )
    return BearerTokenMiddleware(app, token) if token else app


async def _serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    from .stdio_guard import GuardedStdin, claimed_stdin

    # Our reader answers the frames the SDK's reader would drop without a reply (see stdio_guard).
    async with claimed_stdin() as wire:
        guard = GuardedStdin(wire, envelope_result)
        async with stdio_server(stdin=guard) as (read_stream, write_stream):  # type: ignore[arg-type]
            guard.attach(write_stream)
            await server.run(read_stream, write_stream, server.create_initialization_options())


def run_server(server: Server[Any], *, port: int, http: bool = False, token: str | None = None) -> None:
    """Serve over stdio (default) or streamable HTTP on 127.0.0.1:``port``."""
    if not http:
        anyio.run(_serve_stdio, server)
        return
    import uvicorn

    token = token or os.environ.get(TOKEN_ENV) or None
    if not token:
        log.warning("HTTP transport without a bearer token: any local process can call %s", server.name)
    log.warning("%s serving streamable HTTP on http://%s:%d%s", server.name, HTTP_HOST, port, HTTP_PATH)
    # log_config=None keeps uvicorn on our stderr logging instead of its own dictConfig.
    uvicorn.run(http_app(server, token), host=HTTP_HOST, port=port, log_level="warning", log_config=None)
