"""One-command MCP client setup: write both servers into Claude Desktop, Claude Code, Cursor or VS Code.

``local-memory-indexer setup-client CLIENT [--print] [--config PATH]`` builds the two server
entries with the absolute paths of the installed scripts and one shared data root, then merges
them into the client's config file: other servers and settings are kept, the old file is backed
up first, the new one is written atomically, and a malformed existing file is reported — never
overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from local_memory_shared.errors import InvalidArgument, StoreError

SERVERS = ("local-memory-indexer", "local-memory-search")


@dataclass(frozen=True)
class ClientKind:
    """Where a client keeps its MCP servers and under which key."""

    name: str
    servers_key: str  # "mcpServers" for most; VS Code uses "servers"
    stdio_type: bool  # VS Code wants "type": "stdio" on each entry


CLIENTS = {
    "claude-desktop": ClientKind("claude-desktop", "mcpServers", False),
    "claude-code": ClientKind("claude-code", "mcpServers", False),
    "cursor": ClientKind("cursor", "mcpServers", False),
    "vscode": ClientKind("vscode", "servers", True),
}


@dataclass(frozen=True)
class SetupResult:
    """What ``setup-client`` did."""

    client: str
    config_path: str
    backup_path: str | None
    servers: dict[str, Any]
    written: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "client": self.client,
            "config_path": self.config_path,
            "backup_path": self.backup_path,
            "servers": self.servers,
            "written": self.written,
        }


def default_config_path(client: str, *, home: Path | None = None, cwd: Path | None = None) -> Path:
    """The config file a client reads, on this platform."""
    home = home or Path.home()
    cwd = cwd or Path.cwd()
    if client == "claude-desktop":
        if sys.platform == "darwin":
            return home / "Library/Application Support/Claude/claude_desktop_config.json"
        if os.name == "nt":
            return (
                Path(os.environ.get("APPDATA", home / "AppData/Roaming"))
                / "Claude/claude_desktop_config.json"
            )
        return Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "Claude/claude_desktop_config.json"
    if client == "claude-code":
        return home / ".claude.json"  # user scope; `--config .mcp.json` for a project-scoped file
    if client == "cursor":
        return home / ".cursor/mcp.json"
    if client == "vscode":
        return cwd / ".vscode/mcp.json"
    raise InvalidArgument(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}", field="client")


def script_path(name: str) -> str:
    """Absolute path of an installed console script (beside this interpreter first, then PATH)."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside.resolve())
    found = shutil.which(name)
    if found:
        return str(Path(found).resolve())
    raise StoreError(f"the {name} script is not installed (install the package first)")


def server_entries(client: str, data_root: Path, default_project: str | None = None) -> dict[str, Any]:
    """The two server entries for ``client`` (absolute script paths, one shared data root)."""
    kind = CLIENTS.get(client)
    if kind is None:
        raise InvalidArgument(
            f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}", field="client"
        )
    entries: dict[str, Any] = {}
    for name in SERVERS:
        env = {"LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data_root)}
        if default_project and name == "local-memory-search":
            env["LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT"] = default_project
        entry: dict[str, Any] = {"command": script_path(name), "args": [], "env": env}
        entries[name] = {"type": "stdio", **entry} if kind.stdio_type else entry
    return entries


def _read_existing(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidArgument(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); fix it by hand "
            "or pass --print and paste the entries yourself — the file was left untouched",
            field="config",
        ) from exc
    if not isinstance(data, dict):
        raise InvalidArgument(
            f"{path} does not hold a JSON object; the file was left untouched", field="config"
        )
    return data


def setup_client(
    client: str,
    *,
    data_root: Path,
    config_path: Path | None = None,
    default_project: str | None = None,
    write: bool = True,
) -> SetupResult:
    """Merge both servers into ``client``'s config file (or only compute them when ``write`` is false)."""
    entries = server_entries(client, data_root, default_project)
    path = config_path or default_config_path(client)
    if not write:
        return SetupResult(client, str(path), None, entries, False)
    existing = _read_existing(path)
    key = CLIENTS[client].servers_key
    servers = existing.get(key, {})
    if not isinstance(servers, dict):
        raise InvalidArgument(
            f"{path}: {key!r} is not an object; the file was left untouched", field="config"
        )
    merged = {**existing, key: {**servers, **entries}}
    backup = None
    if path.exists():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        backup = path.with_name(f"{path.name}.bak-{stamp}")
        shutil.copy2(path, backup)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(merged, indent=2) + "\n")
    os.replace(tmp, path)
    return SetupResult(client, str(path), str(backup) if backup else None, entries, True)
