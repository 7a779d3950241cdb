"""A loopback fake of the Ollama HTTP API: /api/embed, /api/generate, /api/chat, /api/tags.

Embeddings are deterministic per text (:func:`fakes.text_vector`) and unit length, as Ollama's
are. Generate/chat answers come from a configurable ``reply(body) -> str``; they stream as
NDJSON unless the request says ``"stream": false`` (Ollama's default is to stream).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

import numpy as np

from . import FakeHTTPServer, Fault, ReplyFn, Response, text_vector

DEFAULT_MODELS = ("qwen3-embedding:4b", "granite4.1:3b")


def default_reply(body: dict[str, Any]) -> str:
    """Answer generate/chat with a fixed text, so a test only scripts replies it cares about."""
    return "fake reply"


def last_user_text(body: dict[str, Any]) -> str:
    """The prompt of a generate request or the last user message of a chat request."""
    if "prompt" in body:
        return str(body.get("prompt") or "")
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


class FakeOllama(FakeHTTPServer):
    """Speaks enough of Ollama for the embedder and an LLM re-ranker; see :class:`fakes.FakeHTTPServer`."""

    def __init__(
        self,
        *,
        dimension: int = 8,
        models: Iterable[str] = DEFAULT_MODELS,
        reply: ReplyFn = default_reply,
        embed_fn: Callable[[str, int], list[float]] | None = None,
    ) -> None:
        super().__init__()
        self.dimension = dimension
        self.models = list(models)
        self.reply = reply
        self.embed_fn = embed_fn or (lambda text, dim: text_vector(text, dim))

    def error_response(self, status: int, message: str) -> Response:
        """Ollama's error body: ``{"error": "..."}``."""
        return Response(status, {"error": message})

    def _known(self, model: str | None) -> bool:
        return bool(model) and (model in self.models or f"{model}:latest" in self.models)

    def _missing_model(self, model: str | None) -> Response:
        return self.error_response(404, f'model "{model}" not found, try pulling it first')

    def route(
        self, method: str, path: str, headers: dict[str, str], body: Any, fault: Fault | None
    ) -> Response:
        """Dispatch one request to the matching Ollama endpoint."""
        key = self.route_key(path)
        body = body if isinstance(body, dict) else {}
        if method == "GET" and key == "/api/tags":
            return Response(200, {"models": [self._model_entry(m) for m in self.models]})
        if method == "GET" and key == "/api/version":
            return Response(200, {"version": "0.0.0-fake"})
        if method == "POST" and key == "/api/embed":
            return self._embed(body, fault)
        if method == "POST" and key == "/api/embeddings":
            if not self._known(body.get("model")):
                return self._missing_model(body.get("model"))
            return Response(200, {"embedding": self.embed_fn(str(body.get("prompt") or ""), self.dimension)})
        if method == "POST" and key in ("/api/generate", "/api/chat"):
            return self._generate(key, body)
        return Response(404, raw=b"404 page not found", content_type="text/plain")

    def _embed(self, body: dict[str, Any], fault: Fault | None) -> Response:
        model = body.get("model")
        if not self._known(model):
            return self._missing_model(model)
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        dimension = self.dimension
        if fault is not None and fault.kind == "wrong_dimension" and fault.dimension:
            dimension = fault.dimension
        vectors = [self.embed_fn(str(t), dimension) for t in texts]
        wanted = body.get("dimensions")
        if wanted and fault is None:
            # Like Ollama for Matryoshka models: keep the leading dimensions, re-normalise.
            vectors = [_unit(v[:wanted]) for v in vectors]
        return Response(
            200,
            {
                "model": model,
                "embeddings": vectors,
                "total_duration": 1000,
                "load_duration": 10,
                "prompt_eval_count": sum(len(str(t).split()) for t in texts),
            },
        )

    def _generate(self, key: str, body: dict[str, Any]) -> Response:
        model = body.get("model")
        if not self._known(model):
            return self._missing_model(model)
        text = self.reply(body)
        base = {"model": model, "created_at": datetime.now(UTC).isoformat()}
        final = {
            **base,
            "done": True,
            "done_reason": "stop",
            "total_duration": 1000,
            "eval_count": len(text.split()),
        }
        if key == "/api/chat":
            final["message"] = {"role": "assistant", "content": text}
        else:
            final["response"] = text
        if body.get("stream") is False:
            return Response(200, final)
        # Streaming: one line per word, then a closing line with empty content and done=true.
        lines: list[dict[str, Any]] = []
        words = text.split(" ")
        for i, word in enumerate(words):
            piece = word if i == len(words) - 1 else word + " "
            if key == "/api/chat":
                lines.append({**base, "message": {"role": "assistant", "content": piece}, "done": False})
            else:
                lines.append({**base, "response": piece, "done": False})
        closing = dict(final)
        if key == "/api/chat":
            closing["message"] = {"role": "assistant", "content": ""}
        else:
            closing["response"] = ""
        lines.append(closing)
        return Response(
            200,
            chunks=[(json.dumps(line) + "\n").encode("utf-8") for line in lines],
            content_type="application/x-ndjson",
        )

    @staticmethod
    def _model_entry(name: str) -> dict[str, Any]:
        return {
            "name": name,
            "model": name,
            "modified_at": "2026-01-01T00:00:00Z",
            "size": 1_000_000,
            "digest": "0" * 64,
            "details": {
                "format": "gguf",
                "family": "fake",
                "parameter_size": "1B",
                "quantization_level": "Q4_K_M",
            },
        }


def _unit(vector: list[float]) -> list[float]:
    array = np.asarray(vector, dtype=np.float64)
    norm = np.linalg.norm(array)
    return [float(x) for x in (array / norm if norm else array)]
