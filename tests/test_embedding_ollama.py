"""OllamaEmbedder against a loopback fake of the Ollama API (the real client, real HTTP)."""

from __future__ import annotations

import socket

import numpy as np
import ollama
import pytest
from fakes import Fault, text_vector
from fakes.ollama_server import FakeOllama, default_reply, last_user_text
from local_memory_shared.config import load_settings
from local_memory_shared.embedding import OllamaEmbedder, RetryPolicy, create_embedder, embedder_from_settings
from local_memory_shared.errors import DimensionMismatch, EmbeddingError

EMBED = "/api/embed"
MODEL = "qwen3-embedding:4b"
FAST_RETRY = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture(scope="module")
def server():
    with FakeOllama(dimension=8) as fake:
        yield fake


@pytest.fixture(autouse=True)
def clean(server):
    server.reset()
    yield
    server.reset()


def make(server: FakeOllama, **kwargs) -> OllamaEmbedder:
    kwargs.setdefault("retry", FAST_RETRY)
    return OllamaEmbedder(MODEL, base_url=server.url, **kwargs)


def expected(texts: list[str], dimension: int = 8) -> np.ndarray:
    return np.asarray([text_vector(t, dimension) for t in texts], dtype=np.float32)


def test_batches_texts_and_keeps_their_order(server):
    texts = [f"chunk number {i}" for i in range(70)]
    seen: list[tuple[int, int]] = []
    vectors = make(server, batch_size=32).embed_documents(texts, progress=lambda d, t: seen.append((d, t)))

    sizes = [len(r.body["input"]) for r in server.requests_to(EMBED)]
    assert sizes == [32, 32, 6]
    assert all(r.body["model"] == MODEL for r in server.requests_to(EMBED))
    assert vectors.shape == (70, 8) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, expected(texts), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert seen == [(32, 70), (64, 70), (70, 70)]


def test_dimension_is_learned_from_the_first_answer(server):
    embedder = make(server)
    embedder.embed_documents(["a", "b"])
    assert embedder.dimension == 8
    assert embedder.model_key == f"ollama:{MODEL}:8"
    assert len(server.requests_to(EMBED)) == 1  # no extra probe once an answer is known


def test_dimension_property_probes_when_nothing_is_known(server):
    assert make(server).dimension == 8
    assert len(server.requests_to(EMBED)) == 1
    assert make(server).embed_documents([]).shape == (0, 8)


def test_given_dimension_is_requested_and_enforced(server):
    embedder = make(server, dimension=4)
    vectors = embedder.embed_documents(["x", "y"])
    assert vectors.shape == (2, 4)
    assert server.requests_to(EMBED)[0].body["dimensions"] == 4
    server.script(EMBED, Fault.wrong_dimension(6))
    with pytest.raises(DimensionMismatch) as err:
        embedder.embed_documents(["z"])
    assert err.value.code == "DIMENSION_MISMATCH"


def test_a_later_batch_with_another_dimension_is_refused(server):
    embedder = make(server, batch_size=2)
    server.script(EMBED, Fault.wrong_dimension(8), Fault.wrong_dimension(5))
    with pytest.raises(DimensionMismatch, match="dimension 5, expected 8"):
        embedder.embed_documents(["a", "b", "c", "d"])
    assert len(server.requests_to(EMBED)) == 2  # a dimension error is not retried


def test_client_errors_are_not_retried_and_carry_the_server_message(server):
    server.script(EMBED, Fault.http(400, "input too weird"))
    with pytest.raises(EmbeddingError, match="input too weird") as err:
        make(server).embed_documents(["a"])
    assert err.value.code == "EMBEDDING_UNAVAILABLE"
    assert err.value.details["status"] == 400
    assert [r.status for r in server.requests_to(EMBED)] == [400]


def test_unknown_model_reports_ollamas_hint(server):
    embedder = OllamaEmbedder("nomic-embed-text", base_url=server.url, retry=FAST_RETRY)
    with pytest.raises(EmbeddingError, match="try pulling it first"):
        embedder.embed_documents(["a"])
    assert len(server.requests_to(EMBED)) == 1


