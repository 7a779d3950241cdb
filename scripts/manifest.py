"""Generate or check ``server.manifest.json`` — the frozen MCP contract — from the live servers.

    python scripts/manifest.py            # rewrite server.manifest.json from the servers' tool lists
    python scripts/manifest.py --check    # exit 1 when the committed manifest differs from them

Tools are read through a real MCP client session (the SDK's in-process transport), so the
manifest holds exactly what ``tools/list`` answers: name, description, input JSON schema and
annotations. A seed-003 search tool not registered yet is written from the seed (its required
params and documented params) and marked ``"pending": true`` until it lands.

Contract rules (seed 003): tool names, required params, input schemas and the envelope shape
must not change without bumping ``CONTRACT_VERSION``; :func:`contract_hash` is what the contract
guard test pins per version (descriptions and titles are documentation, not contract).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
MANIFEST_PATH = ROOT / "server.manifest.json"
CONTRACT_VERSION = "1.1"
HTTP_DEFAULT_PORT = 8765

# -- seed 003: the 15 search tools, their required params and documented params ----------------

_PROJECT = {
    "type": "string",
    "description": "Absolute path to the indexed project root (default: env default).",
}
_FILTERS = {
    "type": "object",
    "additionalProperties": False,
    "description": "Pre-filter hits before ranking; only these keys are accepted.",
    "properties": {
        "language": {"type": "string"},
        "file_extensions": {"type": "array", "items": {"type": "string"}},
        "path_prefix": {"type": "string"},
        "updated_after": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "class_name": {"type": "string"},
        "function_name": {"type": "string"},
        "last_commit_hash": {"type": "string"},
    },
}
_SEARCH_COMMON: dict[str, Any] = {
    "project_path": _PROJECT,
    "query": {"type": "string", "description": "Search text: identifiers, keywords, or natural language."},
    "limit": {"type": "integer", "default": 10, "minimum": 1, "maximum": 50},
    "offset": {"type": "integer", "default": 0, "minimum": 0},
    "max_chars": {"type": "integer", "default": 800, "minimum": 0},
    "summary_only": {"type": "boolean", "default": False},
    "filters": _FILTERS,
    "fields": {"type": "array", "items": {"type": "string"}},
    "exclude_fields": {"type": "array", "items": {"type": "string"}},
    "recency_weight": {"type": "number", "default": 0.1},
    "gap_threshold": {"type": "number", "default": 0.25},
    "cache_bust": {"type": "boolean", "default": False},
}
_DEPTH = {"type": "integer", "default": 1, "minimum": 1, "maximum": 3}

#: name → (purpose, required params, documented params), transcribed from seed 003.
SEED_003_SEARCH_TOOLS: dict[str, tuple[str, list[str], dict[str, Any]]] = {
    "search_hybrid": (
        "Primary hybrid (vector + BM25/RRF) search.",
        ["query"],
        {
            **_SEARCH_COMMON,
            "alpha": {"type": "number", "default": 0.65},
            "rrf_k": {"type": "integer", "default": 60},
        },
    ),
    "search_semantic": ("Pure vector ANN search.", ["query"], dict(_SEARCH_COMMON)),
    "search_keyword": ("Pure BM25/FTS keyword search.", ["query"], dict(_SEARCH_COMMON)),
    "retrieve_context_pack": (
        "Token-budgeted context pack with neighbor expansion + optional re-rank.",
        ["query"],
        {
            "query": {"type": "string"},
            "project_path": _PROJECT,
            "max_files": {"type": "integer", "default": 8},
            "max_chars": {"type": "integer", "default": 12000},
            "include_neighbors": {"type": "boolean", "default": True},
            "neighbor_hops": {"type": "integer", "default": 1, "minimum": 0, "maximum": 3},
            "rerank": {"type": "boolean", "default": False},
            "truncate_strategy": {"type": "string", "enum": ["middle", "tail", "head"], "default": "middle"},
            "filters": _FILTERS,
            "alpha": {"type": "number", "default": 0.65},
        },
    ),
    "read_chunk_neighbors": (
        "Adjacent chunks before/after a hit.",
        ["chunk_id"],
        {
            "chunk_id": {"type": "string"},
            "project_path": _PROJECT,
            "before": {"type": "integer", "default": 2, "minimum": 0, "maximum": 5},
            "after": {"type": "integer", "default": 2, "minimum": 0, "maximum": 5},
        },
    ),
    "get_chunk": (
        "Fetch one chunk by stable chunk_id.",
        ["chunk_id"],
        {
            "chunk_id": {"type": "string"},
            "project_path": _PROJECT,
            "fields": {"type": "array", "items": {"type": "string"}},
            "max_chars": {"type": "integer", "default": 0, "minimum": 0},
        },
    ),
    "search_similar": (
        "Find chunks similar to a file/function via its stored vector.",
        ["file_path"],
        {
            "file_path": {"type": "string"},
            "project_path": _PROJECT,
            "function_name": {"type": "string"},
            "limit": {"type": "integer", "default": 10},
            "filters": _FILTERS,
            "max_chars": {"type": "integer", "default": 800},
        },
    ),
    "explain_match": (
        "Score breakdown: vector, FTS, identifier boost, recency.",
        ["query", "result_id"],
        {
            "query": {"type": "string"},
            "result_id": {"type": "string"},
            "project_path": _PROJECT,
            "alpha": {"type": "number", "default": 0.65},
            "verbosity": {"type": "string", "enum": ["compact", "full"], "default": "compact"},
        },
    ),
    "health_check": (
        "Readiness: LanceDB, embedding backend, FTS, schema_version.",
        [],
        {"project_path": _PROJECT, "verbose": {"type": "boolean", "default": False}},
    ),
    "index_status": ("Indexed file/chunk counts, freshness, stale ratio.", [], {"project_path": _PROJECT}),
    "doctor_index": (
        "Diagnose schema/FTS/count inconsistencies (read-only; suggests actions).",
        [],
        {"project_path": _PROJECT, "auto_fix": {"type": "boolean", "default": False}},
    ),
    "find_callers": (
        "List symbols that call symbol_name (call-graph upstream).",
        ["symbol_name"],
        {"symbol_name": {"type": "string"}, "project_path": _PROJECT, "depth": _DEPTH},
    ),
    "find_callees": (
        "List symbols called by symbol_name (call-graph downstream).",
        ["symbol_name"],
        {"symbol_name": {"type": "string"}, "project_path": _PROJECT, "depth": _DEPTH},
    ),
    "get_import_graph": (
        "List import/dependency edges. Omit file_path for project-wide graph.",
        [],
        {"file_path": {"type": "string"}, "project_path": _PROJECT},
    ),
    "trace_path": (
        "Find call chain from source_symbol to target_symbol.",
        ["source_symbol", "target_symbol"],
        {"source_symbol": {"type": "string"}, "target_symbol": {"type": "string"}, "project_path": _PROJECT},
    ),
}

# -- the response envelope ------------------------------------------------------------------------

_WARNING = {
    "type": "object",
    "required": ["code", "message"],
    "properties": {
        "code": {"type": "string", "description": "Stable snake_case code (see warning_codes)."},
        "message": {"type": "string"},
    },
}
ENVELOPE: dict[str, Any] = {
    "description": (
        "Every tool of both servers answers this one JSON object, as structuredContent and as the same JSON in "
        "one text content block. isError is true exactly when ok is false: only for bad arguments and hard "
        "failures. Degradation is never an error: it adds a warnings[] entry and still answers."
    ),
    "success": {
        "ok": "true",
        "results": "array — list answers (search hits, neighbours, graph edges, projects)",
        "data": "object — single-object answers (a chunk, a status, a job, a context pack)",
        "warnings": "array of {code, message}; empty when nothing degraded",
        "paging": "on paged list answers: offset, limit, total, has_more, next_offset",
    },
    "error": {
        "ok": "false",
        "error": "{code, message, field?, details?} — field is the offending argument as a dotted path "
        "(e.g. filters.file_path, fields[2]) for INVALID_ARGUMENT; details.errors lists every problem",
        "warnings": "array of {code, message}",
    },
    "paging_fields": ["offset", "limit", "total", "has_more", "next_offset"],
    "schema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "oneOf": [
            {
                "type": "object",
                "required": ["ok", "warnings"],
                "properties": {
                    "ok": {"const": True},
                    "results": {"type": "array"},
                    "data": {"type": "object"},
                    "warnings": {"type": "array", "items": _WARNING},
                    "offset": {"type": "integer", "minimum": 0},
                    "limit": {"type": "integer", "minimum": 0},
                    "total": {"type": "integer", "minimum": 0},
                    "has_more": {"type": "boolean"},
                    "next_offset": {"type": ["integer", "null"]},
                },
            },
            {
                "type": "object",
                "required": ["ok", "error", "warnings"],
                "properties": {
                    "ok": {"const": False},
                    "error": {
                        "type": "object",
                        "required": ["code", "message"],
                        "properties": {
                            "code": {"type": "string"},
                            "message": {"type": "string"},
                            "field": {"type": "string"},
                            "details": {"type": "object"},
                        },
                    },
                    "warnings": {"type": "array", "items": _WARNING},
                },
            },
        ],
    },
}

INDEXER_WARNING_CODES = {
    "job_already_running": "start_indexing found a running job for the project and returned it (no second writer).",
    "job_not_running": "cancel_indexing found the job already finished (or run by another process).",
    "no_job_recorded": "indexing_status found no job for the project (indexed by the CLI); the index itself is shown.",
    "untagged": "memory_write stored a memory without tags: it answers only queries that quote its wording.",
    "malformed_record": "memory_sync found a vault file whose frontmatter does not validate (path:line given).",
}


def error_codes() -> dict[str, str]:
    """Every stable error code of the rooted exception tree, with its meaning."""
    from local_memory_shared.errors import LocalMemoryError

    out: dict[str, str] = {}
    stack: list[type[LocalMemoryError]] = [LocalMemoryError]
    while stack:
        cls = stack.pop(0)
        out.setdefault(cls.code, (cls.__doc__ or "").strip().splitlines()[0])
        stack.extend(cls.__subclasses__())
    return out


# -- reading the live servers ----------------------------------------------------------------------


async def list_live_tools(server: Any) -> list[dict[str, Any]]:
    """``tools/list`` of a server through the SDK's in-process client, as wire JSON."""
    from mcp import Client

    async with Client(server) as client:
        listed = await client.list_tools()
    return [tool_entry(t.model_dump(by_alias=True, exclude_none=True, mode="json")) for t in listed.tools]


