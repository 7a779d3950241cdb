"""Streamable HTTP transport: 127.0.0.1 only, optional bearer token answering 401 without it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_harness import INDEXER_CMD, ROOT, SEARCH_CMD, free_port, server_env

TOKEN = "s3cret-token-for-tests"


@contextmanager
def http_server(args: list[str], env: dict[str, str], log: Path) -> Iterator[str]:
    """Run a server with ``--http`` as a subprocess; yield its MCP URL once it accepts connections."""
    port = free_port()
    with open(log, "w") as errlog:
        proc = subprocess.Popen(
            [*args, "--port", str(port)],
            env={**os.environ, **env},
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=errlog,
            stderr=errlog,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                assert proc.poll() is None, f"server exited: {log.read_text()}"
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"server never listened: {log.read_text()}"
                    time.sleep(0.1)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _listening_addresses(port: int) -> set[str]:
    """IPv4 addresses with a LISTEN socket on ``port`` (from /proc/net/tcp, Linux)."""
    out = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        addr_hex, port_hex = local.split(":")
        if state == "0A" and int(port_hex, 16) == port:
            out.add(socket.inet_ntoa(bytes.fromhex(addr_hex)[::-1]))
    return out


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _post(url: str, token: str | None = None) -> httpx.Response:
    headers = dict(HEADERS)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(url, json=INIT, headers=headers, timeout=30)


async def _tools_over_http(url: str, token: str | None) -> tuple[list[str], dict]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}

    @asynccontextmanager
    async def session() -> AsyncIterator[ClientSession]:
        async with httpx2.AsyncClient(headers=headers, timeout=60) as client:
            async with streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    yield s

    async with session() as s:
        names = [t.name for t in (await s.list_tools()).tools]
        first = names[0]
        bad = await s.call_tool(first, {"no_such_argument": 1})
        return names, bad.structured_content


@pytest.fixture(scope="module")
def indexer_url(tmp_path_factory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("http-indexer")
    args = [INDEXER_CMD, "serve", "--http", "--token", TOKEN]
    with http_server(args, server_env(tmp / "data"), tmp / "server.log") as url:
        yield url


def test_without_or_with_a_wrong_token_the_answer_is_401(indexer_url):
    for token in (None, "wrong", TOKEN + "x", TOKEN[:-1]):
        response = _post(indexer_url, token)
        assert response.status_code == 401, token
        assert response.headers["www-authenticate"].lower().startswith("bearer")
        assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_with_the_token_a_real_client_session_works(indexer_url):
    assert _post(indexer_url, TOKEN).status_code == 200
    names, bad = anyio.run(_tools_over_http, indexer_url, TOKEN)
    assert "start_indexing" in names and "delete_project_index" in names
    assert bad["ok"] is False and bad["error"]["code"] == "INVALID_ARGUMENT"


def test_search_server_takes_the_token_from_the_environment(tmp_path):
    args = [SEARCH_CMD, "serve", "--http"]
    env = server_env(tmp_path / "data", LOCAL_MEMORY_HTTP_TOKEN=TOKEN)
    with http_server(args, env, tmp_path / "server.log") as url:
        assert _post(url).status_code == 401
        names, _ = anyio.run(_tools_over_http, url, TOKEN)
    assert "search_hybrid" in names and "delete_project_index" not in names


def test_without_a_token_configured_http_is_open_but_local_only(tmp_path):
    args = [sys.executable, "-m", "local_memory_indexer.server", "--http"]
    env = server_env(tmp_path / "data")
    env["LOCAL_MEMORY_HTTP_TOKEN"] = ""
    with http_server(args, env, tmp_path / "server.log") as url:
        assert _post(url).status_code == 200
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert _listening_addresses(port) == {"127.0.0.1"}
    assert "without a bearer token" in (tmp_path / "server.log").read_text()
