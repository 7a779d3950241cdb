"""Issue 14 (first answer): a fresh search process imports only what its first answer needs, and
the query model is loaded once, beside the imports, then reused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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


#: Tool modules a hybrid answer does not need: the registry names their bodies (``ImportedTool``).
OTHER_TOOL_MODULES = (
    "local_memory_search.context",
    "local_memory_search.diagnostics",
    "local_memory_search.memory.tools",
    "local_memory_search.memory.search",
)


def test_a_hybrid_answer_imports_no_other_tool_module_and_each_loads_on_its_first_call(indexed_sample):
    """The registry lists every tool from its argument model; a tool's module is imported when it is
    first called, and that call answers as an eager registry's would."""
    project = str(indexed_sample.project)
    code = f"""
import json, sys
from local_memory_search.tools import TOOLS, call_tool
from local_memory_search.server import build_server
build_server()
schemas = {{name: spec.input_schema() for name, spec in TOOLS.items()}}  # what tools/list publishes
hybrid = call_tool("search_hybrid", {{"query": "parse config", "project_path": {project!r}}})
before = sorted(m for m in {OTHER_TOOL_MODULES!r} + ("yaml", "pathspec") if m in sys.modules)
status = call_tool("index_status", {{"project_path": {project!r}}})
pack = call_tool("retrieve_context_pack", {{"query": "parse config", "project_path": {project!r}}})
bad = call_tool("doctor_index", {{"project_path": {project!r}, "auto_fix": "yes"}})
pulse = call_tool("pulse", {{}})
print(json.dumps({{
    "tools": len(schemas), "hybrid": hybrid["ok"] and bool(hybrid["results"]), "before": before,
    "status": status["ok"] and status["data"]["indexed_files"] > 0, "pack": pack["ok"] and bool(pack["data"]["text"]),
    "bad": [bad["ok"], bad["error"]["code"], bad["error"]["field"]],
    "pulse": pulse["ok"] or pulse["error"]["code"] != "INTERNAL",
    "after": sorted(m for m in {OTHER_TOOL_MODULES!r} if m in sys.modules),
}}))
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(indexed_sample.data_root)},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {
        "tools": got["tools"],
        "hybrid": True,
        "before": [],
        "status": True,
        "pack": True,
        "bad": [False, "INVALID_ARGUMENT", "auto_fix"],
        "pulse": True,
        "after": sorted(OTHER_TOOL_MODULES),
    }
    assert got["tools"] >= 20


def test_the_server_imports_lancedb_beside_the_handshake_not_before_serving():
    """The search server is built without LanceDB and imports it on a thread as it starts serving
    (the import overlaps the client's initialize / tools/list); a search then uses that session."""
    code = """
import json, sys, threading
from local_memory_search import cli, readonly, server

seen = {}
def note(event, args):
    if event == "import" and args[0] == "lancedb" and "thread" not in seen:
        seen["thread"] = threading.current_thread().name
sys.addaudithook(note)

def serve(built, **_transport):  # stands in for the transport: waits for the warm-up like a handshake would
    seen["serving_without_lancedb"] = "lancedb" not in sys.modules or seen.get("thread") != "MainThread"
    for thread in threading.enumerate():  # the query model's thread too: exit only once both are done
        if thread.name in ("encoder-prewarm", "lancedb-warm"):
            thread.join(120)
    seen["session"] = readonly._session is not None and readonly.lance_session() is readonly._session
server.run_server = serve
cli.main([])
print(json.dumps(seen))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"thread": "lancedb-warm", "serving_without_lancedb": True, "session": True}


def test_a_tool_call_waits_for_the_lancedb_warm_up_to_end(indexed_sample):
    """No tool runs while the ``lancedb-warm`` thread imports LanceDB: a worker thread importing
    ``lancedb.query`` beside that import can be handed the partially initialised module (CI saw
    ``memory_search`` fail so). Here the warm-up is held before its import; a search sent meanwhile
    must not answer until it is released, then answers from the warm-up's session."""
    project = str(indexed_sample.project)
    code = f"""
import json, sys, threading, time
from local_memory_search import readonly, server
sys.path.insert(0, {str(Path(__file__).parent)!r})
from mcp_harness import memory_session

release = threading.Event()
real_session = readonly.lance_session
def held_session():  # the warm-up (only), held before it imports LanceDB
    if threading.current_thread().name == "lancedb-warm":
        release.wait(60)
    return real_session()
readonly.lance_session = held_session

built = server.build_server()
server.WARM_UP.start()
answers = []
with memory_session(built) as session:
    caller = threading.Thread(
        target=lambda: answers.append(session.call("search_keyword", {{"query": "parse config", "project_path": {project!r}}}))
    )
    caller.start()
    caller.join(1.5)
    answered_while_held = bool(answers)
    release.set()
    caller.join(120)
print(json.dumps({{"answered_while_held": answered_while_held, "ok": bool(answers) and answers[0]["ok"],
                  "session": readonly._session is not None}}))
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(indexed_sample.data_root)},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"answered_while_held": False, "ok": True, "session": True}
