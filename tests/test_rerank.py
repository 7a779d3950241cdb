"""The Ollama re-ranker against a loopback fake of Ollama's API: success and every failure mode."""

from __future__ import annotations

import json
import re
import socket
import time
from typing import Any

import pytest
from fakes import Fault
from fakes.ollama_server import FakeOllama, last_user_text
from local_memory_search.rerank import (
    RERANK_UNAVAILABLE,
    OllamaReranker,
    RerankCandidate,
    RerankParseError,
    build_prompt,
    parse_ranking,
)
from local_memory_shared.config import load_settings

MODEL = "granite4.1:3b"
CHAT = "/api/chat"

CANDIDATES = [
    RerankCandidate("src/a.py", "parse_config", "def parse_config(path):\n    return load(path)"),
    RerankCandidate("src/b.py", "Client.connect", "def connect(self):\n    return socket()"),
    RerankCandidate("docs/c.md", "", "# Retry policy\nWe retry three times."),
    RerankCandidate("src/d.py", "retry", "def retry(fn):\n    for _ in range(3): fn()"),
]


class Replies:
    """What the fake model answers next; a test sets ``text`` (or ``fn``)."""

    def __init__(self) -> None:
        self.text = '{"ranking": [1, 2, 3, 4]}'

    def __call__(self, body: dict[str, Any]) -> str:
        return self.text


@pytest.fixture(scope="module")
def replies() -> Replies:
    return Replies()


@pytest.fixture(scope="module")
def server(replies: Replies):
    with FakeOllama(reply=replies) as fake:
        yield fake


@pytest.fixture(autouse=True)
def clean(server: FakeOllama, replies: Replies):
    server.reset()
    replies.text = '{"ranking": [1, 2, 3, 4]}'
    yield
    server.reset()


def reranker(server: FakeOllama, **kwargs: Any) -> OllamaReranker:
    kwargs.setdefault("timeout", 5.0)
    return OllamaReranker(MODEL, base_url=server.url, **kwargs)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def assert_fallback(outcome: Any, reason: str) -> None:
    assert outcome.order == (0, 1, 2, 3)
    assert outcome.reranked is False
    assert [w["code"] for w in outcome.warnings] == [RERANK_UNAVAILABLE]
    assert re.search(reason, outcome.warnings[0]["message"]), outcome.warnings[0]["message"]


# -- success --------------------------------------------------------------------------------


def test_the_models_ranking_reorders_the_candidates(server: FakeOllama, replies: Replies) -> None:
    replies.text = '{"ranking": [4, 3, 1, 2]}'
    outcome = reranker(server).rerank("how do we retry?", CANDIDATES)
    assert outcome.reranked is True
    assert outcome.order == (3, 2, 0, 1)
    assert outcome.warnings == ()
    (request,) = server.requests_to(CHAT)
    body = request.body
    assert body["model"] == MODEL
    assert body["stream"] is False
    assert body["format"]["properties"]["ranking"]["type"] == "array"  # structured output schema
    assert body["options"]["temperature"] == 0
    prompt = last_user_text(body)
    assert "Query: how do we retry?" in prompt
    assert "[4] src/d.py — retry" in prompt and "def retry(fn):" in prompt


def test_only_the_head_is_sent_and_the_tail_keeps_its_order(server: FakeOllama, replies: Replies) -> None:
    replies.text = '{"ranking": [2, 1]}'
    outcome = reranker(server, max_candidates=2).rerank("q", CANDIDATES)
    assert outcome.order == (1, 0, 2, 3)
    prompt = last_user_text(server.requests_to(CHAT)[0].body)
    assert "[3]" not in prompt


def test_a_partial_ranking_keeps_the_rest_in_retrieval_order(server: FakeOllama, replies: Replies) -> None:
    replies.text = 'Sure! ```json\n{"ranking": ["3"]}\n```'
    outcome = reranker(server).rerank("q", CANDIDATES)
    assert outcome.reranked is True
    assert outcome.order == (2, 0, 1, 3)


