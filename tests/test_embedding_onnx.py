"""OnnxEmbedder with the real packaged all-MiniLM-L6-v2 int8 model, and the backend registry."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from local_memory_shared.config import load_settings
from local_memory_shared.embedding import (
    BACKENDS,
    DEFAULT_MODELS,
    OnnxEmbedder,
    create_embedder,
    embedder_from_settings,
)
from local_memory_shared.embedding.onnx import builtin_model_files
from local_memory_shared.errors import DimensionMismatch, EmbeddingError, InvalidArgument

# Lengths from a few tokens to several hundred, so length-sorting really reorders them.
TEXTS = [
    "def add(a, b):\n    return a + b",
    "x",
    "",
    "class UserRepository:\n    def find_by_email(self, email):\n        return self.db.query(User).filter_by(email=email).first()\n"
    * 3,
    "import os\nimport sys\n",
    "SELECT id, name FROM users WHERE active = 1 ORDER BY created_at DESC",
    "for i in range(10):\n    print(i)\n" * 20,
    "async function fetchJson(url) { const r = await fetch(url); return r.json(); }",
    "# Retry with exponential backoff\n" + "delay = base * 2 ** attempt\n" * 8,
    "the quick brown fox jumps over the lazy dog",
    "README: install with pip, then run make test",
]


@pytest.fixture(scope="module")
def embedder():
    return OnnxEmbedder()


@pytest.fixture(scope="module")
def one_by_one(embedder):
    return np.stack([embedder.embed_query(t) for t in TEXTS])


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_shape_dtype_norm_and_model_key(embedder):
    vectors = embedder.embed_documents(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.model_key == "onnx:all-MiniLM-L6-v2:384"
    assert embedder.max_tokens == 256  # sentence_bert_config's 256, not tokenizer.json's 128
    assert embedder.embed_documents([]).shape == (0, 384)


def test_similar_texts_are_closer_than_unrelated_ones(embedder):
    add, sums, login = embedder.embed_documents(
        [
            "def add(a, b):\n    return a + b",
            "function that returns the sum of two numbers",
            "render the login page template with a CSRF token",
        ]
    )
    assert cos(add, sums) > cos(add, login) + 0.2
    cat, kitten, sql = embedder.embed_documents(
        ["a cat sits on the mat", "a kitten is sitting on a rug", "ALTER TABLE orders ADD COLUMN total"]
    )
    assert cos(cat, kitten) > cos(cat, sql) + 0.3


def test_length_batching_keeps_input_order(one_by_one):
    small_batches = OnnxEmbedder(batch_size=3)
    progress: list[tuple[int, int]] = []
    batched = small_batches.embed_documents(
        TEXTS, progress=lambda done, total: progress.append((done, total))
    )
    np.testing.assert_allclose(batched, one_by_one, atol=1e-4)
    assert progress == [(3, 11), (6, 11), (9, 11), (11, 11)]
    unsorted = OnnxEmbedder(batch_size=3, sort_by_length=False).embed_documents(TEXTS)
    np.testing.assert_allclose(unsorted, one_by_one, atol=1e-4)


def test_long_input_is_truncated_at_the_token_limit(embedder):
    head = "def handler(request):\n    return process(request.body)\n" * 40  # far beyond 256 pieces
    long_a = head + "tail about databases and SQL joins " * 50
    long_b = head + "tail about images and GPU shaders " * 50
    assert embedder.token_counts([long_a]) == [256]
    a, b = embedder.embed_documents([long_a, long_b])
    np.testing.assert_allclose(a, b, atol=1e-6)  # only the first 256 pieces are seen


def test_shared_between_threads(embedder, one_by_one):
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        results[i] = embedder.embed_documents(TEXTS)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for vectors in results.values():
        np.testing.assert_allclose(vectors, one_by_one, atol=1e-4)


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory):
    files = builtin_model_files()
    folder = tmp_path_factory.mktemp("minilm")
    (folder / "model.onnx").symlink_to(files.model)
    (folder / "tokenizer.json").symlink_to(files.tokenizer)
    return folder


def test_model_folder_path_works(model_folder, one_by_one):
    embedder = OnnxEmbedder(str(model_folder))
    assert embedder.model == str(model_folder.resolve())
    assert embedder.dimension == 384
    assert embedder.max_tokens == 256  # no config files: the documented default
    np.testing.assert_allclose(embedder.embed_documents(TEXTS), one_by_one, atol=1e-4)
    assert embedder.ping().ok


def test_model_folder_config_sets_the_token_limit(model_folder, tmp_path):
    folder = tmp_path / "short"
    folder.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (folder / name).symlink_to((model_folder / name).resolve())
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 300}))
    (folder / "config.json").write_text(json.dumps({"max_position_embeddings": 64}))
    embedder = OnnxEmbedder(str(folder))
    assert embedder.max_tokens == 64
    assert embedder.token_counts(["word " * 500]) == [64]


def test_missing_model_folder_or_files_are_embedding_errors(tmp_path):
    with pytest.raises(EmbeddingError, match="neither"):
        OnnxEmbedder(str(tmp_path / "nope"))
    (tmp_path / "model.onnx").write_bytes(b"")
    with pytest.raises(EmbeddingError, match="tokenizer.json"):
        OnnxEmbedder(str(tmp_path))
    with pytest.raises(EmbeddingError, match="neither"):
        OnnxEmbedder("bge-small-en")


def test_corrupt_model_file_is_an_embedding_error(tmp_path, model_folder):
    (tmp_path / "model.onnx").write_bytes(b"not an onnx graph")
    (tmp_path / "tokenizer.json").symlink_to((model_folder / "tokenizer.json").resolve())
    embedder = OnnxEmbedder(str(tmp_path))
    with pytest.raises(EmbeddingError, match="Cannot load ONNX model"):
        embedder.embed_query("x")
    assert not embedder.ping().ok


def test_expected_dimension_is_checked_on_load():
    with pytest.raises(DimensionMismatch, match="384"):
        _ = OnnxEmbedder(expected_dimension=768).dimension


# -- registry ------------------------------------------------------------------------------


def test_registry_defaults_to_onnx_with_the_configured_threads(monkeypatch):
    for name in ("EMBED_BACKEND", "EMBED_MODEL", "EMBED_DIMENSION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LOCAL_MEMORY_EMBED_THREADS", "1")
    embedder = embedder_from_settings(load_settings())
    assert isinstance(embedder, OnnxEmbedder)
    assert (embedder.model, embedder.threads) == ("all-MiniLM-L6-v2", 1)
    assert set(BACKENDS) == {"onnx", "ollama", "gemini"} == set(DEFAULT_MODELS)
    assert DEFAULT_MODELS["gemini"] == "gemini-embedding-2"


def test_registry_rejects_unknown_backends_and_bad_dimensions():
    with pytest.raises(InvalidArgument) as err:
        create_embedder("openai")
    assert err.value.field == "EMBED_BACKEND" and err.value.code == "INVALID_ARGUMENT"
    with pytest.raises(InvalidArgument) as err:
        create_embedder("onnx", dimension=0)
    assert err.value.field == "EMBED_DIMENSION"


def test_registry_passes_the_model_folder(model_folder):
    embedder = create_embedder("onnx", str(model_folder), dimension=384, settings=load_settings())
    assert isinstance(embedder, OnnxEmbedder) and embedder.dimension == 384


# ---- issue 14: token-bounded runs, streaming, low-memory session ----------------------------


def test_plan_batches_bounds_padded_tokens_and_rows():
    from local_memory_shared.embedding.onnx import plan_batches

    lengths = [256, 3, 200, 10, 256, 40, 7, 256, 90]
    plan = plan_batches(lengths, max_rows=4, max_tokens=512)
    assert sorted(i for rows in plan for i in rows) == list(range(len(lengths)))
    for rows in plan:
        assert len(rows) <= 4
        assert len(rows) == 1 or len(rows) * max(lengths[i] for i in rows) <= 512
    # Shortest first: the short texts share runs, each 256-token text fills a run of two at most.
    assert plan[0] == [1, 6, 3, 5]
    assert plan_batches([600], max_rows=8, max_tokens=512) == [[0]]  # alone even if over budget
    unsorted = plan_batches(lengths, max_rows=4, max_tokens=None, sort=False)
    assert unsorted == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]


def test_iter_embeddings_streams_every_text_once_across_windows(monkeypatch, one_by_one):
    from local_memory_shared.embedding import onnx as onnx_module

    monkeypatch.setattr(onnx_module, "SORT_WINDOW", 4)  # three windows for the 11 texts
    embedder = OnnxEmbedder(max_batch_tokens=300)
    seen: list[int] = []
    runs = 0
    for positions, vectors in embedder.iter_embeddings(TEXTS):
        runs += 1
        assert vectors.shape == (len(positions), 384)
        np.testing.assert_allclose(vectors, one_by_one[positions], atol=1e-4)
        seen.extend(int(p) for p in positions)
    assert sorted(seen) == list(range(len(TEXTS)))
    assert runs >= 4  # 300 padded tokens cannot hold two of the long texts


def test_low_memory_session_matches_the_default_session(one_by_one):
    ort_defaults = OnnxEmbedder(batch_size=32, max_batch_tokens=None, low_memory=False)
    np.testing.assert_allclose(ort_defaults.embed_documents(TEXTS), one_by_one, atol=1e-4)
    with pytest.raises(ValueError, match="max_batch_tokens"):
        OnnxEmbedder(max_batch_tokens=0)


def test_base_iter_embeddings_slices_any_backend():
    from local_memory_shared.embedding.base import STREAM_SLICE, Embedder

    class LengthEmbedder(Embedder):
        backend, model = "test", "length"

        @property
        def dimension(self) -> int:
            return 2

        def embed_documents(self, texts, progress=None):
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    texts = ["x" * i for i in range(STREAM_SLICE * 2 + 5)]
    progress: list[tuple[int, int]] = []
    parts = list(LengthEmbedder().iter_embeddings(texts, lambda d, t: progress.append((d, t))))
    assert [len(p) for p, _ in parts] == [STREAM_SLICE, STREAM_SLICE, 5]
    for positions, vectors in parts:
        assert vectors[:, 0].tolist() == [float(p) for p in positions]
    assert progress[-1] == (len(texts), len(texts))


MEMORY_PROBE = """
import json, sys
from local_memory_shared.embedding.onnx import OnnxEmbedder

