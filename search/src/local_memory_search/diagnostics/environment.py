"""The environment around an index: package versions, platform, CPU features, paths, the re-ranker.

Plain functions returning plain data; ``health_check(verbose=True)`` reports them. Nothing here
reads the index itself.
"""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from local_memory_shared.config import Settings
from local_memory_shared.contract import CONTRACT_VERSION
from local_memory_shared.schema import SCHEMA_VERSION

#: Seconds the verbose health check waits for Ollama's model list (re-ranker availability).
RERANK_PROBE_TIMEOUT = 2.0
#: CPU features the published LanceDB/Lance wheels are compiled for (x86-64-haswell on x86_64).
LANCE_CPU_FEATURES = {"x86_64": ("avx", "avx2", "fma", "f16c", "bmi2"), "aarch64": ("asimd",)}
#: Packages whose versions the verbose health check reports.
REPORTED_PACKAGES = (
    "local-memory-search", "local-memory-shared", "lancedb", "pylance", "pyarrow", "numpy",
    "onnxruntime", "tokenizers", "ollama", "google-genai", "mcp", "pydantic", "pathspec",
)  # fmt: skip


def probe_reranker(settings: Settings) -> tuple[bool, str]:
    """Ollama answering /api/tags and listing RERANK_MODEL (no generation: that would take seconds)."""
    import ollama

    url, model = settings.ollama_base_url, settings.rerank_model
    try:
        with ollama.Client(host=url, timeout=RERANK_PROBE_TIMEOUT) as client:
            listing = client.list()
    except ollama.ResponseError as exc:
        return False, f"Ollama at {url} answered HTTP {exc.status_code}: rerank=true keeps retrieval order"
    except Exception as exc:  # connection refused, timeout, garbage: all mean "not available"
        return False, f"Ollama at {url} unreachable ({type(exc).__name__}): rerank=true keeps retrieval order"
    names = {m.model for m in listing.models if m.model}
    if model in names or f"{model}:latest" in names:
        return True, f"{model} available at {url}"
    return False, f"Ollama at {url} has not pulled {model}: rerank=true keeps retrieval order"


def rerank_fix(reason: str, settings: Settings) -> str:
    """The command that makes the re-ranker available."""
    if "unreachable" in reason:
        return f"start Ollama at {settings.ollama_base_url} (ollama serve), then: ollama pull {settings.rerank_model}"
    return f"ollama pull {settings.rerank_model}"


def cpu_features() -> dict[str, Any]:
    """CPU architecture and the SIMD features LanceDB's wheels need (from /proc/cpuinfo on Linux)."""
    arch = platform.machine().lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip().lower() in ("flags", "features"):
                    flags.update(value.split())
                    break
    except OSError:
        return {"arch": arch, "source": "unavailable", "required": list(LANCE_CPU_FEATURES.get(arch, ()))}
    required = LANCE_CPU_FEATURES.get(arch, ())
    return {
        "arch": arch,
        "source": "/proc/cpuinfo",
        "required": list(required),
        "present": [f for f in required if f in flags],
        "missing": [f for f in required if f not in flags],
        "avx512f": "avx512f" in flags,
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
    }


def environment_report(
    settings: Settings, project_dir: Path, state_db: Path, lance_dir: Path
) -> dict[str, Any]:
    """Versions, platform, CPU features, index paths and sizes, and the settings that matter."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in REPORTED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "versions": versions,
        "schema_version": SCHEMA_VERSION,
        "contract_version": CONTRACT_VERSION,
        "platform": f"{platform.system()} {platform.release()} ({sys.platform})",
        "cpu": cpu_features(),
        "paths": {
            "data_root": str(settings.data_root),
            "project_dir": str(project_dir),
            "state_db": str(state_db),
            "lance_dir": str(lance_dir),
            "state_db_bytes": _size(state_db),
            "lance_bytes": _tree_size(lance_dir),
        },
        "settings": {
            "ollama_base_url": settings.ollama_base_url,
            "rerank_model": settings.rerank_model,
            "default_project": str(settings.default_project),
            "lance_uri": settings.lance_uri,
        },
    }


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _tree_size(path: Path) -> int | None:
    if not path.is_dir():
        return None
    total = 0
    for base, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(base, name)).st_size
            except OSError:
                continue
    return total
