"""The frozen MCP contract: server.manifest.json against seed 003, the live servers, and its pinned hash.

* static checks: contract 1.0 frozen, seed 003's 15 search tools with their required params,
  annotations, the envelope;
* the committed manifest equals what ``scripts/manifest.py`` generates from the live servers;
* each server started as a real stdio subprocess lists exactly the manifest's tools (names,
  required params, input schemas, annotations);
* every contract fact in the manifest (version, ports, envelope, error and warning codes) is the
  one ``local_memory_shared.contract`` owns;
* the contract guard: the hash of the contract part is pinned per ``contract_version``.

Any contract change needs a new ``contract_version`` (and a new hash entry).
"""

from __future__ import annotations

import json

import pytest
from mcp_harness import INDEXER_CMD, ROOT, SEARCH_CMD, load_manifest_tool, server_env, stdio_session

#: sha256 of scripts/manifest.py:contract_view(manifest), per contract version.
CONTRACT_HASHES: dict[str, str] = {
    "1.0": "45c72fc6211cd77a597d5938219fb3622932e4e6954db4aff331633d79f13d31",
    # 1.1 (additive): the memory tools of both servers, indexer warning codes untagged /
    # malformed_record, search warning codes of the memory tools, error codes MALFORMED_RECORD /
    # VERSION_CONFLICT.
    "1.1": "bea5f6df1d3c17316a2239766d1705214e8f6e30832a67a3da7ae119c6c894c0",
    # 1.2: the search tools' (and explain_match's) ``gap_threshold`` default 0.25 -> 0.15 (issue 17:
    # semble nDCG@10 +0.0014 tuning / +0.0038 reporting, CoSQA unchanged).
    "1.2": "84f8497c1aefac6c623aa114e4a2a85d37ab194840be57580f1de8e3c6a6ff12",
}

#: Seed 003, transcribed independently of the generator: the 15 tools and their required params.
SEED_003_REQUIRED: dict[str, list[str]] = {
    "search_hybrid": ["query"],
    "search_semantic": ["query"],
    "search_keyword": ["query"],
    "retrieve_context_pack": ["query"],
    "read_chunk_neighbors": ["chunk_id"],
    "get_chunk": ["chunk_id"],
    "search_similar": ["file_path"],
    "explain_match": ["query", "result_id"],
    "health_check": [],
    "index_status": [],
    "doctor_index": [],
    "find_callers": ["symbol_name"],
    "find_callees": ["symbol_name"],
    "get_import_graph": [],
    "trace_path": ["source_symbol", "target_symbol"],
}
INDEXER_REQUIRED: dict[str, list[str]] = {
    "start_indexing": ["project_path"],
    "indexing_status": [],
    "cancel_indexing": [],
    "list_projects": [],
    "delete_project_index": ["project_path"],
    "memory_write": ["kind", "title"],
    "memory_edit": ["id"],
    "memory_supersede": ["old_id", "title"],
    "memory_set_status": ["id", "status"],
    "memory_archive": ["id"],
    "memory_record_hits": ["ids"],
    "memory_sync": [],
}

MANIFEST_TEXT = (ROOT / "server.manifest.json").read_text()
MANIFEST = json.loads(MANIFEST_TEXT)
SERVERS = {s["name"]: s for s in MANIFEST["servers"]}
TOOLS = {name: {t["name"]: t for t in s["tools"]} for name, s in SERVERS.items()}


@pytest.fixture(scope="module")
def generator():
    return load_manifest_tool()


def test_header_declares_the_frozen_contract():
    assert MANIFEST["contract_version"] == "1.2"
    assert MANIFEST["contract_frozen"] is True
    assert set(SERVERS) == {"local-memory-indexer", "local-memory-search"}
    for server in SERVERS.values():
        assert server["version"] and server["tools"]
        assert server["transports"]["stdio"]["default"] is True
        assert server["transports"]["streamable-http"]["host"] == "127.0.0.1"


