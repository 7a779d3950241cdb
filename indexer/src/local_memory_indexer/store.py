"""The writer side of storage: LanceDB chunk rows and their indices. Only the indexer imports this.

Versions are never pruned here on a timer alone: ``refresh_indices`` folds rows and writes new
versions, the pipeline publishes one, and only then ``prune`` removes versions older than the
oldest one a reader may still hold (see ``state_writer.prune_floor``).
"""

from __future__ import annotations

import logging
import math
import os
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local_memory_shared.errors import StoreError
from local_memory_shared.lance_location import LanceLocation
from local_memory_shared.schema import (
    CHUNKS_TABLE,
    FTS_COLUMN,
    VECTOR_COLUMN,
    ChunkRecord,
    chunk_arrow_schema,
)

from .remote import check_conditional_writes

if TYPE_CHECKING:
    # pyarrow and LanceDB are imported where a store is used, not with the module: the pipeline
    # imports this module, and a run that never opens a store (``unchanged``) must not load them
    # (numpy neither).
    import numpy as np
    import pyarrow as pa

log = logging.getLogger(__name__)

#: Below this many rows a flat vector scan is exact and fast; above it we build an IVF index.
ANN_MIN_ROWS = 20_000
#: The vector index's kind, as ``list_indices`` names it: IVF with RaBitQ codes of
#: ``VECTOR_INDEX_BITS`` bits a dimension. Measured against the IVF_PQ index built before (96
#: sub-vectors) and IVF_SQ (8 bits) on the 104k-chunk project (``python -m bench.ann_sweep``,
#: the leg's own query, recall of the exact top 10; ``python -m bench.search_memory``, search
#: RSS after 1,000 mixed calls):
#:
#: | index | training | on disk | leg setting | recall@10 | leg p50 | search RSS |
#: |---|---|---|---|---|---|---|
#: | IVF_PQ | 129 s | ~10 MB | 30 probes, refine ×2 | 0.86-0.87 | 8.9-10.5 ms | 273 MB |
#: | IVF_SQ | 33 s | 41 MB | 60 probes | 0.94 | 5.6 ms | 329 MB |
#: | **IVF_RQ 4 bits** | 7 s | 23 MB | 80 probes | 0.90 | 5.6 ms | 288 MB |
#:
#: RaBitQ's 4-bit codes rank closely enough that the leg needs no refine (no full-vector reads,
#: which cost PQ ~2.5 ms a query); SQ ranks better still but its cached partitions push the
#: search server past 300 MB. An index of another kind is retrained on the next run that
#: maintains indices.
VECTOR_INDEX_TYPE = "IvfRq"
VECTOR_INDEX_BITS = 4
#: A fold's compaction (``ChunkStore._fold``) leaves out every fragment of at least this many rows
#: with fewer than ``MATERIALIZE_DELETIONS_SHARE`` of them deleted, and merges only the small
#: fragments re-indexes add. Lance's default takes every fragment under 1M rows: on the 104k-chunk
#: project each re-index of 100 files rewrote the whole table (4.4 s, ~430 MB written) and so
#: remapped both indices, whose every cached page a search then read again (bench/README.md,
#: session 15). A retrain (``_create_vector_index``) still compacts everything first.
SETTLED_FRAGMENT_ROWS = 10_000
#: A fold compacts once this many fragments are not settled (each re-index adds one or two; a
#: query reads every fragment, so they are merged now and then, not left to pile up).
COMPACT_AT_FRAGMENTS = 8
#: Share of a settled fragment's rows deleted from which a fold rewrites it (Lance's own default).
MATERIALIZE_DELETIONS_SHARE = 0.1
#: Delta segments the vector index may gather (one per run that adds vectors) before it is
#: retrained; each segment is searched with the same probes, so a query pays for every one.
MAX_VECTOR_SEGMENTS = 8
#: Segments from which a fold merges the vector index's delta segments back into one. A merge
#: rewrites the whole index, whose every cached page a search then reads again (busy p95 ×1.54
#: of idle with a merge after each re-index of 100 files at 104k chunks, ×1.39 with none in three
#: re-indexes); each delta a query probes costs it ~2 ms (hybrid p50 12.1 -> 13.9 ms with one).
#: So one delta is kept, and the second is merged with it.
MERGE_VECTOR_SEGMENTS_FROM = 3
#: A superseded version is kept this long after a newer one was published, so a searcher that
#: opened it just before (one tool call) keeps working.
KEEP_VERSIONS_FOR = timedelta(minutes=10)
#: Lance's own default would prune on optimize; we prune only after publishing (``prune``).
_NO_CLEANUP = timedelta(days=3650)
#: Train the vector index in a child process of its own (``ChunkStore._create_vector_index``).
VECTOR_INDEX_IN_CHILD = True
#: From this many rows, a fold of a table without a vector index (compaction and the FTS fold, by
#: LanceDB's ``optimize``) runs in a child process too (``ChunkStore._fold``): once the vector fills
#: of a big first index have deleted a tenth of the big fragment's rows, compaction rewrites the
#: whole table and remaps the FTS index (+200-260 MB for ~40 s at 40k rows, bench/fill_memory.py).
FOLD_IN_CHILD_MIN_ROWS = 20_000
#: Bounds of the writer's LanceDB session. Lance's defaults (a 6 GiB index cache and a 1 GiB
#: metadata cache) let one long run keep the manifests and index pages of every version it
#: writes (hundreds on a 100k-chunk first index); a writer re-reads little, so small caches cost
#: it almost nothing.
WRITER_INDEX_CACHE_BYTES = 64 * 2**20
WRITER_METADATA_CACHE_BYTES = 16 * 2**20


