"""Issue 14 (search server memory): the compact int8 query model and the process heap settings.

The indexer writes a compact copy of the ONNX model (int8 weights kept int8 in memory) under the
data root; the searcher encodes queries with it, falls back to the original model when it is
missing, disabled or broken, and never writes it. Real model, real pipeline, real sessions.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from local_memory_indexer.query_model import MIN_COSINE, compact_model_bytes
from local_memory_search.encoder import ENCODER
from local_memory_search.tools import call_tool
from local_memory_shared.config import load_settings
from local_memory_shared.embedding.onnx import OnnxEmbedder, builtin_model_files
from local_memory_shared.embedding.query_model import MODELS_DIR, compact_model_path, find_compact_model
from local_memory_shared.errors import InvalidArgument
from local_memory_shared.heap import IdleTrim, limit_malloc_arenas, trim_heap
from search_support import env, index, snapshot, write_project

TEXTS = [
    "how are blueprints registered with the application",
    "open a socket to the server and retry on failure",
    "parse_config",
    "class LRUCache:\n    def get(self, key):\n        return self.data[key]",
]


@pytest.fixture(scope="module")
def compact_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = compact_model_bytes(builtin_model_files().model)
    assert data is not None
    path = tmp_path_factory.mktemp("compact") / "model-compact.onnx"
    path.write_bytes(data)
    return path


def test_compact_model_keeps_weights_int8_and_encodes_like_the_original(compact_file):
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(compact_file))
    float_bytes = sum(
        numpy_helper.to_array(t).nbytes
        for t in model.graph.initializer
        if t.data_type == onnx.TensorProto.FLOAT
    )
    ops = {n.op_type for n in model.graph.node}
    assert float_bytes < 2**20  # scales, biases and norms only: no float copy of any weight matrix
    assert "MatMulNBits" in ops and "MatMul" in ops  # weights → MatMulNBits; activation products stay
    initializers = {t.name for t in model.graph.initializer}
    assert not [n for n in model.graph.node if n.op_type == "Cast" and n.input[0] in initializers]

    original = OnnxEmbedder(threads=1).embed_documents(TEXTS)
    compact = OnnxEmbedder(threads=1, model_file=compact_file)
    got = compact.embed_documents(TEXTS)
    assert compact.model_file == compact_file
    cosines = np.sum(original * got, axis=1)
    assert cosines.min() >= MIN_COSINE, cosines
    assert not np.array_equal(original, got)  # really the int8 path, not the original loaded twice


def _session_rss_mb(model_file: Path | None) -> float:
    """Resident MB a fresh process gains by loading one query session (and encoding one query)."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from local_memory_shared.embedding.onnx import OnnxEmbedder\n"
        "import onnxruntime, tokenizers\n"
        "def rss():\n"
        "    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS')) / 1024\n"
        "before = rss()\n"
        "e = OnnxEmbedder(threads=1, model_file=Path(sys.argv[1]) if sys.argv[1] else None)\n"
        "e.embed_query('how are blueprints registered')\n"
        "print(rss() - before)\n"
    )
    arg = str(model_file) if model_file else ""
    out = subprocess.run([sys.executable, "-c", code, arg], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def test_compact_session_holds_far_less_memory_than_the_original(compact_file):
    original = _session_rss_mb(None)
    compact = _session_rss_mb(compact_file)
    # measured: original ~110 MB (weights folded to float32), compact ~45 MB
    assert compact < original - 40, (compact, original)


def test_indexer_writes_the_compact_model_and_the_query_encoder_uses_it(tmp_path):
    project = write_project(tmp_path / "proj")
    root = tmp_path / "data"
    index(project, root)
    source = builtin_model_files().model
    written = compact_model_path(root, source)
    assert written.is_file() and find_compact_model(root, source) == written
    assert [p.name for p in (root / MODELS_DIR).iterdir()] == [written.name]  # no temporary left behind

    ENCODER.reset()
    try:
        with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(root)):
            envelope = call_tool("search_semantic", {"query": "open a socket", "project_path": str(project)})
        assert envelope["ok"] and envelope["results"], envelope
        (embedder,) = ENCODER._embedders.values()
        assert isinstance(embedder, OnnxEmbedder) and embedder.model_file == written
        # The query session's memory options, read back from the live session.
        options = embedder._load().session.get_session_options()
        assert options.enable_cpu_mem_arena is False and options.enable_mem_pattern is False
        assert options.inter_op_num_threads == 1
    finally:
        ENCODER.reset()

    # A second index of another project into the same root reuses the file (same name, same bytes).
    before = written.stat().st_mtime_ns
    index(write_project(tmp_path / "proj2"), root)
    assert written.stat().st_mtime_ns == before


