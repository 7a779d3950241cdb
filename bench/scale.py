"""The scale corpus and its replication, for indexing throughput and latency at 10k / 100k chunks.

The scale corpus is the pinned Sphinx sdist with its translation catalogues (``*.po``/``*.pot``)
left out through a ``.localmemoryignore`` — as a user would — which leaves about 10k chunks.

The 100k tier cannot be embedded here in reasonable time (~40 chunks/s on 2 cores), so it is
made by **replication**: the scale tree is hard-linked N times under ``copyNN/`` and indexed by
the real pipeline (walk, parse, graph, write, FTS and ANN index builds all real), with a
:class:`ReplayEmbedder` that returns, for each copy of a chunk, the vector the real model gave
the original chunk (same backend/model/dimension, so the searcher encodes queries with the real
model). Latency at 100k is therefore honest for storage, BM25, ANN and fusion; the corpus has
N near-identical copies, which makes it no use for quality.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from local_memory_shared.embedding.base import Embedder, ProgressFn
from local_memory_shared.paths import project_paths

from .corpora import CACHE_DIR, fetch

log = logging.getLogger(__name__)

IGNORE_TEXT = "# bench: translation catalogues are data, not code\n*.po\n*.pot\n*.mo\n"
_COPY_PREFIX = re.compile(r"^copy\d+/")


def prepare_scale_tree(dest: Path, corpus_key: str = "sphinx") -> Path:
    """A fresh private copy of the scale corpus at ``dest`` (hard links; plus the ignore file)."""
    corpus = fetch(corpus_key)
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(corpus.root, dest, copy_function=_link_or_copy)
    (dest / ".localmemoryignore").write_text(IGNORE_TEXT)
    return dest


def prepare_small_tree(dest: Path, corpus_key: str, subdir: str | None = None) -> Path:
    """A fresh private copy of a corpus (or one sub-folder of it) at ``dest``."""
    corpus = fetch(corpus_key)
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(corpus.root / subdir if subdir else corpus.root, dest)
    return dest


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def replicate_tree(base: Path, dest: Path, copies: int) -> Path:
    """``dest/copy00 … copyNN``, each a hard-linked copy of ``base``."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for i in range(copies):
        shutil.copytree(base, dest / f"copy{i:02d}", copy_function=_link_or_copy)
    return dest


class ReplayEmbedder(Embedder):
    """Answers each chunk with the real model's vector for the original chunk it copies."""

    def __init__(self, real: Embedder, seed: dict[str, np.ndarray]):
        self.real = real
        self.backend = real.backend
        self.model = real.model
        self.seed = seed
        self.replayed = 0
        self.embedded = 0

    @property
    def dimension(self) -> int:
        return self.real.dimension

    def embed_documents(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        missing: list[int] = []
        keys = []
        for i, text in enumerate(texts):
            key = hashlib.sha256(_COPY_PREFIX.sub("", text, count=1).encode("utf-8")).hexdigest()
            keys.append(key)
            if key in self.seed:
                out[i] = self.seed[key]
            else:
                missing.append(i)
        if missing:
            fresh = self.real.embed_documents([_COPY_PREFIX.sub("", texts[i], count=1) for i in missing])
            for k, i in enumerate(missing):
                out[i] = fresh[k]
                self.seed[keys[i]] = fresh[k]
        self.replayed += len(texts) - len(missing)
        self.embedded += len(missing)
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def close(self) -> None:
        pass


def embed_cache_of(project: Path, data_root: Path, model_key: str) -> dict[str, np.ndarray]:
    """Every cached vector of ``project``'s index (text hash → vector) for ``model_key``."""
    paths = project_paths(data_root, project)
    conn = sqlite3.connect(f"file:{paths.state_db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT text_hash, vector FROM embed_cache WHERE model_key = ?", (model_key,)
        ).fetchall()
    finally:
        conn.close()
    return {h: np.frombuffer(v, dtype=np.float32).copy() for h, v in rows}


WORK = CACHE_DIR / "work"
