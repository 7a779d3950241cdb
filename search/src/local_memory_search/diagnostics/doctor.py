"""``doctor_index``: consistency of SQLite vs LanceDB vs the graph tables, and integrity of the index.

Read-only. Every finding carries a stable code, a severity and the exact ``local-memory-indexer``
command that repairs it. Besides comparing row sets, it checks that the FTS index files load
(an FTS probe query) and that stored vectors are finite and of unit norm (every vector of tables
up to :data:`DOCTOR_VECTOR_ROWS` rows, an even spread beyond).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from local_memory_shared.config import Settings, load_settings
from local_memory_shared.errors import NotIndexed, StoreError
from local_memory_shared.schema import CHUNKS_TABLE, FTS_COLUMN, SCHEMA_VERSION, VECTOR_COLUMN

from ..store import IndexReader, open_index, resolve_project
from .common import (
    ANN_MIN_ROWS,
    ERROR,
    EXAMPLES,
    INDEXER,
    INFO,
    WARNING,
    find_fts_index,
    fix_command,
    fts_probe,
    sample_vectors,
    schema_problems,
)
from .memory import malformed_memory_files

#: Stored vectors doctor_index reads at most (all of them below this; ~150 MB of 384d floats).
DOCTOR_VECTOR_ROWS = 100_000


@dataclass(frozen=True)
class Finding:
    """One inconsistency: a stable code, a severity, what is wrong, and the command that fixes it."""

    code: str
    severity: str  # error | warning | info
    message: str
    fix: str | None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the report."""
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
            _run(_Doctor(reader, findings, stats, checked))
    except NotIndexed as exc:
        findings.append(Finding("not_indexed", ERROR, exc.message, fix_command(project)))
    except StoreError as exc:
        findings.append(Finding("state_unreadable", ERROR, exc.message, fix_command(project, "--rebuild")))
    except sqlite3.Error as exc:
        message = f"state DB query failed: {exc}"
        findings.append(Finding("state_unreadable", ERROR, message, fix_command(project, "--rebuild")))
    for bad in malformed_memory_files(settings):
        where = f"{bad.path}:{bad.line}" if bad.line else bad.path
        message = f"memory record file {where} is malformed ({bad.message}); its content is kept on disk"
        findings.append(Finding("memory_malformed_record", WARNING, message, bad.fix(), {"path": bad.path}))
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
    """One doctor run: the opened index and what the checks (module functions below) found."""

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
        """Record a finding whose fix is ``local-memory-indexer index <project> <flag>``."""
        fix = None if flag is None else fix_command(self.project, flag)
        self.findings.append(Finding(code, severity, message, fix, details))


def _run(d: _Doctor) -> None:
    _publication(d)
    _provenance(d)
    mirror = _mirror(d)
    lance = _lance(d)
    if lance is not None:
        _compare(d, mirror, lance)
    _files_vs_mirror(d, mirror)
    _graph(d)


# -- publication and provenance ---------------------------------------------------------
def _publication(d: _Doctor) -> None:
    d.checked.append("publication")
    row = d.r.project_row
    d.stats["published_version"] = row.published_version
    d.stats["status"] = row.status
    if row.published_version is None:
        d.add("not_published", ERROR, "no LanceDB version is published; searches see nothing")
    if row.status == "failed":
        d.add(
            "last_run_failed",
            WARNING,
            "the last index run failed; the previous published version is served",
        )


