"""Experiment: does a file-level semantic signal help search_hybrid on the semble benchmark?

Bench-side only: nothing in the product changes. Per repository, the stored chunk vectors are read
once from the published LanceDB table and cached under ``bench/cache/file_leg/`` (per project and
version): each file's centroid is the normalised mean of its chunks' normalised vectors. The
fusion is wrapped (like ``bench.semble.cached_legs`` wraps the legs):

- ``centroid``: a per-file factor from the query's cosine to the candidate's file centroid,
  applied before the file-level stage (``fusion._per_file``):
    abs:  final *= 1 + w * max(0, cos - c0)
    rel:  final *= 1 + w * max(0, (cos - c0) / (best candidate-file cos - c0))
    rank: final *= 1 + w * max(0, 1 - (r - 1) / k)   (r: the file's rank among all files by cos)
- ``leg``: a file leg: the top ``k`` files by centroid cosine (brute force), each adding its best
  chunk (by the chunk's own cosine) to the fusion with ``w * conf / (rrf_k + file rank)``
  (conf = (cos / best cos) ** the legs' confidence exponent), like the definition leg.
- ``sig=N`` picks the file vector / score: 0 the centroid, 1 the mean of the file's top-3 chunk
  cosines, 2 (best chunk cosine + centroid) / 2, 3 a **summary** vector (path words + the file's
  symbol names, embedded by the index's own ONNX MiniLM, cached), 4 (best chunk cosine + summary) / 2;
  ``g=N`` gates it: 0 every query, 1 questions, 2 prose, 3 queries without names.
- ``--diagnose``: each file signal alone as a file ranker (MRR@10 / recall@10 of relevant files).

Results (tuning half, default 0.8599): centroid factor best +0.002, file leg best
+0.003 (no-name gate; it never adds a chunk the legs missed, it only re-weights), summary factor
``centroid:rank:w=0.25:k=20:sig=3`` +0.0056 tuning but 0.0000 reporting (0.8460): not kept.

- ``central`` (session 13): a graph-centrality prior per file, ``final *= 1 + w * c`` (``abs``) or
  by the file's rank among the candidates' files (``rank``), ``c`` in [0, 1] log-scaled to the
  project's most central file; ``sig=0`` import in-degree, ``1`` call in-degree (each call of a
  name split over the files defining it), ``2`` their mean. On the 14 tuning repositories indexed
  first (all but abseil-cpp, commons-lang, newtonsoft-json, pandoc; default 0.8731) the best was
  ``central:abs:w=0.2:sig=2:g=2`` +0.0004 (architecture −0.005, semantic +0.0035); on 10 of them
  it had looked like +0.0023. Noise: not kept, not tried on the reporting half.

    nice -n 19 python -m bench.file_leg_experiment --half tuning \\
        --config 'centroid:abs:w=0.5:c0=0.3' --config 'leg:k=10:w=0.5:g=3' \\
        --config 'centroid:rank:w=0.25:k=20:g=0:sig=3' --json /tmp/file_leg.json

The retrieval legs are memoised per query on disk (``bench/cache/file_leg/legs-*.pkl``) so a
re-run only re-runs the fusion. Scores: per config, overall and per category, against the
default in the same run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import os
import pickle
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from bench import semble

CACHE = semble.ROOT / "bench" / "cache" / "file_leg"
log = logging.getLogger("bench.file_leg")


# ---------------------------------------------------------------------------------------------
# per-repository file vectors


@dataclass
class FileStore:
    files: list[str]
    file_idx: dict[str, int]
    chunk_ids: list[str]
    chunk_file: np.ndarray  # file index of each chunk
    chunk_vecs: np.ndarray  # normalised, float32
    centroids: np.ndarray  # normalised, float32
    meta: dict[str, dict[str, Any]]
    chunks_of: list[np.ndarray]  # chunk indices per file
    summaries: np.ndarray | None = None  # normalised summary vectors (optional)
    central: dict[int, np.ndarray] | None = None  # centrality per file, by signal (``central`` configs)


_STORES: dict[Any, FileStore] = {}
#: which file vectors the centroid / leg use: "centroid" or "summary"
VECTORS = ["centroid"]


def _cache_file(reader: Any, kind: str) -> Path:
    key = hashlib.sha1(repr((reader.project, reader.version)).encode()).hexdigest()[:16]
    return CACHE / f"{Path(reader.project).name}-{key}.{kind}.npz"


def file_store(reader: Any) -> FileStore:
    token = reader.cache_token
    if token in _STORES:
        return _STORES[token]
    from local_memory_search.legs import LEG_COLUMNS

    path = _cache_file(reader, "chunks")
    meta_path = path.with_suffix(".meta.pkl")
    if path.is_file() and meta_path.is_file():
        z = np.load(path)
        vecs = z["vecs"]
        with open(meta_path, "rb") as fh:
            chunk_ids, paths, meta = pickle.load(fh)
    else:
        n = int(reader.table.count_rows())
        tbl = reader.table.scan_arrow(where="", columns=[*LEG_COLUMNS, "vector"], limit=n + 10)
        rows = tbl.to_pylist()
        rows = [r for r in rows if r.get("vector") is not None]
        chunk_ids = [r["chunk_id"] for r in rows]
        paths = [r["file_path"] or "" for r in rows]
        meta = {r["chunk_id"]: {k: r.get(k) for k in LEG_COLUMNS} for r in rows}
        vecs = np.asarray([r["vector"] for r in rows], dtype=np.float32)
        CACHE.mkdir(parents=True, exist_ok=True)
        np.savez(path, vecs=vecs)
        with open(meta_path, "wb") as fh:
            pickle.dump((chunk_ids, paths, meta), fh)
    vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
    files = sorted(set(paths))
    file_idx = {f: i for i, f in enumerate(files)}
    chunk_file = np.asarray([file_idx[p] for p in paths], dtype=np.int32)
    cents = np.zeros((len(files), vecs.shape[1]), dtype=np.float32)
    np.add.at(cents, chunk_file, vecs)
    cents /= np.maximum(np.linalg.norm(cents, axis=1, keepdims=True), 1e-9)
    order = np.argsort(chunk_file, kind="stable")
    bounds = np.searchsorted(chunk_file[order], np.arange(len(files) + 1))
    chunks_of = [order[bounds[i] : bounds[i + 1]] for i in range(len(files))]
    store = FileStore(files, file_idx, chunk_ids, chunk_file, vecs, cents, meta, chunks_of)
    store.summaries = summary_vectors(reader, store)
    if any(cfg.kind == "central" for cfg in CONFIG):  # only the centrality configs read the graph
        store.central = centrality(reader, store)
    _STORES[token] = store
    return store


def centrality(reader: Any, store: FileStore) -> dict[int, np.ndarray]:
    """How central each file is in the project's graph, in [0, 1] (log-scaled to the maximum):

    0: import in-degree (distinct files whose imports resolve to it);
    1: call in-degree (distinct (calling file, name) pairs naming a symbol it defines, each
       weighted by 1 / the number of files defining that name; calls from the file itself left out);
    2: the mean of 0 and 1.
    """
    n = len(store.files)
    imp = np.zeros(n, dtype=np.float64)
    for path, cnt in reader.conn.execute(
        "SELECT resolved_path, count(DISTINCT file_path) FROM import_edges "
        "WHERE resolved_path IS NOT NULL AND resolved_path != file_path GROUP BY resolved_path"
    ):
        i = store.file_idx.get(path)
        if i is not None:
            imp[i] += cnt
    defs: dict[str, set[str]] = defaultdict(set)
    for name, path in reader.conn.execute("SELECT name, file_path FROM symbols"):
        defs[name].add(path)
    calls = np.zeros(n, dtype=np.float64)
    for path, name in reader.conn.execute("SELECT DISTINCT file_path, callee_name FROM call_edges"):
        owners = defs.get(name)
        if not owners:
            continue
        w = 1.0 / len(owners)
        for owner in owners:
            i = store.file_idx.get(owner)
            if owner != path and i is not None:
                calls[i] += w

    def scaled(x: np.ndarray) -> np.ndarray:
        top = float(np.log1p(x).max()) if len(x) else 0.0
        return (np.log1p(x) / top) if top > 0 else np.zeros_like(x)

    a, b = scaled(imp), scaled(calls)
    return {0: a, 1: b, 2: (a + b) / 2}


_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _SPLIT.findall(text)]


def summary_text(path: str, symbols: list[str]) -> str:
    """A file's summary: its relative path's words, then its symbol names' words (deduplicated)."""
    parts = [" ".join(_words(p)) for p in re.split(r"[/\\]", path) if p]
    seen: dict[str, None] = {}
    for s in symbols:
        w = " ".join(_words(s.rsplit(".", 1)[-1]))
        if w:
            seen.setdefault(w, None)
    return f"{' / '.join(parts)}: {', '.join(list(seen)[:60])}"


