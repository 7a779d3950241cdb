"""The README tells the truth: every env var, CLI command and MCP tool a user needs is in it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from local_memory_indexer.cli import build_parser as indexer_parser
from local_memory_shared.config import ENV_VARS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_every_env_var_is_documented() -> None:
    for key in ENV_VARS:
        for name in re.findall(r"[A-Z][A-Z0-9_]+", key):
            assert f"`{name}`" in README, f"{name} missing from README"


def test_every_indexer_command_and_flag_is_documented() -> None:
    parser = indexer_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, cmd in sub.choices.items():
        assert f"local-memory-indexer {name}" in README, name
        for action in cmd._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help":
                    assert flag in README, f"local-memory-indexer {name} {flag}"


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