def _provenance(d: _Doctor) -> None:
    d.checked.append("provenance")
    meta = d.r.meta
    if meta is None:
        d.add(
            "provenance_missing",
            WARNING,
            "no index_meta row: the query encoder is inferred from the vector dimension; re-index with "
            "the same EMBED_BACKEND/EMBED_MODEL to record it",
        )
        return
    d.stats["provenance"] = {
        "backend": meta.backend,
        "model": meta.model,
        "dimension": meta.dimension,
        "schema_version": meta.schema_version,
    }
    if meta.schema_version != SCHEMA_VERSION:
        d.add(
            "schema_version_mismatch",
            ERROR,
            f"index_meta.schema_version is {meta.schema_version}, this searcher reads {SCHEMA_VERSION}",
            "--rebuild",
            index=meta.schema_version,
            expected=SCHEMA_VERSION,
        )
    if d.r.vector_dim is not None and meta.dimension != d.r.vector_dim:
        d.add(
            "vector_dimension_mismatch",
            ERROR,
            f"index_meta records {meta.dimension}d ({meta.backend}/{meta.model}) but LanceDB stores "
            f"{d.r.vector_dim}d vectors: query vectors cannot match",
            "--rebuild",
            provenance=meta.dimension,
            stored=d.r.vector_dim,
        )


# -- rows ------------------------------------------------------------------------------------
def _mirror(d: _Doctor) -> dict[str, tuple[str, int]]:
    """chunk_id → (file_path, schema_version) from the SQLite mirror."""
    d.checked.append("sqlite_mirror")
    rows = {
        r[0]: (r[1], int(r[2]))
        for r in d.conn.execute("SELECT chunk_id, file_path, schema_version FROM chunks")
    }
    d.stats["mirror_rows"] = len(rows)
    stale = sum(1 for _, v in rows.values() if v != SCHEMA_VERSION)
    if stale:
        d.add(
            "mirror_schema_version_mismatch",
            ERROR,
            f"{stale} SQLite mirror rows carry another schema_version than {SCHEMA_VERSION}",
            "--rebuild",
            rows=stale,
        )
    return rows


def _lance_absent(d: _Doctor) -> None:
    if d.r.lance_state == "missing":
        message = f"LanceDB folder {d.r.lance_dir} is missing; searches use the SQLite mirror only"
        d.add("lance_missing", ERROR, message, "--rebuild")
    elif d.r.lance_state == "unavailable":
        message = f"LanceDB table {CHUNKS_TABLE!r} cannot be read at published version {d.r.version}"
        d.add("lance_unavailable", ERROR, message, "--rebuild")


def _lance(d: _Doctor) -> dict[str, tuple[str, int]] | None:
    d.checked.append("lancedb")
    table = d.r.table
    if table is None:
        _lance_absent(d)
        return None
    try:
        scan = table.search().select(["chunk_id", "file_path", "schema_version"]).limit(None).to_arrow()
        indices = list(table.list_indices())
        schema = table.schema
    except Exception as exc:  # any LanceDB failure here is itself the finding
        d.add("lance_unreadable", ERROR, f"LanceDB scan failed: {exc}", "--rebuild")
        return None
    ids = scan.column("chunk_id").to_pylist()
    files = scan.column("file_path").to_pylist()
    versions = scan.column("schema_version").to_pylist()
    rows = dict(zip(ids, zip(files, versions, strict=True), strict=True))
    d.stats["lance_rows"] = len(ids)
    d.stats["lance_version"] = d.r.version
    if len(rows) != len(ids):
        duplicates = len(ids) - len(rows)
        message = f"{duplicates} duplicate chunk_id rows in LanceDB"
        d.add("lance_duplicate_ids", ERROR, message, "--rebuild", duplicates=duplicates)
    stale = sum(1 for v in versions if v != SCHEMA_VERSION)
    if stale:
        message = (
            f"{stale} LanceDB rows carry another schema_version than {SCHEMA_VERSION} (search ignores them)"
        )
        d.add("lance_schema_version_mismatch", ERROR, message, "--rebuild", rows=stale)
    problems = schema_problems(schema, d.r.vector_dim)
    if problems:
        d.add("lance_schema_mismatch", ERROR, "LanceDB columns differ: " + "; ".join(problems), "--rebuild")
    _fts(d, indices, len(ids))
    _vector_index(d, indices, len(ids))
    _vectors(d, len(ids))
    return rows


