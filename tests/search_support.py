"""Helpers for the searcher's tests: a small multi-language project, indexing it, snapshots."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FILES: dict[str, str] = {
    "src/db.py": '''"""Database helpers."""
import time


class ConnectionPool:
    """Keeps a pool of open database connections."""

    def __init__(self, size):
        self.size = size

    def connect(self, url, retries=3):
        """Open a connection, retrying with exponential backoff."""
        for attempt in range(retries):
            try:
                return open_socket(url)
            except OSError:
                time.sleep(2 ** attempt)
        raise RuntimeError("cannot connect")


def open_socket(url):
    """Open a raw socket to the database server."""
    return url


def initializeDatabase(path):
    """Create the tables and return a connected pool."""
    return ConnectionPool(4).connect(path)
''',
    "src/cache.py": '''"""An in-memory least-recently-used cache."""
from collections import OrderedDict


class LruCache:
    """Evicts the least recently used entry when full."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.items = OrderedDict()

    def get(self, key):
        """Return a cached value and mark it recently used."""
        value = self.items.pop(key)
        self.items[key] = value
        return value

    def put(self, key, value):
        """Store a value, evicting the oldest entry when over capacity."""
        self.items[key] = value
        if len(self.items) > self.capacity:
            self.items.popitem(last=False)
''',
    "web/config.ts": """export function parseConfig(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\\n")) {
    const [key, value] = line.split("=");
    out[key.trim()] = value.trim();
  }
  return out;
}

export class HttpClient {
  constructor(private baseUrl: string) {}

  send(path: string): Promise<Response> {
    return fetch(this.baseUrl + path);
  }
}
""",
    "tools/checksum.go": """package tools

import "crypto/sha256"

// ComputeChecksum returns the SHA-256 digest of a byte slice as hex.
func ComputeChecksum(data []byte) string {
	sum := sha256.Sum256(data)
	return fmt.Sprintf("%x", sum)
}
""",
    "legacy/old_parser.py": '''"""A deprecated tokenizer kept for old files."""


def tokenize_legacy(source):
    """Split source text into whitespace separated tokens."""
    return source.split()
''',
    "README.md": """# Demo project

## Usage

Run the server with `make run` and point it at a database URL.

## Caching

Responses are cached in an LRU cache with a fixed capacity.
""",
}

#: Files whose mtime (hence chunk ``updated_at``) is set far in the past.
OLD_FILES = {"legacy/old_parser.py": 1_577_836_800}  # 2020-01-01T00:00:00Z


def write_project(root: Path, files: dict[str, str] | None = None, *, git: bool = True) -> Path:
    """Write the fixture project (optionally as a git repo with one commit)."""
    for rel, text in (files or FILES).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for rel, ts in OLD_FILES.items():
        if (root / rel).exists():
            os.utime(root / rel, (ts, ts))
    if git:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@e",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@e",
        }
        for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "fixture"]):
            subprocess.run(["git", "-C", str(root), *cmd], check=True, env=env, capture_output=True)
    return root.resolve()


@contextlib.contextmanager
def env(**values: str | None) -> Iterator[None]:
    """Set (or unset, with None) environment variables for a block."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in values.items():
            if value is None:
                mp.delenv(key, raising=False)
            else:
                mp.setenv(key, value)
        yield


def index(project: Path, data_root: Path, **kwargs: Any) -> Any:
    """Index ``project`` into ``data_root`` with the real pipeline."""
    from local_memory_indexer.pipeline import index_project
    from local_memory_shared.config import load_settings

    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data_root)):
        return index_project(project, settings=load_settings(), **kwargs)


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """Size, mtime and sha256 of every file under ``root``."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(root))] = (
                st.st_size,
                st.st_mtime_ns,
                hashlib.sha256(p.read_bytes()).hexdigest(),
            )
    return out


def state_rw(data_root: Path, project: Path) -> sqlite3.Connection:
    """The writer's connection to a project's state DB (tests use it to break things on purpose)."""
    from local_memory_indexer.state_db import open_state_rw
    from local_memory_shared.paths import project_paths

    return open_state_rw(project_paths(data_root, project).state_db)


def project_dir(data_root: Path, project: Path) -> Path:
    """The project's folder under the data root."""
    from local_memory_shared.paths import project_paths

    return project_paths(data_root, project).dir