def writer_session() -> Any:
    """A size-bounded LanceDB session for one ``ChunkStore`` (one index run)."""
    import lancedb

    return lancedb.Session(
        index_cache_size_bytes=WRITER_INDEX_CACHE_BYTES, metadata_cache_size_bytes=WRITER_METADATA_CACHE_BYTES
    )


@dataclass(frozen=True)
class ChildRun:
    """A child process that ran jobs on the table (``ChunkStore._in_child``)."""

    pid: int
    peak_kb: int

    @property
    def peak_mb(self) -> int:
        return self.peak_kb // 1024


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def fts_index_config() -> Any:
    """The full-text index's LanceDB configuration (tokenizer, stemming, token length)."""
    from lancedb.index import FTS

    return FTS(base_tokenizer="simple", stem=True, remove_stop_words=False, max_token_length=64)


class ChunkStore:
    """LanceDB ``chunks`` table of one project, opened for writing."""

    def __init__(self, location: LanceLocation | Path, dimension: int):
        if isinstance(location, Path):
            location = LanceLocation(location)
        self.location = location
        self.lance_dir = location.local
        self.dimension = dimension
        #: True when this open found no table and created an empty one.
        self.created = False
        # On an object store this proves conditional commits work before anything is written.
        check_conditional_writes(location)
        try:
            # Local: the database itself; remote: the marker the rebuild bookkeeping lists.
            location.local.mkdir(parents=True, exist_ok=True)
            #: Size-bounded caches (see ``writer_session``); ``session.size_bytes`` is what they hold.
            self.session = writer_session()
            self.db = location.connect(session=self.session)
            if CHUNKS_TABLE in self.db.list_tables().tables:
                self.table = self.db.open_table(CHUNKS_TABLE)
            else:
                self.table = self.db.create_table(CHUNKS_TABLE, schema=chunk_arrow_schema(dimension))
                self.created = True
        except Exception as exc:  # lancedb raises a zoo of types; map them all at the boundary
            raise StoreError(f"cannot open LanceDB at {location}: {exc}") from exc

    @property
    def version(self) -> int:
        return int(self.table.version)

    def count(self) -> int:
        return int(self.table.count_rows())

    def chunk_keys(self) -> dict[str, list[tuple[str, str]]]:
        """Per file, the sorted ``(chunk_id, content_hash)`` of every row at the latest version."""
        try:
            # A LanceDB scan, not ``to_lance()``: see ``_fold`` on keeping pylance out of the process.
            query = self.table.search().select(["file_path", "chunk_id", "content_hash"]).limit(None)
            data = query.to_arrow()
        except Exception as exc:
            raise StoreError(f"cannot read LanceDB rows: {exc}") from exc
        out: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for path, cid, digest in zip(
            data.column("file_path").to_pylist(),
            data.column("chunk_id").to_pylist(),
            data.column("content_hash").to_pylist(),
            strict=True,
        ):
            out[path].append((cid, digest))
        return {path: sorted(keys) for path, keys in out.items()}

    def replace_files(
        self,
        file_paths: Sequence[str],
        records: Sequence[ChunkRecord],
        vectors: np.ndarray,
        missing: np.ndarray | None = None,
    ) -> None:
        """Delete every row of ``file_paths`` and add ``records`` (with ``vectors``).

        Rows flagged in ``missing`` are written with a null vector: keyword-searchable at once,
        skipped by vector search (a flat scan and the ANN index both pass over null vectors)
        until ``set_vectors`` fills them.
        """
        try:
            for batch in _batched(list(file_paths), 500):
                if batch:
                    self.table.delete(_in_filter("file_path", batch))
            if records:
                self.table.add(self._to_arrow([r.lance_row() for r in records], vectors, missing))
        except Exception as exc:
            raise StoreError(f"LanceDB write failed: {exc}") from exc

    def set_vectors(self, file_paths: Sequence[str], chunk_ids: Sequence[str], vectors: np.ndarray) -> int:
        """Fill the vectors of the rows of ``file_paths`` (``chunk_ids[i]`` gets ``vectors[i]``).

        One full-schema ``merge_insert`` keyed by ``chunk_id`` (one commit): the files' rows are
        read back (a filtered scan), given their vectors and written whole. A partial-schema merge
        (``chunk_id`` and the vector only) would be simpler, but Lance fills the columns it lacks
        from the target side of its hash join, which collects every column of every row of the
        table first: +456 MB and 6.9 s per 512-row fill of a 40k-row table, against +44 MB and
        0.85 s this way (bench/README.md, indexer_phases). Memory is bounded by the files' rows.
        Only rows without a vector are written: a row that has one got it from the embedding
        cache for its own text when it was written (a re-index of 100 edited files rewrote all
        their ~2,300 rows for the ~100 new ones, and the full-text index then had to fold them all
        again). A row of these files without an entry in ``chunk_ids`` keeps its vector (or null).
        Answers how many rows were written.
        """
        if not chunk_ids or not file_paths:
            return 0
        import numpy as np

        try:
            names = [n for n in chunk_arrow_schema(self.dimension).names if n != VECTOR_COLUMN]
            rows = (
                self.table.search()
                .where(f"{_in_filter('file_path', file_paths)} AND {VECTOR_COLUMN} IS NULL")
                .select(names)
                .limit(None)
                .to_arrow()
            )
            at = {cid: i for i, cid in enumerate(chunk_ids)}
            order = [at.get(cid, -1) for cid in rows.column("chunk_id").to_pylist()]
            keep = np.array([i >= 0 for i in order], dtype=bool)
            if not keep.any():
                return 0
            if not keep.all():
                rows = rows.filter(keep)
            picked = np.array([i for i in order if i >= 0], dtype=np.int64)
            update = rows.append_column(VECTOR_COLUMN, self._vector_array(vectors[picked]))
            update = update.cast(chunk_arrow_schema(self.dimension))
            self.table.merge_insert("chunk_id").when_matched_update_all().execute(update)
        except Exception as exc:
            raise StoreError(f"LanceDB vector update failed: {exc}") from exc
        return int(update.num_rows)

    def _vector_array(self, vectors: np.ndarray, missing: np.ndarray | None = None) -> pa.Array:
        import numpy as np
        import pyarrow as pa

        flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
        mask = None if missing is None or not missing.any() else pa.array(missing, pa.bool_())
        return pa.FixedSizeListArray.from_arrays(flat, self.dimension, mask=mask)

    def _to_arrow(
        self, rows: list[dict[str, Any]], vectors: np.ndarray, missing: np.ndarray | None = None
    ) -> pa.Table:
        import pyarrow as pa

        schema = chunk_arrow_schema(self.dimension)
        columns: dict[str, Any] = {
            name: [r[name] for r in rows] for name in schema.names if name != VECTOR_COLUMN
        }
        columns[VECTOR_COLUMN] = self._vector_array(vectors, missing)
        return pa.Table.from_pydict(columns, schema=schema)

    def has_fts_index(self) -> bool:
        return any(FTS_COLUMN in idx.columns and idx.index_type == "FTS" for idx in self.table.list_indices())

    def has_vector_index(self) -> bool:
        return self.vector_index_type() is not None

    def vector_index_type(self) -> str | None:
        """The vector index's kind as LanceDB names it (``IvfSq``, ``IvfPq``), or None."""
        return next(
            (str(i.index_type) for i in self.table.list_indices() if VECTOR_COLUMN in i.columns), None
        )

    def refresh_indices(
        self,
        *,
        full: bool,
        rebuild: Iterable[str] = (),
        vectors_complete: bool = True,
        fts_fresh: bool = False,
    ) -> None:
        """Create missing indices (and those named in ``rebuild``); fold new rows into existing ones.

        While rows still lack vectors (``vectors_complete`` false) only the FTS index is built or
        folded: Lance cannot fold null vectors into an IVF index, and training one on a part of
        the rows would be wasted work. ``fts_fresh``: the FTS index was just (re)built this run,
        so ``full``/``rebuild`` only recreate the vector index.
        """
        rebuild = frozenset(rebuild)
        try:
            rows = self.count()
            new_fts = not fts_fresh and (full or "fts" in rebuild)
            if not vectors_complete:
                if rows and (new_fts or not self.has_fts_index()):
                    self._create_fts()
                self._fold(vector=False)
                return
            if rows and (new_fts or not self.has_fts_index()):
                self._create_fts()
            if rows >= ANN_MIN_ROWS and (
                full
                or "vector" in rebuild
                or self.vector_index_type() != VECTOR_INDEX_TYPE  # none yet, or an older kind
                or self.vector_segments() > MAX_VECTOR_SEGMENTS
            ):
                self._create_vector_index(rows)
                return
            self._fold(vector=True, rows=rows)
        except Exception as exc:
            raise StoreError(f"LanceDB index maintenance failed: {exc}") from exc

    def _create_vector_index(self, rows: int) -> None:
        """Compact and fold the FTS index, then train the vector index over every vector.

        The fold comes first so the new index is trained over the compacted rows and covers every
        row: nothing is left to fold after it. (Folding after training, as before, rewrote the
        files the index had just been built over, remapping it, with pylance in this process.)

        While the table has no vector index yet, the fold runs as any fold does (``_fold``: from
        ``FOLD_IN_CHILD_MIN_ROWS`` rows in a child process; a retrain folds here, through
        pylance), and the training in a child process of its own (``VECTOR_INDEX_IN_CHILD``).
        Training (k-means on a sample, then assigning and shuffling every row) adds ~300 MB for a
        few minutes at 80k rows, the fold's rewrite ~200-260 MB at 40k rows, and the allocator
        keeps much of each after: one child for both peaked at 616 MB at 52k rows, the training
        child alone at 518 MB and the fold's at 476 MB (bench/README.md, session 11). In a
        child, that memory goes with the child, and the indexer's own peak stays that of its
        writes. Same index, same parameters.
        """
        params = _vector_index_params(rows)
        if self.has_vector_index() or rows >= FOLD_IN_CHILD_MIN_ROWS:
            # A retrain, or a first index's last fold (its fills' folds did not compact): every
            # fragment is compacted first, through pylance, which in this process took a --full
            # re-index of 104k rows to 658 MB; from ``FOLD_IN_CHILD_MIN_ROWS`` rows in a child.
            self._run([(_compact_all, ())], rows >= FOLD_IN_CHILD_MIN_ROWS, "a fold", "folded")
        else:
            self._fold(vector=False, rows=rows)
        self._run([(_create_index, (params,))], True, "the vector index", "vector index built")

    def _run(
        self,
        jobs: list[tuple[Callable[..., None], tuple[Any, ...]]],
        in_child: bool,
        what: str,
        done: str,
    ) -> None:
        """Run ``jobs`` on this table: in a child process when ``in_child`` (and
        ``VECTOR_INDEX_IN_CHILD``), logging ``done`` with the child's pid and peak RSS; else here."""
        if not (VECTOR_INDEX_IN_CHILD and in_child):
            _run_jobs(self.table, jobs)
            return
        child = self._in_child(jobs, what)
        if child is not None:
            log.info("%s in a child process (pid %d, peak RSS %d MB)", done, child.pid, child.peak_mb)

    def folds_in_child(self, rows: int | None = None) -> bool:
        """Whether this table's folds run in a child process (``FOLD_IN_CHILD_MIN_ROWS``;
        ``rows``: the row count when the caller has it)."""
        return VECTOR_INDEX_IN_CHILD and (self.count() if rows is None else rows) >= FOLD_IN_CHILD_MIN_ROWS

    def _in_child(
        self, jobs: list[tuple[Callable[..., None], tuple[Any, ...]]], what: str
    ) -> ChildRun | None:
        """Run ``jobs`` on this table in a child process; its pid and peak RSS, or None if it died.

        The child opens the same table, commits, and exits; this process then reads the new
        version. A child that dies is replaced by running ``jobs`` here, with a warning (a job
        the child committed before dying is a no-op the second time: a compacted table has
        nothing to compact, an index is built with ``replace``).
        """
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        # ``spawn``: LanceDB is not fork-safe, and a direct child is reaped here (its peak RSS is
        # this process's ``RUSAGE_CHILDREN``; a ``forkserver`` worker would be the server's).
        context = multiprocessing.get_context("spawn")
        try:
            with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
                pid, peak_kb = pool.submit(_child_jobs, self.location, jobs, os.getpid()).result()
        except BrokenProcessPool:
            log.warning("the child process for %s died; running it in this process", what)
            self.table.checkout_latest()
            _run_jobs(self.table, jobs)
            return None
        self.table.checkout_latest()
        return ChildRun(int(pid), int(peak_kb))

    def _create_fts(self) -> None:
        self.table.create_index(FTS_COLUMN, config=fts_index_config(), replace=True)

    def _fold(self, *, vector: bool, rows: int | None = None) -> None:
        """Compact the files, fold new rows into the FTS index and (``vector``) the vector index.

        Every fold folds whatever rows the FTS index lacks: a search finds unfolded rows by a
        scan, but that scan tokenizes them per query (a re-index's ~2,000 unfolded rows made
        keyword searches of the 104k-chunk project take 75-107 ms instead of ~10, session 15).

        The compaction merges the small fragments only (``SETTLED_FRAGMENT_ROWS``); a retrain
        compacts every fragment first (:func:`_compact_all`).

        New vectors go into a delta segment that reuses the trained centroids
        (``num_indices_to_merge=0``), never straight into a merge: Lance's merge *with new rows*
        (what ``table.optimize()`` does) re-partitions the IVF index to a size of its own, which
        turned the 316 trained partitions of a 100k-row index into 4 (every query then scans
        every PQ code). Once the delta is written no row is left unindexed, and from
        ``MERGE_VECTOR_SEGMENTS_FROM`` segments Lance merges them into one that keeps the trained
        partitions (:meth:`_merge_vector_segments`): a query probes every segment with the same
        probe count, and without merges the idle search latency of the 104k-chunk project
        climbed with each re-index (bench/README.md, session 13); one delta is kept, since every
        merge makes the searchers read the whole index again (session 15).
        ``MAX_VECTOR_SEGMENTS`` still bounds the segments if a merge is skipped.
        """
        indices = list(self.table.list_indices())
        fts = [idx.name for idx in indices if FTS_COLUMN in idx.columns]
        vec = [idx.name for idx in indices if VECTOR_COLUMN in idx.columns]
        if not vec:
            # No vector index to protect from a merge. Below ``FOLD_IN_CHILD_MIN_ROWS`` rows,
            # LanceDB's own optimize (compaction, then the FTS fold; cleanup off, ``prune`` does it
            # after publishing) here, without ``to_lance()``, which loads pylance, a second 225 MB
            # copy of Lance's native code (~125 MB of it resident once compaction and FTS folding
            # have run): a first index of laravel (16k chunks) peaked at ~610 MB with pylance and
            # ~520 MB without (bench/indexer_phases.py). From that size, in a child process, and
            # the FTS fold only: a table this big without a vector index is a first index filling
            # in its vectors, whose every 512-row step rewrites rows, and LanceDB's compaction
            # (every fragment is under its 1M-row target) rewrote the whole table each fold. The
            # fragments that leaves are compacted once, before the vector index is trained
            # (``_compact_all``). 26k chunks: the fold child 330 -> ~270 MB, the indexer's tree
            # 642 -> 585 MB, fill 34 -> 28 s (bench/README.md, session 16).
            in_child = self.folds_in_child(rows)
            self._run([(_fold_fts if in_child else _optimize, ())], in_child, "a fold", "folded")
            return
        dataset = self.table.to_lance()
        settled = _settled_fragments(dataset)
        if len(dataset.get_fragments()) - len(settled) >= COMPACT_AT_FRAGMENTS:
            dataset.optimize.compact_files(
                excluded_fragment_ids=settled, materialize_deletions_threshold=MATERIALIZE_DELETIONS_SHARE
            )
        _fold_into(dataset, fts)
        if vector and vec:
            _fold_into(dataset, vec, num_indices_to_merge=0)
            self.table.checkout_latest()
            if self.vector_segments() >= MERGE_VECTOR_SEGMENTS_FROM:
                self._merge_vector_segments(vec)
        self.table.checkout_latest()  # see the dataset-level writes above

    def _merge_vector_segments(self, names: list[str]) -> None:
        """Merge the vector index's segments into one, keeping the trained partitions.

        Only when every row is indexed and every segment has the same partition count (the
        deltas reuse the trained centroids); a merge that came out with another partition count
        (a Lance that re-partitions) is replaced by a retrain, so a query never meets a
        degenerate index.
        """
        # Lance's statistics would otherwise carry every centroid (and warn that they do).
        os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
        for name in names:
            stats = self.table.index_stats(name)
            if stats is None or (stats.num_indices or 1) <= 1 or stats.num_unindexed_rows:
                continue
            dataset = self.table.to_lance()
            before = [int(seg["num_partitions"]) for seg in dataset.stats.index_stats(name)["indices"]]
            if len(set(before)) != 1:
                continue
            dataset.optimize.optimize_indices(index_names=[name], num_indices_to_merge=len(before))
            self.table.checkout_latest()
            after = [
                int(seg["num_partitions"]) for seg in self.table.to_lance().stats.index_stats(name)["indices"]
            ]
            if after != before[:1]:
                log.warning(
                    "merging the vector index's %d segments gave partitions %s (trained: %d); retraining",
                    len(before),
                    after,
                    before[0],
                )
                self._create_vector_index(self.count())
                return

    def vector_segments(self) -> int:
        """How many segments (the trained index plus deltas) the vector index has."""
        total = 0
        for idx in self.table.list_indices():
            if VECTOR_COLUMN in idx.columns:
                stats = self.table.index_stats(idx.name)  # LanceDB's own: no pylance (see ``_fold``)
                total += (stats.num_indices or 1) if stats is not None else 0
        return total

    def broken_indices(self) -> list[str]:
        """Indices that are listed but cannot answer a query (their files deleted or damaged)."""
        broken = []
        probes: list[tuple[str, Callable[[], object]]] = []
        if self.has_fts_index():
            probes.append(("fts", lambda: self.table.search("x", query_type="fts").limit(1).to_list()))
        if self.has_vector_index():
            import numpy as np

            probe = np.zeros(self.dimension, dtype=np.float32)
            probe[0] = 1.0
            probes.append(("vector", lambda: self.table.search(probe).limit(1).to_list()))
        for name, run in probes:
            try:
                run()
            except Exception as exc:  # any failure means the index must be rebuilt
                log.warning("LanceDB %s index is unusable, rebuilding it: %s", name, exc)
                broken.append(name)
        return broken

    def prune(self, keep_from: int) -> None:
        """Remove versions older than ``keep_from`` (the latest version is never removed).

        LanceDB prunes through pylance (``cleanup_old_versions`` is ``to_lance()``'s), which loads
        a second copy of Lance's native code: the indexer's peak at 52k rows was this prune's
        (448 MB; 395 MB with it in a child, bench/README.md session 11). From ``FOLD_IN_CHILD_MIN_ROWS``
        rows it runs in a child process, as the folds do; a smaller table is pruned here.
        """
        try:
            stamps = {int(v["version"]): v["timestamp"] for v in self.table.list_versions()}
            if keep_from not in stamps:
                return
            # Lance prunes by age (now - older_than). The latest version was written just now, so
            # measuring from it keeps ``keep_from`` and everything after it, whatever the clock zone.
            age = max(stamps.values()) - stamps[keep_from] + timedelta(seconds=2)
            self._run([(_cleanup, (age,))], self.count() >= FOLD_IN_CHILD_MIN_ROWS, "pruning", "pruned")
        except Exception as exc:  # pruning is housekeeping: never fail a published run on it
            log.warning("pruning old LanceDB versions failed: %s", exc)


