"""health_check on real indexes (real pipeline, ONNX model, LanceDB, SQLite), each check broken for real."""

from __future__ import annotations

import hashlib
import shutil
import socket
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import lancedb
import pytest
from fakes import Fault
from fakes.ollama_server import FakeOllama
from index_damage import delete_fts_files, poison_vectors
from local_memory_indexer.pipeline import index_project
from local_memory_indexer.state_db import open_state_rw
from local_memory_search import diagnostics
from local_memory_search.diagnostics import health_check
from local_memory_search.tools import TOOLS, ToolSpec, call_tool, register
from local_memory_shared.config import load_settings
from local_memory_shared.embedding import create_embedder
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.paths import ProjectPaths, project_paths

FILES = {
    "app/client.py": '''
        """HTTP client for the billing service."""
        import json

        class Client:
            """Talks to the billing API."""

            def send(self, payload):
                """Send one invoice payload."""
                return self._post(json.dumps(payload))

            def _post(self, body):
                return {"status": 200, "body": body}
        ''',
    "app/retry.py": '''
        def with_retry(fn, attempts=3):
            """Call fn until it succeeds."""
            for _ in range(attempts):
                try:
                    return fn()
                except ConnectionError:
                    pass
        ''',
    "web/connect.ts": """
        export function initializeDatabase(url: string) {
          return createPool(url);
        }
        """,
    "docs/guide.md": """
        # Guide

        The client retries failed invoice uploads.
        """,
}

#: The 15 tools of seed 003.
SEED_TOOLS = {
    "search_hybrid",
    "search_semantic",
    "search_keyword",
    "retrieve_context_pack",
    "read_chunk_neighbors",
    "get_chunk",
    "search_similar",
    "explain_match",
    "health_check",
    "index_status",
    "doctor_index",
    "find_callers",
    "find_callees",
    "get_import_graph",
    "trace_path",
}


@dataclass(frozen=True)
class Indexed:
    project: Path
    paths: ProjectPaths


@pytest.fixture(scope="module")
def onnx() -> Embedder:
    return create_embedder("onnx")


@pytest.fixture(scope="module")
def no_ollama() -> str:
    """One dead Ollama URL per module (the query encoder caches its embedders per URL)."""
    return f"http://127.0.0.1:{closed_port()}"


@pytest.fixture
def indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, onnx: Embedder, no_ollama: str) -> Indexed:
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(tmp_path / "data"))
    monkeypatch.setenv("OLLAMA_BASE_URL", no_ollama)
    project = tmp_path / "proj"
    for rel, content in FILES.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip("\n"))
    index_project(project, embedder=onnx)
    return Indexed(project, project_paths(load_settings().data_root, project))


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def state_sql(ix: Indexed, sql: str, *args: object) -> None:
    conn = open_state_rw(ix.paths.state_db)
    try:
        conn.execute(sql, args)
    finally:
        conn.close()


def lance_table(ix: Indexed):  # noqa: ANN201 - a lancedb Table
    return lancedb.connect(str(ix.paths.lance_dir)).open_table("chunks")


