"""The one adapter between our envelope-returning tools and the MCP SDK (``mcp`` 2.x).

Both servers describe their tools as :class:`ToolDef` (name, description, input JSON schema,
annotations, and a synchronous ``call(arguments) -> envelope``). :class:`EnvelopeServer` is an
``MCPServer`` whose ``list_tools`` / ``call_tool`` come from those definitions, so

* the input schema is exactly the one we publish in ``server.manifest.json`` (a pydantic model's
  schema), not one re-derived from a Python signature;
* every answer is the contract-1.0 envelope, as ``structuredContent`` and as JSON text;
* bad arguments answer ``isError`` with the structured error (code, message, field) instead of
  the SDK's free-text validation message, and the server keeps serving after any error.

:func:`run_server` serves stdio by default, or streamable HTTP on 127.0.0.1 behind an optional
bearer token (``--token`` / ``LOCAL_MEMORY_HTTP_TOKEN``).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from mcp_types import Tool as MCPTool
from pydantic import BaseModel, ValidationError

from .envelope import error
from .errors import InvalidArgument, LocalMemoryError

log = logging.getLogger(__name__)

HTTP_HOST = "127.0.0.1"
HTTP_PATH = "/mcp"
TOKEN_ENV = "LOCAL_MEMORY_HTTP_TOKEN"

#: A tool body: raw JSON arguments in, contract envelope out. Runs on a worker thread.
ToolCall = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class ToolDef:
    """One MCP tool: its contract (name, schema, annotations) and its body."""

    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: ToolAnnotations
    call: ToolCall


def read_only_annotations(title: str | None = None) -> ToolAnnotations:
    """Annotations of a tool that never changes anything (every search-server tool)."""
    return ToolAnnotations(
        title=title, read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )


def validate_args(model: type[BaseModel], arguments: Mapping[str, Any]) -> Any:
    """Validate raw tool arguments with ``model``; failures raise InvalidArgument naming the field."""
    if not isinstance(arguments, Mapping):
        raise InvalidArgument(
            f"arguments must be a JSON object, got {type(arguments).__name__}", field="arguments"
        )
    try:
        return model.model_validate(dict(arguments))
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        field = _dotted(first.get("loc", ())) or "arguments"
        if first["type"] == "extra_forbidden":
            message = f"unknown argument {field!r}; accepted: {', '.join(model.model_fields)}"
        elif first["type"] == "missing":
            message = f"{field} is required"
        else:
            message = f"{field}: {first['msg']}"
        details = {"errors": [{"field": _dotted(e.get("loc", ())), "message": e["msg"]} for e in errors]}
        raise InvalidArgument(message, field=field, details=details) from exc


def _dotted(loc: Iterable[Any]) -> str:
    """``("filters", "tags", 2)`` → ``filters.tags[2]`` (the error's ``field``)."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def coerce_json_strings(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Parse object/array arguments some clients send as JSON text (``'["py"]'``) back into JSON."""
    props = schema.get("properties") or {}
    out = dict(arguments)
    for key, value in arguments.items():
        if not isinstance(value, str) or key not in props:
            continue
        if "string" in _schema_types(props[key], schema):
            continue
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, dict | list):
            out[key] = parsed
    return out


def _schema_types(prop: Mapping[str, Any], root: Mapping[str, Any]) -> set[str]:
    if "$ref" in prop:
        name = str(prop["$ref"]).rsplit("/", 1)[-1]
        prop = (root.get("$defs") or {}).get(name, {})
    kinds: set[str] = set()
    declared = prop.get("type")
    if isinstance(declared, str):
        kinds.add(declared)
    elif isinstance(declared, list):
        kinds.update(str(k) for k in declared)
    if "enum" in prop or "const" in prop:
        kinds.add("string")
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in prop.get(key) or ():
            kinds |= _schema_types(sub, root)
    return kinds


