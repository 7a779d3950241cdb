"""Query encoding with the original vs the compact ONNX model, interleaved in one process (issue 14).

Both sessions load side by side (threads as the searcher's), then each of ``--queries`` distinct
query texts is encoded by both in alternating order, so a busy machine hurts both alike. Prints
p50/p95 per model, their ratio, the cosine between the two vectors of each query, and the
resident memory each session added when it loaded (fresh process per model)::

    python -m bench.query_encoder_ab [--queries 300] [--data-root bench/cache/search_root]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench.common import emit
from bench.search_startup import ROOT

TEMPLATES = (
    "how does {} handle errors",
    "where is the {} configured",
    "{} request timeout retry",
    "render {} template with context",
    "register {} blueprint url rules",
)
WORDS = (
    "session",
    "cookie",
    "json",
    "cli",
    "signal",
    "logging",
    "static file",
    "config",
    "test client",
    "app",
)


def _texts(n: int) -> list[str]:
    return [
        TEMPLATES[i % len(TEMPLATES)].format(WORDS[(i // len(TEMPLATES)) % len(WORDS)]) + f" {i}"
        for i in range(n)
    ]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


def _session_rss(model_file: str) -> float:
    code = (
        "import sys\nfrom pathlib import Path\nimport onnxruntime, tokenizers\n"
        "from local_memory_shared.embedding.onnx import OnnxEmbedder\n"
        "rss = lambda: next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS')) / 1024\n"
        "b = rss(); e = OnnxEmbedder(model_file=Path(sys.argv[1]) if sys.argv[1] else None)\n"
        "e.embed_query('warm up'); print(round(rss() - b, 1))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, model_file], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Load both, encode interleaved, print one JSON report."""
    from local_memory_shared.embedding.onnx import OnnxEmbedder, builtin_model_files
    from local_memory_shared.embedding.query_model import find_compact_model

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--data-root", type=Path, default=ROOT)
    args = ap.parse_args(argv)
    compact = find_compact_model(args.data_root, builtin_model_files().model)
    if compact is None:
        raise SystemExit(f"no compact model under {args.data_root}: index a project there first")
    models = {"original": OnnxEmbedder(), "compact": OnnxEmbedder(model_file=compact)}
    for embedder in models.values():
        embedder.embed_query("warm up")
    seconds: dict[str, list[float]] = {name: [] for name in models}
    cosines = []
    for i, text in enumerate(_texts(args.queries)):
        order = list(models) if i % 2 == 0 else list(reversed(models))
        vectors = {}
        for name in order:
            started = time.perf_counter()
            vectors[name] = models[name].embed_query(text)
            seconds[name].append(time.perf_counter() - started)
        cosines.append(float(np.dot(vectors["original"], vectors["compact"])))
    report = {
        "load_avg": os.getloadavg(),
        "queries": args.queries,
        **{name: {"p50_ms": _pct(v, 0.5), "p95_ms": _pct(v, 0.95)} for name, v in seconds.items()},
        "p50_ratio_compact_to_original": round(
            _pct(seconds["compact"], 0.5) / _pct(seconds["original"], 0.5), 2
        ),
        "p95_ratio_compact_to_original": round(
            _pct(seconds["compact"], 0.95) / _pct(seconds["original"], 0.95), 2
        ),
        "cosine_min": round(min(cosines), 5),
        "cosine_mean": round(float(np.mean(cosines)), 5),
        "session_rss_mb": {"original": _session_rss(""), "compact": _session_rss(str(compact))},
    }
    emit(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
