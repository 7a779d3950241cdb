"""Parse one file into chunk drafts and its graph: the unit of work a run may hand to other processes.

``parse_file`` is what ``pipeline`` runs for every changed file, in process or (for a large first
index) in a pool of worker processes, one per core: chunking and graph extraction are pure
functions of the file's bytes, so both paths give the same rows. Errors come back as text (a
broken file never stops a run), and the graph reuses the chunker's syntax tree.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from . import graph, treesitter
from .chunking import ChunkDraft, chunk_file

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ParsedFile:
    """One file's chunk drafts and graph, or why either failed."""

    drafts: tuple[ChunkDraft, ...]
    chunk_error: str
    graph: graph.FileGraph | None
    graph_error: str
    graph_seconds: float


def parse_file(path: str, data: bytes, language: str) -> ParsedFile:
    """Chunk ``data`` and extract its graph (from the same tree); failures are returned, not raised."""
    try:
        drafts: tuple[ChunkDraft, ...] = tuple(chunk_file(path, data, language))
        chunk_error = ""
    except Exception as exc:  # a broken file must never stop the run
        log.exception("chunking failed for %s", path)
        drafts, chunk_error = (), f"{path}: chunking failed: {exc}"
    started = time.perf_counter()
    try:
        file_graph: graph.FileGraph | None = graph.extract_file_graph(path, data, language)
        graph_error = ""
    except Exception as exc:
        log.exception("graph extraction failed for %s", path)
        file_graph, graph_error = None, f"{path}: graph extraction failed: {exc}"
    finally:
        treesitter.forget_last_tree()
    return ParsedFile(drafts, chunk_error, file_graph, graph_error, time.perf_counter() - started)
