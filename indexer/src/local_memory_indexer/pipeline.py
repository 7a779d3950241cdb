"""Index one project: walk → parse → graph → embed → write, in consistent, published batches.

Each batch of files is written to LanceDB first, then one SQLite transaction updates the
mirror, the file table, the graph and ``projects.published_version``. The searcher reads only
the published LanceDB version, so a crash or a cancel mid-run leaves the last good state
readable, and a large project becomes searchable batch by batch.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import re
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from local_memory_shared.config import Settings, load_settings
from local_memory_shared.embedding import embedder_from_settings
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.errors import IndexLocked, ProvenanceMismatch, StoreError
from local_memory_shared.paths import ProjectPaths, project_paths
from local_memory_shared.schema import SCHEMA_VERSION, definition_terms
from local_memory_shared.state import open_state_rw, read_index_meta, utc_now

from . import graph
from .chunking import ChunkDraft, chunk_file, stable_chunk_id
from .discovery import SourceFile, discover
from .store import ChunkStore, remove_lance_dir

log = logging.getLogger(__name__)

PHASES = ("walk", "parse", "graph", "embed", "write", "index")
#: A batch closes when it holds this many files or chunks; each batch is published.
BATCH_FILES = 200
BATCH_CHUNKS = 2000
#: Fold freshly written rows into the FTS/vector indices after this many, mid-run.
FOLD_EVERY_ROWS = 4000
#: The first batch is small so a big first index answers its first queries within seconds.
FIRST_BATCH_FILES = 16


class ProgressSink(Protocol):
    """Receives progress; the CLI draws a bar, the MCP job manager writes the jobs table."""

    def phase(self, name: str) -> None: ...
    def files(self, done: int, total: int) -> None: ...
    def chunks(self, embedded: int, total: int) -> None: ...


class NullProgress:
    """Progress sink that ignores everything."""

    def phase(self, name: str) -> None:
        pass

    def files(self, done: int, total: int) -> None:
        pass

    def chunks(self, embedded: int, total: int) -> None:
        pass


class Cancelled(Exception):
    """Raised inside the pipeline when its cancel event is set (published state stays good)."""


@dataclass
class IndexSummary:
    """What one run did; ``--json`` prints this."""

    project_path: str
    backend: str
    model: str
    dimension: int
    files_seen: int = 0
    files_parsed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    files_failed: int = 0
    files_skipped: dict[str, int] = field(default_factory=dict)
    chunks_written: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_deleted: int = 0
    chunks_total: int = 0
    languages: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    published_version: int | None = None
    errors: list[str] = field(default_factory=list)
    cancelled: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@contextlib.contextmanager
def writer_lock(paths: ProjectPaths) -> Iterator[None]:
    """One writer per project: an exclusive, non-blocking flock on ``writer.lock``."""
    paths.dir.mkdir(parents=True, exist_ok=True)
    with open(paths.lock_file, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise IndexLocked(f"another indexer is writing {paths.project_path}") from exc
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def git_head(root: Path) -> str:
    """HEAD commit of ``root`` when it is a git work tree, else ''."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


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


def embed_text(chunk: dict[str, Any]) -> str:
    """What the embedding model sees for a chunk: its qualified symbol, then the code.

    The path stays out on purpose: the cache is keyed by this text, so code that moves to
    another file is never embedded again (path words still reach BM25 through ``fts_text``).
    """
    return f"{chunk['symbol_name']}\n{chunk['text']}" if chunk["symbol_name"] else chunk["text"]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Timer:
    def __init__(self, summary: IndexSummary, progress: ProgressSink):
        self.summary = summary
        self.progress = progress

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self.progress.phase(name)
        start = time.perf_counter()
        try:
            yield
        finally:
            self.summary.seconds[name] = round(
                self.summary.seconds.get(name, 0.0) + time.perf_counter() - start, 4
            )


