"""The README tells the truth: every env var, CLI command and MCP tool a user needs is in it."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest
from local_memory_indexer.cli import build_parser as indexer_parser
from local_memory_search.cli import _parser as search_parser
from local_memory_shared.config import ENV_VARS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_every_env_var_is_documented() -> None:
    for key in ENV_VARS:
        for name in re.findall(r"[A-Z][A-Z0-9_]+", key):
            assert f"`{name}`" in README, f"{name} missing from README"


@pytest.mark.parametrize(
    ("prog", "make_parser"),
    [("local-memory-indexer", indexer_parser), ("local-memory-search", search_parser)],
)
def test_every_cli_command_and_flag_is_documented(prog: str, make_parser) -> None:
    parser = make_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, cmd in sub.choices.items():
        assert f"{prog} {name}" in README, name
        for action in cmd._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help":
                    assert flag in README, f"{prog} {name} {flag}"


def test_every_mcp_tool_is_documented() -> None:
    manifest = json.loads((ROOT / "server.manifest.json").read_text())
    servers = manifest["servers"]
    names = [
        t["name"]
        for server in (servers.values() if isinstance(servers, dict) else servers)
        for t in server["tools"]
    ]
    assert len(names) >= 20
    for name in names:
        assert re.search(rf"`{name}[`(]", README), f"tool {name} missing from README"


def test_documented_http_ports_are_the_contract_ports() -> None:
    from local_memory_shared.contract import HTTP_PORTS

    docs = (ROOT / "docs" / "mcp.md").read_text()
    for server, port in HTTP_PORTS.items():
        for text, where in ((README, "README"), (docs, "docs/mcp.md")):
            for found in re.findall(rf"{server}\s+serve --http[^\n]*?--port (\d+)", text):
                assert int(found) == port, (
                    f"{where}: {server} documented on port {found}, contract says {port}"
                )
    assert re.search(r"local-memory-search\s+serve --http --port 8766", docs)