def test_the_session_is_released_before_the_final_index_build_after_the_compact_copy(tmp_path, monkeypatch):
    """Issue 14 (indexer peak RSS): once every vector is in, the final fold and the vector index's
    training run while the indexer waits; it no longer holds the ONNX session then, and the compact
    copy was written before (so nothing loads the session again after the run)."""
    from local_memory_indexer.store import ChunkStore

    project = write_project(tmp_path / "proj")
    root = tmp_path / "data"
    embedder = OnnxEmbedder(threads=1)
    written = compact_model_path(root, builtin_model_files().model)
    seen: list[tuple[bool, bool]] = []
    refresh = ChunkStore.refresh_indices

    def spy(store: ChunkStore, **kwargs: object) -> None:
        seen.append((embedder.loaded, written.is_file()))
        refresh(store, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ChunkStore, "refresh_indices", spy)
    summary = index(project, root, embedder=embedder)
    assert summary.chunks_embedded > 0
    assert seen[-1] == (False, True)  # the final index build
    assert not embedder.loaded  # and nothing loaded it again after


def test_the_compact_copy_is_checked_without_the_original_session_held(tmp_path, monkeypatch):
    """Issue 14 (indexer peak RSS): writing the compact copy at the end of a first index loaded its
    session beside the original's, the indexer's highest point at 26k chunks (543 MB vs 535 while
    embedding). The original's check vectors come first, then its session goes; the copy is still
    checked against them (a broken copy is still refused: test_query_encoder_falls_back...)."""
    from local_memory_indexer import query_model

    embedder = OnnxEmbedder(threads=1)
    embedder.embed_documents(["def warm(): pass"])  # loaded, as after a run's embedding
    seen: list[bool] = []
    real = query_model.OnnxEmbedder

    def spy(*args: object, **kwargs: object) -> OnnxEmbedder:
        seen.append(embedder.loaded)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(query_model, "_written", {})  # no copy of an earlier test to link instead
    monkeypatch.setattr(query_model, "OnnxEmbedder", spy)
    target = query_model.ensure_compact_model(tmp_path / "data", embedder)
    assert target is not None and target.is_file()
    assert seen == [False]  # the copy's session was created with the original's gone
    assert embedder.embed_documents(["def again(): pass"]).shape == (1, 384)  # loads again on use