def tool_entry(wire: dict[str, Any]) -> dict[str, Any]:
    """A manifest tool entry from a ``tools/list`` item."""
    schema = wire.get("inputSchema") or {"type": "object"}
    return {
        "name": wire["name"],
        "description": wire.get("description", ""),
        "required": sorted(schema.get("required", [])),
        "inputSchema": schema,
        "annotations": wire.get("annotations", {}),
    }


def pending_entry(name: str) -> dict[str, Any]:
    """A seed-003 tool not registered yet, written from the seed."""
    purpose, required, props = SEED_003_SEARCH_TOOLS[name]
    schema = {"type": "object", "additionalProperties": False, "properties": copy.deepcopy(props)}
    if required:
        schema["required"] = list(required)
    return {
        "name": name,
        "description": purpose,
        "required": sorted(required),
        "inputSchema": schema,
        "annotations": {
            "title": name.replace("_", " ").capitalize(),
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
        "pending": True,
    }


def _server_block(
    name: str, version: str, description: str, tools: list[dict[str, Any]], warnings: dict[str, str]
) -> dict[str, Any]:
    return {
        "name": name,
        "version": version,
        "description": description,
        "command": name,
        "transports": {
            "stdio": {"default": True, "command": name},
            "streamable-http": {
                "command": f"{name} serve --http --port {HTTP_DEFAULT_PORT} [--token TOKEN]",
                "url": f"http://127.0.0.1:{HTTP_DEFAULT_PORT}/mcp",
                "host": "127.0.0.1",
                "auth": "optional bearer token (--token or LOCAL_MEMORY_HTTP_TOKEN); 401 without it",
            },
        },
        "tools": tools,
        "warning_codes": warnings,
    }


async def build_manifest_async() -> dict[str, Any]:
    """The manifest of both live servers."""
    from local_memory_indexer import server as indexer_server
    from local_memory_search import server as search_server
    from local_memory_search.degradation import WARNING_CODES

    indexer_tools = await list_live_tools(indexer_server.build_server())
    live_search = {t["name"]: t for t in await list_live_tools(search_server.build_server())}
    search_tools = [
        live_search.pop(n) if n in live_search else pending_entry(n) for n in SEED_003_SEARCH_TOOLS
    ]
    search_tools.extend(live_search.values())  # tools beyond the seed's 15 (the contract test rejects them)
    return {
        "$comment": "Generated by scripts/manifest.py from the live servers; do not edit by hand.",
        "contract_version": CONTRACT_VERSION,
        "contract_frozen": True,
        "contract_rules": (
            "Tool names, required params, input schemas and the envelope shape must not change without a "
            "contract_version bump (tests/test_manifest.py pins a hash per version)."
        ),
        "servers": [
            _server_block(
                indexer_server.SERVER_NAME, indexer_server.server_version(),
                "Writer: indexes projects in the background; the only process that writes (and deletes).",
                indexer_tools, INDEXER_WARNING_CODES,
            ),
            _server_block(
                search_server.SERVER_NAME, search_server.server_version(),
                "Strictly read-only hybrid search, context packs, graph tools and diagnostics (seed 003).",
                search_tools, dict(WARNING_CODES),
            ),
        ],
        "envelope": ENVELOPE,
        "error_codes": {**error_codes(), "UNAUTHORIZED": "HTTP transport only: missing or wrong bearer token (401)."},
    }  # fmt: skip


def build_manifest() -> dict[str, Any]:
    """Synchronous :func:`build_manifest_async`."""
    return anyio.run(build_manifest_async)


def render(manifest: dict[str, Any]) -> str:
    """The committed text form (stable, diff-friendly)."""
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


# -- the contract guard ----------------------------------------------------------------------------

_DOC_KEYS = frozenset({"description", "title", "$comment", "examples"})


def _strip_docs(node: Any) -> Any:
    if isinstance(node, dict):
        # A property literally named "title"/"description" lives under "properties": keep those keys.
        return {
            k: (_strip_docs(v) if k != "properties" else {pk: _strip_docs(pv) for pk, pv in v.items()})
            for k, v in node.items()
            if k not in _DOC_KEYS
        }
    if isinstance(node, list):
        return [_strip_docs(v) for v in node]
    return node


def contract_view(manifest: dict[str, Any]) -> dict[str, Any]:
    """What the contract freezes: per server, tool names, required params, schemas, hints; the envelope."""
    servers = {}
    for server in manifest["servers"]:
        servers[server["name"]] = {
            t["name"]: {
                "required": sorted(t["required"]),
                "inputSchema": _strip_docs(t["inputSchema"]),
                "hints": {k: v for k, v in t.get("annotations", {}).items() if k.endswith("Hint")},
                "pending": bool(t.get("pending", False)),
            }
            for t in server["tools"]
        }
    return {
        "contract_version": manifest["contract_version"],
        "servers": servers,
        "envelope": {
            "paging_fields": manifest["envelope"]["paging_fields"],
            "schema": manifest["envelope"]["schema"],
        },
    }


def contract_hash(manifest: dict[str, Any]) -> str:
    """sha256 of the canonical contract view."""
    canonical = json.dumps(contract_view(manifest), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    """CLI entry: write the manifest, or ``--check`` it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if server.manifest.json is out of date")
    args = parser.parse_args(argv)
    text = render(build_manifest())
    if args.check:
        current = MANIFEST_PATH.read_text() if MANIFEST_PATH.exists() else ""
        if current != text:
            sys.stderr.write("server.manifest.json is out of date: run python scripts/manifest.py\n")
            return 1
        sys.stderr.write("server.manifest.json matches the live servers\n")
        return 0
    MANIFEST_PATH.write_text(text)
    manifest = json.loads(text)
    sys.stderr.write(f"wrote {MANIFEST_PATH} (contract {CONTRACT_VERSION}, hash {contract_hash(manifest)})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
