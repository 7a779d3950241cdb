"""Query-time re-ranking with a local LLM served by Ollama (``RERANK_MODEL``, default granite4.1:3b).

The re-ranker is an optional refinement: it never fails a request. Ollama unreachable, a
missing model, a timeout or an answer we cannot parse all return the candidates in their
original order with a ``rerank_unavailable`` warning. The time spent is bounded twice: the
HTTP client's own timeout, and a hard deadline on the worker thread that runs the call (a
server that trickles bytes would otherwise keep a read timeout from ever firing).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from local_memory_shared.config import DEFAULT_RERANK_TIMEOUT, Settings

from . import degradation as W

log = logging.getLogger(__name__)

RERANK_UNAVAILABLE = W.RERANK_UNAVAILABLE
#: Seconds one re-rank may take end to end (RERANK_TIMEOUT); a 3B model on CPU ranks 20 short candidates in a few.
DEFAULT_TIMEOUT = DEFAULT_RERANK_TIMEOUT
#: Only the head of the list is worth the LLM's time; the tail keeps its retrieval order.
DEFAULT_MAX_CANDIDATES = 20
#: Characters of each candidate shown to the model (the head of a chunk says what it is).
DEFAULT_SNIPPET_CHARS = 600

_SYSTEM_PROMPT = (
    "You rank source-code excerpts by how useful each one is for answering a developer's query. "
    'Answer only with JSON of the form {"ranking": [ids]}, listing candidate ids from most to '
    "least relevant. Use the ids exactly as given."
)

#: Ollama structured output: the model is constrained to this JSON shape.
_RANKING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ranking": {"type": "array", "items": {"type": "integer"}}},
    "required": ["ranking"],
}


@dataclass(frozen=True)
class RerankCandidate:
    """What the re-ranker is shown of one retrieval hit."""

    file_path: str
    symbol: str
    text: str


@dataclass(frozen=True)
class RerankOutcome:
    """The new order (indices into the candidate list) and whether the LLM produced it."""

    order: tuple[int, ...]
    reranked: bool
    model: str
    latency_ms: float
    warnings: tuple[dict[str, str], ...] = field(default_factory=tuple)


class RerankParseError(ValueError):
    """The model's answer holds no usable ranking."""


def parse_ranking(content: str, count: int) -> list[int]:
    """Turn the model's answer into 0-based indices over ``count`` candidates (ids are 1-based).

    Accepts ``{"ranking": [...]}`` (or ``order``/``ids``), a bare JSON list, either wrapped in
    prose or code fences; ids may be ints or numeric strings. Unknown and repeated ids are
    ignored; candidates the model left out follow in their original order.
    """
    data = _first_json(content)
    if isinstance(data, dict):
        data = next((data[k] for k in ("ranking", "order", "ids", "ranked") if k in data), None)
    if not isinstance(data, list):
        raise RerankParseError(f"no ranking list in answer {content[:120]!r}")
    seen: list[int] = []
    for item in data:
        if isinstance(item, dict):
            item = item.get("id")
        try:
            index = int(str(item).strip().strip("[]#")) - 1
        except (TypeError, ValueError):
            continue
        if 0 <= index < count and index not in seen:
            seen.append(index)
    if not seen:
        raise RerankParseError(f"no valid candidate ids in answer {content[:120]!r}")
    return seen + [i for i in range(count) if i not in seen]


def _first_json(content: str) -> Any:
    content = content.strip()
    try:
        return json.loads(content)
    except ValueError:
        pass
    # Small models like to wrap JSON in prose or ``` fences: try the first {...} or [...] span.
    for match in re.finditer(r"[\[{]", content):
        try:
            value, _ = json.JSONDecoder().raw_decode(content[match.start() :])
        except ValueError:
            continue
        return value
    raise RerankParseError(f"answer is not JSON: {content[:120]!r}")


def build_prompt(query: str, candidates: Sequence[RerankCandidate], snippet_chars: int) -> str:
    """The user message: the query, then each candidate with its 1-based id."""
    parts = [f"Query: {query}", "", "Candidates:"]
    for i, cand in enumerate(candidates, start=1):
        label = cand.file_path + (f" — {cand.symbol}" if cand.symbol else "")
        snippet = cand.text[:snippet_chars]
        parts.append(f"[{i}] {label}\n{snippet}\n")
    parts.append(f'Return {{"ranking": [...]}} with the ids 1..{len(candidates)}, most relevant first.')
    return "\n".join(parts)