def test_the_heap_is_trimmed_before_the_final_index_build_when_the_copy_was_just_written(
    tmp_path, monkeypatch
):
    """Issue 14: writing the compact copy releases the original session itself (test above), so
    the pipeline's own release found nothing to let go and skipped ``malloc_trim``, and nothing
    trimmed after the copy's session closed: the indexer waited through the final build ~45 MB
    larger (52,636 chunks: 390 MB at its entry; a 439-chunk project 303 MB, 260 with the trim;
    bench/results/indexer_phases-rss-real-52k-s17-512.json)."""
    from local_memory_indexer import pipeline, query_model
    from local_memory_indexer.store import ChunkStore

    events: list[str] = []

    def trim() -> bool:
        events.append("trim")
        return True

    class Copy(OnnxEmbedder):  # the compact copy's session, as _build opens it
        def close(self) -> None:
            super().close()
            events.append("close copy")

    refresh = ChunkStore.refresh_indices

    def spy(store: ChunkStore, **kwargs: object) -> None:
        events.append("refresh")
        refresh(store, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(query_model, "_written", {})  # the copy is built here, not linked
    monkeypatch.setattr(query_model, "OnnxEmbedder", Copy)
    monkeypatch.setattr(query_model, "trim_heap", trim)
    monkeypatch.setattr(pipeline, "trim_heap", trim)
    monkeypatch.setattr(ChunkStore, "refresh_indices", spy)
    embedder = OnnxEmbedder(threads=1)
    summary = index(write_project(tmp_path / "proj"), tmp_path / "data", embedder=embedder)
    assert summary.chunks_embedded > 0
    assert compact_model_path(tmp_path / "data", builtin_model_files().model).is_file()
    closed = len(events) - 1 - events[::-1].index("close copy")
    final = len(events) - 1 - events[::-1].index("refresh")
    assert closed < final and "trim" in events[closed:final]  # trimmed after the copy, before the build
    assert not embedder.loaded


def test_a_second_data_root_gets_its_copy_without_rebuilding(tmp_path):
    for name in ("a", "b"):
        index(write_project(tmp_path / f"proj-{name}"), tmp_path / name)
    a = compact_model_path(tmp_path / "a", builtin_model_files().model)
    b = compact_model_path(tmp_path / "b", builtin_model_files().model)
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("case", ["disabled", "missing", "broken"])
def test_query_encoder_falls_back_to_the_original_model(indexed_sample, tmp_path, case):
    root = tmp_path / "data"
    subprocess.run(["cp", "-a", str(indexed_sample.data_root), str(root)], check=True)
    source = builtin_model_files().model
    compact = compact_model_path(root, source)
    assert compact.is_file()
    settings_env = {"LOCAL_VECTOR_SEARCH_DATA_ROOT": str(root)}
    if case == "disabled":
        settings_env["LOCAL_MEMORY_COMPACT_QUERY_MODEL"] = "0"
    elif case == "missing":
        compact.unlink()
    else:
        compact.write_bytes(b"not an onnx model")
    before = snapshot(root)
    ENCODER.reset()
    try:
        with env(**settings_env):
            envelope = call_tool(
                "search_hybrid", {"query": "open a socket", "project_path": str(indexed_sample.project)}
            )
        assert envelope["ok"] and envelope["results"]
        assert not [w for w in envelope["warnings"] if "semantic" in w["code"] or "embed" in w["code"]]
        (embedder,) = ENCODER._embedders.values()
        assert isinstance(embedder, OnnxEmbedder) and embedder.model_file == source
    finally:
        ENCODER.reset()
    assert snapshot(root) == before  # the searcher wrote nothing, not even a missing copy


def test_query_vectors_rank_like_the_original_model(indexed_sample):
    """Each semantic answer's top hit is the same with the compact and the original query model."""
    queries = ["open a socket to the server", "least recently used cache", "parse a configuration file"]
    tops: dict[str, list[str]] = {}
    for flag in ("1", "0"):
        ENCODER.reset()
        try:
            with env(
                LOCAL_VECTOR_SEARCH_DATA_ROOT=str(indexed_sample.data_root),
                LOCAL_MEMORY_COMPACT_QUERY_MODEL=flag,
            ):
                tops[flag] = [
                    call_tool(
                        "search_semantic",
                        {"query": q, "project_path": str(indexed_sample.project), "cache_bust": True},
                    )["results"][0]["chunk_id"]
                    for q in queries
                ]
        finally:
            ENCODER.reset()
    assert tops["1"] == tops["0"]


def test_malloc_arenas_setting_is_validated_and_applied(monkeypatch):
    monkeypatch.setenv("LOCAL_MEMORY_MALLOC_ARENAS", "-1")
    with pytest.raises(InvalidArgument) as err:
        load_settings()
    assert err.value.field == "LOCAL_MEMORY_MALLOC_ARENAS"
    monkeypatch.setenv("LOCAL_MEMORY_MALLOC_ARENAS", "0")
    assert load_settings().malloc_arenas == 0 and limit_malloc_arenas(0) is False  # 0 = leave glibc alone
    monkeypatch.delenv("LOCAL_MEMORY_MALLOC_ARENAS")
    assert load_settings().malloc_arenas == 2
    code = (
        "from local_memory_shared.heap import limit_malloc_arenas, trim_heap\n"
        "assert limit_malloc_arenas(2) is True\n"
        "trim_heap()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ.copy())
    assert isinstance(trim_heap(), bool)


def test_idle_trim_runs_once_after_the_last_call():
    trim = IdleTrim(seconds=0.2)
    for _ in range(3):
        trim.touch()
        time.sleep(0.05)
    assert trim.trims == 0  # still busy
    deadline = time.monotonic() + 5
    while trim.trims == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert trim.trims == 1
    time.sleep(0.4)
    assert trim.trims == 1  # nothing new to trim until the next call
    trim.touch()
    deadline = time.monotonic() + 5
    while trim.trims == 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert trim.trims == 2


def test_search_mcp_server_trims_the_heap_after_a_call(tmp_path, monkeypatch):
    from local_memory_search import server
    from mcp_harness import memory_session

    monkeypatch.setattr(server.IDLE_TRIM, "seconds", 0.1)
    before = server.IDLE_TRIM.trims
    with memory_session(server.build_server()) as session:
        envelope = session.call("search_keyword", {"project_path": str(tmp_path), "query": "x"})
        assert envelope["error"]["code"] == "NOT_INDEXED"  # any answer counts as a call
        deadline = time.monotonic() + 5
        while server.IDLE_TRIM.trims == before and time.monotonic() < deadline:
            time.sleep(0.05)
    assert server.IDLE_TRIM.trims == before + 1


ARENA_PROBE = """
import ctypes, re, sys, tempfile, threading
{start}
def churn():
    for _ in range(2000):
        blocks = [bytearray(4096) for _ in range(64)]
        del blocks
threads = [threading.Thread(target=churn) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc = ctypes.CDLL("libc.so.6")
libc.fopen.restype = ctypes.c_void_p
with tempfile.NamedTemporaryFile(suffix=".xml") as out:
    fp = libc.fopen(out.name.encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(fp))
    libc.fclose(ctypes.c_void_p(fp))
    print(len(re.findall(r"<heap nr=", open(out.name).read())))
"""


#: How each process starts: the search CLI, and the indexer CLI (its ``main`` with a command that
#: only prints, so the probe's threads run after the indexer's own start-up).
STARTS = {
    "search": "from local_memory_search.cli import _start_process\n_start_process(prewarm=False)",
    "indexer": "import contextlib, io\nfrom local_memory_indexer.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()): main(['list', '--json'])",
}


@pytest.mark.parametrize("process", sorted(STARTS))
@pytest.mark.parametrize(("arenas", "most"), [("2", 2), ("0", 64)])
def test_process_start_caps_malloc_arenas(arenas, most, process, tmp_path):
    """Eight threads allocating at once: the search and indexer process starts keep them in at most 2 arenas."""
    out = subprocess.run(
        [sys.executable, "-c", ARENA_PROBE.replace("{start}", STARTS[process])],
        env={
            **os.environ,
            "LOCAL_MEMORY_MALLOC_ARENAS": arenas,
            "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(tmp_path),
        },
        capture_output=True,
        text=True,
        check=True,
    )
    heaps = int(out.stdout.strip().splitlines()[-1])
    assert 1 <= heaps <= most, heaps
    if arenas == "0":
        assert heaps > 2  # glibc's default really does spread threads (so the cap above is meaningful)
