"""Issue 15.7/15.9: every MCP frame gets an answer, bad arguments are INVALID_ARGUMENT, sessions expire.

Each stdio case starts the real console script, writes the raw frame bytes to its stdin and
must read a reply within a timeout, then the same server still answers a normal call. Before
the stdio guard, the deep/surrogate/huge-integer/broken frames got no reply at all.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from local_memory_shared.errors import InvalidArgument
from local_memory_shared.paths import normalize_project_path
from local_memory_shared.tooling import MAX_ARGUMENT_DEPTH, check_argument_limits
from mcp_harness import INDEXER_CMD, ROOT, SEARCH_CMD, free_port, server_env

REPLY_TIMEOUT = 20.0
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


class RawStdio:
    """A server subprocess spoken to in raw bytes, one JSON-RPC frame per line."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc = proc

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], REPLY_TIMEOUT)
        assert ready, f"no reply within {REPLY_TIMEOUT}s (server alive: {self.proc.poll() is None})"
        line = self.proc.stdout.readline()
        assert line, "server closed stdout"
        return json.loads(line)

    def call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        frame = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
        self.send(json.dumps({**frame, "params": {"name": tool, "arguments": arguments}}).encode())
        return self.reply()


@contextmanager
def raw_server(cmd: str, tmp_path: Path) -> Iterator[RawStdio]:
    """An initialized stdio server taking raw bytes."""
    with open(tmp_path / "server.log", "wb") as log:
        proc = subprocess.Popen(
            [cmd],
            cwd=ROOT,
            env={**os.environ, **server_env(tmp_path / "data")},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        try:
            raw = RawStdio(proc)
            raw.send(json.dumps(INIT).encode())
            assert raw.reply()["id"] == 0
            raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            yield raw
        finally:
            proc.kill()
            proc.communicate()  # reaps it and closes stdin/stdout


def nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


def tool_frame(tool: str, arguments_json: str) -> bytes:
    params = f'{{"name":"{tool}","arguments":{arguments_json}}}'
    return f'{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}'.encode()


def envelope(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["id"] == 1, reply
    result = reply["result"]
    assert result["isError"] is True
    return result["structuredContent"]


def assert_still_serving(raw: RawStdio, tool: str) -> None:
    reply = raw.call(7, tool, {})
    assert reply["id"] == 7 and reply["result"]["structuredContent"]["ok"] is True, reply


BAD_ARGUMENTS = {
    "nested_250": ('{"query":' + nested(250) + "}", "query", "nested deeper"),
    "nested_900": ('{"query":' + nested(900) + "}", "query", "nested deeper"),
    "lone_surrogate": ('{"query":"a\\ud800b"}', "query", "lone surrogate"),
    "huge_integer": ('{"query":"x","limit":' + "9" * 5000 + "}", "limit", "digits"),
    "nul_project_path": ('{"project_path":"/tmp/a\\u0000b"}', "project_path", "NUL"),
    "too_long_project_path": ('{"project_path":"/' + "a" * 5000 + '"}', "project_path", "too long"),
}


@pytest.mark.parametrize("case", sorted(BAD_ARGUMENTS))
def test_bad_arguments_answer_invalid_argument_over_raw_stdio(case: str, tmp_path: Path) -> None:
    arguments, field, words = BAD_ARGUMENTS[case]
    tool = "health_check" if "project_path" in field else "search_keyword"
    with raw_server(SEARCH_CMD, tmp_path) as raw:
        raw.send(tool_frame(tool, arguments))
        error = envelope(raw.reply())["error"]
        assert error["code"] == "INVALID_ARGUMENT" and error["field"] == field, error
        assert words in error["message"], error
        assert_still_serving(raw, "health_check")


BAD_FRAMES = {
    "truncated_json": (b'{"jsonrpc":"2.0","id":1,"method":', None, -32700),
    "trailing_garbage": (b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}x', None, -32700),
    "not_an_object": (b"[1,2,3]", None, -32600),
    "params_not_object": (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":5}', 1, -32600),
    "nested_5000_frame": (b'{"jsonrpc":"2.0","id":1,"x":' + nested(5000).encode() + b"}", None, -32600),
    "huge_id": (b'{"jsonrpc":"2.0","id":' + b"1" * 5000 + b',"method":"ping"}', None, -32600),
    "wrong_jsonrpc_version": (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', 1, -32600),
    "frame_over_4_MiB": (b'{"jsonrpc":"2.0","id":1,"x":"' + b"a" * (5 * 1024 * 1024) + b'"}', None, -32600),
}


@pytest.mark.parametrize("case", sorted(BAD_FRAMES))
def test_malformed_frames_get_a_jsonrpc_error_over_raw_stdio(case: str, tmp_path: Path) -> None:
    frame, request_id, code = BAD_FRAMES[case]
    with raw_server(SEARCH_CMD, tmp_path) as raw:
        raw.send(frame)
        reply = raw.reply()
        assert reply["id"] == request_id and reply["error"]["code"] == code, reply
        assert_still_serving(raw, "health_check")


def test_indexer_answers_deep_and_broken_frames_and_keeps_serving(tmp_path: Path) -> None:
    with raw_server(INDEXER_CMD, tmp_path) as raw:
        raw.send(tool_frame("list_projects", '{"x":' + nested(300) + "}"))
        error = envelope(raw.reply())["error"]
        assert error["code"] == "INVALID_ARGUMENT" and error["field"] == "x", error
        raw.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_projects"')
        assert raw.reply()["error"]["code"] == -32700
        assert_still_serving(raw, "list_projects")


def test_argument_limits_hold_on_the_shared_validation_path() -> None:
    """The same limits hold for HTTP and in-process calls (ToolRegistry.call → validate_args)."""
    deep: Any = 1
    for _ in range(MAX_ARGUMENT_DEPTH + 1):
        deep = [deep]
    with pytest.raises(InvalidArgument) as exc:
        check_argument_limits({"filters": {"tags": deep}})
    assert exc.value.field == "filters"
    with pytest.raises(InvalidArgument) as exc:
        check_argument_limits({"filters": {"tags": ["ok", "\udcff"]}})
    assert exc.value.field == "filters.tags[1]"
    check_argument_limits({"filters": {"tags": ["py"]}, "limit": 2**63})
    for bad in ("/tmp/a\x00b", "/" + "a" * 5000, "/" + "/".join(["b" * 200] * 30)):
        with pytest.raises(InvalidArgument) as exc:
            normalize_project_path(bad)
        assert exc.value.field == "project_path"


def _rss_mib(pid: int) -> float:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


def _open_sessions(client: httpx.Client, url: str, n: int) -> list[str]:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    return [client.post(url, json=INIT, headers=headers).headers["mcp-session-id"] for _ in range(n)]


def test_idle_http_sessions_expire_and_memory_stays_bounded(tmp_path: Path) -> None:
    """300 abandoned sessions per round: all reaped (their ids answer 404) and RSS does not grow per round."""
    port = free_port()
    env = {**os.environ, **server_env(tmp_path / "data", LOCAL_MEMORY_HTTP_SESSION_IDLE_SECONDS="2")}
    with open(tmp_path / "http.log", "wb") as log:
        proc = subprocess.Popen(
            [SEARCH_CMD, "serve", "--http", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        with httpx.Client(timeout=30) as client:
            deadline = time.monotonic() + 60
            while True:
                assert proc.poll() is None, (tmp_path / "http.log").read_text()
                try:
                    _open_sessions(client, url, 20)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, "server never listened"
                    time.sleep(0.2)
            rss = []
            for _ in range(3):
                ids = _open_sessions(client, url, 300)
                time.sleep(5)  # > idle timeout (2 s) + the SDK's reaping
                rss.append(_rss_mib(proc.pid))
                headers = {
                    "accept": "application/json, text/event-stream",
                    "mcp-session-id": ids[0],
                    "mcp-protocol-version": "2025-06-18",
                }
                ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
                assert client.post(url, json=ping, headers=headers).status_code == 404
        # Unreaped, each round of 300 sessions kept ~11 MiB; reaped, later rounds reuse the memory.
        assert rss[2] - rss[0] < 4.0, rss
    finally:
        proc.terminate()
        proc.wait(timeout=15)