def test_fewer_than_two_candidates_never_call_the_model(server: FakeOllama) -> None:
    outcome = reranker(server).rerank("q", CANDIDATES[:1])
    assert outcome.order == (0,) and outcome.warnings == ()
    assert server.requests_to(CHAT) == []


def test_settings_name_the_model_url_and_timeout(monkeypatch: pytest.MonkeyPatch, server: FakeOllama) -> None:
    monkeypatch.setenv("OLLAMA_BASE_URL", server.url + "/")
    monkeypatch.setenv("RERANK_MODEL", "granite-custom:1b")
    monkeypatch.setenv("RERANK_TIMEOUT", "7.5")
    built = OllamaReranker.from_settings(load_settings())
    assert (built.model, built.base_url, built.timeout) == ("granite-custom:1b", server.url, 7.5)


# -- every failure keeps the original order with a warning ------------------------------------


def test_unreachable_ollama(server: FakeOllama) -> None:
    outcome = OllamaReranker(MODEL, base_url=f"http://127.0.0.1:{_closed_port()}", timeout=5).rerank(
        "q", CANDIDATES
    )
    assert_fallback(outcome, "unreachable")


def test_timeout_is_bounded(server: FakeOllama) -> None:
    server.script(CHAT, Fault.slow(5.0))
    started = time.perf_counter()
    outcome = reranker(server, timeout=0.5).rerank("q", CANDIDATES)
    elapsed = time.perf_counter() - started
    assert_fallback(outcome, r"timed out after 0\.5 s")
    assert elapsed < 2.0


def test_model_not_pulled(server: FakeOllama) -> None:
    outcome = OllamaReranker("missing-model:1b", base_url=server.url, timeout=5).rerank("q", CANDIDATES)
    assert_fallback(outcome, "HTTP 404.*ollama pull missing-model:1b")


def test_server_error(server: FakeOllama) -> None:
    server.script(CHAT, Fault.http(500, "out of memory"))
    assert_fallback(reranker(server).rerank("q", CANDIDATES), "HTTP 500.*out of memory")


def test_garbage_http_body(server: FakeOllama) -> None:
    server.script(CHAT, Fault.garbage())
    assert_fallback(reranker(server).rerank("q", CANDIDATES), "unparsable|malformed")


def test_dropped_connection(server: FakeOllama) -> None:
    server.script(CHAT, Fault.disconnect())
    assert_fallback(reranker(server).rerank("q", CANDIDATES), "unreachable|Disconnected|closed")


@pytest.mark.parametrize(
    "answer",
    [
        "The second one looks best, then the first.",  # prose, no JSON
        '{"answer": "b.py"}',  # JSON without a ranking
        '{"ranking": [0, 9, "x"]}',  # no valid 1-based id
        "",  # empty content
    ],
)
def test_unparsable_answers(server: FakeOllama, replies: Replies, answer: str) -> None:
    replies.text = answer
    assert_fallback(reranker(server).rerank("q", CANDIDATES), "unparsable")


# -- parsing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"ranking": [2, 1, 3]}', [1, 0, 2]),
        ("[3, 3, 1]", [2, 0, 1]),  # duplicates ignored, missing appended
        ('{"order": ["2", "#1"]}', [1, 0, 2]),
        ('{"ranking": [{"id": 3}, {"id": 2}]}', [2, 1, 0]),
        ('Here you go: {"ranking": [2]} hope it helps', [1, 0, 2]),
    ],
)
def test_parse_ranking_accepts_what_small_models_write(content: str, expected: list[int]) -> None:
    assert parse_ranking(content, 3) == expected


def test_parse_ranking_refuses_answers_without_ids() -> None:
    for content in ("nothing here", '{"ranking": []}', "[7, 8]"):
        with pytest.raises(RerankParseError):
            parse_ranking(content, 3)


def test_prompt_numbers_candidates_from_one_and_clips_snippets() -> None:
    prompt = build_prompt("find retry", CANDIDATES, snippet_chars=10)
    assert prompt.index("[1] src/a.py") < prompt.index("[2] src/b.py")
    assert "def parse_" in prompt and "def parse_config(path)" not in prompt
    assert json.loads('{"ranking": [1]}')  # the instruction's shape is valid JSON
