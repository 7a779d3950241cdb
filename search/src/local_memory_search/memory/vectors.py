"""The vector leg as an exact in-memory scan, one matrix per published version.

LanceDB's ANN search over 50,000 records cost ~15 ms of CPU a query (IVF partitions, HNSW,
refine) and its flat scan ~30 ms; the same top-k over unit vectors held in one float32 matrix is a
matrix-vector product over the rows that pass the filters (~1 ms for a 10,000-record project) and
is exact. The matrix is built lazily on the first vector search of a version (one scan of
``project``, ``vector`` and the row ids), kept in that version's memo (``reader.MemoryReader``)
and so dropped with it: on ``RUNTIME.clear()`` and when a newer version of the same index is
opened. Its size is ``rows * dimension * 4`` bytes (+ ~40 bytes a row for ids and row ids):
77 MB at 50,000 records of 384 dimensions, 3 MB at 2,000. Above ``EXACT_MAX_ROWS`` records the
leg stays on LanceDB's ANN index.

Filters stay applied **before** ranking: the rows passing the request's ``where`` (without the
expiry clause, the only part that depends on the clock) are asked from LanceDB once and kept per
``where`` (``MASK_CACHE`` entries of one bit-ish byte a record, plus the expiry times of the rows
that have one); expiry is then applied here with the same comparison the SQL makes
(``filters.unexpired``). Rows are grouped by project so a project-scoped search multiplies only
its own contiguous slice.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from .reader import MemoryReader

#: Above this many records the vector leg uses LanceDB's ANN index instead (memory bound:
#: 100,000 x 384 dimensions x 4 bytes = 154 MB).
EXACT_MAX_ROWS = 100_000
#: Filter masks kept per version (distinct ``where`` clauses; 50 KB each at 50,000 records).
MASK_CACHE = 32


@dataclass(frozen=True)
class Mask:
    """Records passing one ``where`` (expiry aside): a bool per matrix row, and the positions and
    expiry times of the passing rows that have an expiry."""

    passing: np.ndarray
    expiring: np.ndarray
    expires: np.ndarray

    def at(self, moment: str | None) -> np.ndarray:
        """The passing rows at ``moment`` (None: expired records included)."""
        if moment is None or not len(self.expiring):
            return self.passing
        out = self.passing.copy()
        out[self.expiring[self.expires <= moment]] = False  # SQL: expires IS NULL OR expires > moment
        return out


class VectorMatrix:
    """Unit vectors of one version, grouped by project, with their record ids and row ids."""

    def __init__(self, table: pa.Table):
        table = table.filter(pc.is_valid(table.column("vector")))
        projects = np.asarray(table.column("project").to_numpy(zero_copy_only=False))
        order = np.argsort(projects, kind="stable")
        dim = table.schema.field("vector").type.list_size
        flat = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        vectors = np.ascontiguousarray(flat.reshape(-1, dim)[order], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors /= np.where(norms > 0, norms, 1.0)
        self.vectors = vectors
        self.ids = table.column("id").combine_chunks().take(pa.array(order))
        self.row_ids = np.asarray(table.column("_rowid").to_numpy(), dtype=np.uint64)[order]
        self._by_row_id = np.argsort(self.row_ids)
        self._sorted_row_ids = self.row_ids[self._by_row_id]

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.vectors.nbytes + self.row_ids.nbytes * 3 + self.ids.nbytes)

    def positions(self, row_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Matrix positions of LanceDB row ids, and which of the ids have one (a vector)."""
        if not len(self):
            return np.zeros(0, dtype=np.int64), np.zeros(len(row_ids), dtype=bool)
        i = np.minimum(np.searchsorted(self._sorted_row_ids, row_ids), len(self) - 1)
        found = self._sorted_row_ids[i] == row_ids
        return np.asarray(self._by_row_id[i[found]], dtype=np.int64), found

    def top(self, query: np.ndarray, allowed: np.ndarray, depth: int) -> list[dict[str, Any]]:
        """The ``depth`` most similar allowed rows as LanceDB returns them: id, cosine
        ``_distance``, ``_rowid``; ties by matrix position."""
        where = np.flatnonzero(allowed)
        if not len(where) or depth <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        n = float(np.linalg.norm(q))
        q = q / n if n > 0 else q
        lo, hi = int(where[0]), int(where[-1]) + 1  # one contiguous slice (a project's rows)
        # vecdot, not ``@``: a multi-threaded BLAS gemv on a shared 2-core machine cost 15 ms
        # where this single-threaded SIMD loop costs 0.8 ms (10,000 x 384).
        sims = np.vecdot(self.vectors[lo:hi], q)[where - lo]
        if len(sims) > depth:
            keep = np.argpartition(-sims, depth - 1)[:depth]
            where, sims = where[keep], sims[keep]
        order = np.lexsort((where, -sims))
        ids = self.ids.take(pa.array(where[order])).to_pylist()
        rids = self.row_ids[where[order]].tolist()
        return [
            {"id": i, "_distance": 1.0 - float(s), "_rowid": r}
            for i, s, r in zip(ids, sims[order].tolist(), rids, strict=True)
        ]


class VectorIndex:
    """The matrix of one version (built once, lazily) and its filter masks (LRU by ``where``)."""

    def __init__(self) -> None:
        self._matrix: VectorMatrix | None = None
        self._build_lock = threading.Lock()
        self._masks: OrderedDict[str, Mask] = OrderedDict()
        self._lock = threading.Lock()

    def matrix(self, reader: MemoryReader) -> VectorMatrix:
        with self._build_lock:
            if self._matrix is None:
                scan = reader.table.search().select(["id", "project", "vector"]).with_row_id(True)
                self._matrix = VectorMatrix(scan.limit(EXACT_MAX_ROWS + 1).to_arrow())
            return self._matrix

    def mask(self, reader: MemoryReader, where: str) -> Mask:
        with self._lock:
            hit = self._masks.get(where)
            if hit is not None:
                self._masks.move_to_end(where)
                return hit
        matrix = self.matrix(reader)
        rows = reader.table.search().where(where).select(["expires"]).with_row_id(True)
        arrow = rows.limit(len(matrix) + 1).to_arrow()
        rids = np.asarray(arrow.column("_rowid").to_numpy(), dtype=np.uint64)
        passing = np.zeros(len(matrix), dtype=bool)
        pos, found = matrix.positions(rids)
        passing[pos] = True
        expires = arrow.column("expires")
        has = np.asarray(pc.is_valid(expires).to_numpy(zero_copy_only=False), dtype=bool) & found
        exp_pos, _ = matrix.positions(rids[has])
        values = np.asarray(expires.filter(pa.array(has)).to_pylist(), dtype=str)
        out = Mask(passing, exp_pos, values)
        with self._lock:
            self._masks[where] = out
            while len(self._masks) > MASK_CACHE:
                self._masks.popitem(last=False)
        return out


def exact_top(
    reader: MemoryReader, query: np.ndarray, where: str, moment: str | None, depth: int
) -> list[dict[str, Any]] | None:
    """The vector leg over the in-memory matrix, or None when this version is too large for it."""
    if reader.opened is None or reader.row_count() > EXACT_MAX_ROWS:
        return None
    index = reader.opened.memo("vector_index", VectorIndex)
    return index.matrix(reader).top(query, index.mask(reader, where).at(moment), depth)