def publish(ix: Indexed, version: int) -> None:
    """What the indexer does after a batch: point the searcher at a new LanceDB version."""
    state_sql(ix, "UPDATE projects SET published_version = ?", version)


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    return {
        str(p.relative_to(root)): (
            p.stat().st_size,
            p.stat().st_mtime_ns,
            hashlib.sha256(p.read_bytes()).hexdigest(),
        )
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def data(ix: Indexed, **kwargs: object) -> dict:
    return health_check(str(ix.project), **kwargs)["data"]


# -- healthy -----------------------------------------------------------------------------------


def test_a_fresh_index_is_ready(indexed: Indexed) -> None:
    out = data(indexed)
    assert out["status"] == "ready", out["reasons"]
    assert out["reasons"] == []
    checks = out["checks"]
    assert set(checks) >= {"sqlite", "index", "lancedb", "schema", "fts", "provenance", "embedding", "graph"}
    assert all(c["status"] == "ok" for c in checks.values()), checks
    assert checks["schema"]["expected_schema_version"] == checks["schema"]["index_schema_version"] == 1
    assert checks["provenance"]["source"] == "recorded" and checks["provenance"]["dimension"] == 384
    assert "encoded a query (384d)" in checks["embedding"]["detail"]
    assert checks["lancedb"]["rows"] == checks["sqlite"]["counts"]["chunks"] > 0
    assert "capabilities" not in out and "diagnostics" not in out


def test_verbose_adds_capabilities_for_every_seed_tool_and_diagnostics(indexed: Indexed) -> None:
    out = data(indexed, verbose=True)
    caps = out["capabilities"]
    assert set(caps) == set(TOOLS) >= SEED_TOOLS
    assert all(caps[t]["status"] == "ok" for t in SEED_TOOLS)
    # Ollama is not running here: the pack still works, only its re-ranking is reported unavailable,
    # and an optional re-ranker never degrades the index's status.
    assert out["status"] == "ready"
    assert out["checks"]["reranker"]["status"] == "degraded"
    assert out["checks"]["reranker"]["fix"].startswith("start Ollama at http://127.0.0.1:")
    assert "unavailable" in caps["retrieve_context_pack"]["rerank"]
    diag = out["diagnostics"]
    assert diag["versions"]["lancedb"] == lancedb.__version__
    assert diag["schema_version"] == 1 and diag["contract_version"] == "1.2"
    assert Path(diag["paths"]["state_db"]) == indexed.paths.state_db
    assert diag["paths"]["lance_bytes"] > 0
    cpu = diag["cpu"]
    assert cpu["arch"] and cpu["source"] == "/proc/cpuinfo"
    # This process already imported LanceDB, so its wheel's CPU requirements are met here.
    assert cpu["missing"] == [] and set(cpu["present"]) == set(cpu["required"])


def test_verbose_reports_a_reachable_reranker(indexed: Indexed, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_BASE_URL", fake.url)
        out = data(indexed, verbose=True)
    assert out["checks"]["reranker"]["status"] == "ok"
    assert "rerank" not in out["capabilities"]["retrieve_context_pack"]
    with FakeOllama(models=["qwen3-embedding:4b"]) as fake:  # up, but the re-ranker is not pulled
        monkeypatch.setenv("OLLAMA_BASE_URL", fake.url)
        out = data(indexed, verbose=True)
    assert out["checks"]["reranker"]["status"] == "degraded"
    assert out["checks"]["reranker"]["fix"] == "ollama pull granite4.1:3b"


def test_no_index_is_not_ready_and_says_how_to_index(indexed: Indexed, tmp_path: Path) -> None:
    other = tmp_path / "never-indexed"
    other.mkdir()
    out = health_check(str(other), verbose=True)["data"]
    assert out["status"] == "not_ready"
    assert out["checks"]["index"]["status"] == "fail"
    assert out["checks"]["index"]["fix"] == f"local-memory-indexer index {other.resolve()}"
    assert out["capabilities"]["search_hybrid"]["status"] == "unavailable"


# -- each check broken for real -----------------------------------------------------------------


def test_dropped_fts_index_degrades_keyword_search(indexed: Indexed) -> None:
    table = lance_table(indexed)
    (fts,) = [i.name for i in table.list_indices() if i.index_type == "FTS"]
    table.drop_index(fts)
    publish(indexed, table.version)
    out = data(indexed, verbose=True)
    assert out["status"] == "degraded"
    assert out["checks"]["fts"]["status"] == "degraded"
    assert out["checks"]["fts"]["fix"] == f"local-memory-indexer index {indexed.project}"
    assert any(r.startswith("fts:") for r in out["reasons"])
    assert out["capabilities"]["search_keyword"]["status"] == "degraded"
    assert "LIKE" in out["capabilities"]["search_keyword"]["reason"]


def test_missing_lancedb_falls_back_to_the_sqlite_mirror(indexed: Indexed) -> None:
    shutil.rmtree(indexed.paths.lance_dir)
    out = data(indexed, verbose=True)
    assert out["status"] == "degraded"
    assert out["checks"]["lancedb"]["status"] == "degraded"
    assert "SQLite mirror" in out["checks"]["lancedb"]["detail"]
    assert out["checks"]["lancedb"]["fix"].endswith("--rebuild")
    assert out["capabilities"]["search_similar"]["status"] == "unavailable"
    assert out["capabilities"]["get_chunk"]["status"] == "ok"


def test_missing_provenance_is_inferred_from_the_vector_dimension(indexed: Indexed) -> None:
    state_sql(indexed, "DELETE FROM index_meta")
    out = data(indexed)
    assert out["status"] == "degraded"
    prov = out["checks"]["provenance"]
    assert prov["status"] == "degraded" and prov["source"] == "inferred"
    assert (prov["backend"], prov["dimension"]) == ("onnx", 384)
    assert out["checks"]["embedding"]["status"] == "ok"  # the inferred encoder still answers


def test_provenance_with_the_wrong_dimension_turns_semantic_search_off(indexed: Indexed) -> None:
    state_sql(indexed, "UPDATE index_meta SET dimension = 768")
    out = data(indexed, verbose=True)
    assert out["status"] == "degraded"
    assert "768d but LanceDB holds 384d" in out["checks"]["provenance"]["detail"]
    assert out["checks"]["provenance"]["fix"].endswith("--rebuild")
    assert out["checks"]["embedding"]["status"] == "degraded"
    assert out["capabilities"]["search_semantic"]["status"] == "unavailable"


def test_schema_version_mismatch(indexed: Indexed) -> None:
    state_sql(indexed, "UPDATE index_meta SET schema_version = 99")
    out = data(indexed)
    assert out["status"] == "degraded"
    assert out["checks"]["schema"]["status"] == "degraded"
    assert out["checks"]["schema"]["index_schema_version"] == 99
    assert "index_meta.schema_version is 99" in out["checks"]["schema"]["detail"]


def test_lance_rows_of_another_schema_version(indexed: Indexed) -> None:
    table = lance_table(indexed)
    table.update(where="file_path = 'app/retry.py'", values={"schema_version": 0})
    publish(indexed, table.version)
    out = data(indexed)
    assert out["checks"]["schema"]["status"] == "degraded"
    assert "carry another schema_version" in out["checks"]["schema"]["detail"]


def test_unreachable_embedding_backend_means_keyword_only(indexed: Indexed) -> None:
    # The index now claims an Ollama model (same dimension), and Ollama is not running.
    state_sql(indexed, "UPDATE index_meta SET backend = 'ollama', model = 'qwen3-embedding:4b'")
    out = data(indexed, verbose=True)
    assert out["status"] == "degraded"
    emb = out["checks"]["embedding"]
    assert emb["status"] == "degraded" and "unreachable" in emb["detail"]
    assert emb["fix"] == "start Ollama and run: ollama pull qwen3-embedding:4b"
    assert out["capabilities"]["search_semantic"]["status"] == "unavailable"
    assert out["capabilities"]["search_hybrid"]["reason"].startswith("keyword-only")


def test_a_hanging_embedding_backend_is_cut_off_by_the_timeout(
    indexed: Indexed, monkeypatch: pytest.MonkeyPatch
) -> None:
    state_sql(indexed, "UPDATE index_meta SET backend = 'ollama', model = 'qwen3-embedding:4b'")
    with FakeOllama(dimension=384) as fake:
        fake.always("/api/embed", Fault.slow(4.0))
        monkeypatch.setenv("OLLAMA_BASE_URL", fake.url)
        started = time.perf_counter()
        out = health_check(str(indexed.project), embed_timeout=0.5)["data"]
        elapsed = time.perf_counter() - started
        assert fake.requests_to("/api/embed")  # it really asked
    assert elapsed < 3.0
    assert "did not answer within 0.5 s" in out["checks"]["embedding"]["detail"]
    assert out["status"] == "degraded"


def test_an_ollama_index_with_a_live_backend_is_ready(
    indexed: Indexed, monkeypatch: pytest.MonkeyPatch
) -> None:
    state_sql(indexed, "UPDATE index_meta SET backend = 'ollama', model = 'qwen3-embedding:4b'")
    with FakeOllama(dimension=384) as fake:
        monkeypatch.setenv("OLLAMA_BASE_URL", fake.url)
        out = data(indexed)
        assert len(fake.requests_to("/api/embed")) == 1  # one real encode
    assert out["checks"]["embedding"]["status"] == "ok", out["checks"]["embedding"]
    assert out["status"] == "ready"


def test_an_empty_graph_degrades_the_graph_tools(indexed: Indexed) -> None:
    state_sql(indexed, "DELETE FROM symbols")
    out = data(indexed, verbose=True)
    assert out["checks"]["graph"]["status"] == "degraded"
    assert out["checks"]["graph"]["fix"].endswith("--full")
    assert out["capabilities"]["find_callers"]["status"] == "degraded"


# -- contract ----------------------------------------------------------------------------------


def test_diagnostics_write_nothing(indexed: Indexed) -> None:
    before_data, before_project = snapshot(indexed.paths.dir), snapshot(indexed.project)
    health_check(str(indexed.project), verbose=True)
    diagnostics.index_status(str(indexed.project))
    diagnostics.doctor_index(str(indexed.project), auto_fix=True)
    assert snapshot(indexed.paths.dir) == before_data
    assert snapshot(indexed.project) == before_project


def test_the_tool_answers_an_envelope_and_validates_arguments(indexed: Indexed) -> None:
    out = call_tool("health_check", {"project_path": str(indexed.project), "verbose": True})
    assert out["ok"] is True and out["data"]["status"] == "ready" and out["warnings"] == []
    bad = call_tool("health_check", {"project_path": str(indexed.project), "verbose": "yes"})
    assert (
        bad["ok"] is False
        and bad["error"]["code"] == "INVALID_ARGUMENT"
        and bad["error"]["field"] == "verbose"
    )
    missing = call_tool("health_check", {"project_path": str(indexed.project / "nope")})
    assert missing["ok"] is False and missing["error"]["field"] == "project_path"


# -- issue 10.7: the capability list is the registry's ----------------------------------------------


def test_capabilities_follow_the_tool_registry(indexed: Indexed) -> None:
    base = TOOLS["index_status"]
    spec = ToolSpec("zz_probe_tool", base.fn, base.params_model, "a tool health_check has no rule for")
    register(spec)
    try:
        caps = data(indexed, verbose=True)["capabilities"]
    finally:
        del TOOLS["zz_probe_tool"]
    assert caps["zz_probe_tool"]["status"] == "unknown"
    assert set(caps) == set(TOOLS) | {"zz_probe_tool"}
    assert "zz_probe_tool" not in data(indexed, verbose=True)["capabilities"]


# -- issue 15.4: real damage on disk is seen ------------------------------------------------------


def test_deleted_fts_index_files_degrade_the_health(indexed: Indexed) -> None:
    # As a fresh searcher process meets it (a process that already loaded the index keeps it cached).
    assert delete_fts_files(indexed.paths.lance_dir) > 0
    out = data(indexed, verbose=True)
    assert out["status"] == "degraded", out["checks"]["fts"]
    assert out["checks"]["fts"]["status"] == "degraded"
    assert "cannot be read" in out["checks"]["fts"]["detail"]
    assert out["capabilities"]["search_keyword"]["status"] == "degraded"


def test_vectors_poisoned_on_disk_degrade_the_health(indexed: Indexed) -> None:
    assert data(indexed)["checks"]["vectors"]["status"] == "ok"
    poison_vectors(indexed.paths.lance_dir)
    out = data(indexed)
    assert out["status"] == "degraded", out["checks"]["vectors"]
    vectors = out["checks"]["vectors"]
    assert vectors["status"] == "degraded" and vectors["non_finite"] >= 1
    assert vectors["fix"] == f"local-memory-indexer index {indexed.project} --rebuild"