def remove_lance_dir(lance_dir: LanceLocation | Path) -> None:
    """Delete a project's LanceDB database entirely (on the object store too)."""
    if isinstance(lance_dir, LanceLocation):
        lance_dir.remove()
    else:
        shutil.rmtree(lance_dir, ignore_errors=True)


def _fold_into(dataset: Any, names: list[str], **options: Any) -> None:
    """Fold the rows the indices ``names`` lack into them (pylance). A fold rewrites the index it
    folds into, so one with no unindexed row (deletions are masked at query time) is left as it
    is, and so are the pages of it a search has cached."""
    os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")  # sizes only, not every centroid
    if any(int(dataset.stats.index_stats(name).get("num_unindexed_rows") or 0) for name in names):
        dataset.optimize.optimize_indices(index_names=names, **options)


def _settled_fragments(dataset: Any) -> list[int]:
    """Fragments a fold's compaction leaves alone: ``SETTLED_FRAGMENT_ROWS`` rows or more, fewer
    than ``MATERIALIZE_DELETIONS_SHARE`` of them deleted."""
    settled = []
    for fragment in dataset.get_fragments():
        meta = fragment.metadata
        physical = int(meta.physical_rows or 0)
        deleted = int(meta.deletion_file.num_deleted_rows or 0) if meta.deletion_file is not None else 0
        if physical >= SETTLED_FRAGMENT_ROWS and deleted < MATERIALIZE_DELETIONS_SHARE * physical:
            settled.append(int(fragment.fragment_id))
    return settled


