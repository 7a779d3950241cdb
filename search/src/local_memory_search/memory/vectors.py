"""The vector leg as an exact in-memory scan, one matrix per published version.

LanceDB's ANN search over 50,000 records cost ~15 ms of CPU a query (IVF partitions, HNSW,
refine) and its flat scan ~30 ms; the same top-k over unit vectors held in one float32 matrix is a
matrix-vector product over the rows that pass the filters (~1 ms for a 10,000-record project) and
is exact. The matrix is built lazily on the first vector search of a version (one scan of ids,
projects, vectors, ``created``, ``expires``, ``paths`` and row ids), kept in that version's memo
(``reader.MemoryReader``) and so dropped with it: on ``RUNTIME.clear()`` and when a newer version
of the same index is opened. Its size is about ``rows * (dimension * 4 + 100)`` bytes: 82 MB at
50,000 records of 384 dimensions, 3 MB at 2,000 (``VectorMatrix.nbytes``). Above
``EXACT_MAX_ROWS`` records the leg stays on LanceDB's ANN index.

Filters stay applied **before** ranking (``filters.VectorFilter``): the rows matching the part of
the ``where`` that is the same from call to call (project, kinds, status, tags, tree, temporal,
grep, meta) are asked from LanceDB once and kept as a bool per record (``MASK_CACHE`` masks per
version); ``asOf``, expiry and ``path`` (which change from call to call) are then applied here
with the comparisons the SQL makes. Rows are grouped by project so a project-scoped search
multiplies only its own contiguous slice.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..runtime import BoundedCache

if TYPE_CHECKING:
    from .filters import VectorFilter
    from .reader import MemoryReader

#: Above this many records the vector leg uses LanceDB's ANN index instead (memory bound:
#: 100,000 x 384 dimensions x 4 bytes = 154 MB).
EXACT_MAX_ROWS = 100_000
#: Filter masks kept per version (distinct ``VectorFilter.where``; 50 KB each at 50,000 records).
MASK_CACHE = 32
#: The columns the matrix keeps beside the vectors (the per-call filters of ``VectorFilter``).
_COLUMNS = ["id", "project", "vector", "created", "expires", "paths"]


def _strings(column: pa.ChunkedArray) -> np.ndarray:
    """A string column as fixed-width bytes (null: b""), compared as SQL compares the strings."""
    return np.asarray(column.fill_null("").cast(pa.binary()).to_numpy(zero_copy_only=False), dtype=bytes)


class VectorMatrix:
    """Unit vectors of one version, grouped by project, with what the per-call filters read:
    record ids, row ids, ``created``, ``expires`` and which rows carry each path pattern."""

    def __init__(self, table: pa.Table):
        if table.column("vector").null_count:
            table = table.filter(pc.is_valid(table.column("vector")))
        projects = np.asarray(table.column("project").to_numpy(zero_copy_only=False), dtype=object)
        order = np.argsort(projects, kind="stable")
        dim = table.schema.field("vector").type.list_size
        flat = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        # the one copy of the vectors, in project order; no other full-size temporaries
        vectors = np.asarray(flat.reshape(-1, dim), dtype=np.float32)[order]
        del flat
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        self.vectors = vectors
        self.ids = _strings(table.column("id"))[order]
        self.row_ids = np.asarray(table.column("_rowid").to_numpy(), dtype=np.uint64)[order]
        self._by_row_id = np.argsort(self.row_ids)
        self._sorted_row_ids = self.row_ids[self._by_row_id]
        self._sorted_ids: np.ndarray | None = None  # built on first use (successor look-ups)
        self._id_order: np.ndarray | None = None
        self.created = _strings(table.column("created"))[order]
        valid = pc.is_valid(table.column("expires")).to_numpy(zero_copy_only=False)
        self.has_expiry = np.asarray(valid, dtype=bool)[order]
        self.expires = _strings(table.column("expires"))[order]
        paths = table.column("paths").combine_chunks()
        names = np.asarray(pc.list_flatten(paths).to_numpy(zero_copy_only=False), dtype=object)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))  # original row -> matrix position
        owners = rank[np.asarray(pc.list_parent_indices(paths).to_numpy(), dtype=np.int64)]
        self.path_rows: dict[str, np.ndarray] = {}
        if len(names):
            by = np.argsort(names, kind="stable")
            uniq, starts = np.unique(names[by], return_index=True)
            for name, rows in zip(uniq.tolist(), np.split(owners[by], starts[1:]), strict=True):
                if name:
                    self.path_rows[str(name)] = np.sort(rows)

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes held (vectors, ids, row ids, times, path lists)."""
        arrays: list[np.ndarray] = [self.vectors, self.ids, self.row_ids, self._by_row_id, self._sorted_row_ids,
                                    self.created, self.has_expiry, self.expires, *self.path_rows.values()]  # fmt: skip
        arrays += [a for a in (self._sorted_ids, self._id_order) if a is not None]
        return int(sum(a.nbytes for a in arrays))

    def positions(self, row_ids: np.ndarray) -> np.ndarray:
        """Matrix positions of LanceDB row ids (ids without a vector are dropped)."""
        if not len(self):
            return np.zeros(0, dtype=np.int64)
        i = np.minimum(np.searchsorted(self._sorted_row_ids, row_ids), len(self) - 1)
        return np.asarray(self._by_row_id[i[self._sorted_row_ids[i] == row_ids]], dtype=np.int64)

    def positions_of_ids(self, ids: list[str]) -> list[int | None]:
        """The matrix position of each record id (None: not in the matrix)."""
        if self._sorted_ids is None or self._id_order is None:
            self._id_order = np.argsort(self.ids)
            self._sorted_ids = self.ids[self._id_order]
        order, sorted_ids = self._id_order, self._sorted_ids
        keys = np.asarray([i.encode() for i in ids], dtype=bytes)
        if not len(self) or not len(keys):
            return [None] * len(ids)
        i = np.minimum(np.searchsorted(sorted_ids, keys), len(self) - 1)
        found = (sorted_ids[i] == keys).tolist()
        return [int(p) if ok else None for p, ok in zip(order[i].tolist(), found, strict=True)]

    def vectors_of(self, row_ids: list[int]) -> list[np.ndarray | None]:
        """The unit vector of each row id (None: not in the matrix)."""
        rids = np.asarray(row_ids, dtype=np.uint64)
        if not len(self) or not len(rids):
            return [None] * len(rids)
        i = np.minimum(np.searchsorted(self._sorted_row_ids, rids), len(self) - 1)
        found = (self._sorted_row_ids[i] == rids).tolist()
        pos = self._by_row_id[i].tolist()
        return [self.vectors[p] if ok else None for p, ok in zip(pos, found, strict=True)]

    def allowed(self, passing: np.ndarray, f: VectorFilter) -> np.ndarray:
        """``passing`` (the rows matching ``f.where``) narrowed by the per-call filters of ``f``."""
        out = passing
        if f.created_max is not None:  # SQL: created <= as_of
            out = out & (self.created <= f.created_max.encode())
        if f.unexpired_at is not None:  # SQL: expires IS NULL OR expires > moment
            out = out & ~(self.has_expiry & (self.expires <= f.unexpired_at.encode()))
        if f.path_patterns is not None:  # SQL: array_has_any(paths, patterns)
            on_path = np.zeros(len(self), dtype=bool)
            for p in f.path_patterns:
                if p in self.path_rows:
                    on_path[self.path_rows[p]] = True
            out = out & on_path
        return out

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
        ids = [i.decode() for i in self.ids[where[order]].tolist()]
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
        self._masks: BoundedCache[str, np.ndarray] = BoundedCache(MASK_CACHE)

    @property
    def built(self) -> VectorMatrix | None:
        return self._matrix

    def matrix(self, reader: MemoryReader) -> VectorMatrix:
        with self._build_lock:
            if self._matrix is None:
                scan = reader.table.search().select(_COLUMNS).with_row_id(True)
                self._matrix = VectorMatrix(scan.limit(EXACT_MAX_ROWS + 1).to_arrow())
                pa.default_memory_pool().release_unused()  # the scan's buffers, not kept
            return self._matrix

    def cached_passing(self, where: str) -> np.ndarray | None:
        return self._masks.get(where)

    def passing(self, reader: MemoryReader, where: str) -> np.ndarray:
        """A bool per matrix row: does it match ``where`` (one LanceDB scan, then cached)."""

        def scan() -> np.ndarray:
            matrix = self.matrix(reader)
            rows = reader.table.search().where(where).select(["project"]).with_row_id(True)
            rids = np.asarray(
                rows.limit(len(matrix) + 1).to_arrow().column("_rowid").to_numpy(), dtype=np.uint64
            )
            out = np.zeros(len(matrix), dtype=bool)
            out[matrix.positions(rids)] = True
            return out

        return self._masks.get_or_open(where, scan)


