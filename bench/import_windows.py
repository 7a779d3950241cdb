"""CPU seconds of ``import lancedb`` and ``import mcp.server`` in fresh interpreters, with and without
:func:`local_memory_shared.lazy_imports.lighten_imports` (issue 14 item 3), interleaved.

Each sample is a new ``python`` process that imports pydantic, numpy and pyarrow first (every
search process has them before LanceDB or the MCP SDK), then times one import with
``resource.getrusage`` (user + sys of the process: the figure a loaded machine blurs least).
Both variants defer the Lance REST client's ``__init__`` (that is older and not what is compared)::

    nice -n 10 .venv/bin/python -m bench.import_windows [--repeats 7] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

PROBE = textwrap.dedent(
    """
    import json, resource, sys
    import pydantic, numpy, pyarrow, pyarrow.compute
    from local_memory_shared import lazy_imports
    lazy_imports.defer_rest_client()
    if sys.argv[1] == "light":
        lazy_imports.lighten_imports()
    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime
    c0 = cpu()
    import lancedb
    c1 = cpu()
    import mcp.server, mcp.server.stdio
    c2 = cpu()
    print(json.dumps({"lancedb": c1 - c0, "mcp": c2 - c1}))
    """
)


def sample(variant: str) -> dict[str, float]:
    """One fresh interpreter's import CPU seconds for ``variant`` (``eager`` or ``light``)."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, variant],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ),
    )
    return {k: float(v) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def run(repeats: int) -> dict[str, Any]:
    """Interleaved samples of both variants; medians and the light/eager ratio."""
    samples: dict[str, list[dict[str, float]]] = {"eager": [], "light": []}
    for _ in range(repeats):
        for variant in samples:
            samples[variant].append(sample(variant))
    report: dict[str, Any] = {"load_avg": os.getloadavg(), "repeats": repeats}
    for what in ("lancedb", "mcp"):
        med = {v: statistics.median(s[what] for s in samples[v]) for v in samples}
        report[what] = {
            "eager_cpu_median_s": round(med["eager"], 3),
            "light_cpu_median_s": round(med["light"], 3),
            "ratio": round(med["light"] / med["eager"], 3),
        }
    return report


def main(argv: list[str] | None = None) -> int:
    """Print (and optionally write) one JSON report."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    text = json.dumps(run(args.repeats), indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
