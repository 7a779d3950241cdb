"""Index one project: walk → parse → graph → embed → write, in consistent, published batches.

The publication protocol:

1. Each batch of files is written to LanceDB first, then one SQLite transaction
   (``StateWriter.write_batch``) updates the mirror, the file table, the graph and
   ``projects.published_version``. The searcher reads only the published LanceDB version, so a
   crash or a cancel mid-run leaves the last good state readable, and a large project becomes
   searchable batch by batch.
2. Every run opens a row in the run journal (``runs``) and closes it with its outcome. A run
   that finds the last row unfinished (killed), a recreated LanceDB table (folder deleted) or
   row counts that differ compares LanceDB with the mirror file by file (``repair.find_drift``)
   and re-indexes every file that differs before it publishes anything.
3. Old LanceDB versions are pruned only after a newer one is published, and only those that
   stopped being published more than ``store.KEEP_VERSIONS_FOR`` ago (``StateWriter.prune_floor``).
4. A listed FTS or vector index that cannot answer a probe query is rebuilt by the same run.
5. ``--rebuild`` of a published index builds beside it (a side state DB and a new LanceDB folder)
   and swaps in one SQLite commit (``rebuild``); a killed rebuild leaves the old index served,
   and the next run of any kind deletes what it left.
6. A plain run that finds nothing changed since the last "done" run never gets here: ``unchanged``
   answers it from SQLite (``indexing.index_project`` asks it first). ``run_index`` deletes that
   module's intact record before anything else and a "done" run writes a new one last.

This module orchestrates; state writes live in ``state_writer``, the vector cache in
``embed_cache``, LanceDB in ``store``.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import re
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from local_memory_shared.config import Settings
from local_memory_shared.discovery import Discovery
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.embedding.onnx import OnnxEmbedder
from local_memory_shared.errors import ProvenanceMismatch
from local_memory_shared.heap import trim_heap
from local_memory_shared.lance_location import LanceLocation, lance_location
from local_memory_shared.languages import language_for_source
from local_memory_shared.paths import ProjectPaths
from local_memory_shared.schema import SCHEMA_VERSION, ChunkRecord, definition_terms
from local_memory_shared.state import read_index_meta, utc_now

from .chunking import ChunkDraft, stable_chunk_id
from .discovery import SourceFile, discover
from .embed_cache import EmbedCache, text_hash
from .indexing import index_project
from .parse_identity import parse_fingerprint
from .parse_worker import ParsedFile, parse_file
from .plan import (
    IndexSummary,
    NullProgress,
    Plan,
    ProgressSink,
    Timer,
    git_head,
    plan_files,
    read_source,
    sha256_hex,
    writer_lock,
)
from .query_model import ensure_compact_model
from .rebuild import clean_leftovers, next_lance_name, remove_side_db, side_db, swap_in
from .repair import find_drift
from .state_db import open_state_rw
from .state_writer import BatchWrite, FileRow, GraphRows, StateWriter
from .store import KEEP_VERSIONS_FOR, ChunkStore, remove_lance_dir
from .unchanged import forget_intact, record_intact

# Re-exported: they moved to the light modules ``plan`` and ``indexing`` (a no-change run imports
# only those), and callers import them from here.
__all__ = [
    "Cancelled",
    "IndexSummary",
    "NullProgress",
    "Plan",
    "ProgressSink",
    "embed_text",
    "fts_text",
    "git_head",
    "index_project",
    "run_index",
    "writer_lock",
]

log = logging.getLogger(__name__)

PHASES = ("walk", "parse", "graph", "embed", "write", "index")
#: A batch closes when it holds this many files or chunks; each batch is published.
BATCH_FILES = 200
BATCH_CHUNKS = 2000
#: Fold freshly written rows into the FTS/vector indices after this many, mid-run.
FOLD_EVERY_ROWS = 4000
#: The first batch is small so a big first index answers its first queries within seconds; a
#: change of more files than this publishes its rows before embedding them (``_embed_pending``).
FIRST_BATCH_FILES = 16
#: Rows embedded and published together once the rows are out (the semantic leg's step size).
EMBED_BATCH_CHUNKS = 512


class Cancelled(Exception):
    """Raised inside the pipeline when its cancel event is set (published state stays good)."""


_CAMEL = re.compile(r"[A-Za-z][a-z0-9]*[A-Z][A-Za-z0-9]*")
_CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def fts_text(file_path: str, symbol_name: str, summary: str, text: str) -> str:
    """BM25 text: path words, the symbol, the summary, the text, and camelCase parts split out."""
    extra = sorted(
        {
            part.lower()
            for ident in _CAMEL.findall(f"{symbol_name} {text}")
            for part in _CAMEL_PARTS.findall(ident)
        }
    )
    defines = [
        term for name in symbol_name.split("+") for term in definition_terms(name)
    ]  # merged siblings: a+b
    return "\n".join(
        (file_path.replace("/", " "), symbol_name, " ".join(defines), summary, text, " ".join(extra))
    )


def embed_text(chunk: Mapping[str, Any] | ChunkRecord) -> str:
    """What the embedding model sees for a chunk: its qualified symbol, then the code.

    The path stays out on purpose: the cache is keyed by this text, so code that moves to
    another file is never embedded again (path words still reach BM25 through ``fts_text``).
    """
    if isinstance(chunk, ChunkRecord):
        symbol, text = chunk.symbol_name, chunk.text
    else:
        symbol, text = chunk["symbol_name"], chunk["text"]
    return f"{symbol}\n{text}" if symbol else text


def run_index(
    paths: ProjectPaths,
    settings: Settings,
    embedder: Embedder,
    progress: ProgressSink,
    cancel: threading.Event | None,
    parser: Executor | None,
    *,
    full: bool,
    rebuild: bool,
    found: Discovery | None = None,
) -> IndexSummary:
    """The run ``indexing.index_project`` makes when the no-change check (``unchanged``) declined.

    The caller holds ``writer.lock``. ``found``: the walk that check already made (reused unless
    this run distrusts files the walk trusted). The intact record goes first: this run may write.
    """
    forget_intact(paths)
    conn = _open_main(paths, rebuild)
    side: sqlite3.Connection | None = None
    try:
        main = StateWriter(conn, str(paths.project_path), paths.key)
        clean_leftovers(paths, main, KEEP_VERSIONS_FOR.total_seconds(), settings.lance_uri)
        if rebuild and main.published() is not None:
            side = open_state_rw(side_db(paths), reset=True)
        run = _Run(paths, settings, embedder, progress, cancel, conn, side, parser)
        return run.run(full=full, rebuild=rebuild, found=found)
    finally:
        if side is not None:
            side.close()
            remove_side_db(paths)
        conn.close()


def _open_main(paths: ProjectPaths, rebuild: bool) -> sqlite3.Connection:
    """The main state DB; a rebuild resets it in place when nothing readable would be lost.

    That is when nothing is published yet or the DB is of another schema build; otherwise the
    rebuild is built beside the published index (``rebuild``) and the DB is opened as it is.
    """
    try:
        conn = open_state_rw(paths.state_db)
    except ProvenanceMismatch:
        if not rebuild:
            raise
        return open_state_rw(paths.state_db, reset=True)
    if rebuild and StateWriter(conn, str(paths.project_path), paths.key).published() is None:
        conn.close()
        return open_state_rw(paths.state_db, reset=True)
    return conn


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def chunk_record(
    project: str,
    f: SourceFile,
    d: ChunkDraft,
    position: int,
    commit: str,
    previous: dict[str, tuple[str, str]],
) -> ChunkRecord:
    """The stored record of one chunk draft; ``updated_at`` survives while its text is unchanged."""
    chunk_id = stable_chunk_id(f.path, d.chunk_kind, d.symbol_name, d.ordinal)
    content_hash = sha256_hex(d.text.encode("utf-8"))[:32]
    prev = previous.get(chunk_id)
    ext = Path(f.path).suffix.lower().lstrip(".")
    return ChunkRecord(
        chunk_id=chunk_id,
        project_path=project,
        schema_version=SCHEMA_VERSION,
        file_path=f.path,
        language=f.language,
        file_extension=ext,
        chunk_kind=d.chunk_kind,
        symbol_name=d.symbol_name,
        class_name=d.class_name,
        function_name=d.function_name,
        chunk_index=position,
        start_line=d.start_line,
        end_line=d.end_line,
        text=d.text,
        summary=d.summary,
        fts_text=fts_text(f.path, d.symbol_name, d.summary, d.text),
        tags=(d.chunk_kind, f.language, *([ext] if ext and ext != f.language else [])),
        updated_at=prev[1] if prev and prev[0] == content_hash else _iso(f.mtime),
        last_commit_hash=commit,
        content_hash=content_hash,
    )


@dataclass(frozen=True)
class FileChange:
    """A file whose content must be (re-)indexed, read when its batch forms (``_Run._batches``)."""

    file: SourceFile
    data: bytes
    digest: str


#: A deferred run of at least this many files parses them in worker processes (one per core).
PARSE_POOL_MIN_FILES = 300
#: Most parse worker processes (each holds the tree-sitter grammars, ~60-100 MB while it lives).
PARSE_POOL_MAX_WORKERS = 4


@contextlib.contextmanager
def parse_pool(files: int) -> Iterator[ProcessPoolExecutor | None]:
    """Worker processes for parsing ``files`` files, or None when in-process parsing is better.

    Only a large run on a machine with more than one core gets a pool; it is stopped with the
    phase. ``forkserver`` (``spawn`` where it is missing), never ``fork``: LanceDB is not
    fork-safe. As with any ``multiprocessing`` start method but ``fork``, a script that calls
    ``index_project`` must keep its entry point under ``if __name__ == "__main__":`` (the CLI and
    both servers do); a worker that dies only makes the rest of the run parse in process.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if files < PARSE_POOL_MIN_FILES or cores < 2:
        yield None
        return
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    pool = ProcessPoolExecutor(
        max_workers=min(cores, PARSE_POOL_MAX_WORKERS), mp_context=multiprocessing.get_context(method)
    )
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _parsed_batches(
    batches: Iterator[tuple[FileChange, ...]], pool: Executor | None, *, first_here: bool = True
) -> Iterator[tuple[tuple[FileChange, ...], list[ParsedFile] | None]]:
    """Batches with their parsed files; with a pool, the next batch parses while this one is written.

    ``first_here``: parse the first batch in process while a fresh pool's workers start.
    """
    if pool is None:
        for batch in batches:
            yield batch, None
        return
    ahead: tuple[tuple[FileChange, ...], list[Future[ParsedFile]]] | None = None
    first = first_here
    broken = False
    for batch in batches:
        if first or broken:  # the small first batch is parsed here while the workers start
            first = False
            yield batch, None
            continue
        try:
            futures = [pool.submit(parse_file, c.file.path, c.data, c.file.language) for c in batch]
        except BrokenProcessPool:
            broken, futures = True, []
        if ahead is not None:
            yield ahead[0], _results(ahead)
        ahead = (batch, futures) if futures else None
        if broken:
            yield batch, None
    if ahead is not None:
        yield ahead[0], _results(ahead)


