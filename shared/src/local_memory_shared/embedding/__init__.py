"""Embedding backends and the one registry that maps backend names to them.

``onnx`` (local, offline, the default), ``ollama`` and ``gemini``. The indexer picks one from
the environment (:func:`embedder_from_settings`); the searcher must instead build the one the
index's provenance names (:func:`create_embedder` with the recorded backend, model, dimension).
"""

from __future__ import annotations

from ..config import Settings, load_settings
from ..errors import InvalidArgument
from .base import Embedder, ProgressFn, l2_normalize
from .gemini import GeminiEmbedder
from .ollama import OllamaEmbedder
from .onnx import OnnxEmbedder
from .transport import BackendHealth, RetryPolicy

__all__ = [
    "BACKENDS",
    "DEFAULT_MODELS",
    "BackendHealth",
    "Embedder",
    "GeminiEmbedder",
    "OllamaEmbedder",
    "OnnxEmbedder",
    "ProgressFn",
    "RetryPolicy",
    "create_embedder",
    "embedder_from_settings",
    "l2_normalize",
]

#: Backend name → embedder class; each class offers ``from_config(model, dimension=, settings=)``.
BACKENDS: dict[str, type[OnnxEmbedder] | type[OllamaEmbedder] | type[GeminiEmbedder]] = {
    "onnx": OnnxEmbedder,
    "ollama": OllamaEmbedder,
    "gemini": GeminiEmbedder,
}

DEFAULT_MODELS = {"onnx": "all-MiniLM-L6-v2", "ollama": "qwen3-embedding:4b", "gemini": "gemini-embedding-2"}


def create_embedder(
    backend: str,
    model: str | None = None,
    *,
    dimension: int | None = None,
    settings: Settings | None = None,
) -> Embedder:
    """Build the embedder for ``backend`` (``model`` defaults per backend); unknown names raise InvalidArgument."""
    name = (backend or "").strip().lower()
    cls = BACKENDS.get(name)
    if cls is None:
        raise InvalidArgument(
            f"Unknown embedding backend {backend!r}; expected one of {', '.join(sorted(BACKENDS))}",
            field="EMBED_BACKEND",
        )
    if dimension is not None and dimension < 1:
        raise InvalidArgument(
            f"Embedding dimension must be positive, got {dimension}", field="EMBED_DIMENSION"
        )
    return cls.from_config(
        model or DEFAULT_MODELS[name],
        dimension=dimension,
        settings=settings if settings is not None else load_settings(),
    )


def embedder_from_settings(settings: Settings) -> Embedder:
    """The indexer's embedder: EMBED_BACKEND / EMBED_MODEL / EMBED_DIMENSION from ``settings``."""
    return create_embedder(
        settings.embed_backend,
        settings.embed_model,
        dimension=settings.embed_dimension,
        settings=settings,
    )
