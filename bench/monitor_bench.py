"""Status monitor figures: page load time in headless Chromium and each API route's p50/p95.

    python -m bench.monitor_bench [--project PATH] [--data-root DIR] [--requests 50]

Without ``--project`` it indexes the pinned requests + flask sources (``bench/cache/src``, fetched
by ``python -m bench.corpora``) into a fresh data root. The monitor runs as a real
``local-memory-search monitor`` process; the API is timed over HTTP on 127.0.0.1 and the page in
Debian's Chromium through Playwright (navigation start → the projects table rendered).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-token"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> tuple[int, Any]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        return resp.status, json.loads(resp.read())


def _build(data_root: Path) -> Path:
    src = ROOT / "bench/cache/src"
    project = data_root.parent / "monitor-corpus"
    if not project.exists():
        project.mkdir(parents=True)
        for name in ("requests-2.32.3", "flask-3.0.3"):
            shutil.copytree(src / name, project / name)
    exe = Path(sys.executable).with_name("local-memory-indexer")
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    subprocess.run([str(exe), "index", str(project), "--quiet"], env=env, check=True)
    return project


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"p50_ms": round(statistics.median(ordered), 1), "p95_ms": round(p95, 1), "n": len(ordered)}


def _routes(project: str) -> dict[str, str]:
    q = urllib.parse.quote
    p = f"project={q(project)}"
    return {
        "projects": "/api/projects",
        "jobs": "/api/jobs",
        "search hybrid": f"/api/search?{p}&q={q('send a request with retries')}",
        "search hybrid+explain": f"/api/search?{p}&q={q('send a request with retries')}&explain=true&limit=5",
        "search keyword": f"/api/search?{p}&q=Session&mode=keyword",
        "graph symbol": f"/api/graph/symbol?{p}&symbol=request&depth=2",
        "doctor": f"/api/doctor?{p}",
    }


def _page_load(url: str, runs: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    samples = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=args
        )
        for _ in range(runs):
            context = browser.new_context()
            page = context.new_page()
            page.add_init_script(f"sessionStorage.setItem('lm-token', {json.dumps(TOKEN)})")
            started = time.perf_counter()
            page.goto(url + "/")
            page.wait_for_selector("#projects-table tbody tr")
            samples.append((time.perf_counter() - started) * 1000)
            context.close()
        browser.close()
    return _percentiles(samples)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", help="an already indexed project (default: build the requests+flask corpus)")
    ap.add_argument("--data-root", help="data root of --project (default: a fresh temp dir)")
    ap.add_argument("--requests", type=int, default=50, help="timed requests per route")
    ap.add_argument("--page-loads", type=int, default=5)
    args = ap.parse_args(argv)
    data_root = Path(args.data_root or tempfile.mkdtemp(prefix="monbench-")) / "data"
    project = Path(args.project) if args.project else _build(data_root)
    port = _port()
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    exe = Path(sys.executable).with_name("local-memory-search")
    proc = subprocess.Popen([str(exe), "monitor", "--port", str(port), "--token", TOKEN], env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                _get(url + "/api/health")
                break
            except OSError:
                time.sleep(0.1)
        chunks = _get(url + "/api/projects")[1]["data"]["projects"][0]["chunks"]
        out: dict[str, Any] = {"project": str(project), "chunks": chunks, "routes": {}}
        for name, route in _routes(str(project)).items():
            _get(url + route)  # warm
            samples = []
            for _ in range(args.requests):
                t0 = time.perf_counter()
                _get(url + route)
                samples.append((time.perf_counter() - t0) * 1000)
            out["routes"][name] = _percentiles(samples)
        out["page_load"] = _page_load(url, args.page_loads)
        out["load_average"] = os.getloadavg()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
