"""The hit channel: a Unix socket (``<data_root>/writer.sock``, mode 0600) the running indexer owns.

The read-only searcher connects and sends one JSON line ``{"ids": [...], "session_id": ...}``;
the indexer answers one JSON line ``{"ok": true, "recorded": n}`` (or ``{"ok": false, "error":
{...}}``). Connecting writes nothing on the searcher's side. A stale socket file (nobody
listening) is replaced; a live one belongs to another indexer and is left alone.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import socketserver
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from local_memory_shared.errors import InvalidArgument, LocalMemoryError

log = logging.getLogger(__name__)
MAX_MESSAGE = 256 * 1024

HitSink = Callable[[list[str], str | None], dict[str, Any]]


def handle_message(line: bytes, sink: HitSink) -> dict[str, Any]:
    """Validate one message and pass it to ``sink``; bad input answers an error, never raises."""
    try:
        msg = json.loads(line.decode("utf-8"))
        if not isinstance(msg, dict):
            raise InvalidArgument("message must be a JSON object", field="message")
        ids, session = msg.get("ids"), msg.get("session_id")
        if not isinstance(ids, list):
            raise InvalidArgument("ids must be a list of record ids", field="ids")
        result = sink(ids, session)
        return {"ok": True, "recorded": len(result.get("recorded", []))}
    except (ValueError, UnicodeDecodeError) as exc:
        return {
            "ok": False,
            "error": {"code": "INVALID_ARGUMENT", "message": f"not JSON: {exc}", "field": "message"},
        }
    except LocalMemoryError as exc:
        return {"ok": False, "error": exc.to_dict()}
    except Exception as exc:  # fail-open: a broken hit never takes the indexer down
        log.exception("hit channel: recording failed")
        return {"ok": False, "error": {"code": "INTERNAL", "message": str(exc)}}


class HitChannel:
    """Serves the socket on a daemon thread until :meth:`close`."""

    def __init__(self, path: Path, sink: HitSink):
        self.path = path
        self.sink = sink
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> bool:
        """Bind and serve; False when another live indexer already owns the socket."""
        if self.path.exists():
            if _alive(self.path):
                log.info("hit channel %s is served by another indexer", self.path)
                return False
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        sink = self.sink

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                self.connection.settimeout(2.0)
                with contextlib.suppress(OSError):
                    line = self.rfile.readline(MAX_MESSAGE)
                    if line.strip():
                        self.wfile.write(json.dumps(handle_message(line, sink)).encode() + b"\n")

        old_umask = os.umask(0o177)
        try:
            server = socketserver.ThreadingUnixStreamServer(str(self.path), Handler)
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="memory-hit-channel", daemon=True)
        self._thread.start()
        return True

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            self._server = None


def _alive(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        try:
            s.connect(str(path))
            return True
        except OSError:
            return False


def send_hits(path: Path, ids: list[str], session_id: str | None, timeout: float = 1.0) -> dict[str, Any]:
    """Client side (tests, tools): send one hit message and read the answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(path))
        s.sendall(json.dumps({"ids": ids, "session_id": session_id}).encode() + b"\n")
        data = s.makefile("rb").readline()
    reply: dict[str, Any] = json.loads(data)
    return reply
