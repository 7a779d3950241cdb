"""``local-memory-indexer index PATH… --ray``: embedding on a real local Ray cluster, one committer.

One module-scoped ``ray.init(num_cpus=2)`` (it costs seconds and ~800 MB): the CLI finds Ray
initialised and uses that cluster. The index is written to a real S3 server (``weed mini``) and
searched by the real search tools, with the same answers as a local single-process index.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ray
from local_memory_indexer.cli import main
from local_memory_indexer.distributed import RayEmbedder, RayParser
from local_memory_indexer.pipeline import index_project
from local_memory_search.store import clear_caches
from local_memory_search.tools import call_tool
from local_memory_shared.config import load_settings
from local_memory_shared.embedding import embedder_from_settings
from search_support import env, index, state_rw, write_project

from bench.s3_server import S3Server, s3_server

QUERIES = ["connection pool retry", "tokenize source text", "LRU cache eviction", "open a socket"]
#: What a run writes from parsing, column by column (row ids are SQLite's, not content).
ROWS = {
    "files": "path, content_hash, size, language, chunk_count, vectors_pending",
    "chunks": "chunk_id, file_path, chunk_index, chunk_kind, symbol_name, class_name, function_name, "
    "start_line, end_line, text, summary, tags, updated_at, content_hash",
    "symbols": "file_path, name, qualified_name, kind, language, start_line, end_line, chunk_id",
    "call_edges": "file_path, caller_qualified, callee_name, callee_text, line, dynamic, language, "
    "receiver_type",
    "import_edges": "file_path, module, resolved_path, line, resolved_kind, names, language",
}


def _rows(data_root: Path, project: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every parse-derived row of a project's state DB, sorted (chunks, symbols, calls, imports)."""
    conn = state_rw(data_root, project)
    try:
        rows = {t: [tuple(r) for r in conn.execute(f"SELECT {cols} FROM {t}")] for t, cols in ROWS.items()}
        return {t: sorted(r, key=repr) for t, r in rows.items()}
    finally:
        conn.close()