#: The searcher's agent-memory reading tools (issue 12; contract 1.1, additive).
MEMORY_SEARCH_REQUIRED = {
    "memory_search": [],
    "get_memory": ["uid"],
    "list_by_domain": [],
    "must_read": [],
    "timeline": ["uid"],
    "pulse": [],
}


def test_search_server_has_exactly_seed_003s_tools_and_required_params():
    search = {n: t for n, t in TOOLS["local-memory-search"].items() if n not in MEMORY_SEARCH_REQUIRED}
    assert sorted(search) == sorted(SEED_003_REQUIRED)
    memory = {
        n: sorted(t["required"])
        for n, t in TOOLS["local-memory-search"].items()
        if n in MEMORY_SEARCH_REQUIRED
    }
    assert memory == MEMORY_SEARCH_REQUIRED
    for name, required in SEED_003_REQUIRED.items():
        assert search[name]["required"] == sorted(required), name
        assert sorted(search[name]["inputSchema"].get("required", [])) == sorted(required), name
        assert "project_path" in search[name]["inputSchema"]["properties"], name


def test_annotations_read_only_search_destructive_delete_only_on_the_indexer():
    for name, tool in TOOLS["local-memory-search"].items():
        assert tool["annotations"]["readOnlyHint"] is True, name
        assert tool["annotations"].get("destructiveHint") is not True, name
    assert "delete_project_index" not in TOOLS["local-memory-search"]
    indexer = TOOLS["local-memory-indexer"]
    assert {n: sorted(t["required"]) for n, t in indexer.items()} == INDEXER_REQUIRED
    destructive = [n for n, t in indexer.items() if t["annotations"].get("destructiveHint")]
    assert destructive == ["delete_project_index", "memory_archive"]
    assert indexer["start_indexing"]["inputSchema"]["properties"]["full"]["default"] is False


def test_envelope_is_documented():
    env = MANIFEST["envelope"]
    assert env["paging_fields"] == ["offset", "limit", "total", "has_more", "next_offset"]
    success, failure = env["schema"]["oneOf"]
    assert {"ok", "results", "data", "warnings"} <= set(success["properties"])
    assert set(success["properties"]["warnings"]["items"]["required"]) == {"code", "message"}
    assert set(failure["properties"]["error"]["properties"]) >= {"code", "message", "field"}
    assert MANIFEST["error_codes"]["INVALID_ARGUMENT"]
    assert "index_provenance_inferred" in SERVERS["local-memory-search"]["warning_codes"]


def test_the_registry_holds_exactly_seed_003s_tools():
    from local_memory_search.tools import TOOLS as REGISTRY

    extra = sorted(set(REGISTRY) - set(SEED_003_REQUIRED) - set(MEMORY_SEARCH_REQUIRED))
    assert not extra, (
        f"search tools outside seed 003 and the 1.1 memory tools would change the contract: {extra}"
    )
    assert sorted(set(REGISTRY) - set(MEMORY_SEARCH_REQUIRED)) == sorted(SEED_003_REQUIRED)


def test_every_contract_fact_comes_from_the_contract_module():
    from local_memory_shared import contract

    assert MANIFEST["contract_version"] == contract.CONTRACT_VERSION
    assert MANIFEST["envelope"] == contract.ENVELOPE
    assert MANIFEST["error_codes"] == contract.error_codes()
    assert MANIFEST["error_codes"]["UNAUTHORIZED"]
    for name, server in SERVERS.items():
        assert server["warning_codes"] == contract.WARNING_CODES[name]
        port = contract.HTTP_PORTS[name]
        http = server["transports"]["streamable-http"]
        assert http["url"] == f"http://127.0.0.1:{port}/mcp" and f"--port {port} " in http["command"]
    # One default port per server, so both can serve HTTP side by side.
    assert contract.HTTP_PORTS == {"local-memory-indexer": 8765, "local-memory-search": 8766}


def test_the_clis_default_to_the_contract_ports():
    from local_memory_indexer.cli import build_parser
    from local_memory_search.cli import _parser
    from local_memory_shared import contract

    assert build_parser().parse_args(["serve"]).port == contract.INDEXER_HTTP_PORT
    assert _parser().parse_args(["serve"]).port == contract.SEARCH_HTTP_PORT


