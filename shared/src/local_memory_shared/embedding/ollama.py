"""Embeddings from an Ollama server through the ``ollama`` package (``POST /api/embed``)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import DEFAULT_OLLAMA_BASE_URL, Settings
from ..errors import DimensionMismatch, EmbeddingError
from .base import Embedder, ProgressFn, l2_normalize
from .transport import PROBE_ERRORS, TRANSPORT_ERRORS, BackendHealth, RetryPolicy, is_retryable_status

if TYPE_CHECKING:
    import ollama

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "qwen3-embedding:4b"
DEFAULT_BATCH_SIZE = 32
#: Seconds for one /api/embed call; the first call may wait for Ollama to load the model.
DEFAULT_TIMEOUT = 120.0
#: Seconds a health probe may take: a healthy local server answers /api/tags at once.
PING_TIMEOUT = 2.0


def _retryable(exc: BaseException) -> bool:
    import ollama

    if isinstance(exc, ollama.ResponseError):
        return is_retryable_status(exc.status_code)
    return isinstance(exc, TRANSPORT_ERRORS)


class OllamaEmbedder(Embedder):
    """Batches texts to Ollama's /api/embed with bounded retries and a checked dimension."""

    backend = "ollama"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str = DEFAULT_OLLAMA_BASE_URL,
        dimension: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.batch_size = batch_size
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        # Given (EMBED_DIMENSION / the index's provenance) it is requested and enforced;
        # otherwise the first answer fixes it and every later batch must agree.
        self._requested_dimension = dimension
        self._dimension = dimension
        self._client: ollama.Client | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, model: str, *, dimension: int | None, settings: Settings) -> OllamaEmbedder:
        """Build from registry arguments (EMBED_MODEL, EMBED_DIMENSION, OLLAMA_BASE_URL)."""
        return cls(model, base_url=settings.ollama_base_url, dimension=dimension)

    def _get_client(self) -> ollama.Client:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import ollama

                    self._client = ollama.Client(host=self.base_url, timeout=self.timeout)
        return self._client

    @property
    def dimension(self) -> int:
        """Vector dimension: as given, or learned from the server (embeds one probe text if needed)."""
        if self._dimension is None:
            self._embed_batch(["dimension probe"])
        assert self._dimension is not None
        return self._dimension

    def embed_documents(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        """Embed texts in batches of ``batch_size``; one request per batch."""
        total = len(texts)
        parts: list[np.ndarray] = []
        for start in range(0, total, self.batch_size):
            parts.append(self._embed_batch(list(texts[start : start + self.batch_size])))
            if progress is not None:
                progress(min(start + self.batch_size, total), total)
        if not parts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.concatenate(parts)

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        client = self._get_client()
        what = f"Ollama embed ({self.model}, {len(batch)} texts)"

        def call() -> Any:
            return client.embed(model=self.model, input=batch, dimensions=self._requested_dimension)

        import ollama

        try:
            response = self.retry.call(call, retry_if=_retryable, what=what)
        except ollama.ResponseError as exc:
            retried = " after retries" if is_retryable_status(exc.status_code) else ""
            raise EmbeddingError(
                f"Ollama at {self.base_url} rejected {what}{retried}: {exc.error} (HTTP {exc.status_code})",
                details={"status": exc.status_code, "base_url": self.base_url},
            ) from exc
        except TRANSPORT_ERRORS as exc:
            raise EmbeddingError(
                f"Ollama at {self.base_url} unreachable for {what} after {self.retry.attempts} attempts: {exc}",
                details={"base_url": self.base_url},
            ) from exc
        except (ValueError, TypeError) as exc:  # a 200 whose body is not JSON or not an embed response
            raise EmbeddingError(f"Ollama at {self.base_url} answered {what} with garbage: {exc}") from exc
        return self._to_vectors(response.embeddings, len(batch))

    def _to_vectors(self, embeddings: Sequence[Sequence[float]] | None, expected_rows: int) -> np.ndarray:
        try:
            vectors = np.asarray(embeddings, dtype=np.float32)
        except (TypeError, ValueError) as exc:  # ragged rows: dimensions differ inside one answer
            raise DimensionMismatch(
                f"Ollama model {self.model!r} returned vectors of unequal length"
            ) from exc
        if vectors.ndim != 2 or vectors.shape[0] != expected_rows:
            raise EmbeddingError(
                f"Ollama model {self.model!r} returned {vectors.shape[0] if vectors.ndim else 0} vectors "
                f"for {expected_rows} texts"
            )
        if self._dimension is None:
            self._dimension = int(vectors.shape[1])
            logger.info("Ollama model %s produces dimension %d", self.model, self._dimension)
        elif vectors.shape[1] != self._dimension:
            raise DimensionMismatch(
                f"Ollama model {self.model!r} returned dimension {vectors.shape[1]}, expected {self._dimension}"
            )
        return l2_normalize(vectors)

    def ping(self) -> BackendHealth:
        """Ask /api/tags with a short timeout; ok when the server answers and lists the model."""
        import ollama

        started = time.perf_counter()
        try:
            with ollama.Client(host=self.base_url, timeout=PING_TIMEOUT) as client:
                listing = client.list()
        except ollama.ResponseError as exc:
            return BackendHealth(False, self.backend, self.model, f"HTTP {exc.status_code}: {exc.error}")
        except PROBE_ERRORS as exc:
            return BackendHealth(
                False, self.backend, self.model, f"Ollama at {self.base_url} unreachable: {exc}"
            )
        latency = (time.perf_counter() - started) * 1000
        names = {m.model for m in listing.models if m.model}
        # Ollama lists "name:latest" for a model pulled without a tag.
        if self.model in names or f"{self.model}:latest" in names:
            return BackendHealth(
                True, self.backend, self.model, f"Ollama at {self.base_url} serves it", latency
            )
        return BackendHealth(
            False,
            self.backend,
            self.model,
            f"Ollama at {self.base_url} is up but has not pulled {self.model} (ollama pull {self.model})",
            latency,
        )

    def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            self._client.close()  # type: ignore[no-untyped-call]  # ollama leaves close() unannotated
            self._client = None
