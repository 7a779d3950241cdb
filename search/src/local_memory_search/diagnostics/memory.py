"""The agent-memory vault as the diagnostics see it: malformed hand-edited files, by path and line.

The writer keeps a malformed file's content on disk and records the parse error in
``memory_files`` (``error``, ``error_line``); this module reads that table strictly read-only so
``health_check`` and ``doctor_index`` can name each file and say how to fix it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from local_memory_shared.config import Settings, load_memory_settings
from local_memory_shared.memory.schema import memory_paths
from local_memory_shared.state_reader import open_state_ro

#: The writer re-reads the vault (and re-validates hand edits) with this command.
SYNC_COMMAND = "local-memory-indexer memory sync"


@dataclass(frozen=True)
class MalformedFile:
    """One vault file whose frontmatter does not validate."""

    path: str  # absolute path of the file in the vault
    line: int | None
    message: str

    def fix(self) -> str:
        """What to do about it."""
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"edit {where}, then run: {SYNC_COMMAND}"


def malformed_memory_files(settings: Settings, *, limit: int = 100) -> list[MalformedFile]:
    """Malformed vault files the writer reported (none when there is no memory index)."""
    memory = load_memory_settings()
    paths = memory_paths(settings.data_root, memory.vault)
    if not paths.index_db.is_file():
        return []
    try:
        conn = open_state_ro(paths.index_db)
    except Exception:  # an unreadable memory index is the memory tools' to report, not the code doctor's
        return []
    try:
        rows = conn.execute(
            "SELECT path, error, error_line FROM memory_files WHERE error IS NOT NULL ORDER BY path LIMIT ?",
            (limit,),
        ).fetchall()
    except sqlite3.Error:
        return []
    finally:
        conn.close()
    return [MalformedFile(str(paths.vault / r[0]), r[2], str(r[1])) for r in rows]
