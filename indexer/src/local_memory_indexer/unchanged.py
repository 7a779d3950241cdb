"""The no-change fast path: a re-index that finds nothing to do writes SQLite bookkeeping only.

A run that ends "done" on a local store leaves an *intact record* (``intact.json`` in the project's
index folder, written atomically): the published LanceDB version and folder, its row count, the
embedding model's identity (backend, name, dimension, and the size and mtime of its files), the
settings that shape the index, and the size and mtime of every file under ``chunks.lance/`` but
``latest_version_hint.json``. Every run that may write deletes the record before anything else
(``pipeline.run_index``), so the record only ever describes a store no run touched since.

A plain run (no ``--full``/``--rebuild``, local store) holding ``writer.lock`` takes the fast path
only when all of these hold, checked in this order (the walk last):

- the state DB is of this schema build and the journal's last run ended "done";
- the published version, the LanceDB folder and the provenance row match the record, and so do the
  model (backend, name, dimension, file sizes and mtimes) and the settings;
- a table big enough for a vector index has one of the kind the indexer builds now
  (``store.VECTOR_INDEX_TYPE``; an older kind is retrained by the full way);
- no file awaits vectors, the mirror holds the record's row count, and no side DB of a killed
  rebuild is left;
- the compact query model (or its ``.none`` marker) exists, for an ONNX model;
- every file under ``chunks.lance/`` has the size and mtime recorded (none added or gone);
- the walk finds no changed, added or deleted source file (a file whose mtime alone changed is
  compared by content hash, as in any run, and its new mtime recorded).

It then does what a no-change run of the pipeline does to SQLite — the journal row, the provenance
refresh, the publication's timestamp, ``last_indexed_at`` and the commit hash — and answers the same
summary, without importing LanceDB, pyarrow or ONNX Runtime. Old LanceDB versions are pruned only by
the next run that goes the full way (a changing run). Otherwise the pipeline runs, reusing the
walk when it already made one.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local_memory_shared.config import Settings
from local_memory_shared.discovery import Discovery
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.embedding.onnx import OnnxEmbedder
from local_memory_shared.embedding.query_model import compact_model_path
from local_memory_shared.errors import ProvenanceMismatch, StoreError
from local_memory_shared.fs import write_text_atomic
from local_memory_shared.paths import ProjectPaths
from local_memory_shared.schema import CHUNKS_TABLE
from local_memory_shared.state import read_index_meta

from .discovery import discover
from .parse_identity import parse_fingerprint
from .plan import IndexSummary, ProgressSink, Timer, git_head, plan_files
from .rebuild import clean_leftovers, side_db
from .state_db import open_state_rw
from .state_writer import StateWriter
from .store import (
    ANN_MIN_ROWS,
    KEEP_VERSIONS_FOR,
    VECTOR_INDEX_TYPE,
)  # the module imports LanceDB and pyarrow only when a store opens

log = logging.getLogger(__name__)

#: The intact record's file name in the project's index folder.
INTACT_FILE = "intact.json"
#: Bumped when the record's content changes: a record of another format is simply not trusted.
INTACT_FORMAT = 1
#: Lance rewrites this hint freely; it says nothing the manifests do not.
VOLATILE_LANCE_FILES = frozenset({"latest_version_hint.json"})


@dataclass(frozen=True)
class Checked:
    """The fast path's answer: the run's summary, or why not (and the walk, when one was made)."""

    summary: IndexSummary | None
    reason: str
    found: Discovery | None = None


def intact_path(paths: ProjectPaths) -> Path:
    return paths.dir / INTACT_FILE


def forget_intact(paths: ProjectPaths) -> None:
    """Delete the intact record: called first by every run that may write."""
    intact_path(paths).unlink(missing_ok=True)


def lance_tree(table_dir: Path) -> dict[str, list[int]]:
    """``relative path → [size, mtime_ns]`` of every file under ``table_dir`` but the volatile ones."""
    out: dict[str, list[int]] = {}
    stack = [table_dir]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.name not in VOLATILE_LANCE_FILES:
                    st = entry.stat(follow_symlinks=False)
                    out[os.path.relpath(entry.path, table_dir)] = [st.st_size, st.st_mtime_ns]
    return out


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def model_identity(embedder: Embedder) -> dict[str, Any] | None:
    """What the vectors depend on: backend, model, dimension and, for ONNX, its files' sizes and mtimes.

    None when it cannot be told without loading anything (an ONNX backend behind a wrapper).
    """
    identity: dict[str, Any] = {
        "backend": embedder.backend,
        "model": embedder.model,
        "dimension": embedder.dimension,
    }
    if isinstance(embedder, OnnxEmbedder):
        files = embedder.model_files
        candidates = [files.model, files.tokenizer]
        if files.config_dir is not None:
            candidates += [files.config_dir / "config.json", files.config_dir / "sentence_bert_config.json"]
        identity["files"] = {str(p): _stat(p) for p in candidates}
    elif embedder.backend == "onnx":
        return None
    return identity


def _settings_identity(settings: Settings) -> dict[str, Any]:
    return {"max_file_bytes": settings.max_file_bytes}


def _compact_model_ready(settings: Settings, embedder: Embedder) -> bool:
    """The compact query model (or its ``.none`` marker) the pipeline writes after a run exists."""
    if not isinstance(embedder, OnnxEmbedder):
        return True
    try:
        target = compact_model_path(settings.data_root, embedder.source_model_file)
    except OSError:
        return False
    return target.is_file() or target.with_suffix(".none").is_file()


def record_intact(
    paths: ProjectPaths,
    settings: Settings,
    embedder: Embedder,
    main: StateWriter,
    rows: int,
    vector_index: str | None,
) -> None:
    """Write the intact record of the index as a run that ended "done" left it (atomically);
    ``vector_index`` is the kind of its vector index (None: it has none)."""
    model = model_identity(embedder)
    version = main.published()
    if model is None or version is None or settings.lance_uri is not None:
        return
    lance_name = main.lance_name()
    record = {
        "format": INTACT_FORMAT,
        "version": version,
        "lance_dir": lance_name,
        "rows": rows,
        "vector_index": vector_index,
        "model": model,
        "settings": _settings_identity(settings),
        "tree": lance_tree(paths.dir / lance_name / f"{CHUNKS_TABLE}.lance"),
    }
    try:
        write_text_atomic(intact_path(paths), json.dumps(record, sort_keys=True))
    except OSError as exc:  # the record only saves time: without it the next run goes the full way
        log.warning("intact record not written: %s", exc)


def _read_record(paths: ProjectPaths) -> dict[str, Any] | None:
    try:
        record = json.loads(intact_path(paths).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("format") == INTACT_FORMAT else None


def _refusal(
    record: dict[str, Any], paths: ProjectPaths, main: StateWriter, settings: Settings, embedder: Embedder
) -> str:
    """Why the index may have changed since the record was written ('' when nothing says so)."""
    last = main.last_run()
    if last is None or last.outcome != "done":
        return "the last run did not end done"
    if main.published() != record["version"] or main.lance_name() != record["lance_dir"]:
        return "the published version or folder differs from the record"
    model = model_identity(embedder)
    if model is None or model != record["model"]:
        return "the embedding model differs from the record"
    meta = read_index_meta(main.conn, main.project)
    if meta is None or (meta.backend, meta.model, meta.dimension) != (
        model["backend"],
        model["model"],
        model["dimension"],
    ):
        return "the index's provenance differs from the model"
    if _settings_identity(settings) != record["settings"]:
        return "the settings differ from the record"
    if main.parse_fingerprint() != parse_fingerprint():
        return "the index was parsed by another build of the parser"
    if record["rows"] >= ANN_MIN_ROWS and record.get("vector_index") != VECTOR_INDEX_TYPE:
        return "the vector index is of an older kind (it is retrained)"
    if main.pending_files():
        return "files await vectors"
    if main.mirror_total() != record["rows"] or main.chunk_total() != record["rows"]:
        return "the mirror's row count differs from the record"
    if side_db(paths).exists():
        return "a rebuild's side DB is left"
    if not _compact_model_ready(settings, embedder):
        return "the compact query model is missing"
    table_dir = paths.dir / record["lance_dir"] / f"{CHUNKS_TABLE}.lance"
    try:
        tree = lance_tree(table_dir)
    except OSError:
        return "the LanceDB folder cannot be read"
    if tree != record["tree"]:
        return "the LanceDB files differ from the record"
    return ""


def try_unchanged(
    paths: ProjectPaths, settings: Settings, embedder: Embedder, progress: ProgressSink
) -> Checked:
    """The no-change run, when the intact record and the walk say nothing changed (module docstring)."""
    if settings.lance_uri is not None:
        return Checked(None, "the store is remote")
    record = _read_record(paths)
    if record is None:
        return Checked(None, "no intact record")
    if not paths.state_db.is_file():
        return Checked(None, "no state DB")
    try:
        conn = open_state_rw(paths.state_db)
    except (ProvenanceMismatch, StoreError) as exc:
        return Checked(None, f"the state DB cannot be used as it is: {exc.code}")
    try:
        main = StateWriter(conn, str(paths.project_path), paths.key)
        try:
            reason = _refusal(record, paths, main, settings, embedder)
        except (KeyError, TypeError, sqlite3.Error) as exc:
            reason = f"the record or state DB could not be compared: {exc}"
        if reason:
            return Checked(None, reason)
        return _run(paths, settings, embedder, progress, main, record)
    finally:
        conn.close()


def _run(
    paths: ProjectPaths,
    settings: Settings,
    embedder: Embedder,
    progress: ProgressSink,
    main: StateWriter,
    record: dict[str, Any],
) -> Checked:
    summary = IndexSummary(main.project, embedder.backend, embedder.model, embedder.dimension)
    timer = Timer(summary, progress)
    commit = git_head(paths.project_path)
    # Shown as "check", not "walk": nothing is marked 'indexing' yet (searchers rightly get no
    # index_updating warning); the summary still times it as the walk.
    with timer.phase("walk", shown="check"):
        known = main.known_files()
        trusted = {p: (r["size"], r["mtime"]) for p, r in known.items()}
        found = discover(paths.project_path, max_file_bytes=settings.max_file_bytes, trusted=trusted)
        summary.files_skipped = dict(sorted(found.skipped.items()))
        summary.files_seen = len(found.files)
        plan = plan_files(found.files, known, summary)
    if not plan.unchanged:
        return Checked(None, "the walk found changed, added or deleted files", found)
    progress.files(0, 0)
    with timer.phase("index"):
        clean_leftovers(paths, main, KEEP_VERSIONS_FOR.total_seconds())
        main.touch_mtimes(plan.touched)
        main.register(embedder.backend, embedder.model, embedder.dimension)
        run_id = main.begin_run("index")
        try:
            main.publish(record["version"], finished=True, commit=commit)
        except BaseException:
            main.set_status("ready")
            main.end_run(run_id, "failed")
            raise
        main.end_run(run_id, "done")
    summary.published_version = main.published()
    summary.chunks_total, summary.languages = main.chunk_stats()
    return Checked(summary, "nothing changed")
