"""``local-memory-indexer setup-client``: merged, backed-up MCP client configs, run as a real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).with_name("local-memory-indexer"))


def run(*args: str, data_root: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root), "HOME": str(home)}
    env.pop("XDG_CONFIG_HOME", None)
    return subprocess.run([EXE, "setup-client", *args], env=env, capture_output=True, text=True, timeout=120)


def test_claude_desktop_merges_keeps_other_servers_and_backs_up(tmp_path: Path) -> None:
    config = tmp_path / "home/.config/Claude/claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    original = {"mcpServers": {"other": {"command": "/bin/other", "args": ["x"]}}, "theme": "dark"}
    config.write_text(json.dumps(original))
    out = run("claude-desktop", "--json", data_root=tmp_path / "data", home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    done = json.loads(out.stdout)["data"]
    assert done["config_path"] == str(config) and done["written"]
    merged = json.loads(config.read_text())
    assert merged["theme"] == "dark" and merged["mcpServers"]["other"] == original["mcpServers"]["other"]
    for name in ("local-memory-indexer", "local-memory-search"):
        entry = merged["mcpServers"][name]
        assert Path(entry["command"]).is_absolute() and Path(entry["command"]).exists()
        assert entry["env"]["LOCAL_VECTOR_SEARCH_DATA_ROOT"] == str(tmp_path / "data")
    assert json.loads(Path(done["backup_path"]).read_text()) == original
    # The entries really start the servers: the search one lists its tools over the CLI.
    tools = subprocess.run(
        [merged["mcpServers"]["local-memory-search"]["command"], "tools", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "search_hybrid" in tools.stdout


def test_a_malformed_config_is_reported_and_never_overwritten(tmp_path: Path) -> None:
    config = tmp_path / "home/.cursor/mcp.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"mcpServers": {"a": 1,}')
    out = run("cursor", "--json", data_root=tmp_path / "data", home=tmp_path / "home")
    assert out.returncode == 1
    err = json.loads(out.stdout)["error"]
    assert err["code"] == "INVALID_ARGUMENT" and err["field"] == "config" and "line 1" in err["message"]
    assert config.read_text() == '{"mcpServers": {"a": 1,}'
    assert list(config.parent.iterdir()) == [config]


@pytest.mark.parametrize(("client", "key"), [("vscode", "servers"), ("claude-code", "mcpServers")])
def test_print_writes_nothing(tmp_path: Path, client: str, key: str) -> None:
    out = run(client, "--print", data_root=tmp_path / "data", home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    servers = json.loads(out.stdout)[key]
    assert set(servers) == {"local-memory-indexer", "local-memory-search"}
    if client == "vscode":
        assert servers["local-memory-search"]["type"] == "stdio"
    assert not (tmp_path / "home").exists()


def test_explicit_config_path_for_a_project_scoped_file(tmp_path: Path) -> None:
    target = tmp_path / "proj/.mcp.json"
    out = run("claude-code", "--config", str(target), data_root=tmp_path / "data", home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    assert set(json.loads(target.read_text())["mcpServers"]) == {
        "local-memory-indexer",
        "local-memory-search",
    }