def summary_vectors(reader: Any, store: FileStore) -> np.ndarray:
    path = _cache_file(reader, "summary")
    if path.is_file():
        vecs = np.load(path)["vecs"]
    else:
        from local_memory_shared.embedding.onnx import OnnxEmbedder

        symbols: dict[int, list[str]] = defaultdict(list)
        for cid, fi in zip(store.chunk_ids, store.chunk_file, strict=True):
            m = store.meta[cid]
            for k in ("symbol_name", "class_name", "function_name"):
                if m.get(k):
                    symbols[int(fi)].append(m[k])
        texts = [summary_text(f, symbols[i]) for i, f in enumerate(store.files)]
        emb = OnnxEmbedder.from_config("all-MiniLM-L6-v2", dimension=384, settings=reader.settings)
        vecs = np.asarray(emb.embed_documents(texts), dtype=np.float32)
        np.savez(path, vecs=vecs)
    return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)


# ---------------------------------------------------------------------------------------------
# the hook


@dataclass
class Config:
    kind: str = "off"  # off | centroid | leg
    form: str = "abs"  # centroid: abs | rel | rank
    w: float = 0.0
    c0: float = 0.0
    k: int = 10
    per_file: int = 1  # leg: chunks added per file
    gate: int = 0  # 0 every query, 1 questions, 2 prose, 3 queries without names
    sig: int = 0  # file signal: 0 centroid, 1 mean of top-3 chunk cosines, 2 (max + centroid) / 2, 3 summary, 4 (max + summary) / 2
    new: int = 1  # leg: 1 adds chunks no other leg found, 0 only boosts candidates already there


