"""Spawn → first hybrid answer of a fresh search process (issue 14 item 3), with an import-time profile.

Indexes a small real corpus once (``../shared/bench-data/semble/corpora/<corpus>.tar.gz`` unpacked
into the git-ignored ``bench/cache/footprint``; index in ``bench/cache/search_root``), then times
``--repeats`` fresh processes of each kind, interleaved so a busy machine hurts both alike:

- ``cli``: ``local-memory-search query "..." --mode hybrid --json`` (spawn → exit with an answer);
- ``mcp``: ``local-memory-search`` over stdio with a real MCP client (spawn → initialize → the
  first ``search_hybrid`` result).

Wall seconds and the child's CPU seconds (user + sys) are both reported: on a loaded machine
the CPU figure is the steadier one (it does not show the model loading beside the imports).

Before timing, every source tree (this checkout's ``*/src`` and each ``--before`` path) is
byte-compiled: an installed package has its ``.pyc`` files, but an editable checkout run with
``PYTHONDONTWRITEBYTECODE=1`` (as in this sandbox) would recompile ~100 modules in every fresh
process (~0.07 s) and blur the comparison.

Then ``--repeats`` interleaved MCP **timelines** per variant (medians, seconds from spawn): the
interpreter up, the MCP SDK's import starting (``mcp_adapter``), the tool layer's import
starting (``tools``), the server serving stdio (``stdio_guard``; server side, stamped by an audit
hook on those imports), ``initialize`` and
``tools/list`` answered (client side), the prewarmed query encoder ready, the first
``search_hybrid`` answer; and the server's CPU seconds.

Then one ``python -X importtime`` run of the CLI query, summarised as the top modules by
cumulative and by self time, and the in-process import seconds of ``tools`` (the tool layer)::

    nice -n 10 .venv/bin/python -m bench.search_startup [--corpus flask] [--repeats 5] [--out FILE]
        [--before /tmp/old/shared/src:/tmp/old/search/src]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import emit
from bench.footprint import BIN, REPO, _first_mcp_async, first_cli, unpack

ROOT = REPO / "bench" / "cache" / "search_root"
QUERIES = ["how are blueprints registered", "render a template with context", "url_for build error"]


def ensure_index(project: Path, data_root: Path) -> None:
    """Index ``project`` into ``data_root`` (a no-change re-index when already there)."""
    data_root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    cmd = [str(BIN / "local-memory-indexer"), "index", str(project)]
    subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)


def importtime(project: Path, data_root: Path, query: str, top: int = 10) -> dict[str, Any]:
    """``-X importtime`` of one CLI hybrid query: top modules by cumulative and by self µs."""
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    cmd = [sys.executable, "-X", "importtime", "-m", "local_memory_search.cli", "query", query]
    out = subprocess.run(
        [*cmd, "--project", str(project), "--mode", "hybrid", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows: list[tuple[int, int, str]] = []
    for line in out.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "self [us]" not in line:
            self_us, cum_us, name = line[len("import time:") :].split("|")
            rows.append((int(self_us), int(cum_us), name.rstrip()))
    total = sum(r[0] for r in rows)
    # Top-level-ish rows (indent ≤ 2 levels) by cumulative time say which of our imports pull what.
    shallow = [r for r in rows if len(r[2]) - len(r[2].lstrip()) <= 5]
    return {
        "modules": len(rows),
        "total_import_s": round(total / 1e6, 3),
        "top_cumulative": [
            (n.strip(), round(c / 1e6, 3)) for _s, c, n in sorted(shallow, key=lambda r: -r[1])[:top]
        ],
        "top_self": [(n.strip(), round(s / 1e6, 3)) for s, _c, n in sorted(rows, key=lambda r: -r[0])[:top]],
    }


def _with_pythonpath(pythonpath: str | None, fn: Any, *args: Any) -> Any:
    """Run ``fn`` with PYTHONPATH set for the processes it spawns (``None``: this checkout)."""
    old = os.environ.get("PYTHONPATH")
    if pythonpath:
        os.environ["PYTHONPATH"] = pythonpath
    try:
        return fn(*args)
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def compile_sources(pythonpaths: list[str | None]) -> None:
    """Write ``.pyc`` files for this checkout's sources and each older tree (what an install has)."""
    dirs = [REPO / pkg / "src" for pkg in ("shared", "search", "indexer")]
    for pythonpath in pythonpaths:
        dirs += [Path(p) for p in (pythonpath or "").split(os.pathsep) if p]
    for folder in dirs:
        if folder.is_dir():
            compileall.compile_dir(str(folder), quiet=1)


