"""A loopback fake of the Gemini Developer API endpoints google-genai uses for embeddings.

``client.models.embed_content`` posts ``/{version}/models/{model}:batchEmbedContents`` with
``{"requests": [{"model", "content": {"parts": [{"text"}]}, "taskType", "outputDimensionality"}]}``
and the key in header ``x-goog-api-key``; the answer is ``{"embeddings": [{"values": [...]}]}``.
``client.models.get`` is ``GET /{version}/models/{model}``. Errors use Google's
``{"error": {"code", "message", "status"}}`` body. Like the real API, truncated outputs are not
unit length, only the native size is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from . import FakeHTTPServer, Fault, Response, text_vector

EMBED = "batchEmbedContents"
GET_MODEL = "models.get"
MAX_BATCH = 100
NATIVE_DIMENSION = 3072

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_EMBED_PATH = re.compile(r"^/(?P<version>v1(?:beta)?)/models/(?P<model>[^/:?]+):batchEmbedContents$")
_MODEL_PATH = re.compile(r"^/(?P<version>v1(?:beta)?)/models/(?P<model>[^/:?]+)$")


class FakeGemini(FakeHTTPServer):
    """Speaks batchEmbedContents and models.get; script faults under ``EMBED`` / ``GET_MODEL``."""

    EMBED = EMBED
    GET_MODEL = GET_MODEL

    def __init__(
        self,
        *,
        api_key: str | None = "test-key",
        models: Iterable[str] = ("gemini-embedding-2", "gemini-embedding-001"),
        native_dimension: int = NATIVE_DIMENSION,
    ) -> None:
        super().__init__()
        self.api_key = api_key
        self.models = list(models)
        self.native_dimension = native_dimension

    def route_key(self, path: str) -> str:
        """``EMBED`` for batch embedding, ``GET_MODEL`` for model metadata, else the path."""
        bare = path.split("?", 1)[0]
        if _EMBED_PATH.match(bare):
            return EMBED
        if _MODEL_PATH.match(bare):
            return GET_MODEL
        return bare

    def error_response(self, status: int, message: str) -> Response:
        """Google's error body."""
        return Response(
            status,
            {"error": {"code": status, "message": message, "status": _STATUS_NAMES.get(status, "UNKNOWN")}},
        )

    def _authorised(self, headers: dict[str, str]) -> bool:
        if self.api_key is None:
            return True
        return headers.get("x-goog-api-key") == self.api_key

    def route(
        self, method: str, path: str, headers: dict[str, str], body: Any, fault: Fault | None
    ) -> Response:
        """Check the key, then dispatch to batchEmbedContents or models.get."""
        if not self._authorised(headers):
            return self.error_response(400, "API key not valid. Please pass a valid API key.")
        bare = path.split("?", 1)[0]
        embed = _EMBED_PATH.match(bare)
        if method == "POST" and embed:
            return self._embed(embed["model"], body if isinstance(body, dict) else {}, fault)
        got = _MODEL_PATH.match(bare)
        if method == "GET" and got:
            return self._model(got["model"])
        return self.error_response(404, f"Method not found: {method} {bare}")

    def _model(self, model: str) -> Response:
        if model not in self.models:
            return self.error_response(404, f"models/{model} is not found for API version v1")
        return Response(
            200,
            {
                "name": f"models/{model}",
                "version": "2",
                "displayName": model,
                "inputTokenLimit": 8192,
                "outputTokenLimit": 1,
                "supportedGenerationMethods": ["embedContent", "batchEmbedContents"],
            },
        )

    def _embed(self, model: str, body: dict[str, Any], fault: Fault | None) -> Response:
        if model not in self.models:
            return self.error_response(404, f"models/{model} is not found for API version v1")
        requests = body.get("requests") or []
        if len(requests) > MAX_BATCH:
            return self.error_response(
                400, f"* BatchEmbedContentsRequest.requests: at most {MAX_BATCH} requests can be in one batch"
            )
        embeddings = []
        for request in requests:
            if request.get("model") != f"models/{model}":
                return self.error_response(
                    400, f"Model {request.get('model')!r} differs from the URL's model"
                )
            text = "".join(part.get("text", "") for part in (request.get("content") or {}).get("parts", []))
            dimension = int(request.get("outputDimensionality") or self.native_dimension)
            if fault is not None and fault.kind == "wrong_dimension" and fault.dimension:
                dimension = fault.dimension
            normalized = dimension == self.native_dimension
            embeddings.append({"values": text_vector(text, dimension, normalized=normalized)})
        return Response(200, {"embeddings": embeddings})
