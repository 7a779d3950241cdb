"""What the three diagnostics share: status words, the fix command, and cheap integrity probes.

The probes read a few rows through the read-only LanceDB table and never write: an FTS query
that forces the index files to load (deleted or truncated files raise), and a sample of stored
vectors checked for finite values of unit norm (every embedder here L2-normalises, so a NaN,
a 1e38 or a norm far from 1 means the data file was damaged).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from local_memory_shared.schema import FTS_COLUMN, VECTOR_COLUMN, chunk_arrow_schema

INDEXER = "local-memory-indexer"
#: LanceDB builds an ANN index from this many rows on; below it a flat scan is exact and fast.
ANN_MIN_ROWS = 20_000
#: How many example paths each freshness bucket and finding lists.
EXAMPLES = 10
#: Rows read per window of the vector sample (bounded memory: 8192 x 384 x 4 B = 12 MiB).
VECTOR_WINDOW = 8192
#: A stored vector counts as damaged when its L2 norm is this far from 1.
NORM_TOLERANCE = 1e-2

OK, DEGRADED, FAIL = "ok", "degraded", "fail"
READY, NOT_READY = "ready", "not_ready"
ERROR, WARNING, INFO = "error", "warning", "info"


def fix_command(project: str, flag: str = "") -> str:
    """The indexer command line that repairs a finding (``flag``: '', '--full' or '--rebuild')."""
    quoted = f"'{project}'" if any(c.isspace() for c in project) else project
    return f"{INDEXER} index {quoted}" + (f" {flag}" if flag else "")


def schema_problems(schema: Any, vector_dim: int | None) -> list[str]:
    """How a LanceDB table's columns differ from the chunk schema (empty when they agree)."""
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


def find_fts_index(indices: list[Any]) -> Any | None:
    """The FTS index over the chunk text among ``table.list_indices()``, if any."""
    return next((i for i in indices if FTS_COLUMN in i.columns and str(i.index_type).upper() == "FTS"), None)


def fts_probe(table: Any) -> str | None:
    """None when an FTS query loads the index files; else the error that says why it cannot."""
    try:
        table.search("localmemoryprobe", query_type="fts").limit(1).to_list()
    except Exception as exc:  # lance raises RuntimeError/OSError/ValueError for missing or bad files
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    return None


@dataclass(frozen=True)
class VectorSample:
    """What a read of stored vectors found: rows read, and how many were not finite or not unit norm."""

    rows_checked: int
    non_finite: int
    off_norm: int
    error: str | None = None
    windows: tuple[int, ...] = field(default_factory=tuple)

    @property
    def damaged(self) -> int:
        """Rows with a NaN/inf value or a norm away from 1."""
        return self.non_finite + self.off_norm

    def to_dict(self) -> dict[str, Any]:
        """Plain data for a report."""
        out: dict[str, Any] = {
            "rows_checked": self.rows_checked,
            "non_finite": self.non_finite,
            "off_norm": self.off_norm,
        }
        if self.error:
            out["error"] = self.error
        return out


def _window_starts(rows: int, max_rows: int) -> list[int]:
    """Offsets of windows covering every row, or ``max_rows`` rows spread evenly over the table."""
    if rows <= max_rows:
        return list(range(0, rows, VECTOR_WINDOW))
    count = max(1, max_rows // VECTOR_WINDOW)
    window = min(VECTOR_WINDOW, max_rows)
    step = (rows - window) / max(1, count - 1) if count > 1 else 0
    return sorted({int(i * step) for i in range(count)})


def sample_vectors(table: Any, rows: int, *, max_rows: int) -> VectorSample:
    """Read up to ``max_rows`` stored vectors (all when the table is smaller) and check each one."""
    window = min(VECTOR_WINDOW, max_rows)
    checked = non_finite = off_norm = 0
    starts = _window_starts(rows, max_rows)
    try:
        for start in starts:
            batch = table.search().select([VECTOR_COLUMN]).offset(start).limit(window).to_arrow()
            if batch.num_rows == 0:
                continue
            flat = batch.column(VECTOR_COLUMN).combine_chunks().flatten()
            vectors = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.float64)
            vectors = vectors.reshape(batch.num_rows, -1)
            finite = np.isfinite(vectors).all(axis=1)
            with np.errstate(over="ignore", invalid="ignore"):
                norms = np.linalg.norm(np.where(np.isfinite(vectors), vectors, 0.0), axis=1)
            checked += batch.num_rows
            non_finite += int((~finite).sum())
            off_norm += int((finite & (np.abs(norms - 1.0) > NORM_TOLERANCE)).sum())
    except Exception as exc:  # a decode failure is itself damage
        return VectorSample(
            checked, non_finite, off_norm, f"{type(exc).__name__}: {exc}"[:300], tuple(starts)
        )
    return VectorSample(checked, non_finite, off_norm, None, tuple(starts))
