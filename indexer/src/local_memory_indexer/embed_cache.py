"""Embed chunk texts, never twice: vectors cached in the state DB by (model, sha256(text))."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from local_memory_shared.embedding.base import Embedder

from .state_writer import StateWriter


@dataclass(frozen=True)
class EmbedOutcome:
    """Vectors for a batch of texts and how many were computed versus reused."""

    vectors: np.ndarray
    embedded: int
    reused: int


def text_hash(text: str) -> str:
    """Cache key of an embedded text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbedCache:
    """The ``embed_cache`` table for one embedder."""

    def __init__(self, state: StateWriter, embedder: Embedder):
        self.state = state
        self.embedder = embedder

    def get(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors of ``hashes`` (those of another dimension are ignored)."""
        out: dict[str, np.ndarray] = {}
        sql = "SELECT text_hash, vector FROM embed_cache WHERE model_key = ? AND text_hash IN ({marks})"
        for row in self.state.in_batches(sql, sorted(set(hashes)), (self.embedder.model_key,)):
            vec = np.frombuffer(row[1], dtype=np.float32)
            if vec.shape[0] == self.embedder.dimension:
                out[row[0]] = vec
        return out

    def put(self, by_hash: dict[str, np.ndarray]) -> None:
        """Store fresh vectors (one transaction)."""
        key = self.embedder.model_key
        with self.state.txn():
            self.state.conn.executemany(
                "INSERT OR REPLACE INTO embed_cache(model_key, text_hash, vector) VALUES (?,?,?)",
                [(key, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in by_hash.items()],
            )

    def embed(self, texts: Sequence[str], progress: Callable[[int, int], None]) -> EmbedOutcome:
        """Vectors for ``texts``: cached ones reused, each distinct missing text embedded once."""
        vectors = np.zeros((len(texts), self.embedder.dimension), dtype=np.float32)
        hashes = [text_hash(t) for t in texts]
        cached = self.get(hashes)
        first_of: dict[str, int] = {}
        for i, h in enumerate(hashes):
            if h in cached:
                vectors[i] = cached[h]
            else:
                first_of.setdefault(h, i)
        if first_of:
            order = list(first_of.values())
            # Stream: each ONNX run's vectors go into place and into the cache at once, so no second
            # full matrix is built and a killed run keeps what it already paid for.
            for positions, fresh in self.embedder.iter_embeddings([texts[i] for i in order], progress):
                by_hash = {hashes[order[int(k)]]: fresh[n] for n, k in enumerate(positions)}
                for n, k in enumerate(positions):
                    vectors[order[int(k)]] = fresh[n]
                self.put(by_hash)
            for i, h in enumerate(hashes):  # duplicates of a text embedded in this batch
                if h in first_of and first_of[h] != i:
                    vectors[i] = vectors[first_of[h]]
        return EmbedOutcome(vectors, embedded=len(first_of), reused=len(texts) - len(first_of))
