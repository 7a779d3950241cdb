"""Indexer peak RSS per pipeline phase, and no-change re-index wall time, this checkout vs a git ref.

Issue 14 asks for an indexer peak RSS of at most 600 MB on any repository and a no-change
re-index within 1 s. This script finds *where* the peak is and compares two builds interleaved
(A, B, A, B …) so the ratios survive a noisy machine.

``rss``: a first index of a project assembled from semble corpora (``--parts``, hard links into
``bench/cache/semble/corpora``), each run a fresh process in a fresh data root. Vectors come from
:class:`HashEmbedder` (a unit vector seeded by the text's sha256: no model, no cache), so the
phases measured are parse, write, LanceDB compaction, FTS folding and IVF training — not
embedding (measure that with ``bench/footprint.py`` / ``bench/indexer_rss_ab.sh`` and the real
model). Inside the child a thread samples ``/proc/self/statm`` every 20 ms and charges each
sample to the current label: the pipeline's phases (its ``ProgressSink``) refined by the LanceDB
calls that run inside them (``compact_files``, ``optimize_indices``, ``create_index`` per index
type, ``add``, ``merge_insert``, ``delete``). Figures: peak RSS per label, the process's
``ru_maxrss``, wall time.

``reindex``: a no-change ``local-memory-indexer index`` of an already indexed project (real
model; the first index uses hash vectors under the real model's name), wall time, user and system
CPU, and whether the run loaded ``onnxruntime`` and ``lancedb`` (a run on the no-change fast path
loads neither).

    python -m bench.indexer_phases rss --before main --parts laravel-framework --rounds 2
    python -m bench.indexer_phases reindex --before main --parts laravel-framework --runs 5
    python -m bench.indexer_phases embed --before main --parts xmonad,requests --rounds 2

``embed``: a first index with the real model through the CLI under ``/usr/bin/time -v``: peak RSS
with the ONNX session loaded, and embedding throughput (chunks embedded / embed seconds).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import REPO, emit, export_ref

CACHE = REPO / "bench" / "cache" / "indexer-phases"
SAMPLE_SECONDS = 0.02


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def build_project(parts: Sequence[str]) -> Path:
    """A project of the named semble corpora's benchmark roots (hard links, built once);
    ``semble-all`` names all 36, ``cosqa`` adds CoSQA's 6,267 functions as one file each."""
    from bench import semble
    from bench.scale import _link_or_copy

    project = CACHE / "projects" / "+".join(parts)
    if project.is_dir():
        return project
    tmp = project.with_name(f".{project.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    by_name = {r["name"]: r for r in semble.repos()}
    names = [r["name"] for r in semble.repos()] if "semble-all" in parts else []
    names += [p for p in parts if p not in ("semble-all", "cosqa")]
    if "cosqa" in parts:  # CoSQA's functions, one file each (as bench.real100k writes them)
        from bench.quality import cosqa_sets

        functions, _ = cosqa_sets(n_queries=None, corpus_size=None)
        for idx, code in functions.items():
            path = tmp / "cosqa" / f"f{idx:05d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code + "\n", encoding="utf-8")
    for name in names:
        repo = by_name[name]
        src = semble.project_root(repo, semble.unpack(repo))
        shutil.copytree(src, tmp / name, copy_function=_link_or_copy, symlinks=True)
    for marker in tmp.rglob(".bench-unpacked"):
        marker.unlink()
    tmp.rename(project)
    return project


# -- the child: one instrumented index run --------------------------------------------------


class _Labels:
    """The current phase label; LanceDB calls push a finer label for their duration."""

    def __init__(self) -> None:
        self.stack: list[str] = ["start"]
        self.peaks: dict[str, int] = {}
        self.seconds: dict[str, float] = {}
        self.lock = threading.Lock()

    def current(self) -> str:
        return "/".join(self.stack)

    def phase(self, name: str) -> None:
        with self.lock:
            self.stack = [name]

    def push(self, name: str) -> None:
        with self.lock:
            self.stack.append(name)

    def pop(self) -> None:
        with self.lock:
            if len(self.stack) > 1:
                self.stack.pop()


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _descendants(pid: int) -> list[int]:
    """``pid``'s descendant processes (parse workers, the fold and vector index children …)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                kids = [int(x) for x in fh.read().split()]
        except OSError:
            continue
        for kid in kids:
            found += [kid, *_descendants(kid)]
    return found


def _descendants_rss_bytes(pid: int) -> int:
    """Summed RSS of ``pid``'s descendant processes."""
    total = 0
    for kid in _descendants(pid):
        try:
            with open(f"/proc/{kid}/statm") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            continue
    return total


def _pss_bytes(pid: int) -> int:
    """Proportional set size of ``pid``: its private pages plus its share of every shared one."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _family_pss_bytes(pid: int) -> int:
    """Summed PSS of ``pid`` and its descendants: what the process tree holds, shared pages once.

    Summing RSS counts each library mapped by several processes of the tree (LanceDB, pyarrow,
    ONNX Runtime in the parent and in a child) once per process.
    """
    return sum(_pss_bytes(p) for p in (pid, *_descendants(pid)))


def _smaps_mb(top: int = 8) -> dict[str, int]:
    """Resident MB per mapping (file base name, ``[heap]``, ``[anon]``), the largest ``top``."""
    import re
    from collections import Counter

    out: Counter[str] = Counter()
    current = "[anon]"
    with open("/proc/self/smaps") as fh:
        for line in fh:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                parts = line.split()
                current = os.path.basename(parts[5]) if len(parts) > 5 else "[anon]"
            elif line.startswith("Rss:"):
                out[current] += int(line.split()[1])
    return {k: v // 1024 for k, v in out.most_common(top)}


def _wrap(owner: Any, attr: str, labels: _Labels, label: Any) -> None:
    original = getattr(owner, attr, None)
    if original is None:
        return

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        name = label(args, kwargs) if callable(label) else label
        labels.push(name)
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            key = labels.current()
            labels.pop()
            labels.seconds[key] = labels.seconds.get(key, 0.0) + time.perf_counter() - started

    setattr(owner, attr, wrapped)


def _index_kind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    column = kwargs.get("column") or (args[1] if len(args) > 1 else "")
    return f"create_index:{column}"


def _optimize_kind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    names = kwargs.get("index_names") or []
    return "optimize_indices:" + ",".join(sorted(names))


class HashEmbedder:
    """A unit vector per text, seeded by its sha256 (bench only: no model, no cache, no quality)."""

    backend, model = "onnx", "all-MiniLM-L6-v2"

    def __new__(cls) -> Any:
        import numpy as np
        from local_memory_shared.embedding.base import Embedder

        class _Hash(Embedder):
            backend, model = cls.backend, cls.model

            @property
            def dimension(self) -> int:
                return 384

            def embed_documents(self, texts: Sequence[str], progress: Any = None) -> Any:
                out = np.zeros((len(texts), 384), dtype=np.float32)
                for i, text in enumerate(texts):
                    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
                    v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
                    out[i] = v / np.linalg.norm(v)
                if progress is not None:
                    progress(len(texts), len(texts))
                return out

        return _Hash()


def child(project: Path) -> int:
    """Index ``project`` once with :class:`HashEmbedder`, sampling RSS per label; prints JSON."""
    import importlib

    try:  # what ``local-memory-indexer``'s main does first (this checkout; absent from older ones)
        from local_memory_shared.heap import limit_malloc_arenas_from_settings
    except ImportError:
        pass
    else:
        limit_malloc_arenas_from_settings()
    from local_memory_indexer.pipeline import NullProgress, index_project
    from local_memory_shared.config import load_settings

    lancedb_table = importlib.import_module("lancedb.table")
    labels = _Labels()
    to_lance = lancedb_table.LanceTable.to_lance

    def to_lance_wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        """Labels pylance's optimizer once the indexer loads pylance (never imported here first)."""
        lance_dataset = importlib.import_module("lance.dataset")  # ``lance.dataset`` is also a function
        optimizer = lance_dataset.DatasetOptimizer
        if not getattr(optimizer, "_bench_wrapped", False):
            optimizer._bench_wrapped = True
            _wrap(optimizer, "compact_files", labels, "compact_files")
            _wrap(optimizer, "optimize_indices", labels, _optimize_kind)
        return to_lance(self, *args, **kwargs)

    lancedb_table.LanceTable.to_lance = to_lance_wrapped
    _wrap(lancedb_table.LanceTable, "to_lance", labels, "to_lance")
    _wrap(lancedb_table.LanceTable, "cleanup_old_versions", labels, "cleanup_old_versions")
    _wrap(lancedb_table.LanceTable, "create_index", labels, _index_kind)
    for attr in ("add", "delete", "optimize"):
        _wrap(lancedb_table.LanceTable, attr, labels, attr)
    _wrap(importlib.import_module("lancedb.merge").LanceMergeInsertBuilder, "execute", labels, "merge_insert")

    pipeline = importlib.import_module("local_memory_indexer.pipeline")
    _wrap(pipeline, "ensure_compact_model", labels, "ensure_compact_model")
    store_cls = importlib.import_module("local_memory_indexer.store").ChunkStore
    _wrap(store_cls, "prune", labels, "prune")
    # Where the IVF_PQ index is trained in a child process, its RSS is ``children_maxrss_mb``.
    _wrap(store_cls, "_create_vector_index", labels, "vector_index")
    # Each ``refresh_indices`` call labelled by its number, its RSS at entry kept: the last one is
    # the final index build (the last fold and the training, in children where the rows call for
    # them), which the indexer waits through holding what it still holds then.
    refresh_entry_mb: list[int] = []

    def refresh_label(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        refresh_entry_mb.append(_rss_bytes() // 2**20)
        return f"refresh#{len(refresh_entry_mb)}"

    _wrap(store_cls, "refresh_indices", labels, refresh_label)
    trim = os.environ.get("BENCH_TRIM_ON_PHASE") == "1"  # experiment: malloc_trim at each phase change

    class Progress(NullProgress):
        def phase(self, name: str) -> None:
            if trim:
                from local_memory_shared.heap import trim_heap

                trim_heap()
            labels.phase(name)

    stop = threading.Event()
    timeline: list[tuple[float, int]] = []
    started = time.perf_counter()

    # With this process's descendants (parse workers, the vector index child): what the machine
    # holds for the run, sampled every 5th tick, per label too.
    family_peaks: dict[str, int] = {}
    family_pss_peaks: dict[str, int] = {}
    tick = [0]

    def sample() -> None:
        while not stop.is_set():
            rss = _rss_bytes()
            key = labels.current()
            if rss > labels.peaks.get(key, 0):
                labels.peaks[key] = rss
            tick[0] += 1
            if tick[0] % 5 == 0:
                family = rss + _descendants_rss_bytes(os.getpid())
                if family > family_peaks.get(key, 0):
                    family_peaks[key] = family
                pss = _family_pss_bytes(os.getpid())
                if pss > family_pss_peaks.get(key, 0):
                    family_pss_peaks[key] = pss
            mb = rss // 2**20
            if not timeline or abs(mb - timeline[-1][1]) >= 25:
                timeline.append((round(time.perf_counter() - started, 2), mb))
            stop.wait(SAMPLE_SECONDS)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # BENCH_REAL_EMBEDDER=1: the configured model (slow; for the embedding phase on a small project).
    embedder = None if os.environ.get("BENCH_REAL_EMBEDDER") == "1" else HashEmbedder()
    summary = index_project(project, settings=load_settings(), embedder=embedder, progress=Progress())
    stop.set()
    sampler.join()
    import gc

    import pyarrow as pa
    from local_memory_shared.heap import trim_heap

    end_mb = _rss_bytes() // 2**20
    gc.collect()
    trim_heap()
    pool = pa.default_memory_pool()
    after = {
        "end_rss_mb": end_mb,
        "end_rss_after_trim_mb": _rss_bytes() // 2**20,
        "end_smaps_mb": _smaps_mb(),
        "arrow_pool": pool.backend_name,
        "pylance_loaded": "lance" in sys.modules,
        "arrow_allocated_mb": pool.bytes_allocated() // 2**20,
        "arrow_pool_max_mb": pool.max_memory() // 2**20 if pool.max_memory() else None,
    }
    peaks = sorted(labels.peaks.items(), key=lambda kv: -kv[1])
    last = f"refresh#{len(refresh_entry_mb)}"

    def in_last(table: dict[str, int]) -> int:
        return max((v for k, v in table.items() if last in k.split("/")), default=0) // 2**20

    final_index = {
        "final_index_entry_rss_mb": refresh_entry_mb[-1] if refresh_entry_mb else None,
        "final_index_peak_mb": in_last(labels.peaks),
        "final_index_family_peak_mb": in_last(family_peaks),
        "final_index_family_pss_peak_mb": in_last(family_pss_peaks),
    }
    print(
        json.dumps(
            {
                "wall_s": round(time.perf_counter() - started, 2),
                "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                # The largest child process reaped (the vector index child, where there is one;
                # parse workers are the forkserver's children, not counted here).
                "children_maxrss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024,
                "chunks": summary.chunks_total,
                **after,
                **final_index,
                "files": summary.files_seen,
                "phase_seconds": summary.seconds,
                "peak_mb_by_label": {k: v // 2**20 for k, v in peaks},
                "family_peak_mb": max(family_peaks.values(), default=0) // 2**20,
                "family_peak_mb_by_label": {
                    k: v // 2**20 for k, v in sorted(family_peaks.items(), key=lambda kv: -kv[1])
                },
                # The same tree by PSS (shared library pages counted once across its processes).
                "family_pss_peak_mb": max(family_pss_peaks.values(), default=0) // 2**20,
                "family_pss_peak_mb_by_label": {
                    k: v // 2**20 for k, v in sorted(family_pss_peaks.items(), key=lambda kv: -kv[1])
                },
                "lance_seconds": {k: round(v, 2) for k, v in sorted(labels.seconds.items())},
                "timeline_mb": timeline,
            }
        )
    )
    return 0


# -- the parent: interleaved A/B ----------------------------------------------------------------


def _sides(before: str | None) -> dict[str, list[str]]:
    here = [str(REPO / d / "src") for d in ("shared", "indexer", "search")]
    if not before:
        return {"after": here}
    tree = export_ref(before, CACHE / "refs" / before.replace("/", "_"), ["shared", "indexer", "search"])
    return {"before": [str(tree / d / "src") for d in ("shared", "indexer", "search")], "after": here}


def _env(paths: list[str], data_root: Path) -> dict[str, str]:
    return {
        **os.environ,
        "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root),
        "PYTHONPATH": os.pathsep.join([*paths, str(REPO)]),
    }


def _data_root(side: str) -> Path:
    """This run's data root for ``side``: one per process, so a second ``rss`` run started while a
    long one indexes cannot wipe the first one's index (session 17 lost a 52k run that way)."""
    return CACHE / "data" / f"{side}-{os.getpid()}"


def cmd_rss(ns: argparse.Namespace) -> dict[str, Any]:
    project = build_project(ns.parts.split(","))
    sides = _sides(ns.before)
    runs: list[dict[str, Any]] = []
    cmd = [sys.executable, "-m", "bench.indexer_phases", "_child", str(project)]
    for r in range(ns.rounds):
        # Interleaved (A then B), or with ``--parallel`` both sides at once (same machine state,
        # half the wall time of a long run; each side's RSS is its own process's).
        started: dict[str, tuple[subprocess.Popen[str], str]] = {}
        for side, paths in sides.items():
            root = _data_root(side)
            shutil.rmtree(root, ignore_errors=True)
            load = _load()
            proc = subprocess.Popen(
                cmd, env=_env(paths, root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            started[side] = (proc, load)
            if not ns.parallel:
                _finish_rss(side, r, proc, load, runs)
        if ns.parallel:
            for side, (proc, load) in started.items():
                _finish_rss(side, r, proc, load, runs)
    out: dict[str, Any] = {"command": " ".join(sys.argv), "parts": ns.parts, "runs": runs}
    if len(sides) == 2:
        ratios = [
            a["maxrss_mb"] / b["maxrss_mb"]
            for a, b in zip(runs[1::2], runs[0::2], strict=True)
            if b["maxrss_mb"]
        ]
        out["maxrss_ratio_after_over_before"] = [round(x, 3) for x in ratios]
    return out


def _finish_rss(
    side: str, r: int, proc: subprocess.Popen[str], load: str, runs: list[dict[str, Any]]
) -> None:
    """Wait for one ``rss`` child, parse its report into ``runs`` and delete its data root."""
    stdout, stderr = proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"{side} failed: {stderr[-2000:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    result.update(round=r, side=side, load_before=load, load_after=_load())
    runs.append(result)
    top = list(result["peak_mb_by_label"].items())[:4]
    print(
        f"{side} r{r}: maxrss {result['maxrss_mb']} MB (largest child "
        f"{result.get('children_maxrss_mb')} MB, with descendants {result.get('family_peak_mb')} MB, "
        f"PSS with descendants {result.get('family_pss_peak_mb')} MB), "
        f"{result['chunks']} chunks, final index: parent {result.get('final_index_entry_rss_mb')} MB at entry, "
        f"{result.get('final_index_peak_mb')} MB peak, with descendants {result.get('final_index_family_peak_mb')} MB, "
        f"wall {result['wall_s']} s, load {load}; top {top}",
        file=sys.stderr,
        flush=True,
    )
    shutil.rmtree(_data_root(side), ignore_errors=True)


def cmd_reindex(ns: argparse.Namespace) -> dict[str, Any]:
    project = build_project(ns.parts.split(",")) if ns.parts else Path(ns.project).resolve()
    root = Path(ns.data_root).resolve() if ns.data_root else CACHE / "reindex-data"
    sides = _sides(ns.before)
    probe = "import sys,runpy;sys.argv=['local-memory-indexer',*sys.argv[1:]];"
    probe += (
        "import atexit;atexit.register(lambda: print('ONNXRUNTIME_LOADED' if 'onnxruntime' in sys.modules "
    )
    probe += "else 'ONNXRUNTIME_NOT_LOADED', 'LANCEDB_LOADED' if 'lancedb' in sys.modules else '', file=sys.stderr));"
    probe += "runpy.run_module('local_memory_indexer.cli', run_name='__main__')"
    cmd = [sys.executable, "-c", probe, "index", str(project), "--json"]
    first_index: dict[str, Any] | None = None
    if not (root / "projects").is_dir():
        # The first index with hash vectors under the real model's name (no model run; this
        # checkout, its peak RSS per phase reported too), then one untimed real run (it writes the
        # compact query model once per data root).
        seed = [sys.executable, "-m", "bench.indexer_phases", "_child", str(project)]
        for step in (seed, cmd):
            load = _load()
            env = _env(sides["after"], root)
            first = subprocess.run(step, env=env, capture_output=True, text=True, check=False)
            if first.returncode:
                raise RuntimeError(f"first index failed: {first.stderr[-2000:]}")
            if step is seed:
                first_index = {**json.loads(first.stdout.strip().splitlines()[-1]), "load_before": load}
                print(
                    f"first index: {first_index['maxrss_mb']} MB, {first_index['chunks']} chunks",
                    file=sys.stderr,
                )
    runs: list[dict[str, Any]] = []
    for r in range(ns.runs):
        for side, paths in sides.items():
            load = _load()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            proc = subprocess.run(cmd, env=_env(paths, root), capture_output=True, text=True, check=False)
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode:
                raise RuntimeError(f"{side} failed: {proc.stderr[-2000:]}")
            data = json.loads(proc.stdout[proc.stdout.index("{") :])
            data = data.get("data", data)
            data = data[0] if isinstance(data, list) else data
            runs.append(
                {
                    "round": r,
                    "side": side,
                    "wall_s": round(wall, 3),
                    "user_s": round(after.ru_utime - before.ru_utime, 3),
                    "sys_s": round(after.ru_stime - before.ru_stime, 3),
                    "files_seen": data.get("files_seen"),
                    "files_parsed": data.get("files_parsed"),
                    "seconds": data.get("seconds"),
                    "onnxruntime_loaded": "ONNXRUNTIME_LOADED" in proc.stderr,
                    # False on the no-change fast path (``local_memory_indexer.unchanged``).
                    "lancedb_loaded": "LANCEDB_LOADED" in proc.stderr,
                    "load": load,
                }
            )
            print(
                side,
                r,
                runs[-1]["wall_s"],
                "s wall",
                runs[-1]["user_s"],
                "s user",
                runs[-1]["sys_s"],
                "s sys, lancedb" if runs[-1]["lancedb_loaded"] else "s sys, no lancedb",
                "load",
                load,
                file=sys.stderr,
            )
    out: dict[str, Any] = {"command": " ".join(sys.argv), "project": str(project), "runs": runs}
    if first_index is not None:
        out["first_index_this_checkout"] = first_index
    for side in sides:
        walls = sorted(x["wall_s"] for x in runs if x["side"] == side)
        out[f"{side}_median_wall_s"] = walls[len(walls) // 2]
    if len(sides) == 2:
        out["wall_ratio_after_over_before"] = [
            round(a["wall_s"] / b["wall_s"], 3) for a, b in zip(runs[1::2], runs[0::2], strict=True)
        ]
    return out


def cmd_embed(ns: argparse.Namespace) -> dict[str, Any]:
    """A first index with the real model through the CLI (``/usr/bin/time -v``), fresh data roots,
    A/B interleaved: peak RSS with the ONNX session, and embedding throughput (chunks / embed s)."""
    project = build_project(ns.parts.split(","))
    sides = _sides(ns.before)
    runs: list[dict[str, Any]] = []
    for r in range(ns.rounds):
        for side, paths in sides.items():
            root = CACHE / "embed-data" / side
            shutil.rmtree(root, ignore_errors=True)
            load = _load()
            cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "local_memory_indexer.cli", "index"]
            cmd += [str(project), "--json"]
            proc = subprocess.run(cmd, env=_env(paths, root), capture_output=True, text=True, check=False)
            if proc.returncode:
                raise RuntimeError(f"{side} failed: {proc.stderr[-2000:]}")
            rss_kb = next(int(x.split(": ")[1]) for x in proc.stderr.splitlines() if "Maximum resident" in x)
            data = json.loads(proc.stdout[proc.stdout.index("{") :])
            data = data.get("data", data)
            embed_s = data["seconds"].get("embed") or 0.0
            runs.append(
                {
                    "round": r,
                    "side": side,
                    "maxrss_mb": rss_kb // 1024,
                    "chunks_embedded": data["chunks_embedded"],
                    "embed_s": embed_s,
                    "chunks_per_s": round(data["chunks_embedded"] / embed_s, 1) if embed_s else None,
                    "load_before": load,
                    "load_after": _load(),
                }
            )
            print(side, r, runs[-1], file=sys.stderr, flush=True)
            shutil.rmtree(root, ignore_errors=True)
    out: dict[str, Any] = {"command": " ".join(sys.argv), "parts": ns.parts, "runs": runs}
    if len(sides) == 2:
        pairs = list(zip(runs[1::2], runs[0::2], strict=True))
        out["maxrss_ratio_after_over_before"] = [round(a["maxrss_mb"] / b["maxrss_mb"], 3) for a, b in pairs]
        out["rate_ratio_after_over_before"] = [
            round(a["chunks_per_s"] / b["chunks_per_s"], 3)
            for a, b in pairs
            if a["chunks_per_s"] and b["chunks_per_s"]
        ]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    rss = sub.add_parser("rss", help="peak RSS per phase of a first index (hash vectors), A/B")
    rss.add_argument(
        "--parts",
        default="laravel-framework",
        help="semble corpora, comma-separated (also: semble-all, cosqa)",
    )
    rss.add_argument("--before", help="git ref to compare against (omit: this checkout only)")
    rss.add_argument("--rounds", type=int, default=1)
    rss.add_argument(
        "--parallel", action="store_true", help="run the two sides at once instead of one after the other"
    )
    rss.add_argument("--out", type=Path)
    re_ = sub.add_parser("reindex", help="no-change re-index wall time (real model), A/B")
    re_.add_argument("--parts", help="semble corpora, comma-separated")
    re_.add_argument("--project", help="or an existing project folder")
    re_.add_argument("--data-root", help="data root holding (or to hold) its index")
    re_.add_argument("--before")
    re_.add_argument("--runs", type=int, default=3)
    re_.add_argument("--out", type=Path)
    emb = sub.add_parser(
        "embed", help="peak RSS and embedding rate of a first index with the real model, A/B"
    )
    emb.add_argument("--parts", default="xmonad,requests", help="semble corpora, comma-separated")
    emb.add_argument("--before")
    emb.add_argument("--rounds", type=int, default=2)
    emb.add_argument("--out", type=Path)
    child_ = sub.add_parser("_child", help=argparse.SUPPRESS)
    child_.add_argument("project", type=Path)
    ns = parser.parse_args(argv)
    if ns.cmd == "_child":
        return child(ns.project)
    report = {"rss": cmd_rss, "reindex": cmd_reindex, "embed": cmd_embed}[ns.cmd](ns)
    emit(report, ns.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
