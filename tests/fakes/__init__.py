"""Loopback HTTP fakes for services that cannot run here (Ollama, Gemini), with scripted faults.

A fake listens on 127.0.0.1 on a free port in a daemon thread, logs every request, and before
answering normally consumes the next scripted :class:`Fault` queued for that route (or applies a
standing one). Use it as a context manager::

    with FakeOllama(dimension=8) as server:
        server.script("/api/embed", Fault.http(500), Fault.http(429))
        ...  # point the client at server.url
        assert [r.status for r in server.requests_to("/api/embed")] == [500, 429, 200]
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

__all__ = ["FakeHTTPServer", "Fault", "RecordedRequest", "ReplyFn", "Response", "text_vector"]

#: Computes an LLM fake's answer text from the parsed request body.
ReplyFn = Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour: an error status, a delay, a garbage body, wrong dimensions, a hang-up."""

    kind: str
    status: int = 200
    message: str = ""
    delay: float = 0.0
    dimension: int | None = None

    @classmethod
    def http(cls, status: int, message: str = "") -> Fault:
        """Answer with this HTTP status and the service's own error body."""
        return cls("status", status=status, message=message or f"scripted failure {status}")

    @classmethod
    def slow(cls, seconds: float) -> Fault:
        """Sleep, then answer normally (pair with a short client timeout)."""
        return cls("delay", delay=seconds)

    @classmethod
    def garbage(cls, status: int = 200) -> Fault:
        """Answer with a body that is not JSON."""
        return cls("garbage", status=status)

    @classmethod
    def wrong_dimension(cls, dimension: int) -> Fault:
        """Answer an embedding request normally but with vectors of ``dimension``."""
        return cls("wrong_dimension", dimension=dimension)

    @classmethod
    def disconnect(cls) -> Fault:
        """Close the connection without answering."""
        return cls("disconnect")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake saw it (lower-cased header names); status None: hung up or not answered yet."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float
    status: int | None
    fault: Fault | None


@dataclass
class Response:
    """What a route handler returns."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    content_type: str = "application/json"
    chunks: list[bytes] | None = None  # streamed (NDJSON) answers


def text_vector(text: str, dimension: int, *, normalized: bool = True) -> list[float]:
    """A deterministic pseudo-embedding: equal texts give equal vectors, different texts differ."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vector = np.random.default_rng(seed).normal(size=dimension)
    if normalized:
        vector /= np.linalg.norm(vector)
    else:
        vector *= 3.0  # clearly not unit length, so a missing client-side normalisation shows
    return [float(x) for x in vector]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up makes the late answer fail with a broken pipe;
        # that is the scenario under test, not an error of the fake.
        pass


@dataclass
class _Script:
    queued: dict[str, deque[Fault]] = field(default_factory=lambda: defaultdict(deque))
    standing: dict[str, Fault] = field(default_factory=dict)


class FakeHTTPServer:
    """Base of the fakes: threading, request log, fault scripting; subclasses define ``route``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._log: list[RecordedRequest] = []
        self._script = _Script()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeHTTPServer:
        """Listen on 127.0.0.1:<free port> in a daemon thread."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                fake._handle(self)

            def do_POST(self) -> None:
                fake._handle(self)

            def do_DELETE(self) -> None:
                fake._handle(self)

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

        server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        assert self._server is not None, "start() the fake first"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """Base URL, e.g. http://127.0.0.1:43121."""
        return f"http://127.0.0.1:{self.port}"

    # -- scripting and log -----------------------------------------------------------------
    def script(self, path: str, *faults: Fault) -> None:
        """Queue faults for the next requests whose route key is ``path`` (one fault per request)."""
        with self._lock:
            self._script.queued[path].extend(faults)

    def always(self, path: str, fault: Fault | None) -> None:
        """Apply ``fault`` to every request on ``path`` (after the queue); None clears it."""
        with self._lock:
            if fault is None:
                self._script.standing.pop(path, None)
            else:
                self._script.standing[path] = fault

    def reset(self) -> None:
        """Forget the log and every scripted fault."""
        with self._lock:
            self._log.clear()
            self._script = _Script()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, in arrival order."""
        with self._lock:
            return list(self._log)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """Requests whose route key is ``path``."""
        return [r for r in self.requests if self.route_key(r.path) == path]

    # -- subclass hooks ----------------------------------------------------------------------
    def route_key(self, path: str) -> str:
        """The key faults are scripted under; by default the path without its query string."""
        return path.split("?", 1)[0]

    def route(
        self, method: str, path: str, headers: dict[str, str], body: Any, fault: Fault | None
    ) -> Response:
        """Answer one request normally (``fault`` is only ever ``wrong_dimension`` here)."""
        raise NotImplementedError

    def error_response(self, status: int, message: str) -> Response:
        """The service's own error body for ``status``."""
        return Response(status, {"error": message})

    # -- request handling --------------------------------------------------------------------
    def _next_fault(self, key: str) -> Fault | None:
        with self._lock:
            queue = self._script.queued.get(key)
            if queue:
                return queue.popleft()
            return self._script.standing.get(key)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = handler.path
        fault = self._next_fault(self.route_key(path))
        # Logged on arrival (so a test sees a request the client gave up on while the fake
        # still sleeps), and completed with the status once answered.
        headers = {k.lower(): v for k, v in handler.headers.items()}
        entry = RecordedRequest(handler.command, path, headers, body, time.monotonic(), None, fault)
        with self._lock:
            self._log.append(entry)
            index = len(self._log) - 1

        if fault is not None and fault.kind == "delay":
            time.sleep(fault.delay)
        if fault is not None and fault.kind == "disconnect":
            handler.close_connection = True
            return
        if fault is not None and fault.kind == "status":
            response = self.error_response(fault.status, fault.message)
        elif fault is not None and fault.kind == "garbage":
            response = Response(fault.status, raw=b"<html>definitely not json", content_type="text/html")
        else:
            try:
                response = self.route(handler.command, path, headers, body, fault)
            except Exception as exc:  # a bug in the fake must show up as a 500, not a hang
                response = self.error_response(500, f"fake crashed: {exc!r}")
        with self._lock:
            if index < len(self._log) and self._log[index] is entry:
                self._log[index] = replace(entry, status=response.status)
        self._send(handler, response)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, response: Response) -> None:
        if response.chunks is not None:
            handler.send_response(response.status)
            handler.send_header("Content-Type", response.content_type)
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            for chunk in response.chunks:
                handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            handler.wfile.write(b"0\r\n\r\n")
            return
        payload = response.raw if response.raw is not None else json.dumps(response.body).encode("utf-8")
        handler.send_response(response.status)
        handler.send_header("Content-Type", response.content_type)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