CONFIG = [Config()]
#: (query, store, query vector, file cosines) of the query being ranked
CTX: dict[str, Any] = {}
ACTIVE: dict[str, Any] = {}


def parse_config(spec: str) -> Config:
    parts = spec.split(":")
    cfg = Config(kind=parts[0])
    for p in parts[1:]:
        if "=" in p:
            k, v = p.split("=", 1)
            if k in ("k", "per_file", "sig"):
                setattr(cfg, k, int(v))
            elif k in ("g", "new"):
                setattr(cfg, "gate" if k == "g" else k, int(v))
            else:
                setattr(cfg, k, float(v))
        else:
            cfg.form = p
    return cfg


def _file_vectors(store: FileStore) -> np.ndarray:
    return store.summaries if VECTORS[0] == "summary" and store.summaries is not None else store.centroids


def _signal(store: FileStore, q: np.ndarray, sig: int) -> np.ndarray:
    """The query's per-file score under signal ``sig`` (see ``Config.sig``)."""
    if sig == 0:
        return store.centroids @ q
    if sig == 3:
        assert store.summaries is not None
        return store.summaries @ q
    csim = store.chunk_vecs @ q
    if sig == 1:
        return np.array([np.sort(csim[ix])[-3:].mean() for ix in store.chunks_of], dtype=np.float32)
    mx = np.full(len(store.files), -1.0, dtype=np.float32)
    np.maximum.at(mx, store.chunk_file, csim)
    other = store.centroids @ q if sig == 2 else store.summaries @ q  # type: ignore[operator]
    return (mx + other) / 2


