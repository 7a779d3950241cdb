"""Quick A/B of mid-run index folding: search_hybrid p95 while the *same* project is re-indexed --full.

Needs the scale project that `python -m bench.run --full` leaves under bench/cache/run-full.
Run: .venv/bin/python bench/reindex_isolation.py FOLD_EVERY_ROWS   (e.g. 4000, or 1000000000 = no folding)
"""

import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(ROOT, "cache/run-full/data")
PROJ = os.path.join(ROOT, "cache/run-full/scale/sphinx")
os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = DATA
from local_memory_search.tools import call_tool  # noqa: E402 - reads the data root at import

QS = [
    "build the html output",
    "parse configuration values",
    "resolve cross references",
    "autodoc member order",
    "latex escape special characters",
    "search index language stemmer",
    "toctree entries",
    "warning when a role is unknown",
]


def q(i):
    t = time.perf_counter()
    r = call_tool("search_hybrid", {"project_path": PROJ, "query": QS[i % len(QS)], "cache_bust": True})
    assert r["ok"], r
    return (time.perf_counter() - t) * 1000


def p95(xs):
    return sorted(xs)[int(0.95 * (len(xs) - 1))]


fold = sys.argv[1]
for i in range(5):
    q(i)
idle = [q(i) for i in range(40)]
code = f"import local_memory_indexer.pipeline as p; p.FOLD_EVERY_ROWS={fold}; from local_memory_indexer.cli import main; main(['index', '{PROJ}', '--full', '--quiet'])"
w = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)
busy = []
i = 0
t0 = time.perf_counter()
while w.poll() is None:
    busy.append(q(i))
    i += 1
err = w.stderr.read().decode()[-300:]
print(
    f"fold={fold} idle p95 {p95(idle):.0f} ms, busy p95 {p95(busy):.0f} ms (n={len(busy)}, ratio {p95(busy) / p95(idle):.1f}x), reindex {time.perf_counter() - t0:.1f}s rc={w.returncode} {err}"
)
