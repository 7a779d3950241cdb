"""Peak RSS and rate of the indexer's embedding as a function of padded tokens per ONNX run.

Each setting runs in a fresh process that loads the packaged model (``OnnxEmbedder``, the
indexer's own options but ``max_batch_tokens``), embeds the same real chunk texts (the mirror's
``text`` of a semble corpus index, longest first not assumed: the embedder sorts), and reports
chunks per second and the resident memory it held: after the session's first run (the base) and
the peak while embedding, sampled every 5 ms. Settings alternate round by round, so load hits
each alike; the report gives each setting's medians and their ratio to the first::

    python -m bench.embed_tokens --tokens 2048,1024 --texts 2000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import emit, peak_rss

REPO = Path(__file__).resolve().parent.parent
SEMBLE_DATA = REPO / "bench" / "cache" / "semble" / "data" / "projects"


def _texts(n: int) -> list[str]:
    """``n`` chunk texts from the largest semble indexes on this machine (deterministic)."""
    texts: list[str] = []
    for db in sorted(SEMBLE_DATA.glob("*/state.db"), key=lambda p: -p.stat().st_size):
        conn = sqlite3.connect(db)
        try:
            texts += [r[0] for r in conn.execute("SELECT text FROM chunks ORDER BY chunk_id LIMIT ?", (n,))]
        finally:
            conn.close()
        if len(texts) >= n:
            break
    if len(texts) < n:
        raise SystemExit(f"only {len(texts)} chunk texts: index the semble corpora first (bench/README.md)")
    return texts[:n]


def _child(tokens: int, n: int) -> dict[str, Any]:
    from local_memory_shared.embedding.onnx import OnnxEmbedder

    texts = _texts(n)
    embedder = OnnxEmbedder(max_batch_tokens=tokens)
    embedder.embed_documents(texts[:8])  # the session exists; one small run made
    started, cpu = time.perf_counter(), time.process_time()
    _, base, peak = peak_rss(lambda: embedder.embed_documents(texts), 0.005)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "tokens": tokens,
        "texts": n,
        "chunks_per_s": round(n / wall, 1),
        "chunks_per_cpu_s": round(n / cpu, 1),
        "base_mb": round(base),
        "peak_mb": round(peak),
        "swing_mb": round(peak - base),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", default="2048,1024")
    ap.add_argument("--texts", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    if ns.child:
        print(json.dumps(_child(ns.child, ns.texts)))
        return 0
    settings = [int(t) for t in ns.tokens.split(",")]
    runs: list[dict[str, Any]] = []
    for r in range(ns.rounds):
        for tokens in settings if r % 2 == 0 else list(reversed(settings)):
            cmd = [
                sys.executable,
                "-m",
                "bench.embed_tokens",
                "--child",
                str(tokens),
                "--texts",
                str(ns.texts),
            ]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=REPO)
            runs.append({"round": r, **json.loads(out.stdout.strip().splitlines()[-1])})
            print(json.dumps(runs[-1]), flush=True)
    summary: dict[str, Any] = {}
    for tokens in settings:
        mine = [x for x in runs if x["tokens"] == tokens]
        summary[str(tokens)] = {
            k: statistics.median(x[k] for x in mine)
            for k in ("chunks_per_s", "chunks_per_cpu_s", "base_mb", "peak_mb", "swing_mb")
        }
    first = summary[str(settings[0])]
    for tokens in settings[1:]:
        s = summary[str(tokens)]
        s["rate_ratio"] = round(s["chunks_per_s"] / first["chunks_per_s"], 3)
        s["cpu_rate_ratio"] = round(s["chunks_per_cpu_s"] / first["chunks_per_cpu_s"], 3)
    emit(
        {
            "command": "python -m bench.embed_tokens " + " ".join(argv or sys.argv[1:]),
            "runs": runs,
            "summary": summary,
        },
        ns.out,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
