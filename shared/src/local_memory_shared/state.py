"""Shared state-DB helpers: the timestamp format, and the read side re-exported from ``state_reader``.

Writes (``open_state_rw``, the DDL stamp) live only in the indexer
(:mod:`local_memory_indexer.state_db`); the searcher cannot even import them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from .state_reader import (
    IndexMeta,
    ProjectRow,
    RunRecord,
    open_state_ro,
    read_index_meta,
    read_last_run,
    read_project_row,
    writer_alive,
)

__all__ = [
    "IndexMeta",
    "ProjectRow",
    "RunRecord",
    "open_state_ro",
    "read_index_meta",
    "read_last_run",
    "read_project_row",
    "utc_now",
    "writer_alive",
]


def utc_now() -> str:
    """ISO 8601 UTC timestamp with a Z, second precision; sorts as text."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
