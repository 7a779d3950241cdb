"""Embeddings from the Google Gemini API through ``google-genai``.

``client.models.embed_content`` with a list always posts to
``/{api_version}/models/{model}:batchEmbedContents`` on the Gemini Developer API (checked in
google-genai 3.6's ``models.py``). Each text is sent as its own ``Content``: for multimodal models
such as ``gemini-embedding-2`` the SDK folds a plain list of strings into *one* content with
many parts, which would come back as a single embedding.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Settings
from ..errors import DimensionMismatch, EmbeddingError
from .base import Embedder, ProgressFn, l2_normalize
from .keys import ApiKey, find_gemini_key
from .transport import PROBE_ERRORS, TRANSPORT_ERRORS, BackendHealth, RetryPolicy, is_retryable_status

if TYPE_CHECKING:
    from google import genai

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "gemini-embedding-2"
#: batchEmbedContents refuses more than 100 requests per call.
MAX_BATCH_SIZE = 100
#: Native output sizes; asking for them explicitly pins the dimension without a probe call.
KNOWN_DIMENSIONS = {"gemini-embedding-2": 3072, "gemini-embedding-001": 3072, "text-embedding-004": 768}
#: Seconds per batch call.
DEFAULT_TIMEOUT = 60.0
PING_TIMEOUT = 5.0
DOCUMENT_TASK = "RETRIEVAL_DOCUMENT"
QUERY_TASK = "RETRIEVAL_QUERY"


def _retryable(exc: BaseException) -> bool:
    from google.genai import errors as genai_errors

    if isinstance(exc, genai_errors.APIError):
        return is_retryable_status(exc.code)
    return isinstance(exc, TRANSPORT_ERRORS)


class GeminiEmbedder(Embedder):
    """Batches texts to Gemini's batchEmbedContents with retries, a checked dimension and L2 norm."""

    backend = "gemini"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        dimension: int | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        batch_size: int = MAX_BATCH_SIZE,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise ValueError(f"batch_size must be between 1 and {MAX_BATCH_SIZE}")
        self.model = model
        self.base_url = base_url
        self.batch_size = batch_size
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._api_key = api_key
        self._requested_dimension = dimension or KNOWN_DIMENSIONS.get(model)
        self._dimension = self._requested_dimension
        self._client: genai.Client | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, model: str, *, dimension: int | None, settings: Settings) -> GeminiEmbedder:
        """Build from registry arguments (EMBED_MODEL, EMBED_DIMENSION, GEMINI_BASE_URL); the key is found on first use."""
        return cls(model, dimension=dimension, base_url=settings.gemini_base_url)

    def _key(self) -> ApiKey:
        if self._api_key is not None:
            return ApiKey(self._api_key, "argument")
        return find_gemini_key()

    def _make_client(self, timeout: float) -> genai.Client:
        from google import genai
        from google.genai import types

        key = self._key()
        logger.debug("Gemini key from %s", key.source)
        options = types.HttpOptions(
            base_url=self.base_url,
            timeout=int(timeout * 1000),  # google-genai takes milliseconds
            # We retry ourselves (bounded, logged, mapped to EmbeddingError); the SDK must not stack its own.
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(api_key=key.value, vertexai=False, http_options=options)

    def _get_client(self) -> genai.Client:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = self._make_client(self.timeout)
        return self._client

    @property
    def dimension(self) -> int:
        """Vector dimension: as given, the model's native size, or learned with one probe call."""
        if self._dimension is None:
            self._embed_batch(["dimension probe"], QUERY_TASK)
        assert self._dimension is not None
        return self._dimension

    def embed_documents(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        """Embed chunk texts (task RETRIEVAL_DOCUMENT), up to 100 per request."""
        return self._embed_all(texts, DOCUMENT_TASK, progress)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query (task RETRIEVAL_QUERY)."""
        vector: np.ndarray = self._embed_all([text], QUERY_TASK, None)[0]
        return vector

    def _embed_all(self, texts: Sequence[str], task: str, progress: ProgressFn | None) -> np.ndarray:
        total = len(texts)
        parts: list[np.ndarray] = []
        for start in range(0, total, self.batch_size):
            parts.append(self._embed_batch(list(texts[start : start + self.batch_size]), task))
            if progress is not None:
                progress(min(start + self.batch_size, total), total)
        if not parts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.concatenate(parts)

    def _embed_batch(self, batch: list[str], task: str) -> np.ndarray:
        from google.genai import errors as genai_errors
        from google.genai import types

        client = self._get_client()
        what = f"Gemini embed ({self.model}, {len(batch)} texts)"
        contents: Any = [types.Content(parts=[types.Part(text=text)]) for text in batch]
        config = types.EmbedContentConfig(task_type=task, output_dimensionality=self._requested_dimension)

        def call() -> Any:
            return client.models.embed_content(model=self.model, contents=contents, config=config)

        try:
            response = self.retry.call(call, retry_if=_retryable, what=what)
        except genai_errors.APIError as exc:
            retried = " after retries" if is_retryable_status(exc.code) else ""
            raise EmbeddingError(
                f"Gemini rejected {what}{retried}: {exc.message or exc.status} (HTTP {exc.code})",
                details={"status": exc.code},
            ) from exc
        except TRANSPORT_ERRORS as exc:
            raise EmbeddingError(
                f"Gemini unreachable for {what} after {self.retry.attempts} attempts: {exc}"
            ) from exc
        except (ValueError, TypeError) as exc:  # a 200 whose body is not JSON or not an embed response
            raise EmbeddingError(f"Gemini answered {what} with garbage: {exc}") from exc
        rows = [e.values for e in (response.embeddings or [])]
        return self._to_vectors(rows, len(batch))

    def _to_vectors(self, rows: list[list[float] | None], expected_rows: int) -> np.ndarray:
        if len(rows) != expected_rows or any(row is None for row in rows):
            raise EmbeddingError(
                f"Gemini model {self.model!r} returned {len(rows)} vectors for {expected_rows} texts"
            )
        lengths = {len(row) for row in rows if row is not None}
        if len(lengths) != 1:
            raise DimensionMismatch(
                f"Gemini model {self.model!r} returned vectors of unequal length {sorted(lengths)}"
            )
        (length,) = lengths
        if self._dimension is None:
            self._dimension = length
            logger.info("Gemini model %s produces dimension %d", self.model, length)
        elif length != self._dimension:
            raise DimensionMismatch(
                f"Gemini model {self.model!r} returned dimension {length}, expected {self._dimension}"
            )
        # Only the full 3072-d output is unit length; truncated (Matryoshka) outputs are not.
        return l2_normalize(np.asarray(rows, dtype=np.float32))

    def ping(self) -> BackendHealth:
        """Check the key and fetch the model's metadata with a short timeout (costs no embedding quota)."""
        from google.genai import errors as genai_errors

        started = time.perf_counter()
        try:
            with self._make_client(PING_TIMEOUT) as client:
                client.models.get(model=self.model)
        except EmbeddingError as exc:
            return BackendHealth(False, self.backend, self.model, exc.message)
        except genai_errors.APIError as exc:
            return BackendHealth(
                False, self.backend, self.model, f"HTTP {exc.code}: {exc.message or exc.status}"
            )
        except PROBE_ERRORS as exc:
            return BackendHealth(False, self.backend, self.model, f"Gemini unreachable: {exc}")
        latency = (time.perf_counter() - started) * 1000
        return BackendHealth(True, self.backend, self.model, "Gemini API reachable, model known", latency)

    def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            self._client.close()
            self._client = None
