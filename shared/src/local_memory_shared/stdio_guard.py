"""A guard in front of the SDK's stdio transport: every frame is served or answered, never dropped.

The SDK's stdio reader parses each line with pydantic's JSON parser and, when that fails, hands
the exception to the session, which only logs it: a frame nested 200+ levels deep, with a lone
surrogate, a 5,000-digit integer or broken JSON got no reply at all and the client blocked.

:class:`GuardedStdin` reads stdin itself (one line = one frame, at most :data:`MAX_FRAME_BYTES`)
and passes on only the lines the SDK will parse. Any other line is answered here, on the
session's own write stream:

* broken JSON → JSON-RPC ``-32700`` (id null); not a JSON-RPC message → ``-32600``;
* a ``tools/call`` whose arguments break a limit of :func:`.tooling.check_argument_limits`
  → the tool envelope ``INVALID_ARGUMENT`` naming the field (``isError``), like any bad argument.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from .errors import InvalidArgument, LocalMemoryError
from .tooling import MAX_INT_DIGITS, check_argument_limits

log = logging.getLogger(__name__)

#: Largest frame (one stdin line) read; longer lines are answered -32600 and skipped.
MAX_FRAME_BYTES = 4 * 1024 * 1024
PARSE_ERROR = -32700
INVALID_REQUEST = -32600

#: Builds the MCP result of an error envelope (mcp_adapter.envelope_result, injected to avoid a cycle).
EnvelopeResult = Callable[[dict[str, Any]], types.CallToolResult]


def _bounded_int(text: str) -> int:
    # A stand-in just past the limit: the 5,000-digit value itself is never built.
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        bound: int = 10**MAX_INT_DIGITS
        return -bound if text.startswith("-") else bound
    return int(text)


class GuardedStdin:
    """Async line source for ``stdio_server(stdin=...)`` that answers the frames it holds back."""

    def __init__(self, source: BinaryIO, envelope_result: EnvelopeResult):
        self._source = source
        self._envelope_result = envelope_result
        self._replies: Any = None
        self._ready = anyio.Event()

    def attach(self, write_stream: Any) -> None:
        """Give the session's write stream (known only once the transport is open)."""
        self._replies = write_stream
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            raw = await anyio.to_thread.run_sync(self._source.readline, MAX_FRAME_BYTES + 1)
            if not raw:
                return
            if len(raw) > MAX_FRAME_BYTES and not raw.endswith(b"\n"):
                await anyio.to_thread.run_sync(self._skip_line)
                await self._reply_error(None, INVALID_REQUEST, f"frame longer than {MAX_FRAME_BYTES} bytes")
                continue
            line = raw.decode("utf-8", errors="replace")
            if not line.strip():
                continue
            if await self._vetted(line):
                yield line

    def _skip_line(self) -> None:
        while True:
            chunk = self._source.readline(MAX_FRAME_BYTES)
            if not chunk or chunk.endswith(b"\n"):
                return

    async def _vetted(self, line: str) -> bool:
        """True when the SDK can take ``line``; otherwise the frame has been answered here."""
        try:
            frame = json.loads(line, parse_int=_bounded_int)
        except RecursionError:
            await self._reply_error(None, INVALID_REQUEST, "frame nested too deeply")
            return False
        except ValueError as exc:
            await self._reply_error(None, PARSE_ERROR, f"parse error: {exc}")
            return False
        if not isinstance(frame, dict):
            await self._reply_error(None, INVALID_REQUEST, "a frame must be one JSON-RPC object")
            return False
        request_id = _usable_id(frame.get("id"))
        if frame.get("method") == "tools/call" and request_id is not None:
            params = frame.get("params")
            arguments = params.get("arguments") if isinstance(params, dict) else None
            try:
                check_argument_limits(arguments)
            except InvalidArgument as exc:
                await self._reply_envelope(request_id, exc)
                return False
        try:
            check_argument_limits(_without_arguments(frame))
            types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except (InvalidArgument, ValueError) as exc:
            detail = exc.message if isinstance(exc, LocalMemoryError) else str(exc).splitlines()[0]
            await self._reply_error(request_id, INVALID_REQUEST, f"invalid JSON-RPC message: {detail}")
            return False
        return True

    async def _reply_envelope(self, request_id: int | str, exc: LocalMemoryError) -> None:
        from .envelope import error

        result = self._envelope_result(error(exc))
        payload = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        await self._send(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=payload))

    async def _reply_error(self, request_id: int | str | None, code: int, message: str) -> None:
        log.warning("answered a bad stdin frame: %s", message[:200])
        data = types.ErrorData(code=code, message=message[:500])
        await self._send(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=data))

    async def _send(self, message: Any) -> None:
        await self._ready.wait()
        await self._replies.send(SessionMessage(message))


def _without_arguments(frame: dict[str, Any]) -> dict[str, Any]:
    """The frame minus ``params.arguments`` of a tools/call (those were checked as arguments)."""
    params = frame.get("params")
    if frame.get("method") != "tools/call" or not isinstance(params, dict):
        return frame
    return {**frame, "params": {k: v for k, v in params.items() if k != "arguments"}}


def _usable_id(value: Any) -> int | str | None:
    """The frame's id when it can be echoed back (JSON-RPC: a string or an integer)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and abs(value) < 10**MAX_INT_DIGITS:
        return value
    if isinstance(value, str) and len(value) <= 256:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return value
    return None


@asynccontextmanager
async def claimed_stdin() -> AsyncIterator[BinaryIO]:
    """The wire end of fd 0; fd 0 itself reads the null device meanwhile (children never eat frames)."""
    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    # closefd=False: a worker thread may still block in readline when we leave.
    source = os.fdopen(wire, "rb", buffering=65536, closefd=False)
    try:
        yield source
    finally:
        os.dup2(wire, 0)