def test_server_errors_and_rate_limits_are_retried_then_succeed(server):
    server.script(EMBED, Fault.http(500), Fault.http(429))
    vectors = make(server).embed_documents(["a", "b"])
    assert [r.status for r in server.requests_to(EMBED)] == [500, 429, 200]
    np.testing.assert_allclose(vectors, expected(["a", "b"]), atol=1e-6)


def test_persistent_failure_gives_up_after_the_bounded_attempts(server):
    server.always(EMBED, Fault.http(503, "overloaded"))
    with pytest.raises(EmbeddingError, match="overloaded"):
        make(server).embed_documents(["a"])
    assert [r.status for r in server.requests_to(EMBED)] == [503, 503, 503]


def test_backoff_doubles_between_attempts(server):
    server.always(EMBED, Fault.http(500))
    with pytest.raises(EmbeddingError):
        make(server, retry=RetryPolicy(attempts=3, base_delay=0.1, max_delay=1.0)).embed_documents(["a"])
    times = [r.at for r in server.requests_to(EMBED)]
    assert len(times) == 3
    first_gap, second_gap = times[1] - times[0], times[2] - times[1]
    assert first_gap >= 0.09
    assert second_gap >= 0.19


def test_a_timeout_is_retried(server):
    server.script(EMBED, Fault.slow(1.0))
    vectors = make(server, timeout=0.3).embed_documents(["a"])
    assert vectors.shape == (1, 8)
    assert len(server.requests_to(EMBED)) == 2


def test_a_dropped_connection_is_retried(server):
    server.script(EMBED, Fault.disconnect())
    make(server).embed_documents(["a"])
    assert [r.status for r in server.requests_to(EMBED)] == [None, 200]


def test_garbage_answer_is_an_embedding_error(server):
    server.script(EMBED, Fault.garbage())
    with pytest.raises(EmbeddingError, match="garbage"):
        make(server).embed_documents(["a"])
    assert len(server.requests_to(EMBED)) == 1


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_server_is_an_embedding_error_after_retries():
    embedder = OllamaEmbedder(MODEL, base_url=f"http://127.0.0.1:{_closed_port()}", retry=FAST_RETRY)
    with pytest.raises(EmbeddingError, match="unreachable") as err:
        embedder.embed_documents(["a"])
    assert isinstance(err.value.__cause__, ConnectionError)
    assert embedder.ping().ok is False


def test_ping_reports_up_down_and_missing_model(server):
    health = make(server).ping()
    assert health.ok and health.latency_ms is not None
    missing = OllamaEmbedder("nomic-embed-text", base_url=server.url).ping()
    assert not missing.ok and "ollama pull nomic-embed-text" in missing.detail
    server.script("/api/tags", Fault.http(500, "boom"))
    assert not make(server).ping().ok


def test_registry_builds_ollama_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("EMBED_BACKEND", "ollama")
    monkeypatch.setenv("OLLAMA_BASE_URL", server.url + "/")
    monkeypatch.delenv("EMBED_MODEL", raising=False)
    monkeypatch.setenv("EMBED_DIMENSION", "4")
    embedder = embedder_from_settings(load_settings())
    assert isinstance(embedder, OllamaEmbedder)
    assert (embedder.model, embedder.base_url, embedder.dimension) == (MODEL, server.url, 4)
    assert embedder.embed_query("hello").shape == (4,)
    embedder.close()
    assert create_embedder("OLLAMA", "granite4.1:3b", settings=load_settings()).model == "granite4.1:3b"


def test_fake_speaks_generate_chat_and_tags_for_other_clients(server):
    """The re-ranker will reuse this fake through the real ollama client; keep that path honest."""
    server.reply = lambda body: f"echo: {last_user_text(body)}"
    try:
        client = ollama.Client(host=server.url, timeout=5)
        assert client.generate(model="granite4.1:3b", prompt="rank these").response == "echo: rank these"
        streamed = "".join(
            part.message.content or ""
            for part in client.chat(
                model="granite4.1:3b", messages=[{"role": "user", "content": "a b c"}], stream=True
            )
        )
        assert streamed == "echo: a b c"
        assert {m.model for m in client.list().models} == {"qwen3-embedding:4b", "granite4.1:3b"}
        client.close()
    finally:
        server.reply = default_reply
    assert [r.path for r in server.requests] == ["/api/generate", "/api/chat", "/api/tags"]