@pytest.fixture
def counted_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths every ``RayParser`` hands to the cluster (the real submit runs underneath)."""
    seen: list[str] = []
    original = RayParser.submit

    def submit(self: RayParser, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        seen.append(args[0])
        return original(self, fn, *args, **kwargs)

    monkeypatch.setattr(RayParser, "submit", submit)
    return seen


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    # Ray starts its processes with fork + exec; lance's before-fork hook warns about any fork.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "lance is not fork-safe", UserWarning)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with s3_server(tmp_path_factory.mktemp("s3")) as server:
        yield server


def _hits(project: Path, data_root: Path, extra: dict[str, str]) -> list[list[tuple[str, float]]]:
    clear_caches()
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data_root), **extra):
        out = []
        for q in QUERIES:
            for tool in ("search_hybrid", "search_semantic"):
                answer = call_tool(tool, {"query": q, "project_path": str(project)})
                assert answer["ok"] and not answer["warnings"], answer
                out.append([(r["chunk_id"], round(r["score"], 4)) for r in answer["results"]])
    clear_caches()
    return out


def test_ray_indexes_many_repos_to_s3_with_the_answers_of_a_local_index(
    cluster: None,
    s3: S3Server,
    sample_project: Path,
    indexed_sample: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    counted_parses: list[str],
) -> None:
    second = write_project(tmp_path / "second", {"lib/util.py": "def helper(x):\n    return x * 2\n"})
    data = tmp_path / "data"
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data), **s3.env("ray")):
        code = main(["index", str(sample_project), str(second), "--ray", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["project_path"] for r in out["results"]] == [str(sample_project), str(second)]
    assert all(r["chunks_total"] > 0 and not r["errors"] for r in out["results"])
    assert out["results"][0]["chunks_embedded"] == out["results"][0]["chunks_total"]
    # Every file of both repositories was chunked and parsed on the cluster, none in this process.
    rows = _rows(data, sample_project)
    assert sorted(counted_parses) == sorted([r[0] for r in rows["files"]] + ["lib/util.py"])
    # The same file, chunk, symbol, call and import rows as the local index.
    assert rows == _rows(indexed_sample.data_root, sample_project)
    assert rows["symbols"] and rows["call_edges"] and rows["import_edges"]
    # Same answers (ids, order, scores to 4 places) as the local single-process index.
    local = _hits(sample_project, indexed_sample.data_root, {"LOCAL_MEMORY_LANCE_URI": ""})
    remote = _hits(sample_project, data, s3.env("ray"))
    assert remote == local
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data), **s3.env("ray")):
        helper = call_tool("search_keyword", {"query": "helper", "project_path": str(second)})
    assert helper["results"][0]["symbol_name"] == "helper"


def test_ray_vectors_equal_local_vectors_and_slices_come_back_in_place(cluster: None) -> None:
    texts = [f"def f_{i}(x):\n    return x + {i}  # item {i}" for i in range(250)]
    local = embedder_from_settings(load_settings())
    remote = RayEmbedder(actors=1)
    try:
        assert (remote.backend, remote.model, remote.dimension) == (
            local.backend,
            local.model,
            local.dimension,
        )
        seen: list[int] = []
        progress: list[tuple[int, int]] = []
        got = np.zeros((len(texts), remote.dimension), dtype=np.float32)
        for positions, vectors in remote.iter_embeddings(texts, lambda d, t: progress.append((d, t))):
            got[positions] = vectors
            seen.extend(positions.tolist())
        assert sorted(seen) == list(range(len(texts)))  # every text exactly once, in several slices
        assert progress[-1] == (len(texts), len(texts)) and len(progress) >= 3
        np.testing.assert_allclose(got, local.embed_documents(texts), atol=1e-5)
    finally:
        remote.close()
        local.close()


def test_a_cancelled_ray_run_publishes_nothing_half_done_and_frees_its_actors(
    cluster: None, tmp_path: Path
) -> None:
    project = tmp_path / "many"
    for i in range(40):
        (project / "pkg").mkdir(parents=True, exist_ok=True)
        body = "".join(f"def task_{i}_{j}(job):\n    return job + {i * j}\n\n\n" for j in range(3))
        (project / f"pkg/m{i:03d}.py").write_text(body)
    cancel = threading.Event()
    embedder = RayEmbedder(actors=1)
    calls = [0]
    original = embedder.iter_embeddings

    def cancelling(texts: Any, progress: Any = None) -> Any:
        calls[0] += 1
        cancel.set()  # the cancel arrives while the first batch is being embedded
        yield from original(texts, progress)

    embedder.iter_embeddings = cancelling  # type: ignore[method-assign]
    try:
        with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(tmp_path / "data")):
            summary = index_project(
                project, settings=load_settings(), embedder=embedder, cancel=cancel, parser=RayParser()
            )
    finally:
        embedder.close()
    # Stopped inside the first batch (the pipeline checks the cancel between embedded slices).
    assert summary.cancelled and calls[0] == 1
    assert summary.chunks_embedded < 40 * 3
    assert summary.chunks_total < 40 * 3
    assert embedder.actors == 0


def test_a_large_ray_run_parses_on_the_cluster_publishes_in_two_phases_and_matches_a_local_run(
    cluster: None, tmp_path: Path, counted_parses: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    # More files than the first batch: the run publishes keyword rows first, then embeds.
    files = {"pkg/__init__.py": "from .core import Engine\n"}
    files["pkg/core.py"] = (
        "class Engine:\n    def start(self, n):\n        return helper(n)\n\n\ndef helper(n):\n    return n + 1\n"
    )
    for i in range(24):
        files[f"pkg/job_{i:02d}.py"] = (
            f"from pkg.core import Engine, helper\n\n\ndef run_{i}(n):\n"
            f"    engine = Engine()\n    return engine.start(helper(n + {i}))\n"
        )
    project = write_project(tmp_path / "big", files)
    local = index(project, tmp_path / "local")
    embedder = RayEmbedder(actors=1)
    try:
        remote = index(project, tmp_path / "ray", embedder=embedder, parser=RayParser())
    finally:
        embedder.close()
    assert sorted(counted_parses) == sorted(files)
    assert "in process" not in caplog.text  # every batch's parse came back from the cluster
    assert remote.files_parsed == local.files_parsed == len(files) and not remote.errors
    assert remote.chunks_total == local.chunks_total and remote.chunks_embedded == local.chunks_embedded
    rows = _rows(tmp_path / "ray", project)
    assert rows == _rows(tmp_path / "local", project)
    assert not any(r[-1] for r in rows["files"])  # every vector published: no file still pending
    assert any(r[2] == "helper" for r in rows["call_edges"]) and any(
        r[2] == "pkg/core.py" for r in rows["import_edges"]
    )


#: Runs the real CLI in a fresh interpreter where ``import ray`` fails (the extra not installed).
NO_RAY = """
import sys
sys.modules["ray"] = None  # what ``import ray`` meets when the extra is not installed: ImportError
from local_memory_indexer.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def test_ray_without_the_extra_is_an_invalid_argument_naming_the_install(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", {"a.py": "def a():\n    return 1\n"})
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(tmp_path / "data")):
        done = subprocess.run(
            [sys.executable, "-c", NO_RAY, "index", str(project), "--ray", "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    answer = json.loads(done.stdout)
    assert done.returncode != 0 and not answer["ok"]
    assert answer["error"]["code"] == "INVALID_ARGUMENT" and answer["error"]["field"] == "ray"
    assert "pip install 'local-memory-indexer[distributed]'" in answer["error"]["message"]
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").rglob("state.db"))


def test_an_unreachable_address_is_an_invalid_argument_naming_it(tmp_path: Path) -> None:
    # A fresh interpreter: in this one Ray is already initialised and would be reused.
    project = write_project(tmp_path / "p", {"a.py": "def a():\n    return 1\n"})
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        address = f"ray://127.0.0.1:{s.getsockname()[1]}"
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(tmp_path / "data")):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "local_memory_indexer.cli",
                "index",
                str(project),
                "--ray",
                "--address",
                address,
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    answer = json.loads(done.stdout)
    assert done.returncode != 0 and not answer["ok"]
    assert answer["error"]["code"] == "INVALID_ARGUMENT" and answer["error"]["field"] == "address"
    assert address in answer["error"]["message"] and "cannot reach" in answer["error"]["message"]
