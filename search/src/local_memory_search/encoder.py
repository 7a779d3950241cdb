"""The query encoder is the index's own model, as seed 003 "How the query encoder is chosen" says.

- ``index_meta`` names backend, model and dimension → that backend encodes the query
  (``openrouter`` shares Gemini's vector space, so Gemini encodes).
- No ``index_meta`` row → inferred from the LanceDB vector dimension (384 → onnx MiniLM,
  3072 → Gemini, 2560 → Ollama) with an ``index_provenance_inferred`` warning.
- Neither → ``index_provenance_unknown``: the semantic leg is skipped, never guessed.

Every query vector is checked against the index's dimension; a mismatch fails only the semantic leg.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from local_memory_shared.config import Settings
from local_memory_shared.embedding import DEFAULT_MODELS, Embedder, RetryPolicy, create_embedder
from local_memory_shared.errors import DimensionMismatch, EmbeddingError, LocalMemoryError
from local_memory_shared.state import IndexMeta

from . import degradation as W
from .runtime import register_cache

log = logging.getLogger(__name__)

#: Vector dimension → (backend, model) when an index carries no provenance row.
INFERRED_BY_DIMENSION: dict[int, tuple[str, str]] = {
    384: ("onnx", DEFAULT_MODELS["onnx"]),
    3072: ("gemini", DEFAULT_MODELS["gemini"]),
    2560: ("ollama", DEFAULT_MODELS["ollama"]),
}
#: Provenance backend names that share another backend's vector space.
BACKEND_ALIASES = {"openrouter": "gemini", "google": "gemini"}

#: A query should not wait out the indexer's long batch timeouts and backoff.
QUERY_TIMEOUT_S = 30.0
QUERY_RETRY = RetryPolicy(attempts=2, base_delay=0.2, max_delay=1.0)
#: After a backend failure, skip it for this long instead of paying the timeout on every query.
FAILURE_COOLDOWN_S = 10.0


@dataclass(frozen=True)
class EncoderChoice:
    """Which model encodes queries for one index, and why."""

    backend: str
    model: str
    dimension: int
    inferred: bool

    @property
    def key(self) -> str:
        return f"{self.backend}:{self.model}:{self.dimension}"


def choose_encoder(
    meta: IndexMeta | None, vector_dim: int | None
) -> tuple[EncoderChoice | None, list[dict[str, str]]]:
    """Apply seed 003's rules; returns the choice (None = skip the semantic leg) and its warnings."""
    if meta is not None:
        backend = BACKEND_ALIASES.get(meta.backend.lower(), meta.backend.lower())
        model = meta.model
        if backend != meta.backend.lower() and backend in DEFAULT_MODELS:
            # openrouter model ids ("google/gemini-embedding-...") are not Gemini API names.
            model = DEFAULT_MODELS[backend]
        return EncoderChoice(backend, model, int(meta.dimension), inferred=False), []
    if vector_dim in INFERRED_BY_DIMENSION:
        backend, model = INFERRED_BY_DIMENSION[vector_dim]
        note = W.warn(
            W.INDEX_PROVENANCE_INFERRED,
            f"Encoding with {backend}/{model} ({vector_dim}d); re-run start_indexing to record provenance.",
        )
        return EncoderChoice(backend, model, vector_dim, inferred=True), [note]
    detail = f"vector dimension {vector_dim}" if vector_dim else "no vectors readable"
    return None, [W.warn(W.INDEX_PROVENANCE_UNKNOWN, f"({detail}).")]