def peak_kb():
    # VmHWM belongs to this process image; ru_maxrss would carry the parent's peak across fork/exec.
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

kwargs = json.loads(sys.argv[1])
embedder = OnnxEmbedder(threads=2, **kwargs)
embedder.embed_query("warm up")
base = peak_kb()
texts = [f"def handler_{i}(request):\\n    return process(request.body, {i})\\n" * 30 for i in range(64)]
embedder.embed_documents(texts)
print((peak_kb() - base) // 1024)
"""


def _peak_growth_mb(kwargs: dict) -> int:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, json.dumps(kwargs)], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


def test_long_texts_stay_within_a_memory_budget():
    # 64 texts of 256 tokens: ORT's defaults with 32-text runs grow the process by ~600 MB here.
    lean = _peak_growth_mb({})
    assert lean < 200, f"peak grew {lean} MB while embedding 64 long texts"
    legacy = _peak_growth_mb({"batch_size": 32, "max_batch_tokens": None, "low_memory": False})
    assert legacy > lean + 150, (legacy, lean)


def test_dimension_comes_from_config_json_without_loading_and_the_session_checks_it(tmp_path):
    """``dimension`` answers from config.json's hidden_size without creating the session (a no-change
    re-index needs nothing more); a session whose output differs from that declaration is refused."""
    files = builtin_model_files()
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.onnx").symlink_to(files.model)
    (folder / "tokenizer.json").symlink_to(files.tokenizer)
    (folder / "config.json").write_text(json.dumps({"hidden_size": 384}))
    right = OnnxEmbedder(str(folder), threads=1)
    assert right.dimension == 384 and not right.loaded
    assert right.embed_documents(["x"]).shape == (1, 384) and right.loaded
    (folder / "config.json").write_text(json.dumps({"hidden_size": 512}))
    wrong = OnnxEmbedder(str(folder), threads=1)
    assert wrong.dimension == 512 and not wrong.loaded
    with pytest.raises(DimensionMismatch, match="hidden_size 512"):
        wrong.embed_documents(["x"])
    (folder / "config.json").unlink()
    undeclared = OnnxEmbedder(str(folder), threads=1)
    assert undeclared.dimension == 384 and undeclared.loaded  # nothing declared: read from the session


def test_release_drops_the_session_and_the_next_call_loads_it_again(model_folder, one_by_one):
    """An index run releases the session once its vectors are in; asking the dimension after that
    never reloads it (the model folder declares none), embedding does, with the same vectors."""
    embedder = OnnxEmbedder(str(model_folder), threads=1)
    assert not embedder.release()  # nothing loaded yet
    first = embedder.embed_documents(TEXTS)
    assert embedder.loaded and embedder.release() and not embedder.loaded
    assert embedder.dimension == 384 and embedder.model_key.endswith(":384") and not embedder.loaded
    np.testing.assert_allclose(embedder.embed_documents(TEXTS), first, atol=1e-6)
    np.testing.assert_allclose(first, one_by_one, atol=1e-4)
    assert embedder.loaded
