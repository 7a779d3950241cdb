"""Memory writer benchmark: write throughput, rebuild time of a large vault, index size vs vault size.

* write: ``--writes`` records through :meth:`MemoryWriter.write` (embedding with the default ONNX
  model, atomic file, LanceDB + SQLite, compiled view, git commits batched with a 1 s debounce),
  timed end to end including the final commit; p50/p95 per write.
* rebuild: a ``--vault-records`` vault (deterministic generated records over 5 projects and
  several kinds, written as files the way a hand-kept vault would be), then ``memory rebuild``
  cold (empty embedding cache) and warm (cache kept, as after ``doctor --rebuild``).
* sizes: vault record files, the vault's .git, the index (LanceDB + index.db) and the embedding
  cache, in MB.

    nice -n 10 .venv/bin/python bench/memory_write.py [--writes 200] [--vault-records 10000]
        [--distinct-texts 10000] [--skip-writes]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from local_memory_shared.memory import build_record, new_uid, serialise_record

KINDS = ("trap", "decision", "spec", "plan", "note", "scratch", "review")
WORDS = (
    "stripe webhook retry idempotency event cache redis lock ttl postgres migration index query "
    "timeout deadline queue worker billing invoice auth token session cookie cors proxy nginx deploy "
    "rollback feature flag schema column null constraint batch import export parser tokenizer"
).split()


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def record_values(rng: random.Random, i: int) -> dict:
    """A realistic small record: a title, 2-6 sentences, tags, a domain."""
    kind = KINDS[i % len(KINDS)]
    body = "\n\n".join(f"{_text(rng, rng.randint(8, 20)).capitalize()}." for _ in range(rng.randint(2, 6)))
    return {
        "project": f"proj{i % 5}",
        "kind": kind,
        "title": f"{_text(rng, rng.randint(3, 7)).capitalize()} #{i}",
        "content": body,
        "tags": sorted({rng.choice(WORDS) for _ in range(rng.randint(1, 4))}),
        "domain": f"/proj{i % 5}/{rng.choice(WORDS)}/{rng.choice(WORDS)}",
        "severity": rng.choice(["low", "medium", "high", "critical", None]) if kind == "trap" else None,
    }


def _mb(path: Path, pattern: str = "**/*") -> float:
    return round(sum(p.stat().st_size for p in path.glob(pattern) if p.is_file()) / 1e6, 2)


def bench_writes(n: int) -> dict:
    from local_memory_indexer.memory.writer import MemoryWriter

    rng = random.Random(11)
    w = MemoryWriter(commit_delay=1.0)
    w.write({"project": "warm", "kind": "note", "title": "load the model"})  # model load is not a write
    times = []
    cpu = time.process_time()
    start = time.perf_counter()
    for i in range(n):
        t0 = time.perf_counter()
        w.write(record_values(rng, i))
        times.append(time.perf_counter() - t0)
    w.git.flush()
    total = time.perf_counter() - start
    cpu = time.process_time() - cpu
    commits = int(w.vault.git("rev-list", "--count", "HEAD"))
    w.close()
    times.sort()
    return {
        "records": n,
        "seconds": round(total, 2),
        "records_per_s": round(n / total, 1),
        "cpu_s_per_record": round(cpu / n, 3),
        "write_ms_p50": round(statistics.median(times) * 1000, 1),
        "write_ms_p95": round(times[int(0.95 * (n - 1))] * 1000, 1),
        "git_commits": commits,
        "load_average_1m": os.getloadavg()[0],
    }


def bench_rebuild(n: int, data_root: Path, distinct: int) -> dict:
    from local_memory_indexer.memory.sync import rebuild
    from local_memory_indexer.memory.writer import MemoryWriter

    vault = data_root / "vault"
    for i in range(n):
        # ``distinct`` < n repeats record texts (new ids, same words): the cold rebuild then embeds
        # only ``distinct`` texts, which keeps a 10,000-record run affordable on a shared 2-core box.
        values = record_values(random.Random(i % distinct), i % distinct)
        values["project"] = f"proj{i % 5}"
        rec = build_record({**values, "id": new_uid(), "created": "2026-01-01T00:00:00Z"})
        path = vault / rec.rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(serialise_record(rec))
    w = MemoryWriter(commit_delay=3600)
    w.vault.git("add", "-A")
    w.vault.git("commit", "-q", "-m", "generated vault")
    cpu = time.process_time()
    cold = rebuild(w)
    cold_cpu = time.process_time() - cpu
    cpu = time.process_time()
    warm = rebuild(w)
    warm_cpu = time.process_time() - cpu
    w.close()
    mem = data_root / "memory"
    return {
        "records": cold["indexed"],
        "distinct_embedded_texts": min(n, distinct),
        "rebuild_cold_s": cold["seconds"],
        "rebuild_cold_cpu_s": round(cold_cpu, 1),
        "rebuild_warm_s": warm["seconds"],
        "rebuild_warm_cpu_s": round(warm_cpu, 1),
        "load_average_1m": os.getloadavg()[0],
        "vault_records_mb": _mb(vault / "projects", "*/*/*.md"),
        "vault_git_mb": _mb(vault / ".git"),
        "index_lance_mb": _mb(mem / "lance"),
        "index_db_mb": round(sum(p.stat().st_size for p in mem.glob("index.db*")) / 1e6, 2),
        "embed_cache_mb": round(sum(p.stat().st_size for p in mem.glob("embed_cache.db*")) / 1e6, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--vault-records", type=int, default=10_000)
    parser.add_argument(
        "--distinct-texts", type=int, default=10_000, help="distinct record texts in the vault (<= records)"
    )
    parser.add_argument("--skip-writes", action="store_true")
    args = parser.parse_args()
    out: dict = {}
    for name, arg in (("write", args.writes), ("rebuild", args.vault_records)):
        if name == "write" and args.skip_writes:
            continue
        root = Path(tempfile.mkdtemp(prefix="lmfw", dir="/tmp"))
        os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(root)
        try:
            out[name] = (
                bench_writes(arg) if name == "write" else bench_rebuild(arg, root, args.distinct_texts)
            )
        finally:
            shutil.rmtree(root, ignore_errors=True)
        print(json.dumps({name: out[name]}), flush=True)


if __name__ == "__main__":
    main()