#: Seconds a batch's parse futures may all stay unfinished before the run parses it in process.
#: A stall, not a deadline: any finished future restarts the wait. Seen on a loaded machine: a
#: Ray task's future that never resolved (the raylet had nothing pending) hung a run for good.
PARSE_STALL_SECONDS = 120.0


def _results(
    ahead: tuple[tuple[FileChange, ...], list[Future[ParsedFile]]],
) -> list[ParsedFile] | None:
    """The workers' results, or None (parse here) when a worker died or the batch stalled
    (``PARSE_STALL_SECONDS`` with no future finishing): the run never depends on them."""
    pending = set(ahead[1])
    while pending:
        done, pending = wait(pending, timeout=PARSE_STALL_SECONDS, return_when=FIRST_COMPLETED)
        if not done:
            for future in pending:
                future.cancel()
            log.warning(
                "%d parse task(s) made no progress in %.0f s; parsing this batch in process",
                len(pending),
                PARSE_STALL_SECONDS,
            )
            return None
    try:
        return [f.result() for f in ahead[1]]
    except BrokenProcessPool:
        log.warning("a parse worker process died; parsing the rest of the run in process")
        return None
    except Exception as exc:  # parse_file returns its errors, so this is the executor failing
        log.warning("a parse worker failed (%s); parsing this batch in process", exc)
        return None