def envelope_result(envelope: dict[str, Any]) -> CallToolResult:
    """The MCP result of one envelope: ``structuredContent`` plus the same JSON as text."""
    text = json.dumps(envelope, ensure_ascii=False, default=str)
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=json.loads(text),  # default=str above made it plain JSON
        is_error=not envelope.get("ok", False),
    )


def run_tool(tool: ToolDef, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """Call a tool body and always come back with an envelope, whatever it raised."""
    try:
        return tool.call(coerce_json_strings(arguments or {}, tool.input_schema))
    except LocalMemoryError as exc:
        return error(exc)
    except Exception as exc:  # the server must keep serving; the traceback goes to stderr
        log.exception("tool %s failed", tool.name)
        return error(LocalMemoryError(f"{tool.name} failed unexpectedly: {type(exc).__name__}: {exc}"))


class EnvelopeServer(MCPServer[Any]):
    """An ``MCPServer`` serving :class:`ToolDef` tools with our schemas and envelopes."""

    def __init__(self, name: str, version: str, instructions: str, tools: Iterable[ToolDef]):
        super().__init__(name=name, version=version, instructions=instructions, log_level="WARNING")
        self.tool_defs: dict[str, ToolDef] = {}
        for tool in tools:
            if tool.name in self.tool_defs:
                raise ValueError(f"duplicate tool {tool.name!r}")
            self.tool_defs[tool.name] = tool

    async def list_tools(self) -> list[MCPTool]:
        """Every tool with its published input schema and annotations."""
        return [
            MCPTool(
                name=t.name, description=t.description, input_schema=t.input_schema, annotations=t.annotations
            )
            for t in self.tool_defs.values()
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:  # type: ignore[override]
        """Run a tool on a worker thread (bodies do blocking I/O) and wrap its envelope."""
        tool = self.tool_defs.get(name)
        if tool is None:
            exc = InvalidArgument(
                f"unknown tool {name!r}; known: {', '.join(sorted(self.tool_defs))}", field="name"
            )
            return envelope_result(error(exc))
        envelope = await anyio.to_thread.run_sync(run_tool, tool, arguments)
        return envelope_result(envelope)

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        tool = self.tool_defs.get(name)
        return None if tool is None else tool.input_schema


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
                    "error": {"code": "UNAUTHORIZED", "message": "missing or wrong bearer token"},
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


def http_app(server: MCPServer[Any], token: str | None = None) -> Any:
    """The streamable-HTTP ASGI app at ``/mcp``, behind the bearer check when a token is given."""
    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=HTTP_HOST)
    return BearerTokenMiddleware(app, token) if token else app


def run_server(
    server: MCPServer[Any], *, http: bool = False, port: int = 8765, token: str | None = None
) -> None:
    """Serve over stdio (default) or streamable HTTP on 127.0.0.1:``port``."""
    if not http:
        server.run("stdio")
        return
    import uvicorn

    token = token or os.environ.get(TOKEN_ENV) or None
    if not token:
        log.warning("HTTP transport without a bearer token: any local process can call %s", server.name)
    log.warning("%s serving streamable HTTP on http://%s:%d%s", server.name, HTTP_HOST, port, HTTP_PATH)
    # log_config=None keeps uvicorn on our stderr logging instead of its own dictConfig.
    uvicorn.run(http_app(server, token), host=HTTP_HOST, port=port, log_level="warning", log_config=None)


def transport_args(prog: str, argv: list[str] | None = None) -> tuple[bool, int, str | None]:
    """Parse ``[--http] [--port N] [--token T]`` for ``python -m <server module>``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog=prog, description="Serve MCP over stdio (default) or streamable HTTP."
    )
    parser.add_argument(
        "--http", action="store_true", help=f"serve streamable HTTP on {HTTP_HOST} instead of stdio"
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--token", default=None, help=f"bearer token required on HTTP (or {TOKEN_ENV})")
    args = parser.parse_args(argv)
    return args.http, args.port, args.token