def _vectors(d: _Doctor, rows: int) -> None:
    d.checked.append("vectors")
    if not rows:
        return
    sample = sample_vectors(d.r.table, rows, max_rows=DOCTOR_VECTOR_ROWS)
    d.stats["vectors"] = sample.to_dict()
    if sample.error is not None:
        d.add("vectors_unreadable", ERROR, f"stored vectors cannot be read: {sample.error}", "--rebuild")
    elif sample.damaged:
        message = (
            f"{sample.damaged} of {sample.rows_checked} stored vectors are damaged ({sample.non_finite} not "
            f"finite, {sample.off_norm} not of unit norm): semantic results are unreliable"
        )
        d.add(
            "vectors_corrupt",
            ERROR,
            message,
            "--rebuild",
            non_finite=sample.non_finite,
            off_norm=sample.off_norm,
            rows_checked=sample.rows_checked,
        )


def _fts(d: _Doctor, indices: list[Any], rows: int) -> None:
    d.checked.append("fts")
    fts = find_fts_index(indices)
    if fts is None:
        if rows:
            d.add(
                "fts_missing",
                ERROR,
                f"no FTS index on {FTS_COLUMN!r}: keyword search falls back to SQLite LIKE",
                "",
            )
        return
    indexed = int(getattr(fts, "num_indexed_rows", 0) or 0)
    unindexed = int(getattr(fts, "num_unindexed_rows", 0) or 0)
    d.stats["fts"] = {"name": fts.name, "indexed_rows": indexed, "unindexed_rows": unindexed}
    broken = fts_probe(d.r.table) if rows else None
    if broken is not None:
        message = f"FTS index {fts.name!r} is listed but its files cannot be read ({broken}): keyword search degrades"
        d.add("fts_unreadable", ERROR, message, "--full", error=broken)
        return
    if unindexed:
        d.add(
            "fts_unindexed_rows",
            WARNING,
            f"{unindexed} of {indexed + unindexed} rows are not in the FTS index yet (searched by a slower "
            "flat scan)",
            "",
            unindexed=unindexed,
        )