class OllamaReranker:
    """Reorders retrieval candidates by asking an Ollama chat model for a ranking."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        timeout: float = DEFAULT_TIMEOUT,
        max_candidates: int = DEFAULT_MAX_CANDIDATES,
        snippet_chars: int = DEFAULT_SNIPPET_CHARS,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_candidates = max(1, max_candidates)
        self.snippet_chars = max(1, snippet_chars)

    @classmethod
    def from_settings(cls, settings: Settings, *, timeout: float | None = None) -> OllamaReranker:
        """Built from RERANK_MODEL, OLLAMA_BASE_URL and RERANK_TIMEOUT."""
        return cls(
            settings.rerank_model,
            base_url=settings.ollama_base_url,
            timeout=timeout or settings.rerank_timeout or DEFAULT_TIMEOUT,
        )

    def rerank(self, query: str, candidates: Sequence[RerankCandidate]) -> RerankOutcome:
        """New order of ``candidates``; on any failure the original order plus a warning."""
        count = len(candidates)
        identity = tuple(range(count))
        if count < 2:
            return RerankOutcome(identity, False, self.model, 0.0)
        head = list(candidates[: self.max_candidates])
        started = time.perf_counter()
        try:
            content = self._ask(build_prompt(query, head, self.snippet_chars))
            ranked_head = parse_ranking(content, len(head))
        except _Unavailable as exc:
            return self._fallback(identity, started, str(exc))
        except RerankParseError as exc:
            return self._fallback(identity, started, f"unparsable answer: {exc}")
        order = tuple(ranked_head) + tuple(range(len(head), count))
        latency = (time.perf_counter() - started) * 1000
        log.debug("re-ranked %d candidates with %s in %.0f ms", len(head), self.model, latency)
        return RerankOutcome(order, True, self.model, latency)

    def _fallback(self, identity: tuple[int, ...], started: float, reason: str) -> RerankOutcome:
        latency = (time.perf_counter() - started) * 1000
        log.warning("re-ranking with %s unavailable: %s", self.model, reason)
        detail = f"({self.model} at {self.base_url}: {reason})"
        return RerankOutcome(identity, False, self.model, latency, (W.warn(RERANK_UNAVAILABLE, detail),))

    def _ask(self, prompt: str) -> str:
        """One chat call under a hard deadline; returns the model's message content."""
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["content"] = self._chat(prompt)
            except BaseException as exc:  # handed to the caller's thread, which maps it
                box["error"] = exc

        worker = threading.Thread(target=work, name="ollama-rerank", daemon=True)
        worker.start()
        # The HTTP timeout normally fires first; the margin only catches a trickling server.
        worker.join(self.timeout + 1.0)
        if worker.is_alive():
            raise _Unavailable(f"timed out after {self.timeout:g} s")
        if "error" in box:
            raise _map_error(box["error"], self.timeout, self.model)
        return str(box["content"])

    def _chat(self, prompt: str) -> str:
        import httpx  # deferred with ollama: only re-ranking requests pay for the imports
        import ollama

        timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, 3.0))
        with ollama.Client(host=self.base_url, timeout=timeout) as client:
            response = client.chat(
                model=self.model,
                messages=[
                    {"role": "system", "content": _SYSTEM_PROMPT},
                    {"role": "user", "content": prompt},
                ],
                format=_RANKING_SCHEMA,
                options={"temperature": 0, "num_predict": 256},
                stream=False,
            )
        content = response.message.content if response.message else None
        if not content:
            raise RerankParseError("empty answer")
        return str(content)


class _Unavailable(Exception):
    """Ollama could not be asked (unreachable, refused, timed out)."""


def _map_error(exc: BaseException, timeout: float, model: str) -> Exception:
    import httpx
    import ollama

    if isinstance(exc, RerankParseError):
        return exc
    if isinstance(exc, httpx.TimeoutException):
        return _Unavailable(f"timed out after {timeout:g} s")
    if isinstance(exc, ollama.ResponseError):
        hint = f"; run: ollama pull {model}" if exc.status_code == 404 else ""
        return _Unavailable(f"HTTP {exc.status_code}: {exc.error}{hint}")
    if isinstance(exc, (ConnectionError, httpx.TransportError, OSError)):
        return _Unavailable(f"unreachable: {exc}")
    if isinstance(exc, ValueError):  # a 200 whose body is not a chat response (pydantic/JSON errors)
        return RerankParseError(f"malformed response: {exc}")
    return _Unavailable(f"{type(exc).__name__}: {exc}")