def _groups(pending: list[tuple[str, int]], chunks: int) -> Iterator[list[str]]:
    """File paths in groups of about ``chunks`` rows (a file is never split)."""
    group: list[str] = []
    size = 0
    for path, count in pending:
        group.append(path)
        size += count
        if size >= chunks:
            yield group
            group, size = [], 0
    if group:
        yield group


class _Run:
    """One index run: orchestration only (state writes: ``StateWriter``; vectors: ``EmbedCache``)."""

    def __init__(
        self,
        paths: ProjectPaths,
        settings: Settings,
        embedder: Embedder,
        progress: ProgressSink,
        cancel: threading.Event | None,
        conn: sqlite3.Connection,
        side: sqlite3.Connection | None = None,
        parser: Executor | None = None,
    ):
        self.paths = paths
        self.parser = parser
        self.settings = settings
        self.embedder = embedder
        self.progress = progress
        self.cancel = cancel
        self.project = str(paths.project_path)
        #: The main state DB: run journal, job log, embedding cache, and what readers see.
        self.main = StateWriter(conn, self.project, paths.key)
        #: Where this run writes the index: the main DB, or a rebuild's side DB (``rebuild``).
        self.state = StateWriter(side, self.project, paths.key) if side is not None else self.main
        self.conn = self.state.conn
        self.beside = side is not None
        self.lance_name = next_lance_name(paths) if self.beside else self.main.lance_name()
        self.cache = EmbedCache(self.main, embedder)

    def _location(self, name: str) -> LanceLocation:
        """The LanceDB database ``name`` of this project (a folder, or on the object store)."""
        return lance_location(self.paths.dir, name, self.settings.lance_uri)

    def _check_provenance(self, rebuild: bool) -> None:
        meta = read_index_meta(self.conn, self.project)
        wanted = (self.embedder.backend, self.embedder.model, self.embedder.dimension)
        if meta and (meta.backend, meta.model, meta.dimension) != wanted and not rebuild:
            raise ProvenanceMismatch(
                f"{self.project} is indexed with {meta.backend}/{meta.model} ({meta.dimension}d), not "
                f"{wanted[0]}/{wanted[1]} ({wanted[2]}d); an index never mixes two models. Rebuild it with: "
                f"local-memory-indexer index {self.project} --rebuild",
                details={"indexed": [meta.backend, meta.model, meta.dimension], "requested": list(wanted)},
            )
        if rebuild and not self.beside:
            # Nothing was published yet, or the state DB was reset (another schema build).
            remove_lance_dir(self._location(self.lance_name))
        self.state.register(*wanted)
        if self.beside:
            self.main.set_status("indexing")

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()

    def run(self, *, full: bool, rebuild: bool, found: Discovery | None = None) -> IndexSummary:
        """Run to the end (or to a cancel); the journal row records how it ended.

        A run that ends "done" on a local store leaves the intact record (``unchanged``) last.
        """
        summary = IndexSummary(
            self.project, self.embedder.backend, self.embedder.model, self.embedder.dimension
        )
        self._check_provenance(rebuild)
        last = self.main.last_run()
        # A rebuild beside the index starts from nothing, so an earlier crash leaves it no drift.
        interrupted = not self.beside and last is not None and last.outcome not in ("done", "cancelled")
        if not (full or rebuild) and self._parser_changed():
            # Every file is parsed again (vectors from the cache): an upgrade's new definitions
            # reach an index built before it (``parse_identity``).
            log.info("the index was parsed by another build of the parser: re-parsing every file")
            summary.reparsed_reason = "parser_changed"
            full = True
        elif self.state.published() is None:
            # A first index: whatever it publishes before a kill was parsed by this build.
            self.state.set_parse_fingerprint(parse_fingerprint())
        run_id = self.main.begin_run("rebuild" if rebuild else "full" if full else "index")
        try:
            store = ChunkStore(self._location(self.lance_name), self.embedder.dimension)
            timer = Timer(summary, self.progress)
            self._execute(store, full or rebuild, interrupted, summary, timer, found)
            self.state.set_parse_fingerprint(parse_fingerprint())
            if self.beside:
                swap_in(self.main, self.state.conn, self.lance_name)
        except Cancelled:
            summary.cancelled = True
            self.main.set_status("ready" if self.main.published() is not None else "new")
            self.main.end_run(run_id, "cancelled")
        except BaseException:
            self.main.set_status("failed" if self.main.published() is None else "ready")
            self.main.end_run(run_id, "failed")
            raise
        else:
            self.main.end_run(run_id, "done")
            self._record_intact(store)
        summary.published_version = self.main.published()
        summary.chunks_total, summary.languages = self.main.chunk_stats()
        return summary

    def _parser_changed(self) -> bool:
        """A published index whose files another build of the parser read (or an unknown one)."""
        return self.state.published() is not None and self.state.parse_fingerprint() != parse_fingerprint()

    def _record_intact(self, store: ChunkStore) -> None:
        """Write the intact record when the store is local and LanceDB holds what was published."""
        if self.settings.lance_uri is not None:
            return
        version, rows = self.main.published(), store.count()
        if version != store.version or rows != self.main.mirror_total():
            log.info("no intact record: LanceDB's latest version is not the published one")
            return
        record_intact(self.paths, self.settings, self.embedder, self.main, rows, store.vector_index_type())

    def _execute(
        self,
        store: ChunkStore,
        full: bool,
        interrupted: bool,
        summary: IndexSummary,
        timer: Timer,
        found: Discovery | None = None,
    ) -> None:
        if store.created:
            self.state.forget_publications()
        first_index = self.state.published() is None
        drift = find_drift(store, self.state, interrupted=interrupted)
        summary.files_repaired, summary.repair_reason = len(drift.files), drift.reason
        broken = store.broken_indices()
        summary.indices_rebuilt = broken
        commit = git_head(self.paths.project_path)
        with timer.phase("walk"):
            known = self.state.known_files()
            # A file whose size and mtime match its row was accepted before and has not changed:
            # the walk skips its content read, so a no-change run is a stat walk plus this read.
            trusted = (
                {} if full else {p: (r["size"], r["mtime"]) for p, r in known.items() if p not in drift.files}
            )
            if found is None or full or drift.files:
                # The no-change check's walk trusted every known file; it is reused only when
                # this run trusts them all too.
                found = discover(
                    self.paths.project_path, max_file_bytes=self.settings.max_file_bytes, trusted=trusted
                )
            summary.files_skipped = dict(sorted(found.skipped.items()))
            summary.files_seen = len(found.files)
            plan = plan_files(found.files, known, summary, full=full, drift=drift.files)
            self.state.touch_mtimes(plan.touched)
        summary.files_deleted = len(plan.deleted)
        # A re-index of up to ``BATCH_FILES`` files folds its rows into the full-text index before
        # it publishes them, as one batch (every published version is one a searcher reads anew): no
        # published version then holds rows a keyword query must scan outside the index (the
        # searcher's tail while a project is re-indexed, bench/README.md session 11). A first index
        # publishes rows at once (keyword answers within seconds), a bigger change folds once after
        # all its batches, ``full`` and a broken index rebuild the index below.
        fold_first = (
            not (first_index or full or broken or self.beside)
            and FIRST_BATCH_FILES < len(plan.changed) <= BATCH_FILES
        )
        self._write_batches(
            plan, store, commit, summary, timer, fold_first=fold_first, small_first=not fold_first
        )
        if plan.deleted or plan.adds_files:
            # Targets that appeared or vanished change how other files' imports resolve.
            with timer.phase("graph"):
                self.state.reresolve_imports(plan.project_files)
        self._check_cancel()
        pending = self.state.pending_files()
        if pending:
            # Every row and the full-text index are published before the first vector is computed
            # (keyword search answers for the whole project); the semantic leg joins batch by batch.
            if not fold_first:  # else each batch was folded before it was published
                with timer.phase("index"):
                    store.refresh_indices(full=full, rebuild=broken, vectors_complete=False)
                    self.state.publish(store.version)
            unpublished = self._embed_pending(pending, store, summary, timer, publish_each=first_index)
        else:
            unpublished = []
        self._done_embedding()
        with timer.phase("index"):
            store.refresh_indices(full=full, rebuild=broken, fts_fresh=bool(pending))
            if unpublished:
                self.state.publish_vectors(unpublished, store.version)
            self.state.publish(store.version, finished=True, commit=commit)
            self._prune(store)

    def _write_batches(
        self,
        plan: Plan,
        store: ChunkStore,
        commit: str,
        summary: IndexSummary,
        timer: Timer,
        *,
        fold_first: bool = False,
        small_first: bool = True,
    ) -> None:
        """Parse, write and publish ``plan``'s changed files a batch at a time (``small_first``:
        the first batch holds ``FIRST_BATCH_FILES``, so a long run answers its first queries soon)."""
        total, done, folded_at = len(plan.changed), 0, 0
        self.progress.files(0, total)
        pending_deleted = plan.deleted
        new_table = store.count() == 0
        # A big change publishes its rows first and embeds after (``_embed_pending``); a small one
        # (and a rebuild, which readers cannot see before its swap) embeds batch by batch inline.
        defer = not self.beside and total > FIRST_BATCH_FILES
        vectors_complete = not defer and not self.state.pending_files()
        pools = contextlib.nullcontext(self.parser) if self.parser else parse_pool(total if defer else 0)
        with pools as pool:
            batches = _parsed_batches(
                self._batches(plan.changed, summary, small_first), pool, first_here=self.parser is None
            )
            for batch, parsed in batches:
                self._check_cancel()
                self._index_batch(
                    batch,
                    pending_deleted,
                    store,
                    plan.project_files,
                    commit,
                    summary,
                    timer,
                    defer=defer,
                    parsed=parsed,
                    fold=fold_first,
                )
                pending_deleted = ()
                done += len(batch)
                self.progress.files(done, total)
                if (new_table and not store.has_fts_index()) or (
                    # Deferring, rows come fast and one fold follows them all (``_execute``); an FTS
                    # query scans rows its index does not cover yet, so every batch answers at once.
                    not defer and summary.chunks_written - folded_at >= FOLD_EVERY_ROWS
                ):
                    # An early FTS index makes a big first index keyword-searchable after one batch;
                    # folding new rows into the indices as we go keeps a searcher reading a published
                    # version from scanning thousands of un-indexed rows during a long re-index.
                    with timer.phase("index"):
                        store.refresh_indices(full=False, vectors_complete=vectors_complete)
                        self.state.publish(store.version)
                    folded_at = summary.chunks_written
        if pending_deleted:
            self._index_batch((), pending_deleted, store, plan.project_files, commit, summary, timer)

    def _embed_pending(
        self,
        pending: list[tuple[str, int]],
        store: ChunkStore,
        summary: IndexSummary,
        timer: Timer,
        *,
        publish_each: bool = True,
    ) -> list[str]:
        """Embed the rows published without vectors, a batch of files at a time.

        A first index (``publish_each``) and any change of more than ``FOLD_EVERY_ROWS`` rows
        publish each batch: the semantic leg joins batch by batch. A smaller re-index publishes
        its vectors once, with the final fold (the files returned; the caller publishes them):
        writing a batch's vectors rewrites its rows, and until a fold covers them again every
        keyword query of a reader of that version scans them outside the full-text index (100k
        chunks, 100 files edited: the busy searcher's keyword leg p50 12.7 -> 53.6 ms, README).
        A crash or cancel here leaves the last published version readable (keyword-complete,
        partly semantic); ``files.vectors_pending`` tells the next run what is left to embed.
        """
        total = sum(count for _, count in pending)
        publish_each = publish_each or total > FOLD_EVERY_ROWS
        unpublished: list[str] = []
        done, since_fold = 0, 0
        self.progress.chunks(0, total)
        for group in _groups(pending, EMBED_BATCH_CHUNKS):
            self._check_cancel()
            with timer.phase("embed"):
                inputs = self.state.embed_inputs(group)
                base = done

                def on_progress(n: int, _total: int, base: int = base) -> None:
                    self.progress.chunks(base + n, total)
                    self._check_cancel()

                texts = [embed_text({"symbol_name": symbol, "text": text}) for _, symbol, text in inputs]
                outcome = self.cache.embed(texts, on_progress)
                summary.chunks_embedded += outcome.embedded
                summary.chunks_reused += outcome.reused
            with timer.phase("write"):
                written = store.set_vectors(group, [cid for cid, _, _ in inputs], outcome.vectors)
                done += len(inputs)
                since_fold += written  # rows rewritten, which the full-text index must fold again
                if since_fold >= FOLD_EVERY_ROWS and done < total:
                    self._release_model_for(store)
                    store.refresh_indices(full=False, vectors_complete=False)
                    since_fold = 0
                if publish_each:
                    self.state.publish_vectors(group, store.version)
                else:
                    unpublished += group
            self.progress.chunks(done, total)
        return unpublished

    def _release_model_for(self, store: ChunkStore) -> None:
        """Before a fold that runs in a child process, let the model's session go (~125 MB resident
        with MiniLM, given back by ``malloc_trim``): this process only waits meanwhile, and the two
        processes' sum is what the machine holds. The next batch loads the session again (~0.23 s;
        a 52k-chunk first index folds ~12 times)."""
        if store.folds_in_child() and self.embedder.release():
            trim_heap()

    def _done_embedding(self) -> None:
        """Every vector of this run is in: let the model's session go before the final index build.

        The final fold and the vector index's training run in child processes (``store``), while
        this process waits holding what it still has: the ONNX session (~150 MB resident with
        MiniLM) is not needed again, so it goes, and ``malloc_trim`` hands its pages back. The
        compact query model is written first when it is missing (``indexing`` would otherwise
        load the session again after the run to write it; writing it lets the session go and
        trims the heap itself).
        """
        if isinstance(self.embedder, OnnxEmbedder) and self.embedder.loaded:
            ensure_compact_model(self.settings.data_root, self.embedder)
        if self.embedder.release():
            trim_heap()
            log.info("embedding done: the model's session released before the final index build")

    def _prune(self, store: ChunkStore) -> None:
        floor = self.state.prune_floor(KEEP_VERSIONS_FOR.total_seconds())
        if floor is not None:
            store.prune(floor)

    def _batches(
        self, changed: tuple[SourceFile, ...], summary: IndexSummary, small_first: bool = True
    ) -> Iterator[tuple[FileChange, ...]]:
        """Batches of changed files, each file's content read as its batch forms."""
        batch: list[FileChange] = []
        approx_chunks = 0
        limit = min(FIRST_BATCH_FILES, BATCH_FILES) if small_first else BATCH_FILES
        for f in changed:
            data = read_source(f, summary)
            if data is None:
                continue
            language = language_for_source(f.path, data)  # a C++ header is C by its suffix only
            if language != f.language:
                f = replace(f, language=language)
            batch.append(FileChange(f, data, sha256_hex(data)))
            approx_chunks += max(1, f.size // 1500)
            if len(batch) >= limit or approx_chunks >= BATCH_CHUNKS:
                yield tuple(batch)
                batch, approx_chunks, limit = [], 0, BATCH_FILES
        if batch:
            yield tuple(batch)

    def _index_batch(
        self,
        batch: tuple[FileChange, ...],
        deleted: tuple[str, ...],
        store: ChunkStore,
        project_files: frozenset[str],
        commit: str,
        summary: IndexSummary,
        timer: Timer,
        *,
        defer: bool = False,
        parsed: list[ParsedFile] | None = None,
        fold: bool = False,
    ) -> None:
        with timer.phase("parse"):
            here = parsed is None
            if parsed is None:
                parsed = [parse_file(c.file.path, c.data, c.file.language) for c in batch]
            records, file_rows, graphs = self._parse(batch, parsed, commit, summary)
        if here:  # parsed in process: the graph's share of the time is the graph phase's
            graph_seconds = sum(p.graph_seconds for p in parsed)
            timer.add("graph", graph_seconds)
            timer.add("parse", -graph_seconds)
        missing: np.ndarray | None = None
        if defer:
            vectors, missing = self._cached(records)
            waiting = {r.file_path for r, m in zip(records, missing, strict=True) if m}
            file_rows = tuple(replace(f, vectors_pending=int(f.path in waiting)) for f in file_rows)
        else:
            with timer.phase("embed"):
                vectors = self._embed(records, summary)
        with timer.phase("write"):
            replaced = tuple(c.file.path for c in batch) + deleted
            old_count = self.state.count_chunks(replaced)
            store.replace_files(replaced, records, vectors, missing)
        if fold:  # the rows go out inside the full-text index (``_execute``'s ``fold_first``)
            with timer.phase("index"):
                store.refresh_indices(full=False, vectors_complete=False)
        with timer.phase("write"):
            write = BatchWrite(replaced, deleted, records, file_rows, graphs)
            self.state.write_batch(write, project_files, store.version)
            summary.chunks_written += len(records)
            summary.chunks_deleted += max(0, old_count - len(records))

    def _parse(
        self,
        batch: tuple[FileChange, ...],
        parsed: list[ParsedFile],
        commit: str,
        summary: IndexSummary,
    ) -> tuple[tuple[ChunkRecord, ...], tuple[FileRow, ...], tuple[GraphRows, ...]]:
        """Records, file rows and graph rows of a batch from its parsed files (``parse_worker``)."""
        previous = self.state.previous_chunks([c.file.path for c in batch])
        records: list[ChunkRecord] = []
        file_rows: list[FileRow] = []
        graphs: list[GraphRows] = []
        for c, p in zip(batch, parsed, strict=True):
            f = c.file
            if p.chunk_error:
                summary.files_failed += 1
                summary.errors.append(p.chunk_error)
            ordered = sorted(p.drafts, key=lambda d: (d.start_line, d.end_line))  # file order
            mine = [chunk_record(self.project, f, d, i, commit, previous) for i, d in enumerate(ordered)]
            records.extend(mine)
            file_rows.append(FileRow(f.path, c.digest, f.size, f.mtime, f.language, utc_now(), len(ordered)))
            summary.files_parsed += 1
            if p.graph is None:
                summary.errors.append(p.graph_error)
            else:
                spans = tuple((r.chunk_id, r.start_line, r.end_line) for r in mine)
                graphs.append(GraphRows(f.path, f.language, p.graph, spans))
        return tuple(records), tuple(file_rows), tuple(graphs)

    def _cached(self, records: tuple[ChunkRecord, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Vectors the cache already holds, and the mask of the rows still without one."""
        vectors = np.zeros((len(records), self.embedder.dimension), dtype=np.float32)
        missing = np.ones(len(records), dtype=bool)
        hashes = [text_hash(embed_text(r)) for r in records]
        cached = self.cache.get(hashes)
        for i, h in enumerate(hashes):
            if h in cached:
                vectors[i], missing[i] = cached[h], False
        return vectors, missing

    def _embed(self, records: tuple[ChunkRecord, ...], summary: IndexSummary) -> np.ndarray:
        base = summary.chunks_embedded

        def on_progress(done: int, total: int) -> None:
            self.progress.chunks(base + done, base + total)
            self._check_cancel()

        outcome = self.cache.embed([embed_text(r) for r in records], on_progress)
        summary.chunks_embedded += outcome.embedded
        summary.chunks_reused += outcome.reused
        if outcome.embedded:
            self.progress.chunks(summary.chunks_embedded, summary.chunks_embedded)
        return outcome.vectors