def test_committed_manifest_is_what_the_live_servers_generate(generator):
    fresh = generator.render(generator.build_manifest())
    assert fresh == MANIFEST_TEXT, "server.manifest.json is stale: run python scripts/manifest.py"


def test_contract_guard_pins_the_contract_per_version(generator):
    version = MANIFEST["contract_version"]
    assert version in CONTRACT_HASHES, f"new contract_version {version}: pin its hash in CONTRACT_HASHES"
    assert generator.contract_hash(MANIFEST) == CONTRACT_HASHES[version], (
        "the contract (tool names, required params, input schemas, hints or envelope) changed without a "
        "contract_version bump"
    )


def test_contract_hash_ignores_documentation_but_not_contract(generator):
    base = generator.contract_hash(MANIFEST)
    edited = json.loads(MANIFEST_TEXT)
    tool = edited["servers"][1]["tools"][0]
    tool["description"] = "reworded"
    next(iter(tool["inputSchema"]["properties"].values()))["description"] = "reworded too"
    assert generator.contract_hash(edited) == base
    tool["inputSchema"].setdefault("required", []).append("new_required_param")
    tool["required"] = sorted(tool["inputSchema"]["required"])
    assert generator.contract_hash(edited) != base
    renamed = json.loads(MANIFEST_TEXT)
    renamed["servers"][0]["tools"][0]["name"] = "begin_indexing"
    assert generator.contract_hash(renamed) != base


# -- the live servers over stdio ---------------------------------------------------------------


@pytest.fixture(
    scope="module", params=[("local-memory-indexer", INDEXER_CMD), ("local-memory-search", SEARCH_CMD)]
)
def live(request, tmp_path_factory):
    """(server name, session, stderr log path) for each server started as a stdio subprocess."""
    name, command = request.param
    tmp = tmp_path_factory.mktemp(name)
    errlog_path = tmp / "stderr.log"
    with (
        open(errlog_path, "w") as errlog,
        stdio_session(command, server_env(tmp / "data"), errlog) as session,
    ):
        yield name, session, errlog_path


def test_live_server_lists_exactly_the_manifest_tools(live):
    name, session, _ = live
    listed = {t["name"]: t for t in session.list_tools()}
    manifest_tools = TOOLS[name]
    assert sorted(set(listed) - set(manifest_tools)) == [], "live tools missing from the manifest"
    missing = sorted(set(manifest_tools) - set(listed))
    assert missing == [], f"{name} lacks manifest tools {missing}"
    for tool_name, tool in listed.items():
        entry = manifest_tools[tool_name]
        assert sorted(tool["inputSchema"].get("required", [])) == entry["required"], tool_name
        assert tool["inputSchema"] == entry["inputSchema"], (
            f"{tool_name}: input schema differs from the manifest"
        )
        assert tool["annotations"] == entry["annotations"], tool_name
        assert tool.get("description"), tool_name


def test_bad_arguments_answer_a_structured_error_and_the_server_keeps_serving(live):
    name, session, _ = live
    if name == "local-memory-indexer":
        bad = session.call_raw("start_indexing", {"full": True})
        field = "project_path"
        wrong_type = session.call("start_indexing", {"project_path": "/tmp", "full": "sometimes"})
        assert wrong_type["error"]["field"] == "full"
    else:
        bad = session.call_raw("search_keyword", {"query": "x", "filters": {"file_path": "a.py"}})
        field = "filters.file_path"
    assert bad.is_error is True
    envelope = bad.structured_content
    assert envelope["ok"] is False and envelope["warnings"] == []
    assert envelope["error"]["code"] == "INVALID_ARGUMENT"
    assert envelope["error"]["field"] == field and envelope["error"]["message"]
    assert json.loads(bad.content[0].text) == envelope  # the same JSON for text-only clients
    unknown = session.call("no_such_tool", {})
    assert unknown["ok"] is False
    # Still serving after errors:
    assert [t["name"] for t in session.list_tools()]
    if name == "local-memory-indexer":
        assert session.ok("list_projects")["results"] == []
