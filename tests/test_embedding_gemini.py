"""GeminiEmbedder (real google-genai client) against a loopback fake, and the API key lookup order."""

from __future__ import annotations

import re

import numpy as np
import pytest
from fakes import Fault, text_vector
from fakes.gemini_server import EMBED, GET_MODEL, FakeGemini
from local_memory_shared.config import load_settings
from local_memory_shared.embedding import GeminiEmbedder, RetryPolicy, create_embedder, embedder_from_settings
from local_memory_shared.embedding.keys import find_gemini_key
from local_memory_shared.errors import DimensionMismatch, EmbeddingError

KEY = "test-key-0123456789"
MODEL = "gemini-embedding-2"
FAST_RETRY = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05)
KEY_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_API_KEY_FILE")


@pytest.fixture(scope="module")
def server():
    with FakeGemini(api_key=KEY, models=(MODEL, "gemini-embedding-001", "text-embedding-x")) as fake:
        yield fake


@pytest.fixture(autouse=True)
def clean(server):
    server.reset()
    yield
    server.reset()


@pytest.fixture
def no_keys(monkeypatch, tmp_path):
    """No key anywhere: env cleared and HOME an empty folder."""
    for name in KEY_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def make(server: FakeGemini, **kwargs) -> GeminiEmbedder:
    kwargs.setdefault("retry", FAST_RETRY)
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("dimension", 16)
    model = kwargs.pop("model", MODEL)
    return GeminiEmbedder(model, base_url=server.url, **kwargs)


def direction(texts: list[str], dimension: int) -> np.ndarray:
    raw = np.asarray([text_vector(t, dimension, normalized=False) for t in texts], dtype=np.float32)
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def test_posts_batch_embed_contents_in_batches_of_at_most_100(server):
    texts = [f"def f{i}(): return {i}" for i in range(250)]
    vectors = make(server).embed_documents(texts)

    calls = server.requests_to(EMBED)
    assert [len(c.body["requests"]) for c in calls] == [100, 100, 50]
    assert all(
        re.fullmatch(r"/v1(beta)?/models/gemini-embedding-2:batchEmbedContents", c.path) for c in calls
    )
    first = calls[0].body["requests"][0]
    assert first["taskType"] == "RETRIEVAL_DOCUMENT"
    assert first["outputDimensionality"] == 16
    assert first["model"] == f"models/{MODEL}"
    # One Content per text: a plain string list would be folded into one multi-part content.
    assert first["content"]["parts"] == [{"text": texts[0]}]
    assert calls[0].headers.get("x-goog-api-key") == KEY
    assert vectors.shape == (250, 16) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, direction(texts, 16), atol=1e-6)


