"""Memory write tools through MCP (in-process and a real stdio subprocess) and the hit socket."""

from __future__ import annotations

import shutil
import socket
import sqlite3
import stat
import tempfile
import time
from pathlib import Path

import pytest
from local_memory_indexer.memory.channel import send_hits
from local_memory_indexer.server import build_server
from mcp_harness import INDEXER_CMD, memory_session, server_env, stdio_session


@pytest.fixture
def root(monkeypatch):
    path = Path(tempfile.mkdtemp(prefix="lmm", dir="/tmp"))  # short: AF_UNIX paths are limited
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(path))
    monkeypatch.delenv("LOCAL_MEMORY_VAULT", raising=False)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_memory_tools_in_process(root):
    server = build_server()
    with memory_session(server) as s:
        tools = {t["name"]: t for t in s.list_tools()}
        assert tools["memory_archive"]["annotations"]["destructiveHint"] is True
        assert not tools["memory_write"]["annotations"].get("destructiveHint")
        w = s.ok(
            "memory_write",
            {
                "project": "acme",
                "kind": "trap",
                "title": "Redis lock expiry",
                "content": "Set a TTL.",
                "tags": ["redis"],
            },
        )["data"]
        assert w["tags_indexed"] == 1 and w["version"] == 1 and w["path"].startswith("projects/acme/trap/")
        bad = s.call("memory_write", {"project": "acme", "kind": "trap", "title": "x", "severity": "huge"})
        assert bad["error"]["code"] == "INVALID_ARGUMENT" and bad["error"]["field"] == "severity"
        unknown = s.call("memory_write", {"kind": "trap", "title": "x", "colour": "red"})
        assert unknown["error"]["field"] == "colour"
        e = s.ok("memory_edit", {"id": w["id"], "append": "Also on retries.", "expected_version": 1})["data"]
        assert e["version"] == 2
        stale = s.call("memory_edit", {"id": w["id"], "append": "late", "expected_version": 1})
        assert stale["error"]["code"] == "VERSION_CONFLICT" and stale["error"]["field"] == "expected_version"
        sup = s.ok("memory_supersede", {"old_id": w["id"], "title": "Redis lock expiry (v2)"})["data"]
        assert sup["supersedes"] == w["id"]
        hits = s.ok("memory_record_hits", {"ids": [sup["id"], "nope"], "session_id": "s"})["data"]
        assert hits["recorded"] == [sup["id"]]
        assert s.ok("memory_archive", {"id": sup["id"]})["data"]["status"] == "archived"
        untagged = s.ok("memory_write", {"project": "acme", "kind": "note", "title": "plain"})
        assert [w_["code"] for w_ in untagged["warnings"]] == ["untagged"]
        assert s.ok("memory_sync", {})["data"]["malformed"] == []


def test_running_indexer_receives_hits_on_its_socket(root, tmp_path):
    sock = root / "writer.sock"
    with (
        (tmp_path / "err.log").open("w") as errlog,
        stdio_session(INDEXER_CMD, server_env(root), errlog) as s,
    ):
        rec = s.ok(
            "memory_write",
            {
                "project": "acme",
                "kind": "decision",
                "title": "Use Postgres",
                "content": "for billing",
                "tags": ["db"],
            },
        )["data"]
        deadline = time.time() + 30
        while not sock.exists() and time.time() < deadline:
            time.sleep(0.1)
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
        assert send_hits(sock, [rec["id"], "01ARZ3NDEKTSV4RRFFQ69G5FAV"], "sess") == {
            "ok": True,
            "recorded": 1,
        }
        assert send_hits(sock, [rec["id"]], "sess") == {"ok": True, "recorded": 0}  # same session
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:  # garbage loses nothing
            c.settimeout(5)
            c.connect(str(sock))
            c.sendall(b"{not json\n")
            assert b'"ok": false' in c.makefile("rb").readline()
        assert send_hits(sock, [rec["id"]], None) == {"ok": True, "recorded": 1}
        conn = sqlite3.connect(root / "memory" / "index.db")
        assert conn.execute("SELECT hits FROM memory_hits WHERE id = ?", (rec["id"],)).fetchone()[0] == 2
    assert not sock.exists()  # removed when the server exits
