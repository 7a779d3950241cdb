"""A search process for the latency and isolation benchmarks: JSON lines in, JSON lines out.

It runs the real searcher (``local_memory_search.tools.call_tool``, what the MCP server runs)
in its own process, started as the server starts (:func:`start_like_the_server`), so its resident memory and its first-call (cold) latency are measured
apart from the benchmark driver. Requests: ``{"op": "call", "tool", "args"}``, ``{"op": "rss"}``,
``{"op": "exit"}``. Latency is timed around ``call_tool`` inside the process, so pipe and JSON
overhead of this harness are excluded (an MCP transport adds its own on top).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import psutil


def start_like_the_server() -> None:
    """Start this process as ``local-memory-search`` does, in this tree or an older one: malloc
    arenas capped, query model prewarmed, the cyclic GC off while the tool layer imports (the
    server's ``build_server``), then the start-up objects frozen and the GC back on."""
    import inspect

    from local_memory_search import cli

    start = getattr(cli, "_start_process", None)
    if start is not None:
        if "pause_gc" in inspect.signature(start).parameters:
            start(prewarm=True, pause_gc=True)
        else:
            start(prewarm=True)
    elif hasattr(cli, "_prewarm_encoder"):
        cli._prewarm_encoder()
    from local_memory_search.server import build_server

    build_server()
    from local_memory_search import store

    pool = getattr(store, "STATE_POOL", None)  # the server's pooled state-DB connections (not in older trees)
    if pool is not None and hasattr(pool, "enable"):
        pool.enable()
    try:
        from local_memory_shared.heap import settle_gc
    except ImportError:  # an older tree: the collector was never paused
        return
    settle_gc()


def server_after_call() -> Callable[[], None]:
    """The hook the MCP server runs after every tool call, in this tree or an older one (the idle
    heap trim's countdown; here also the one release of library pages after the first call), so a
    worker that calls ``call_tool`` directly is measured as the server serves."""
    from local_memory_search import server

    hook = getattr(server, "after_call", None)
    if hook is None:
        trim = getattr(server, "IDLE_TRIM", None)
        hook = trim.touch if trim is not None else (lambda: None)
    return cast("Callable[[], None]", hook)


def _rss_split() -> dict[str, Any]:
    """Resident memory split as the kernel counts it: private/anonymous (the process's own heap,
    caches, model session) and file-backed (mapped library code and data, shared with every
    process mapping the same file and reclaimable), plus which query model the encoder loaded."""
    out: dict[str, Any] = {}
    with open("/proc/self/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith(("RssAnon:", "RssFile:")):
                key, value = line.split(":", 1)
                out[f"{key[3:].lower()}_mb"] = round(int(value.split()[0]) / 1024, 1)
    try:
        from local_memory_search.encoder import ENCODER

        # ``_model_file``: the compact copy found under the data root, None = the original model
        # (read without loading anything: ``model_file`` would load the session)
        out["query_models"] = [
            Path(e._model_file).name if getattr(e, "_model_file", None) else "original"
            for e in getattr(ENCODER, "_embedders", {}).values()
        ]
    except ImportError:
        pass
    return out


def serve() -> None:
    """Answer requests on stdin until ``exit`` or EOF."""
    started = time.perf_counter()
    start_like_the_server()
    from local_memory_search.tools import call_tool

    after_call = server_after_call()
    out = sys.stdout
    out.write(
        json.dumps({"ready": True, "import_ms": round((time.perf_counter() - started) * 1000, 1)}) + "\n"
    )
    out.flush()
    proc = psutil.Process()
    for line in sys.stdin:
        req = json.loads(line)
        op = req.get("op")
        if op == "exit":
            break
        if op == "rss":
            reply: dict[str, Any] = {"rss_mb": round(proc.memory_info().rss / 2**20, 1), **_rss_split()}
        else:
            t0 = time.perf_counter()
            env = call_tool(req["tool"], req.get("args") or {})
            ms = (time.perf_counter() - t0) * 1000
            after_call()
            meta = env.get("search") or {}
            reply = {
                "ms": round(ms, 3),
                "ok": bool(env.get("ok")),
                "n": len(env.get("results") or []),
                "timings": meta.get("timings_ms") or {},
                "version": meta.get("published_version"),
                "warnings": [w.get("code") for w in env.get("warnings", [])],
                "error": env.get("error"),
            }
        out.write(json.dumps(reply) + "\n")
        out.flush()


class SearchProcess:
    """Client side: spawn a worker, send requests, read replies."""

    def __init__(self, data_root: Path, env: dict[str, str] | None = None):
        full_env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root), **(env or {})}
        repo = str(Path(__file__).resolve().parent.parent)
        full_env["PYTHONPATH"] = repo + os.pathsep + full_env.get("PYTHONPATH", "")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.search_worker"],
            cwd=repo,
            env=full_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        ready = self._read()
        self.spawn_ms = round((time.perf_counter() - t0) * 1000, 1)
        self.import_ms = ready.get("import_ms")

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"search worker exited with {self.proc.wait()}")
        return json.loads(line)

    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its reply."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(payload) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run one tool call in the worker."""
        reply = self.request({"op": "call", "tool": tool, "args": args})
        if not reply.get("ok"):
            raise RuntimeError(f"{tool} failed in the search worker: {reply.get('error')}")
        return reply

    def rss_mb(self) -> float:
        """Resident memory of the worker now."""
        return float(self.request({"op": "rss"})["rss_mb"])

    def memory(self) -> dict[str, Any]:
        """Resident memory of the worker now: total, anonymous and file-backed MB, query model files."""
        reply = self.request({"op": "rss"})
        return {k: v for k, v in reply.items() if k != "ok"}

    def close(self) -> None:
        """Ask the worker to exit and reap it."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"op": "exit"}) + "\n")
            self.proc.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> SearchProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":
    serve()
