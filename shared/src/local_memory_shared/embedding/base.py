"""The one interface every embedding backend implements, its retry policy and its health report."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from ..errors import DimensionMismatch

if TYPE_CHECKING:
    import numpy as np
    from tenacity import RetryCallState

# numpy is imported where vectors are made, not here: an index run that finds nothing changed
# (``local_memory_indexer.unchanged``) builds an embedder but never embeds.

logger = logging.getLogger(__name__)
T = TypeVar("T")

#: Called with (done, total) as batches finish, so long runs can show progress.
ProgressFn = Callable[[int, int], None]
#: Texts per slice of the default :meth:`Embedder.iter_embeddings` (remote backends batch by count).
STREAM_SLICE = 64


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    backend: str
    model: str

    @property
    @abstractmethod
    def dimension(self) -> int:
        """Vector dimension this embedder produces."""

    @property
    def model_key(self) -> str:
        """Key of the embedding cache and of provenance checks."""
        return f"{self.backend}:{self.model}:{self.dimension}"

    @abstractmethod
    def embed_documents(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        """Embed chunk texts; returns shape (len(texts), dimension)."""

    def iter_embeddings(
        self, texts: Sequence[str], progress: ProgressFn | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(positions, vectors)`` batch by batch, so a caller never holds all vectors at once.

        ``positions`` are indices into ``texts`` (int64); together the batches cover every text
        exactly once, in no promised order. Backends with a cheaper native plan override this.
        """
        import numpy as np

        total = len(texts)
        for start in range(0, total, STREAM_SLICE):
            stop = min(start + STREAM_SLICE, total)
            vectors = self.check_dimension(self.embed_documents(texts[start:stop]))
            yield np.arange(start, stop, dtype=np.int64), vectors
            if progress is not None:
                progress(stop, total)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query; returns shape (dimension,)."""
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release clients/sessions."""

    def release(self) -> bool:
        """Drop what was loaded to embed (a local model's session); the next call loads it again.

        An index run calls it once its vectors are in (before its final index build). True if
        anything was dropped.
        """
        return False

    def check_dimension(self, vectors: np.ndarray) -> np.ndarray:
        """Raise DimensionMismatch unless ``vectors`` has this embedder's dimension."""
        if vectors.ndim != 2 or vectors.shape[1] != self.dimension:
            raise DimensionMismatch(
                f"{self.backend} model {self.model!r} returned vectors of shape {vectors.shape}, "
                f"expected dimension {self.dimension}"
            )
        return vectors


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation, safe for zero rows."""
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: np.ndarray = vectors / norms
    return normalised


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff: ``attempts`` tries, sleeping base, 2*base, 4*base… (capped)."""

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("RetryPolicy delays must not be negative")

    def call(self, fn: Callable[[], T], *, retry_if: Callable[[BaseException], bool], what: str) -> T:
        """Run ``fn``, retrying while ``retry_if(exc)`` holds; the last exception propagates."""
        import tenacity  # only the HTTP backends retry: keep it off the search process's start

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.attempts),
            # No jitter: one indexer talks to one server, and deterministic gaps keep tests exact.
            wait=tenacity.wait_exponential(
                multiplier=self.base_delay, min=self.base_delay, max=self.max_delay
            ),
            retry=tenacity.retry_if_exception(retry_if),
            before_sleep=_log_retry(what),
            reraise=True,
        )
        return retrying(fn)


def _log_retry(what: str) -> Callable[[RetryCallState], None]:
    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        delay = state.next_action.sleep if state.next_action else 0.0
        logger.warning(
            "%s failed (attempt %d): %s; retrying in %.2fs", what, state.attempt_number, exc, delay
        )

    return before_sleep


@dataclass(frozen=True)
class BackendHealth:
    """Outcome of an embedder's cheap readiness probe (for health_check / doctor)."""

    ok: bool
    backend: str
    model: str
    detail: str
    latency_ms: float | None = None
