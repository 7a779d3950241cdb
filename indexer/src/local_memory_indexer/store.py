"""The writer side of storage: LanceDB chunk rows and their indices. Only the indexer imports this."""

from __future__ import annotations

import logging
import math
import shutil
from collections.abc import Iterable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS
from local_memory_shared.errors import StoreError
from local_memory_shared.schema import CHUNKS_TABLE, FTS_COLUMN, VECTOR_COLUMN, chunk_arrow_schema

log = logging.getLogger(__name__)

#: Below this many rows a flat vector scan is exact and fast; above it we build IVF_PQ.
ANN_MIN_ROWS = 20_000
#: Old table versions are kept this long so a searcher pinned to one keeps working.
KEEP_VERSIONS_FOR = timedelta(minutes=10)


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class ChunkStore:
    """LanceDB ``chunks`` table of one project, opened for writing."""

    def __init__(self, lance_dir: Path, dimension: int):
        self.lance_dir = lance_dir
        self.dimension = dimension
        try:
            lance_dir.mkdir(parents=True, exist_ok=True)
            self.db = lancedb.connect(str(lance_dir))
            if CHUNKS_TABLE in self.db.list_tables().tables:
                self.table = self.db.open_table(CHUNKS_TABLE)
            else:
                self.table = self.db.create_table(CHUNKS_TABLE, schema=chunk_arrow_schema(dimension))
        except Exception as exc:  # lancedb raises a zoo of types; map them all at the boundary
            raise StoreError(f"cannot open LanceDB at {lance_dir}: {exc}") from exc

    @property
    def version(self) -> int:
        return int(self.table.version)

    def count(self) -> int:
        return int(self.table.count_rows())

    def replace_files(
        self, file_paths: Sequence[str], rows: list[dict[str, Any]], vectors: np.ndarray
    ) -> None:
        """Delete every row of ``file_paths`` and add ``rows`` (with ``vectors``)."""
        try:
            for batch in _batched(list(file_paths), 500):
                if batch:
                    self.table.delete(f"file_path IN ({', '.join(_sql_str(p) for p in batch)})")
            if rows:
                self.table.add(self._to_arrow(rows, vectors))
        except Exception as exc:
            raise StoreError(f"LanceDB write failed: {exc}") from exc

    def _to_arrow(self, rows: list[dict[str, Any]], vectors: np.ndarray) -> pa.Table:
        schema = chunk_arrow_schema(self.dimension)
        columns: dict[str, Any] = {
            name: [r[name] for r in rows] for name in schema.names if name != VECTOR_COLUMN
        }
        flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
        columns[VECTOR_COLUMN] = pa.FixedSizeListArray.from_arrays(flat, self.dimension)
        return pa.Table.from_pydict(columns, schema=schema)

    def has_fts_index(self) -> bool:
        return any(FTS_COLUMN in idx.columns and idx.index_type == "FTS" for idx in self.table.list_indices())

    def has_vector_index(self) -> bool:
        return any(VECTOR_COLUMN in idx.columns for idx in self.table.list_indices())

    def refresh_indices(self, *, full: bool) -> None:
        """Create missing indices; fold new rows into existing ones; prune old versions."""
        try:
            rows = self.count()
            if rows and (full or not self.has_fts_index()):
                self.table.create_index(
                    FTS_COLUMN,
                    config=FTS(
                        base_tokenizer="simple", stem=True, remove_stop_words=False, max_token_length=64
                    ),
                    replace=True,
                )
            if rows >= ANN_MIN_ROWS and (full or not self.has_vector_index()):
                self.table.create_index(
                    metric="cosine",
                    vector_column_name=VECTOR_COLUMN,
                    index_type="IVF_PQ",
                    num_partitions=max(
                        16, min(int(math.sqrt(rows)), rows // 256)
                    ),  # LanceDB trains ~256 rows/partition
                    num_sub_vectors=_sub_vectors(self.dimension),
                    replace=True,
                )
            self.table.optimize(cleanup_older_than=KEEP_VERSIONS_FOR)
        except Exception as exc:
            raise StoreError(f"LanceDB index maintenance failed: {exc}") from exc


def remove_lance_dir(lance_dir: Path) -> None:
    """Delete a project's LanceDB folder entirely."""
    shutil.rmtree(lance_dir, ignore_errors=True)


def _sub_vectors(dimension: int) -> int:
    for candidate in (96, 64, 48, 32, 24, 16, 8):
        if dimension % candidate == 0 and dimension // candidate >= 4:
            return candidate
    return 1


def _batched(items: list[str], size: int) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