def index_project(
    project_path: str | Path,
    *,
    settings: Settings | None = None,
    full: bool = False,
    rebuild: bool = False,
    embedder: Embedder | None = None,
    progress: ProgressSink | None = None,
    cancel: threading.Event | None = None,
) -> IndexSummary:
    """Index (or incrementally re-index) ``project_path`` into the data root."""
    settings = settings or load_settings()
    paths = project_paths(settings.data_root, project_path)
    progress = progress or NullProgress()
    own_embedder = embedder is None
    embedder = embedder or embedder_from_settings(settings)
    try:
        with writer_lock(paths):
            conn = open_state_rw(paths.state_db, reset=rebuild)
            try:
                return _Run(paths, settings, embedder, progress, cancel, conn).run(full=full, rebuild=rebuild)
            finally:
                conn.close()
    finally:
        if own_embedder:
            embedder.close()


class _Run:
    def __init__(
        self,
        paths: ProjectPaths,
        settings: Settings,
        embedder: Embedder,
        progress: ProgressSink,
        cancel: threading.Event | None,
        conn: sqlite3.Connection,
    ):
        self.paths = paths
        self.settings = settings
        self.embedder = embedder
        self.progress = progress
        self.cancel = cancel
        self.conn = conn
        self.project = str(paths.project_path)
        self._known: frozenset[str] = frozenset()

    # -- provenance -------------------------------------------------------------------------
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
        if rebuild:
            # The state tables were reset when the DB was opened (open_state_rw(reset=True)).
            remove_lance_dir(self.paths.lance_dir)
        now = utc_now()
        with self._txn():
            self.conn.execute(
                "INSERT INTO projects(project_path, key, created_at, status) VALUES (?,?,?,'indexing') "
                "ON CONFLICT(project_path) DO UPDATE SET status='indexing'",
                (self.project, self.paths.key, now),
            )
            self.conn.execute(
                "INSERT INTO index_meta(project_path, backend, model, dimension, schema_version, created_at, updated_at) "
                "VALUES (?,?,?,?,?,?,?) ON CONFLICT(project_path) DO UPDATE SET updated_at=excluded.updated_at, "
                "schema_version=excluded.schema_version",
                (self.project, *wanted, SCHEMA_VERSION, now, now),
            )

    @contextlib.contextmanager
    def _txn(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()

    # -- the run -----------------------------------------------------------------------------
    def run(self, *, full: bool, rebuild: bool) -> IndexSummary:
        summary = IndexSummary(
            self.project, self.embedder.backend, self.embedder.model, self.embedder.dimension
        )
        timer = _Timer(summary, self.progress)
        self._check_provenance(rebuild)
        store = ChunkStore(self.paths.lance_dir, self.embedder.dimension)
        commit = git_head(self.paths.project_path)
        try:
            with timer.phase("walk"):
                found = discover(self.paths.project_path, max_file_bytes=self.settings.max_file_bytes)
                summary.files_skipped = dict(sorted(found.skipped.items()))
                summary.files_seen = len(found.files)
                changed, deleted = self._diff(found.files, full or rebuild, summary)
            project_files = frozenset(f.path for f in found.files)
            summary.files_deleted = len(deleted)
            total = len(changed)
            self.progress.files(0, total)
            done = 0
            pending_deleted = list(deleted)
            new_table = store.count() == 0
            folded_at = 0
            for batch in self._batches(changed):
                self._check_cancel()
                self._index_batch(batch, pending_deleted, store, project_files, commit, summary, timer)
                pending_deleted = []
                done += len(batch)
                self.progress.files(done, total)
                written_since_fold = summary.chunks_written - folded_at
                if (new_table and not store.has_fts_index()) or written_since_fold >= FOLD_EVERY_ROWS:
                    # An early FTS index makes a big first index keyword-searchable after one batch;
                    # folding new rows into the indices as we go keeps a searcher reading a published
                    # version from scanning thousands of un-indexed rows during a long re-index.
                    with timer.phase("index"):
                        store.refresh_indices(full=False)
                        self._publish(store.version)
                    folded_at = summary.chunks_written
            if pending_deleted:
                self._index_batch([], pending_deleted, store, project_files, commit, summary, timer)
            if deleted or any(f.path not in self._known for f, _, _ in changed):
                # Targets that appeared or vanished change how other files' imports resolve.
                with timer.phase("graph"), self._txn():
                    graph.reresolve_imports(self.conn, project_files)
            self._check_cancel()
            with timer.phase("index"):
                store.refresh_indices(full=full or rebuild)
            self._publish(store.version, finished=True, commit=commit)
        except Cancelled:
            summary.cancelled = True
            self._set_status("ready" if self._published() else "new")
        except BaseException:
            self._set_status("failed" if not self._published() else "ready")
            raise
        summary.published_version = self._published()
        summary.chunks_total = int(self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        summary.languages = dict(
            self.conn.execute(
                "SELECT language, COUNT(*) FROM chunks GROUP BY language ORDER BY 2 DESC"
            ).fetchall()
        )
        return summary

    def _diff(
        self, files: list[SourceFile], full: bool, summary: IndexSummary
    ) -> tuple[list[tuple[SourceFile, bytes, str]], list[str]]:
        known = {
            row["path"]: row for row in self.conn.execute("SELECT path, content_hash, size, mtime FROM files")
        }
        self._known = frozenset(known)
        changed: list[tuple[SourceFile, bytes, str]] = []
        touched: list[tuple[float, str]] = []
        for f in files:
            row = known.get(f.path)
            if row is not None and not full and row["size"] == f.size and row["mtime"] == f.mtime:
                summary.files_unchanged += 1
                continue
            try:
                data = f.abs_path.read_bytes()
            except OSError as exc:
                summary.files_failed += 1
                summary.errors.append(f"{f.path}: {exc}")
                continue
            digest = _sha(data)
            if row is not None and not full and row["content_hash"] == digest:
                summary.files_unchanged += 1
                touched.append((f.mtime, f.path))
                continue
            changed.append((f, data, digest))
        if touched:
            with self._txn():
                self.conn.executemany("UPDATE files SET mtime = ? WHERE path = ?", touched)
        on_disk = {f.path for f in files}
        deleted = sorted(p for p in known if p not in on_disk)
        return changed, deleted

    def _batches(
        self, changed: list[tuple[SourceFile, bytes, str]]
    ) -> Iterator[list[tuple[SourceFile, bytes, str]]]:
        batch: list[tuple[SourceFile, bytes, str]] = []
        approx_chunks = 0
        limit = min(FIRST_BATCH_FILES, BATCH_FILES)
        for item in changed:
            batch.append(item)
            approx_chunks += max(1, item[0].size // 1500)
            if len(batch) >= limit or approx_chunks >= BATCH_CHUNKS:
                yield batch
                batch, approx_chunks, limit = [], 0, BATCH_FILES
        if batch:
            yield batch

    def _index_batch(
        self,
        batch: list[tuple[SourceFile, bytes, str]],
        deleted: list[str],
        store: ChunkStore,
        project_files: frozenset[str],
        commit: str,
        summary: IndexSummary,
        timer: _Timer,
    ) -> None:
        rows: list[dict[str, Any]] = []
        file_rows: list[tuple[Any, ...]] = []
        graphs: list[tuple[str, str, graph.FileGraph, list[tuple[str, int, int]]]] = []
        with timer.phase("parse"):
            previous = self._previous_chunks([f.path for f, _, _ in batch])
            for f, data, digest in batch:
                try:
                    drafts = chunk_file(f.path, data, f.language)
                except Exception as exc:  # a broken file must never stop the run
                    log.exception("chunking failed for %s", f.path)
                    summary.files_failed += 1
                    summary.errors.append(f"{f.path}: chunking failed: {exc}")
                    drafts = []
                file_chunks = sorted(
                    (self._chunk_row(f, d, commit, previous) for d in drafts),
                    key=lambda r: (r["start_line"], r["end_line"]),
                )
                for position, row in enumerate(file_chunks):
                    row["chunk_index"] = position  # file order, for neighbour navigation
                rows.extend(file_chunks)
                file_rows.append((f.path, digest, f.size, f.mtime, f.language, utc_now(), len(file_chunks)))
                summary.files_parsed += 1
        with timer.phase("graph"):
            for f, data, _ in batch:
                spans = [
                    (r["chunk_id"], r["start_line"], r["end_line"]) for r in rows if r["file_path"] == f.path
                ]
                try:
                    graphs.append(
                        (f.path, f.language, graph.extract_file_graph(f.path, data, f.language), spans)
                    )
                except Exception as exc:
                    log.exception("graph extraction failed for %s", f.path)
                    summary.errors.append(f"{f.path}: graph extraction failed: {exc}")
        with timer.phase("embed"):
            vectors = self._embed(rows, summary)
        with timer.phase("write"):
            paths_to_replace = [f.path for f, _, _ in batch] + list(deleted)
            old_count = self._count_chunks(paths_to_replace)
            store.replace_files(paths_to_replace, rows, vectors)
            with self._txn():
                self._write_mirror(paths_to_replace, rows, file_rows, deleted)
                for path in paths_to_replace:
                    graph.delete_file_graph(self.conn, path)
                for path, language, fg, spans in graphs:
                    graph.write_file_graph(self.conn, path, language, fg, spans, project_files)
                self.conn.execute(
                    "UPDATE projects SET published_version = ? WHERE project_path = ?",
                    (store.version, self.project),
                )
            summary.chunks_written += len(rows)
            summary.chunks_deleted += max(0, old_count - len(rows))

    def _in_batches(self, sql: str, values: list[str], prefix: tuple[Any, ...] = ()) -> Iterator[sqlite3.Row]:
        """Run ``sql`` (with one ``IN ({marks})``) over ``values`` in slices SQLite's variable limit allows."""
        for i in range(0, len(values), 500):
            part = values[i : i + 500]
            yield from self.conn.execute(sql.format(marks=",".join("?" * len(part))), [*prefix, *part])

    def _previous_chunks(self, file_paths: list[str]) -> dict[str, tuple[str, str]]:
        sql = "SELECT chunk_id, content_hash, updated_at FROM chunks WHERE file_path IN ({marks})"
        return {
            row["chunk_id"]: (row["content_hash"], row["updated_at"])
            for row in self._in_batches(sql, file_paths)
        }

    def _count_chunks(self, file_paths: list[str]) -> int:
        sql = "SELECT COUNT(*) FROM chunks WHERE file_path IN ({marks})"
        return sum(int(row[0]) for row in self._in_batches(sql, file_paths))

    def _chunk_row(
        self, f: SourceFile, d: ChunkDraft, commit: str, previous: dict[str, tuple[str, str]]
    ) -> dict[str, Any]:
        chunk_id = stable_chunk_id(f.path, d.chunk_kind, d.symbol_name, d.ordinal)
        content_hash = _sha(d.text.encode("utf-8"))[:32]
        prev = previous.get(chunk_id)
        updated_at = prev[1] if prev and prev[0] == content_hash else _iso(f.mtime)
        ext = Path(f.path).suffix.lower().lstrip(".")
        return {
            "chunk_id": chunk_id,
            "project_path": self.project,
            "schema_version": SCHEMA_VERSION,
            "file_path": f.path,
            "language": f.language,
            "file_extension": ext,
            "chunk_kind": d.chunk_kind,
            "symbol_name": d.symbol_name,
            "class_name": d.class_name,
            "function_name": d.function_name,
            "chunk_index": 0,  # numbered in file order by the caller
            "start_line": d.start_line,
            "end_line": d.end_line,
            "text": d.text,
            "summary": d.summary,
            "fts_text": fts_text(f.path, d.symbol_name, d.summary, d.text),
            "tags": [d.chunk_kind, f.language] + ([ext] if ext and ext != f.language else []),
            "updated_at": updated_at,
            "last_commit_hash": commit,
            "content_hash": content_hash,
        }

    def _embed(self, rows: list[dict[str, Any]], summary: IndexSummary) -> np.ndarray:
        dim = self.embedder.dimension
        vectors = np.zeros((len(rows), dim), dtype=np.float32)
        if not rows:
            return vectors
        texts = [embed_text(r) for r in rows]
        hashes = [_sha(t.encode("utf-8")) for t in texts]
        cached = self._cache_get(hashes)
        missing = [i for i, h in enumerate(hashes) if h not in cached]
        for i, h in enumerate(hashes):
            if h in cached:
                vectors[i] = cached[h]
        summary.chunks_reused += len(rows) - len(missing)
        if missing:
            unique: dict[str, int] = {}
            for i in missing:
                unique.setdefault(hashes[i], i)
            order = list(unique.values())
            base = summary.chunks_embedded

            def on_progress(done: int, total: int) -> None:
                self.progress.chunks(base + done, base + total)
                self._check_cancel()

            fresh = self.embedder.check_dimension(
                self.embedder.embed_documents([texts[i] for i in order], progress=on_progress)
            )
            by_hash = {hashes[i]: fresh[k] for k, i in enumerate(order)}
            for i in missing:
                vectors[i] = by_hash[hashes[i]]
            summary.chunks_embedded += len(order)
            summary.chunks_reused += len(missing) - len(order)
            self._cache_put(by_hash)
            self.progress.chunks(summary.chunks_embedded, summary.chunks_embedded)
        return vectors

    def _cache_get(self, hashes: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        key = self.embedder.model_key
        sql = "SELECT text_hash, vector FROM embed_cache WHERE model_key = ? AND text_hash IN ({marks})"
        for text_hash, blob in self._in_batches(sql, sorted(set(hashes)), (key,)):
            vec = np.frombuffer(blob, dtype=np.float32)
            if vec.shape[0] == self.embedder.dimension:
                out[text_hash] = vec
        return out

    def _cache_put(self, by_hash: dict[str, np.ndarray]) -> None:
        key = self.embedder.model_key
        with self._txn():
            self.conn.executemany(
                "INSERT OR REPLACE INTO embed_cache(model_key, text_hash, vector) VALUES (?,?,?)",
                [(key, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in by_hash.items()],
            )

    def _write_mirror(
        self,
        file_paths: list[str],
        rows: list[dict[str, Any]],
        file_rows: list[tuple[Any, ...]],
        deleted: list[str],
    ) -> None:
        for _ in self._in_batches("DELETE FROM chunks WHERE file_path IN ({marks})", file_paths):
            pass  # a DELETE yields no rows; iterating runs each slice
        if deleted:
            self.conn.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in deleted])
        self.conn.executemany(
            "INSERT INTO chunks(chunk_id, file_path, chunk_index, language, file_extension, chunk_kind, symbol_name, "
            "class_name, function_name, start_line, end_line, text, summary, tags, updated_at, last_commit_hash, "
            "content_hash, schema_version) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    r["chunk_id"],
                    r["file_path"],
                    r["chunk_index"],
                    r["language"],
                    r["file_extension"],
                    r["chunk_kind"],
                    r["symbol_name"],
                    r["class_name"],
                    r["function_name"],
                    r["start_line"],
                    r["end_line"],
                    r["text"],
                    r["summary"],
                    json.dumps(r["tags"]),
                    r["updated_at"],
                    r["last_commit_hash"],
                    r["content_hash"],
                    r["schema_version"],
                )
                for r in rows
            ],
        )
        self.conn.executemany(
            "INSERT INTO files(path, content_hash, size, mtime, language, indexed_at, chunk_count) VALUES (?,?,?,?,?,?,?) "
            "ON CONFLICT(path) DO UPDATE SET content_hash=excluded.content_hash, size=excluded.size, "
            "mtime=excluded.mtime, language=excluded.language, indexed_at=excluded.indexed_at, "
            "chunk_count=excluded.chunk_count",
            file_rows,
        )

    def _publish(self, version: int, *, finished: bool = False, commit: str = "") -> None:
        with self._txn():
            if finished:
                self.conn.execute(
                    "UPDATE projects SET published_version = ?, status = 'ready', last_indexed_at = ?, "
                    "last_commit_hash = ? WHERE project_path = ?",
                    (version, utc_now(), commit or None, self.project),
                )
            else:
                self.conn.execute(
                    "UPDATE projects SET published_version = ? WHERE project_path = ?",
                    (version, self.project),
                )

    def _published(self) -> int | None:
        row = self.conn.execute(
            "SELECT published_version FROM projects WHERE project_path = ?", (self.project,)
        ).fetchone()
        return row[0] if row else None

    def _set_status(self, status: str) -> None:
        try:
            with self._txn():
                self.conn.execute(
                    "UPDATE projects SET status = ? WHERE project_path = ?", (status, self.project)
                )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot record status: {exc}") from exc