def install() -> Any:
    """Wrap hybrid.semantic_leg (to learn the reader and query vector) and fusion._score / _per_file."""
    from local_memory_search import fusion, hybrid, ranking
    from local_memory_search.encoder import ENCODER, choose_encoder
    from local_memory_search.legs import LegHit
    from local_memory_search.query_text import query_identifiers

    orig_sem = hybrid.semantic_leg
    orig_score = fusion._score
    orig_per_file = fusion._per_file

    def sem_wrap(reader: Any, req: Any, warnings: Any) -> Any:
        if CONFIG[0].kind != "off" and req.mode == "hybrid":
            store = file_store(reader)
            choice, _ = choose_encoder(reader.meta, reader.vector_dim)
            q = ENCODER.encode(choice, req.query, reader.vector_dim, reader.settings)
            q = q / max(float(np.linalg.norm(q)), 1e-9)
            CTX.clear()
            CTX.update(query=req.query, store=store, cos=_signal(store, q, CONFIG[0].sig), q=q, reader=reader)
        return orig_sem(reader, req, warnings)

    def score_wrap(req, alpha, sem, kw, dfn, meta, newest, knobs, shape):  # type: ignore[no-untyped-def]
        out = orig_score(req, alpha, sem, kw, dfn, meta, newest, knobs, shape)
        ACTIVE.clear()
        cfg = CONFIG[0]
        if cfg.kind == "off" or shape is None or CTX.get("query") != req.query:
            return out
        if cfg.gate == 1 and not shape.question or cfg.gate == 2 and not shape.prose:
            return out
        if cfg.gate == 3 and query_identifiers(req.query, ranking.plain_words(knobs)):
            return out
        ACTIVE.update(CTX)
        if cfg.kind == "leg":
            out = _add_file_leg(out, req, alpha, meta, newest, knobs, shape, cfg, orig_score, LegHit)
        return out

    def per_file_wrap(ranked, knobs, shape):  # type: ignore[no-untyped-def]
        cfg = CONFIG[0]
        if ACTIVE and cfg.kind == "centroid" and ranked:
            _centroid_factor(ranked, cfg)
            ranked.sort(key=fusion._Candidate.order)
        if ACTIVE and cfg.kind == "central" and ranked:
            _central_factor(ranked, cfg)
            ranked.sort(key=fusion._Candidate.order)
        return orig_per_file(ranked, knobs, shape)

    hybrid.semantic_leg = sem_wrap
    fusion._score = score_wrap
    fusion._per_file = per_file_wrap


def _centroid_factor(ranked: list[Any], cfg: Config) -> None:
    store: FileStore = ACTIVE["store"]
    cos: np.ndarray = ACTIVE["cos"]
    fc: dict[str, float] = {}
    for c in ranked:
        i = store.file_idx.get(c.file_path)
        if i is not None:
            fc[c.file_path] = float(cos[i])
    if not fc:
        return
    if cfg.form == "rank":
        # rank of each file among all files by cosine
        order = np.argsort(-cos)
        rank_of = np.empty_like(order)
        rank_of[order] = np.arange(1, len(order) + 1)
    best = max(fc.values())
    for c in ranked:
        if c.file_path not in fc:
            continue
        x = fc[c.file_path]
        if cfg.form == "abs":
            f = 1.0 + cfg.w * max(0.0, x - cfg.c0)
        elif cfg.form == "rel":
            f = 1.0 + cfg.w * max(0.0, (x - cfg.c0) / (best - cfg.c0)) if best > cfg.c0 else 1.0
        elif cfg.form == "rank":
            r = int(rank_of[store.file_idx[c.file_path]])
            f = 1.0 + cfg.w * max(0.0, 1.0 - (r - 1) / cfg.k)
        else:
            raise ValueError(cfg.form)
        c.multiply("file_centroid", f)


def _central_factor(ranked: list[Any], cfg: Config) -> None:
    """``central``: final *= 1 + w * x, x the file's centrality (``abs``: the scaled value; ``rank``:
    1 - (r - 1) / k for the file's rank r among the candidates' files by centrality)."""
    store: FileStore = ACTIVE["store"]
    if store.central is None:  # a store built while another config ran
        store.central = centrality(ACTIVE["reader"], store)
    cent = store.central[cfg.sig]
    values = {
        c.file_path: float(cent[store.file_idx[c.file_path]]) for c in ranked if c.file_path in store.file_idx
    }
    if cfg.form == "rank":
        order = sorted(values, key=lambda f: -values[f])
        rank_of = {f: r for r, f in enumerate(order, start=1) if values[f] > 0}
    for c in ranked:
        if c.file_path not in values:
            continue
        if cfg.form == "rank":
            r = rank_of.get(c.file_path)
            f = 1.0 + cfg.w * max(0.0, 1.0 - (r - 1) / cfg.k) if r else 1.0
        else:
            f = 1.0 + cfg.w * values[c.file_path]
        c.multiply("file_central", f)


