"""The one interface every embedding backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from ..errors import DimensionMismatch

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
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: np.ndarray = vectors / norms
    return normalised