def _vector_index(d: _Doctor, indices: list[Any], rows: int) -> None:
    d.checked.append("vector_index")
    vector = next((i for i in indices if VECTOR_COLUMN in i.columns), None)
    if vector is None and rows >= ANN_MIN_ROWS:
        d.add(
            "vector_index_missing",
            INFO,
            f"{rows} rows without an ANN index: vector search scans every row",
            "",
        )
    elif vector is not None:
        unindexed = int(getattr(vector, "num_unindexed_rows", 0) or 0)
        if unindexed > max(1000, rows // 10):
            d.add("vector_index_behind", INFO, f"{unindexed} rows not yet in the ANN index", "--full")


def _compare(d: _Doctor, mirror: dict[str, tuple[str, int]], lance: dict[str, tuple[str, int]]) -> None:
    d.checked.append("sqlite_vs_lancedb")
    known_files = {r[0] for r in d.conn.execute("SELECT path FROM files")}
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
        d.add(
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
        d.add(
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
        d.add(
            "orphan_mirror_rows",
            ERROR,
            f"{len(only_mirror)} SQLite mirror rows have no LanceDB row (invisible to vector and BM25 search)",
            "--rebuild" if unknown else "--full",
            rows=len(only_mirror),
            files=files[:EXAMPLES],
            chunk_ids=only_mirror[:EXAMPLES],
        )


def _files_vs_mirror(d: _Doctor, mirror: dict[str, tuple[str, int]]) -> None:
    d.checked.append("files_vs_chunks")
    per_file: dict[str, int] = {}
    for path, _ in mirror.values():
        per_file[path] = per_file.get(path, 0) + 1
    recorded = {r[0]: int(r[1]) for r in d.conn.execute("SELECT path, chunk_count FROM files")}
    d.stats["files"] = len(recorded)
    wrong = sorted(p for p, n in recorded.items() if per_file.get(p, 0) != n)
    if wrong:
        d.add(
            "file_chunk_count_mismatch",
            WARNING,
            f"{len(wrong)} files record a chunk_count different from their chunk rows",
            "--full",
            files=len(wrong),
            examples={p: {"recorded": recorded[p], "rows": per_file.get(p, 0)} for p in wrong[:EXAMPLES]},
        )
    unknown = sorted(p for p in per_file if p not in recorded)
    if unknown:
        d.add(
            "chunks_without_file",
            ERROR,
            f"chunk rows of {len(unknown)} files the files table does not know (never cleaned up)",
            "--rebuild",
            files=unknown[:EXAMPLES],
        )


def _count(d: _Doctor, sql: str) -> int:
    return int(d.conn.execute(sql).fetchone()[0])


def _graph(d: _Doctor) -> None:
    d.checked.append("graph")
    _graph_stale(d)
    _graph_missing(d)


def _graph_stale(d: _Doctor) -> None:
    stale: dict[str, int] = {}
    for table in ("symbols", "call_edges", "import_edges"):
        n = int(
            d.conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE file_path NOT IN (SELECT path FROM files)"  # noqa: S608
            ).fetchone()[0]
        )
        if n:
            stale[table] = n
    if stale:
        d.add(
            "graph_stale",
            WARNING,
            "graph rows of files no longer indexed: " + ", ".join(f"{n} {t}" for t, n in stale.items()),
            "--rebuild",
            **stale,
        )
    dangling = int(
        d.conn.execute(
            "SELECT COUNT(*) FROM symbols WHERE chunk_id IS NOT NULL AND chunk_id NOT IN (SELECT chunk_id FROM chunks)"
        ).fetchone()[0]
    )
    if dangling:
        d.add(
            "graph_dangling_chunks",
            WARNING,
            f"{dangling} symbols point at chunk ids that no longer exist",
            "--full",
            symbols=dangling,
        )
    unresolved = int(
        d.conn.execute(
            "SELECT COUNT(*) FROM import_edges WHERE resolved_path IS NOT NULL AND resolved_path NOT IN "
            "(SELECT path FROM files)"
        ).fetchone()[0]
    )
    if unresolved:
        d.add(
            "import_targets_stale",
            INFO,
            f"{unresolved} import edges resolve to files no longer indexed",
            "--full",
            edges=unresolved,
        )


def _graph_missing(d: _Doctor) -> None:
    known_files = _count(d, "SELECT COUNT(*) FROM files")
    # Missing graph: files whose chunks hold definitions, in a language the extractor handles
    # (some file of that language has symbols), yet with no symbol of their own.
    missing = [
        r[0]
        for r in d.conn.execute(
            "SELECT DISTINCT c.file_path FROM chunks c "
            "WHERE c.chunk_kind IN ('function', 'method', 'class') "
            "AND c.language IN (SELECT DISTINCT language FROM symbols WHERE language IS NOT NULL) "
            "AND NOT EXISTS (SELECT 1 FROM symbols s WHERE s.file_path = c.file_path) ORDER BY 1"
        )
    ]
    symbols = _count(d, "SELECT COUNT(*) FROM symbols")
    definitions = _count(d, "SELECT COUNT(*) FROM chunks WHERE chunk_kind IN ('function', 'method', 'class')")
    d.stats["graph"] = {
        "symbols": symbols,
        "call_edges": _count(d, "SELECT COUNT(*) FROM call_edges"),
        "import_edges": _count(d, "SELECT COUNT(*) FROM import_edges"),
    }
    if missing:
        d.add(
            "graph_missing",
            WARNING,
            f"{len(missing)} files with function/class chunks have no symbols (callers/callees miss them)",
            "--full",
            files=len(missing),
            examples=missing[:EXAMPLES],
        )
    elif symbols == 0 and definitions and known_files:
        d.add(
            "graph_empty",
            WARNING,
            f"no symbols at all although {definitions} chunks are functions/classes: graph tools answer empty",
            "--full",
        )