class QueryEncoder:
    """Builds embedders on demand, caches query vectors, and backs off from a failing backend."""

    def __init__(self, cache_size: int = 512):
        self._embedders: dict[tuple[str, str, int, str], Embedder] = {}
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._down_until: dict[str, tuple[float, str]] = {}
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._warming: threading.Thread | None = None

    def prewarm(self, settings: Settings) -> None:
        """Build the default ONNX encoder on a daemon thread while the caller imports LanceDB.

        ONNX Runtime and the tokenizer load outside the GIL, so a fresh process's first hybrid
        answer no longer pays for the model after the imports. Only when the configured backend
        is ``onnx`` (the default) and ``LOCAL_MEMORY_PREWARM_ENCODER`` is not 0; the first query
        waits for it instead of loading a second copy.
        """
        if (
            not settings.prewarm_encoder
            or settings.embed_backend.strip().lower() != "onnx"
            or self._warming is not None
        ):
            return
        model = settings.embed_model or DEFAULT_MODELS["onnx"]
        choice = EncoderChoice("onnx", model, settings.embed_dimension or 384, inferred=False)

        def warm() -> None:
            try:
                self._embedder(choice, settings, wait=False).embed_query("warm up")
            except Exception:  # best effort: the first query builds it (and reports failures)
                log.debug("query encoder prewarm failed", exc_info=True)

        self._warming = threading.Thread(target=warm, name="encoder-prewarm", daemon=True)
        self._warming.start()

    def _embedder(self, choice: EncoderChoice, settings: Settings, *, wait: bool = True) -> Embedder:
        warming = self._warming
        if wait and warming is not None and warming.is_alive():
            warming.join()
        key = (choice.backend, choice.model, choice.dimension, settings.ollama_base_url)
        with self._lock:
            found = self._embedders.get(key)
        if found is not None:
            return found
        try:
            embedder = _build(choice, settings)
        except EmbeddingError:
            raise
        except LocalMemoryError as exc:  # e.g. an unknown backend name in index_meta
            raise EmbeddingError(f"cannot build the {choice.backend} query encoder: {exc.message}") from exc
        if hasattr(embedder, "timeout"):
            embedder.timeout = QUERY_TIMEOUT_S
        if hasattr(embedder, "retry"):
            embedder.retry = QUERY_RETRY
        with self._lock:
            return self._embedders.setdefault(key, embedder)

    def encode(
        self, choice: EncoderChoice, text: str, index_dim: int | None, settings: Settings
    ) -> np.ndarray:
        """The query vector; raises EmbeddingError (backend down) or DimensionMismatch."""
        if index_dim is not None and choice.dimension != index_dim:
            raise DimensionMismatch(
                f"index_meta says {choice.dimension}d ({choice.backend}/{choice.model}) but the index holds "
                f"{index_dim}d vectors"
            )
        where = f"{choice.key}@{settings.ollama_base_url}"
        cache_key = (where, text)
        with self._lock:
            hit = self._vectors.get(cache_key)
            if hit is not None:
                self._vectors.move_to_end(cache_key)
                return hit
            down = self._down_until.get(where)
        if down is not None and down[0] > time.monotonic():
            raise EmbeddingError(f"{down[1]} (backend skipped for {FAILURE_COOLDOWN_S:.0f}s after a failure)")
        try:
            vector = np.asarray(self._embedder(choice, settings).embed_query(text), dtype=np.float32).reshape(
                -1
            )
        except DimensionMismatch:
            raise
        except EmbeddingError as exc:
            with self._lock:
                self._down_until[where] = (time.monotonic() + FAILURE_COOLDOWN_S, exc.message)
            raise
        except Exception as exc:  # a backend bug must cost only the semantic leg
            raise EmbeddingError(f"{choice.backend} query encoding failed: {exc}") from exc
        expected = index_dim if index_dim is not None else choice.dimension
        if vector.shape[0] != expected:
            raise DimensionMismatch(
                f"{choice.backend}/{choice.model} produced a {vector.shape[0]}d query vector; the index holds {expected}d"
            )
        with self._lock:
            self._down_until.pop(where, None)
            self._vectors[cache_key] = vector
            while len(self._vectors) > self._cache_size:
                self._vectors.popitem(last=False)
        return vector

    def reset(self) -> None:
        """Drop cached embedders, vectors and back-off state."""
        warming, self._warming = self._warming, None
        if warming is not None:
            warming.join()
        with self._lock:
            embedders = list(self._embedders.values())
            self._embedders.clear()
            self._vectors.clear()
            self._down_until.clear()
        for embedder in embedders:
            try:
                embedder.close()
            except Exception:  # closing is best effort
                log.debug("closing embedder failed", exc_info=True)


def _build(choice: EncoderChoice, settings: Settings) -> Embedder:
    """The backend's embedder; for ONNX the query variant (the compact model copy when present)."""
    if choice.backend == "onnx":
        from local_memory_shared.embedding.onnx import OnnxEmbedder

        return OnnxEmbedder.for_queries(choice.model, dimension=choice.dimension, settings=settings)
    return create_embedder(choice.backend, choice.model, dimension=choice.dimension, settings=settings)


#: The process-wide encoder (the MCP server and CLI share it).
ENCODER = QueryEncoder()
register_cache("encoder", ENCODER.reset)
