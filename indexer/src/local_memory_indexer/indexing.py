"""``index_project``: the one entry point of an index run (CLI, MCP jobs, benchmarks).

Under ``writer.lock`` a plain run first asks ``unchanged`` whether anything changed since the last
run that ended "done"; when nothing did, that answers without importing LanceDB, pyarrow or ONNX
Runtime. Otherwise ``pipeline.run_index`` runs (imported then), reusing the walk already made.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Executor
from pathlib import Path

from local_memory_shared.config import Settings, load_settings
from local_memory_shared.embedding import embedder_from_settings
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.embedding.onnx import OnnxEmbedder
from local_memory_shared.paths import project_paths

from .plan import IndexSummary, NullProgress, ProgressSink, writer_lock
from .unchanged import try_unchanged

log = logging.getLogger(__name__)


def index_project(
    project_path: str | Path,
    *,
    settings: Settings | None = None,
    full: bool = False,
    rebuild: bool = False,
    embedder: Embedder | None = None,
    progress: ProgressSink | None = None,
    cancel: threading.Event | None = None,
    parser: Executor | None = None,
) -> IndexSummary:
    """Index (or incrementally re-index) ``project_path`` into the data root.

    ``parser`` (e.g. ``distributed.RayParser``) parses every changed file (``parse_file``) for
    this run instead of this process or a local pool; the caller owns and closes it.
    """
    settings = settings or load_settings()
    paths = project_paths(settings.data_root, project_path)
    progress = progress or NullProgress()
    own_embedder = embedder is None
    embedder = embedder or embedder_from_settings(settings)
    try:
        with writer_lock(paths):
            found = None
            if not (full or rebuild or (cancel is not None and cancel.is_set())):
                checked = try_unchanged(paths, settings, embedder, progress)
                if checked.summary is not None:
                    log.info("no-change run of %s: nothing to write", paths.project_path)
                    return checked.summary
                log.info("full run of %s: %s", paths.project_path, checked.reason)
                found = checked.found
            from .pipeline import run_index

            summary = run_index(
                paths, settings, embedder, progress, cancel, parser, full=full, rebuild=rebuild, found=found
            )
        if isinstance(embedder, OnnxEmbedder):
            from .query_model import ensure_compact_model

            ensure_compact_model(settings.data_root, embedder)
        return summary
    finally:
        if own_embedder:
            embedder.close()