def _vector_index_params(rows: int) -> dict[str, Any]:
    return {
        "distance_type": "cosine",
        # LanceDB trains ~256 rows/partition
        "num_partitions": max(16, min(int(math.sqrt(rows)), rows // 256)),
        "num_bits": VECTOR_INDEX_BITS,
    }


def _create_index(table: Any, params: dict[str, Any]) -> None:
    from lancedb.index import IvfRq

    table.create_index(VECTOR_COLUMN, config=IvfRq(**params), replace=True)


def _compact_all(table: Any) -> None:
    """Compact every fragment and fold the FTS index (pylance; the vector index is retrained next)."""
    dataset = table.to_lance()
    dataset.optimize.compact_files()
    _fold_into(dataset, _fts_names(table))
    table.checkout_latest()  # the dataset-level writes above, for the training that follows


def _optimize(table: Any) -> None:
    """LanceDB's own optimize: compaction, then the FTS fold (cleanup off: ``prune`` does it)."""
    table.optimize(cleanup_older_than=_NO_CLEANUP)


def _fold_fts(table: Any) -> None:
    """Fold the rows the FTS index lacks into it, without a compaction (pylance, in a child)."""
    _fold_into(table.to_lance(), _fts_names(table))


def _fts_names(table: Any) -> list[str]:
    """Names of ``table``'s full-text indices."""
    return [idx.name for idx in table.list_indices() if FTS_COLUMN in idx.columns]


def _cleanup(table: Any, age: timedelta) -> None:
    """Remove the versions older than ``age`` (measured from now; the latest is never removed)."""
    table.cleanup_old_versions(older_than=age)


def _run_jobs(table: Any, jobs: Sequence[tuple[Callable[..., None], tuple[Any, ...]]]) -> None:
    for job, args in jobs:
        job(table, *args)


def _child_jobs(
    location: LanceLocation, jobs: Sequence[tuple[Callable[..., None], tuple[Any, ...]]], parent: int
) -> tuple[int, int]:
    """In the child process: run ``jobs`` on ``location``'s table; returns its pid and peak RSS (kB).

    The child dies with its parent (``PR_SET_PDEATHSIG``): a killed indexer must not leave a
    process that commits to the table after the run that owned its writer lock is gone.
    """
    import resource

    from local_memory_shared.heap import die_with_parent, limit_malloc_arenas_from_settings

    die_with_parent(parent)
    limit_malloc_arenas_from_settings()
    _run_jobs(location.connect(session=writer_session()).open_table(CHUNKS_TABLE), jobs)
    return os.getpid(), int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _in_filter(column: str, values: Sequence[str]) -> str:
    return f"{column} IN ({', '.join(_sql_str(v) for v in values)})"


def _batched(items: list[str], size: int) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
