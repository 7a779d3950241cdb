"""CPU and wall time of a big first index's keyword phase (issue 14 item 3), this tree vs another.

Phase A of a deferred run: walk, parse, graph and write every row without vectors, plus the FTS
index; the run is cancelled when the embedding phase starts. Each variant runs in a fresh
process (``--before`` puts an older tree first on ``PYTHONPATH``), interleaved ``--repeats``
times; ``cpu`` is the indexer process's own user+sys seconds (parse workers not included), so it
shows what moved off the main process even on a busy machine::

    nice -n 5 .venv/bin/python -m bench.phase_a [--corpora laravel-framework,abseil-cpp]
        [--before /tmp/old/shared/src:/tmp/old/indexer/src:/tmp/old/search/src] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from typing import Any

from bench.first_answer import CACHE, build_project


def worker(project: str, data_root: str) -> dict[str, Any]:
    """One run of phase A in this process."""
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = data_root
    shutil.rmtree(data_root, ignore_errors=True)
    from local_memory_indexer.pipeline import NullProgress, index_project

    cancel = threading.Event()
    out: dict[str, Any] = {}
    started = time.perf_counter()

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    cpu0 = cpu()

    class Sink(NullProgress):
        def phase(self, name: str) -> None:
            if name == "embed" and "wall_s" not in out:
                out["wall_s"] = round(time.perf_counter() - started, 1)
                out["cpu_s"] = round(cpu() - cpu0, 1)
                cancel.set()

    summary = index_project(project, progress=Sink(), cancel=cancel)
    out.update(seconds=summary.seconds, chunks=summary.chunks_written, files=summary.files_parsed)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="laravel-framework,abseil-cpp")
    parser.add_argument("--before", default=None, help="PYTHONPATH of an older tree")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    project = build_project(args.corpora.split(","))
    variants: dict[str, str | None] = {"now": None}
    if args.before:
        variants = {"before": args.before, **variants}
    runs = []
    for _ in range(args.repeats):
        for name, path in variants.items():
            env = {**os.environ}
            if path:
                env["PYTHONPATH"] = os.pathsep.join([path, env.get("PYTHONPATH", "")])
            code = "import json, sys; from bench.phase_a import worker; print(json.dumps(worker(sys.argv[1], sys.argv[2])))"
            done = subprocess.run(
                [sys.executable, "-c", code, str(project), str(CACHE / f"phase-a-{name}")],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            result = {"variant": name, **json.loads(done.stdout.strip().splitlines()[-1])}
            sys.stderr.write(json.dumps(result) + "\n")
            runs.append(result)
    sys.stdout.write(
        json.dumps({"project": str(project), "load_avg": os.getloadavg(), "runs": runs}, indent=2) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
