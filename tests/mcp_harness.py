"""Test harness for the MCP tests: real servers over stdio / HTTP, driven through the SDK client.

:func:`stdio_session` starts a server's installed console script as a subprocess and opens a
``ClientSession`` on it; a blocking portal (an event loop on a helper thread) lets plain pytest
tests and module-scoped fixtures share that one session synchronously.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO, Any

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
INDEXER_CMD = str(BIN / "local-memory-indexer")
SEARCH_CMD = str(BIN / "local-memory-search")


def load_manifest_tool() -> Any:
    """``scripts/manifest.py`` as a module (generator, contract view and hash)."""
    spec = importlib.util.spec_from_file_location("lm_manifest_script", ROOT / "scripts" / "manifest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def server_env(data_root: Path, **extra: str) -> dict[str, str]:
    """Environment of a server subprocess: the data root plus what the host already set for models."""
    env = {"LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    for name in ("EMBED_BACKEND", "EMBED_MODEL", "LOCAL_MEMORY_EMBED_THREADS", "TMPDIR"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    env.update(extra)
    return env


def write_project(root: Path, files: dict[str, str]) -> Path:
    """Write a fixture project (dedented texts) under ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class SyncSession:
    """A ``ClientSession`` usable from synchronous code through a blocking portal."""

    def __init__(self, portal: BlockingPortal, session: ClientSession):
        self.portal = portal
        self.session = session

    def list_tools(self) -> list[dict[str, Any]]:
        """``tools/list`` as wire JSON dicts."""
        result = self.portal.call(self.session.list_tools)
        return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in result.tools]

    def call_raw(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """``tools/call``; returns the SDK's CallToolResult."""
        return self.portal.call(self.session.call_tool, name, arguments or {})

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """``tools/call``; returns the envelope and checks isError agrees with it."""
        result = self.call_raw(name, arguments)
        envelope = result.structured_content
        assert isinstance(envelope, dict), f"{name}: no structuredContent in {result}"
        assert result.is_error == (not envelope["ok"]), (
            f"{name}: isError disagrees with the envelope {envelope}"
        )
        assert result.content and result.content[0].type == "text"
        return envelope

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """``call`` that must succeed."""
        envelope = self.call(name, arguments)
        assert envelope["ok"], f"{name}({arguments}) failed: {envelope}"
        return envelope


@contextmanager
def stdio_session(
    command: str, env: dict[str, str], errlog: IO[str], args: list[str] | None = None
) -> Iterator[SyncSession]:
    """Start ``command`` as a stdio MCP server subprocess and yield an initialised session on it."""

    @asynccontextmanager
    async def open_session() -> AsyncIterator[ClientSession]:
        params = StdioServerParameters(command=command, args=args or [], env=env, cwd=str(ROOT))
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=300) as session:
                await session.initialize()
                yield session

    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(open_session()) as session:
            yield SyncSession(portal, session)


@contextmanager
def memory_session(server: Any) -> Iterator[SyncSession]:
    """An initialised session on an in-process server (the SDK's in-memory transport)."""
    from mcp import Client

    @asynccontextmanager
    async def open_session() -> AsyncIterator[ClientSession]:
        async with Client(server) as client:
            yield client.session

    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(open_session()) as session:
            yield SyncSession(portal, session)