CRITICAL_PATH_PROBE = """
import contextlib, io, json, resource, sys, time
w0 = time.perf_counter()
from local_memory_search.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(["query", sys.argv[1], "--project", sys.argv[2], "--json"])
r = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"rc": rc, "main_thread_cpu": time.thread_time(), "process_cpu": r.ru_utime + r.ru_stime}))
"""


def critical_path(project: Path, data_root: Path, query: str) -> tuple[float, float]:
    """Main-thread and whole-process CPU seconds of one CLI hybrid query in a fresh interpreter.

    The query model loads on a second thread beside the imports, so on an idle machine with two
    or more cores the main thread's CPU (plus interpreter start, ~0.03 s) is the wall-time floor.
    """
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
    out = subprocess.run(
        [sys.executable, "-c", CRITICAL_PATH_PROBE, query, str(project)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if got["rc"] != 0:
        raise RuntimeError(f"no hybrid answer: {out.stderr[-300:]}")
    return float(got["main_thread_cpu"]), float(got["process_cpu"])


# The MCP server under a boot line that only watches: an audit hook stamps (CLOCK_MONOTONIC, the
# client's clock too) the start of the imports that bound each start-up phase, and a poller stamps
# when the prewarmed query encoder is ready; then the real entry point runs. Works for any tree.
TIMELINE_BOOT = r"""
import os, sys, threading, time
marks = {"interpreter_up": time.monotonic()}
bounds = {"local_memory_shared.mcp_adapter": "sdk_import_start", "local_memory_search.tools": "tool_layer_import_start",
          "local_memory_shared.stdio_guard": "serving_start"}
def hook(event, args):
    if event == "import" and args[0] in bounds and bounds[args[0]] not in marks:
        marks[bounds[args[0]]] = time.monotonic()
sys.addaudithook(hook)
def watch_encoder():
    while "local_memory_search.encoder" not in sys.modules or not hasattr(sys.modules["local_memory_search.encoder"], "ENCODER"):
        time.sleep(0.005)
    enc = sys.modules["local_memory_search.encoder"].ENCODER
    while getattr(enc, "_warming", None) is None or enc._warming.ident is None:  # assigned, then started
        time.sleep(0.005)
    enc._warming.join()
    marks["encoder_ready"] = time.monotonic()
threading.Thread(target=watch_encoder, daemon=True).start()
try:
    from local_memory_search.cli import main
    main([])
finally:
    with open(os.environ["STARTUP_MARKS"], "w") as f:
        f.write(repr(marks))
"""

#: Client-side and server-side marks of the timeline, in the order they happen.
TIMELINE_MARKS = (
    "interpreter_up",
    "sdk_import_start",
    "tool_layer_import_start",
    "serving_start",
    "initialize_answered",
    "tools_list_answered",
    "encoder_ready",
    "first_answer",
)


async def _timeline_async(project: Path, data_root: Path, query: str, marks_file: Path) -> dict[str, float]:
    """Seconds from spawn to each of :data:`TIMELINE_MARKS` for one fresh MCP stdio server."""
    import ast

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root), "STARTUP_MARKS": str(marks_file)}
    params = StdioServerParameters(command=sys.executable, args=["-c", TIMELINE_BOOT], env=env)
    t0 = time.monotonic()
    client: dict[str, float] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        client["initialize_answered"] = time.monotonic()
        await session.list_tools()
        client["tools_list_answered"] = time.monotonic()
        result = await session.call_tool("search_hybrid", {"query": query, "project_path": str(project)})
        client["first_answer"] = time.monotonic()
    payload = json.loads(result.content[0].text)  # type: ignore[union-attr]
    if not payload.get("ok") or not payload.get("results"):
        raise RuntimeError(f"no hybrid answer over MCP: {str(payload)[:300]}")
    for _ in range(200):  # the server writes its marks as it exits
        if marks_file.exists() and marks_file.stat().st_size:
            break
        await anyio_sleep(0.01)
    server = ast.literal_eval(marks_file.read_text())
    marks_file.unlink()
    return {k: round(v - t0, 3) for k, v in {**server, **client}.items()}


async def anyio_sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