def test_truncated_outputs_are_l2_normalised(server):
    vectors = make(server).embed_documents(["alpha", "beta"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_query_uses_the_query_task(server):
    vector = make(server).embed_query("where is the retry loop?")
    assert vector.shape == (16,)
    assert server.requests_to(EMBED)[0].body["requests"][0]["taskType"] == "RETRIEVAL_QUERY"


def test_known_model_defaults_to_its_native_dimension(server):
    embedder = make(server, dimension=None)
    assert embedder.dimension == 3072
    assert server.requests == []  # known without a call
    assert embedder.embed_query("x").shape == (3072,)
    assert embedder.model_key == f"gemini:{MODEL}:3072"


def test_unknown_model_learns_its_dimension(server):
    embedder = make(server, model="text-embedding-x", dimension=None)
    assert embedder.dimension == 3072
    assert "outputDimensionality" not in server.requests_to(EMBED)[0].body["requests"][0]


def test_wrong_dimension_is_a_dimension_mismatch(server):
    server.script(EMBED, Fault.wrong_dimension(12))
    with pytest.raises(DimensionMismatch, match="dimension 12, expected 16"):
        make(server).embed_documents(["a"])
    assert len(server.requests_to(EMBED)) == 1


def test_client_errors_are_not_retried(server):
    server.script(EMBED, Fault.http(400, "Request payload size exceeds the limit"))
    with pytest.raises(EmbeddingError, match="payload size exceeds") as err:
        make(server).embed_documents(["a"])
    assert err.value.details["status"] == 400
    assert [r.status for r in server.requests_to(EMBED)] == [400]


def test_a_wrong_key_is_refused_once(server):
    with pytest.raises(EmbeddingError, match="API key not valid"):
        make(server, api_key="not-the-key").embed_documents(["a"])
    assert len(server.requests_to(EMBED)) == 1


def test_rate_limit_and_server_errors_are_retried_then_succeed(server):
    server.script(EMBED, Fault.http(429, "Resource has been exhausted"), Fault.http(503))
    vectors = make(server).embed_documents(["a", "b"])
    assert [r.status for r in server.requests_to(EMBED)] == [429, 503, 200]
    np.testing.assert_allclose(vectors, direction(["a", "b"], 16), atol=1e-6)


def test_persistent_failure_raises_after_the_bounded_attempts(server):
    server.always(EMBED, Fault.http(500, "internal"))
    with pytest.raises(EmbeddingError, match="after retries"):
        make(server).embed_documents(["a"])
    assert [r.status for r in server.requests_to(EMBED)] == [500, 500, 500]


def test_backoff_doubles_between_attempts(server):
    server.always(EMBED, Fault.http(429))
    with pytest.raises(EmbeddingError):
        make(server, retry=RetryPolicy(attempts=3, base_delay=0.1, max_delay=1.0)).embed_documents(["a"])
    times = [r.at for r in server.requests_to(EMBED)]
    assert len(times) == 3
    assert times[1] - times[0] >= 0.09
    assert times[2] - times[1] >= 0.19


def test_timeouts_and_dropped_connections_are_retried(server):
    server.script(EMBED, Fault.slow(1.0), Fault.disconnect())
    vectors = make(server, timeout=0.3).embed_documents(["a"])
    assert vectors.shape == (1, 16)
    assert len(server.requests_to(EMBED)) == 3


def test_garbage_body_is_an_embedding_error(server):
    server.script(EMBED, Fault.garbage())
    with pytest.raises(EmbeddingError, match="garbage"):
        make(server).embed_documents(["a"])


def test_batch_size_above_the_api_cap_is_refused():
    with pytest.raises(ValueError):
        GeminiEmbedder(MODEL, batch_size=101)


def test_ping(server, no_keys):
    health = make(server).ping()
    assert health.ok, health.detail
    assert server.requests_to(GET_MODEL)[0].method == "GET"
    assert not make(server, model="gemini-embedding-9").ping().ok
    missing_key = GeminiEmbedder(MODEL, base_url=server.url).ping()
    assert not missing_key.ok and "No Gemini API key found" in missing_key.detail


def test_registry_reads_key_base_url_and_dimension_from_the_environment(server, no_keys, monkeypatch):
    monkeypatch.setenv("EMBED_BACKEND", "gemini")
    monkeypatch.delenv("EMBED_MODEL", raising=False)
    monkeypatch.setenv("EMBED_DIMENSION", "32")
    monkeypatch.setenv("GEMINI_BASE_URL", server.url)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    embedder = embedder_from_settings(load_settings())
    assert isinstance(embedder, GeminiEmbedder)
    assert embedder.embed_documents(["x"]).shape == (1, 32)
    assert server.requests_to(EMBED)[0].headers.get("x-goog-api-key") == KEY
    embedder.close()
    assert create_embedder("gemini", settings=load_settings()).model == MODEL


def test_missing_key_fails_on_first_use_naming_the_places_tried(server, no_keys):
    embedder = GeminiEmbedder(MODEL, base_url=server.url, dimension=8)
    with pytest.raises(EmbeddingError) as err:
        embedder.embed_documents(["a"])
    message = err.value.message
    for place in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_API_KEY_FILE", "gemini.key", ".google_api_key"):
        assert place in message
    assert server.requests == []


# -- key lookup order (seed 003) -----------------------------------------------------------


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_key_order_env_beats_files(no_keys, monkeypatch):
    home = no_keys
    write(home / ".config/agent-forge/gemini.key", "from-default-file\n")
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google-env")
    assert find_gemini_key().value == "from-google-env"
    monkeypatch.setenv("GEMINI_API_KEY", "from-gemini-env")
    key = find_gemini_key()
    assert (key.value, key.source) == ("from-gemini-env", "env GEMINI_API_KEY")
    assert "from-gemini-env" not in repr(key)


def test_key_order_explicit_file_then_default_then_legacy(no_keys, monkeypatch):
    home = no_keys
    legacy = write(home / ".google_api_key", "from-legacy")
    assert find_gemini_key().value == "from-legacy"
    default = write(home / ".config/agent-forge/gemini.key", "# comment\n\n  from-default  \n")
    key = find_gemini_key()
    assert (key.value, key.source) == ("from-default", str(default))
    explicit = write(home / "elsewhere/key.txt", "from-explicit")
    monkeypatch.setenv("GOOGLE_API_KEY_FILE", str(explicit))
    assert find_gemini_key().value == "from-explicit"
    assert legacy.exists()


def test_explicit_key_file_that_is_missing_is_an_error(no_keys, monkeypatch):
    write(no_keys / ".config/agent-forge/gemini.key", "from-default")
    monkeypatch.setenv("GOOGLE_API_KEY_FILE", str(no_keys / "typo.key"))
    with pytest.raises(EmbeddingError, match="typo.key"):
        find_gemini_key()


def test_no_key_anywhere_names_every_place(no_keys):
    with pytest.raises(EmbeddingError) as err:
        find_gemini_key()
    assert err.value.details["looked_in"] == [
        "env GEMINI_API_KEY",
        "env GOOGLE_API_KEY",
        "env GOOGLE_API_KEY_FILE (unset)",
        str(no_keys / ".config/agent-forge/gemini.key"),
        str(no_keys / ".google_api_key"),
    ]


def test_env_key_reaches_the_server_but_never_the_logs(server, no_keys, monkeypatch, caplog):
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    caplog.set_level("DEBUG")
    GeminiEmbedder(MODEL, base_url=server.url, dimension=8, retry=FAST_RETRY).embed_documents(["a"])
    assert server.requests_to(EMBED)[0].headers.get("x-goog-api-key") == KEY
    assert KEY not in caplog.text