def _add_file_leg(out, req, alpha, meta, newest, knobs, shape, cfg, orig_score, LegHit):  # type: ignore[no-untyped-def]
    from local_memory_search import ranking

    store: FileStore = ACTIVE["store"]
    cos: np.ndarray = ACTIVE["cos"]
    q: np.ndarray = ACTIVE["q"]
    k = min(cfg.k, len(cos))
    top = np.argpartition(-cos, k - 1)[:k] if k < len(cos) else np.arange(len(cos))
    top = top[np.argsort(-cos[top], kind="stable")]
    best = float(cos[top[0]]) if len(top) else 0.0
    p = ranking.leg_confidence_exponent(shape, knobs)
    adds: dict[str, float] = {}
    ranks: dict[str, int] = {}
    for rank, fi in enumerate(top, start=1):
        idx = store.chunks_of[int(fi)]
        sims = store.chunk_vecs[idx] @ q
        conf = (max(0.0, float(cos[fi])) / best) ** p if best > 0 else 1.0
        for j in np.argsort(-sims)[: cfg.per_file]:
            cid = store.chunk_ids[int(idx[j])]
            adds[cid] = adds.get(cid, 0.0) + cfg.w * conf / (req.rrf_k + rank)
            ranks.setdefault(cid, rank)
    by_id = {c.chunk_id: c for c in out}
    new: dict[str, Any] = {}
    for cid, add in adds.items():
        c = by_id.get(cid)
        if c is not None:
            mult = c.fixed[7] * c.fixed[11] * math.prod(v for _, v in c.factors)
            c.base += add
            c.score += add * mult
        elif cfg.new:
            new[cid] = LegHit(cid, ranks[cid], 1.0)
    if new:
        extra = orig_score(
            req, alpha, {}, {}, new, {cid: store.meta[cid] for cid in new}, newest,
            replace(knobs, definition_weight=1.0), shape,
        )  # fmt: skip
        for c in extra:
            scale = adds[c.chunk_id] * (req.rrf_k + ranks[c.chunk_id])  # base was 1 / (rrf_k + rank)
            c.base *= scale
            c.score *= scale
        out = [*out, *extra]
    return out


# ---------------------------------------------------------------------------------------------
# persistent leg memo


def persistent_legs(path: Path) -> Any:
    """Like ``semble.cached_legs`` but the memo is loaded from / saved to ``path``."""
    from local_memory_search import hybrid, ranking

    names = ("semantic_leg", "keyword_leg", "definition_leg")
    memo: dict[tuple[Any, ...], Any] = {}
    if path.is_file():
        with open(path, "rb") as fh:
            memo = pickle.load(fh)
    dirty = [False]

    def wrap(name: str, fn: Any) -> Any:
        def inner(reader: Any, req: Any, *rest: Any) -> Any:
            extra = tuple(sorted(rest[0])) if name == "definition_leg" else ()
            if name == "keyword_leg":
                extra = (ranking.plain_words(ranking.KNOBS),)
            key = (name, repr(reader.cache_token), req.query, req.depth, repr(req.filters), extra)
            if key not in memo:
                memo[key] = fn(reader, req, *rest)
                dirty[0] = True
            return memo[key]

        return inner

    for n in names:
        setattr(hybrid, n, wrap(n, getattr(hybrid, n)))

    def save() -> None:
        if dirty[0]:
            CACHE.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            with open(tmp, "wb") as fh:
                pickle.dump(memo, fh)
            tmp.replace(path)

    return save


# ---------------------------------------------------------------------------------------------


def run(names: list[str], configs: dict[str, Config], half: str) -> dict[str, Any]:
    save = persistent_legs(CACHE / f"legs-{half}.pkl")  # innermost: the real legs, memoised
    install()  # outermost: sem_wrap sees every call, then the memo
    out: dict[str, Any] = {}
    try:
        for label, cfg in configs.items():
            CONFIG[0] = cfg
            t = time.perf_counter()
            res = semble.evaluate(names, ["search_hybrid"])["search_hybrid"]
            out[label] = {k: res[k] for k in ("overall", *semble.CATEGORIES)}
            out[label]["repos"] = {n: r["ndcg@10"] for n, r in res["repos"].items()}
            out[label]["seconds"] = round(time.perf_counter() - t, 1)
            base = out.get("default")
            cells = " ".join(f"{k[:4]} {out[label][k]:.4f}" for k in ("overall", *semble.CATEGORIES))
            delta = f"  Δ {out[label]['overall'] - base['overall']:+.4f}" if base else ""
            print(f"{label:40s} {cells}{delta}  ({out[label]['seconds']}s)", flush=True)
            save()
    finally:
        save()
    return out


