"""Embedding backends and the one registry that maps backend names to them.

``onnx`` (local, offline, the default), ``ollama`` and ``gemini``. The indexer picks one from
the environment (:func:`embedder_from_settings`); the searcher must instead build the one the
index's provenance names (:func:`create_embedder` with the recorded backend, model, dimension).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..config import Settings, load_settings
from ..errors import InvalidArgument
from .base import BackendHealth, Embedder, ProgressFn, RetryPolicy, l2_normalize

if TYPE_CHECKING:
    from .gemini import GeminiEmbedder
    from .ollama import OllamaEmbedder
    from .onnx import OnnxEmbedder

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

#: Backend name → (module, class). Imported on first use: the HTTP backends pull in httpx,
#: tenacity and google-genai, which a search process on an ONNX index never needs.
_BACKEND_PATHS = {
    "onnx": (".onnx", "OnnxEmbedder"),
    "ollama": (".ollama", "OllamaEmbedder"),
    "gemini": (".gemini", "GeminiEmbedder"),
}


class _LazyBackends(Mapping[str, Any]):
    """A read-only name → class mapping that imports a backend's module when it is looked up."""

    def __getitem__(self, name: str) -> Any:
        module, attr = _BACKEND_PATHS[name]
        return getattr(importlib.import_module(module, __name__), attr)

    def __iter__(self) -> Iterator[str]:
        return iter(_BACKEND_PATHS)

    def __len__(self) -> int:
        return len(_BACKEND_PATHS)


#: Backend name → embedder class; each class offers ``from_config(model, dimension=, settings=)``.
BACKENDS: Mapping[str, Any] = _LazyBackends()


def __getattr__(name: str) -> Any:
    """``OnnxEmbedder``, ``OllamaEmbedder``, ``GeminiEmbedder``: imported when first asked for."""
    for backend, (_module, attr) in _BACKEND_PATHS.items():
        if attr == name:
            return BACKENDS[backend]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    if name not in BACKENDS:
        raise InvalidArgument(
            f"Unknown embedding backend {backend!r}; expected one of {', '.join(sorted(BACKENDS))}",
            field="EMBED_BACKEND",
        )
    if dimension is not None and dimension < 1:
        raise InvalidArgument(
            f"Embedding dimension must be positive, got {dimension}", field="EMBED_DIMENSION"
        )
    cls = BACKENDS[name]
    embedder: Embedder = cls.from_config(
        model or DEFAULT_MODELS[name],
        dimension=dimension,
        settings=settings if settings is not None else load_settings(),
    )
    return embedder


def embedder_from_settings(settings: Settings) -> Embedder:
    """The indexer's embedder: EMBED_BACKEND / EMBED_MODEL / EMBED_DIMENSION from ``settings``."""
    return create_embedder(
        settings.embed_backend,
        settings.embed_model,
        dimension=settings.embed_dimension,
        settings=settings,
    )