def built_matrix(reader: MemoryReader) -> VectorMatrix | None:
    """This version's matrix if a vector search already built it (never builds one)."""
    index = None if reader.opened is None else reader.opened.peek("vector_index")
    return index.built if isinstance(index, VectorIndex) else None


def exact_scope(reader: MemoryReader, f: VectorFilter) -> tuple[VectorMatrix, np.ndarray] | None:
    """This version's matrix and its rows passing ``f``, when both are at hand already (a vector
    search of these filters ran): which records pass the filters, without a query."""
    index = None if reader.opened is None else reader.opened.peek("vector_index")
    if not isinstance(index, VectorIndex) or index.built is None:
        return None
    passing = index.cached_passing(f.where)
    return None if passing is None else (index.built, index.built.allowed(passing, f))


def exact_top(
    reader: MemoryReader, query: np.ndarray, f: VectorFilter, depth: int
) -> list[dict[str, Any]] | None:
    """The vector leg over the in-memory matrix, or None when this version is too large for it."""
    if reader.opened is None or reader.row_count() > EXACT_MAX_ROWS:
        return None
    index = reader.opened.memo("vector_index", VectorIndex)
    matrix = index.matrix(reader)
    return matrix.top(query, matrix.allowed(index.passing(reader, f.where), f), depth)