# ---------------------------------------------------------------------------------------------
# diagnostic: each file signal alone as a file ranker (no fusion)


def diagnose(names: list[str], signals: list[str]) -> dict[str, Any]:
    """File-level MRR@10 / recall@10 of the relevant files per category for each file signal:
    ``max`` (best chunk cosine: the semantic leg at file level), ``centroid``, ``summary``,
    ``mean3`` (mean of the file's top-3 chunk cosines), and blends."""
    from local_memory_search.encoder import ENCODER, choose_encoder
    from local_memory_search.store import open_index

    by_name = {r["name"]: r for r in semble.repos()}
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for name in names:
        repo = by_name[name]
        project = semble.project_root(repo, semble.CACHE / "corpora" / name)
        prefix = f"{repo['benchmark_root'].strip('/')}/" if repo.get("benchmark_root") else ""
        with open_index(str(project)) as reader:
            if "summary" in signals:
                VECTORS[0] = "summary"
            store = file_store(reader)
            choice, _ = choose_encoder(reader.meta, reader.vector_dim)
            annotations = json.loads((semble.DATA / "annotations" / f"{name}.json").read_text())
            for item in annotations:
                rel = {str(t if isinstance(t, str) else t["path"]) for t in item.get("relevant", [])}
                rel = {r[len(prefix) :] if r.startswith(prefix) else r for r in rel}
                q = ENCODER.encode(choice, item["query"], reader.vector_dim, reader.settings)
                q = q / max(float(np.linalg.norm(q)), 1e-9)
                csim = store.chunk_vecs @ q
                nf = len(store.files)
                mx = np.full(nf, -1.0, dtype=np.float32)
                np.maximum.at(mx, store.chunk_file, csim)
                scores = {"max": mx, "centroid": store.centroids @ q}
                top3 = np.array([np.sort(csim[ix])[-3:].mean() for ix in store.chunks_of])
                scores["mean3"] = top3
                scores["max+centroid"] = mx + scores["centroid"]
                if store.summaries is not None:
                    scores["summary"] = store.summaries @ q
                    scores["max+summary"] = mx + scores["summary"]
                for sig, sc in scores.items():
                    order = np.argsort(-sc)[:10]
                    ranked = [store.files[i] for i in order]
                    hits = [i for i, f in enumerate(ranked, 1) if f in rel]
                    mrr = 1.0 / hits[0] if hits else 0.0
                    rec = len(hits) / max(1, len(rel))
                    for cat in (item["category"], "all"):
                        acc[f"{sig}"][f"{cat}:mrr"].append(mrr)
                        acc[f"{sig}"][f"{cat}:r10"].append(rec)
    out = {s: {k: sum(v) / len(v) for k, v in d.items()} for s, d in acc.items()}
    for s, d in out.items():
        print(f"{s:14s} " + " ".join(f"{k} {v:.3f}" for k, v in sorted(d.items())), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=("tuning", "reporting"), default="tuning")
    ap.add_argument("--repos", default="")
    ap.add_argument("--config", action="append", default=[])
    ap.add_argument("--vectors", choices=("centroid", "summary"), default="centroid")
    ap.add_argument("--json")
    ap.add_argument("--diagnose", action="store_true", help="each file signal alone as a file ranker")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    os.environ.setdefault("EMBED_BACKEND", "onnx")
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(semble.DATA_ROOT[0])
    VECTORS[0] = args.vectors
    only = [r for r in args.repos.split(",") if r]
    half = semble.halves()[args.half]
    names = [n for n in half if n in only] if only else half
    if args.diagnose:
        res = diagnose(names, ["centroid", args.vectors])
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=2))
        return 0
    configs = {"default": Config(), **{s: parse_config(s) for s in args.config}}
    out = run(names, configs, args.half)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
