"""Issue 14 (first answer): a fresh search process imports only what its first answer needs, and
the query model is loaded once, beside the imports, then reused."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from local_memory_search.encoder import ENCODER
from local_memory_search.tools import call_tool
from local_memory_shared.config import load_settings

HEAVY_UNUSED = ("httpx", "tenacity", "google.genai", "ollama", "rich", "mcp.server", "mcp_types")


#: Prints the modules really imported: a package registered with its ``__init__`` deferred
#: (``lazy_imports.DEFERRED_INITS``, e.g. ``mcp.server``) counts only once that ``__init__`` ran.
_PRINT_LOADED = (
    "\nimport sys, json\n"
    "from local_memory_shared.lazy_imports import DEFERRED_INITS, package_init_loaded\n"
    "print(json.dumps(sorted(m for m in sys.modules if m not in DEFERRED_INITS or package_init_loaded(m))))"
)


def _modules_after(code: str, env: dict[str, str]) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + _PRINT_LOADED],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_cli_json_hybrid_query_imports_no_http_backend_no_rich_no_mcp_server(indexed_sample):
    code = (
        "from local_memory_search.cli import main\n"
        f"rc = main(['query', 'parse config', '--project', {str(indexed_sample.project)!r}, '--json'])\n"
        "assert rc == 0, rc"
    )
    loaded = _modules_after(code, {"LOCAL_VECTOR_SEARCH_DATA_ROOT": str(indexed_sample.data_root)})
    assert "lancedb" in loaded and "onnxruntime" in loaded  # the answer really ran both legs
    assert sorted(m for m in HEAVY_UNUSED if m in loaded) == []
    assert sorted(m for m in loaded if m.startswith("mcp.server.")) == []  # nor any of its submodules


def test_http_backends_load_on_first_use():
    loaded = _modules_after(
        "import local_memory_shared.embedding as e\nassert 'httpx' not in __import__('sys').modules\n"
        "assert e.BACKENDS['ollama'] is e.OllamaEmbedder and sorted(e.BACKENDS) == ['gemini', 'ollama', 'onnx']",
        {},
    )
    assert "httpx" in loaded and "local_memory_shared.embedding.ollama" in loaded


def test_unknown_module_attribute_still_raises():
    import local_memory_shared.embedding as e

    with pytest.raises(AttributeError):
        _ = e.NoSuchEmbedder


def test_prewarm_loads_one_session_that_the_first_query_reuses(indexed_sample, monkeypatch):
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(indexed_sample.data_root))
    ENCODER.reset()
    try:
        ENCODER.prewarm(load_settings())
        envelope = call_tool(
            "search_hybrid", {"query": "parse config", "project_path": str(indexed_sample.project)}
        )
        assert envelope["ok"] and envelope["results"]
        assert not [w for w in envelope["warnings"] if "semantic" in w["code"] or "embed" in w["code"]]
        assert len(ENCODER._embedders) == 1  # the prewarmed session, not a second copy
        (embedder,) = ENCODER._embedders.values()
        ENCODER.prewarm(load_settings())  # a second call is a no-op
        call_tool("search_semantic", {"query": "load settings", "project_path": str(indexed_sample.project)})
        assert list(ENCODER._embedders.values()) == [embedder]
    finally:
        ENCODER.reset()
    assert ENCODER._embedders == {}


def test_prewarm_off_loads_no_model_until_the_first_semantic_query(indexed_sample, monkeypatch):
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(indexed_sample.data_root))
    monkeypatch.setenv("LOCAL_MEMORY_PREWARM_ENCODER", "0")
    ENCODER.reset()
    try:
        ENCODER.prewarm(load_settings())
        assert ENCODER._warming is None and ENCODER._embedders == {}
        keyword = call_tool(
            "search_keyword",
            {"query": "parse config", "project_path": str(indexed_sample.project), "cache_bust": True},
        )
        assert keyword["ok"] and keyword["results"] and ENCODER._embedders == {}  # keyword-only: no model
        semantic = call_tool(
            "search_semantic",
            {
                "query": "open a socket to the server",
                "project_path": str(indexed_sample.project),
                "cache_bust": True,
            },
        )
        assert semantic["ok"] and semantic["results"] and len(ENCODER._embedders) == 1  # built on first use
    finally:
        ENCODER.reset()