def timeline(project: Path, data_root: Path, repeats: int, variants: dict[str, str | None]) -> dict[str, Any]:
    """Interleaved MCP timelines per variant: median seconds from spawn to each mark, and CPU."""
    import anyio

    runs: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    marks_file = REPO / "bench" / "cache" / "startup-marks.txt"
    for i in range(repeats):
        for name, pythonpath in variants.items():
            c0 = _child_cpu()
            got = _with_pythonpath(
                pythonpath,
                anyio.run,
                _timeline_async,
                project,
                data_root,
                QUERIES[i % len(QUERIES)],
                marks_file,
            )
            got["cpu_s"] = round(_child_cpu() - c0, 3)
            runs[name].append(got)
            print(
                f"timeline {i + 1} {name}: answer {got['first_answer']:.2f}s cpu {got['cpu_s']:.2f}s",
                file=sys.stderr,
            )
    out: dict[str, Any] = {}
    for name, rows in runs.items():
        out[name] = {
            mark: round(statistics.median(r[mark] for r in rows), 3)
            for mark in (*TIMELINE_MARKS, "cpu_s")
            if all(mark in r for r in rows)
        }
    return out


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _one(project: Path, data_root: Path, query: str) -> tuple[float, float, float, float]:
    """Wall seconds of a CLI and an MCP first answer, and the CPU seconds each child used."""
    import anyio

    c0 = _child_cpu()
    cli = first_cli(project, data_root, query)
    c1 = _child_cpu()
    mcp = anyio.run(_first_mcp_async, project, data_root, query)
    return cli, mcp, c1 - c0, _child_cpu() - c1


def run(project: Path, data_root: Path, repeats: int, variants: dict[str, str | None]) -> dict[str, Any]:
    """Per variant (a PYTHONPATH, e.g. an older source tree): interleaved CLI and MCP runs, import profile."""
    times: dict[str, dict[str, list[float]]] = {
        v: {"cli": [], "mcp": [], "cli_cpu": [], "mcp_cpu": []} for v in variants
    }
    for i in range(repeats):
        for name, pythonpath in variants.items():
            cli, mcp, cli_cpu, mcp_cpu = _with_pythonpath(
                pythonpath, _one, project, data_root, QUERIES[i % len(QUERIES)]
            )
            for key, value in (("cli", cli), ("mcp", mcp), ("cli_cpu", cli_cpu), ("mcp_cpu", mcp_cpu)):
                times[name][key].append(round(value, 3))
            print(f"run {i + 1} {name}: cli {cli:.2f}s mcp {mcp:.2f}s", file=sys.stderr)
    paths: dict[str, dict[str, list[float]]] = {v: {"main": [], "process": []} for v in variants}
    for i in range(repeats):
        for name, pythonpath in variants.items():
            main_cpu, process_cpu = _with_pythonpath(
                pythonpath, critical_path, project, data_root, QUERIES[i % len(QUERIES)]
            )
            paths[name]["main"].append(main_cpu)
            paths[name]["process"].append(process_cpu)
    report: dict[str, Any] = {"load_avg": os.getloadavg()}
    report["mcp_timeline_median_s"] = timeline(project, data_root, repeats, variants)
    report["load_avg_after_timeline"] = os.getloadavg()
    for name, pythonpath in variants.items():
        report[name] = {
            "cli_s": times[name]["cli"],
            "mcp_s": times[name]["mcp"],
            "cli_median_s": round(statistics.median(times[name]["cli"]), 3),
            "mcp_median_s": round(statistics.median(times[name]["mcp"]), 3),
            "cli_cpu_median_s": round(statistics.median(times[name]["cli_cpu"]), 3),
            "mcp_cpu_median_s": round(statistics.median(times[name]["mcp_cpu"]), 3),
            # in-process CLI query: main-thread CPU = the idle 2-core wall-time floor (see critical_path)
            "cli_main_thread_cpu_median_s": round(statistics.median(paths[name]["main"]), 3),
            "cli_process_cpu_median_s": round(statistics.median(paths[name]["process"]), 3),
            "importtime": _with_pythonpath(pythonpath, importtime, project, data_root, QUERIES[0]),
        }
    return report


def main(argv: list[str] | None = None) -> int:
    """Index once, time fresh processes, print one JSON report."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="flask")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--before",
        default=None,
        help="PYTHONPATH of an older source tree (e.g. a `git archive` of main: its shared/src:search/src) "
        "to time interleaved with this checkout",
    )
    args = ap.parse_args(argv)
    project = unpack(args.corpus)
    started = time.perf_counter()
    ensure_index(project, ROOT)
    report = {"corpus": args.corpus, "index_s": round(time.perf_counter() - started, 1)}
    variants: dict[str, str | None] = {"now": None}
    if args.before:
        variants = {"before": args.before, **variants}
    compile_sources(list(variants.values()))
    report.update(run(project, ROOT, args.repeats, variants))
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
