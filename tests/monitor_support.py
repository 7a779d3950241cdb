"""A real status-monitor process over a real indexed fixture project, for the monitor's tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from search_support import FILES, index, write_project

GRAPH_FILES = {
    "app/main.py": "from app.db import initialize\n\n\ndef main():\n    initialize()\n",
    "app/db.py": (
        "def dial(url):\n    return url\n\n\n"
        "def initialize():\n    return dial('x')\n\n\n"
        "def ping():\n    return dial('y')\n"
    ),
}
TOKEN = "s3cret-token"


def free_port() -> int:
    """An unused TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Monitor:
    """A running ``local-memory-search monitor`` process."""

    url: str
    project: str
    data_root: Path
    proc: subprocess.Popen[bytes]

    def get(self, path: str, *, token: str | None = TOKEN, host: str | None = None) -> tuple[int, Any]:
        """GET a route; returns (status, parsed JSON or text)."""
        req = urllib.request.Request(self.url + path)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        if host:
            req.add_header("Host", host)
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                status, body = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, body = exc.code, exc.read()
        try:
            return status, json.loads(body)
        except ValueError:
            return status, body.decode("utf-8", "replace")


def build_project(root: Path) -> tuple[Path, Path]:
    """Write and index the fixture project (code + call graph) and a memory vault; returns (project, data_root)."""
    project = write_project(root / "proj", {**FILES, **GRAPH_FILES}, git=False)
    data_root = root / "data"
    index(project, data_root)
    write_memories(project, data_root)
    return project, data_root


#: Record ids of the fixture vault by role (filled by :func:`write_memories`).
MEMORY: dict[str, str] = {}


def write_memories(project: Path, data_root: Path) -> None:
    """A small real vault for the fixture project: a trap, an untagged note, scratch, a supersession."""
    from local_memory_indexer.memory.writer import MemoryWriter
    from local_memory_shared.config import load_memory_settings
    from local_memory_shared.memory.model import project_for_cwd
    from search_support import env

    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data_root), LOCAL_MEMORY_VAULT=None):
        writer = MemoryWriter(load_memory_settings(), commit_delay=0.0)
        try:
            slug = project_for_cwd(str(project))
            base = {"project": slug}
            MEMORY["trap"] = writer.write(
                {**base, "kind": "trap", "title": "Pool connections leak on retry", "severity": "high",
                 "content": "ConnectionPool.connect retries without closing the socket.", "tags": ["db", "retry"]}
            ).record.id  # fmt: skip
            MEMORY["untagged"] = writer.write(
                {**base, "kind": "note", "title": "Untagged note about caching", "content": "LRU sizes."}
            ).record.id
            MEMORY["scratch"] = writer.write(
                {**base, "kind": "scratch", "title": "Scratch: try a bigger pool", "tags": ["db"]}
            ).record.id
            MEMORY["old"] = writer.write(
                {**base, "kind": "decision", "title": "Cache sessions in memcached", "tags": ["cache"]}
            ).record.id
            MEMORY["new"] = writer.supersede(
                MEMORY["old"],
                {"title": "Cache sessions in Redis", "tags": ["cache", "redis"], "content": "1h TTL."},
            ).record.id
        finally:
            writer.close()


def start_monitor(project: Path, data_root: Path, *, token: str = TOKEN) -> Monitor:
    """Start the monitor CLI as a real subprocess and wait until it answers."""
    port = free_port()
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root), "LOCAL_MEMORY_HTTP_TOKEN": ""}
    exe = Path(sys.executable).with_name("local-memory-search")
    cmd = [str(exe), "monitor", "--port", str(port), "--token", token]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    mon = Monitor(url=f"http://127.0.0.1:{port}", project=str(project), data_root=data_root, proc=proc)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"monitor exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            if mon.get("/api/health")[0] == 200:
                return mon
        except OSError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("monitor did not start in 60 s")


def stop_monitor(mon: Monitor) -> None:
    """Stop the monitor process."""
    mon.proc.terminate()
    try:
        mon.proc.communicate(timeout=10)  # reaps it and closes its stderr pipe
    except subprocess.TimeoutExpired:
        mon.proc.kill()
        mon.proc.communicate()
