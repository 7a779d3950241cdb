"""``--rebuild`` beside the published index: build a new state and LanceDB folder, then swap.

A rebuild of a project that already has a published index never touches it while it runs:

1. the new state is built in a side DB (``state.next.db``) and the new vectors in a new LanceDB
   folder (``lance.<n>``); the run journal, the job log and the embedding cache stay in the
   main DB (so vectors computed by a killed rebuild are reused by the next one);
2. the swap is one SQLite transaction on the main DB: every index table is replaced by the side
   DB's rows and ``projects.lance_dir`` points at the new folder, so a reader sees either the
   old index or the new one, never a mix, and never nothing;
3. the old folder is recorded in ``retired_stores`` and deleted by a later run once no reader
   can still hold it (``store.KEEP_VERSIONS_FOR``); a folder or side DB left by a killed
   rebuild is deleted by the next run of any kind, before it writes anything.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from pathlib import Path

from local_memory_shared.lance_location import lance_location
from local_memory_shared.paths import ProjectPaths

from .state_writer import StateWriter

log = logging.getLogger(__name__)

SIDE_DB = "state.next.db"
#: Tables replaced by the swap; ``jobs``, ``runs`` and ``embed_cache`` belong to the main DB.
SWAPPED_TABLES = (
    "projects",
    "index_meta",
    "files",
    "chunks",
    "symbols",
    "call_edges",
    "import_edges",
    "graph_version",
    "publications",
    "parser",
)
_LANCE_NAME = re.compile(r"^lance(\.(\d+))?$")


def side_db(paths: ProjectPaths) -> Path:
    """Where a rebuild builds its state."""
    return paths.dir / SIDE_DB


def next_lance_name(paths: ProjectPaths) -> str:
    """A LanceDB folder name no existing folder uses: ``lance.<n>``."""
    taken = [0]
    for child in paths.dir.iterdir():
        m = _LANCE_NAME.match(child.name)
        if m and m.group(2):
            taken.append(int(m.group(2)))
    return f"lance.{max(taken) + 1}"


def remove_side_db(paths: ProjectPaths) -> None:
    """Delete the side DB and its WAL files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(side_db(paths)) + suffix).unlink(missing_ok=True)


def clean_leftovers(
    paths: ProjectPaths, main: StateWriter, grace_seconds: float, lance_uri: str | None = None
) -> list[str]:
    """Delete what killed rebuilds left and retired folders no reader can hold; names removed.

    With an object-store root (``lance_uri``) each local folder is the marker of a remote
    database of the same name, and both are deleted.
    """
    remove_side_db(paths)
    current = main.lance_name()
    cutoff = time.time() - grace_seconds
    keep = {
        row[0] for row in main.conn.execute("SELECT name FROM retired_stores WHERE retired_at > ?", (cutoff,))
    }
    removed = []
    for child in sorted(paths.dir.iterdir()):
        if _LANCE_NAME.match(child.name) and child.is_dir() and child.name not in keep | {current}:
            lance_location(paths.dir, child.name, lance_uri).remove()
            removed.append(child.name)
    with main.txn():
        main.conn.execute("DELETE FROM retired_stores WHERE retired_at <= ?", (cutoff,))
    if removed:
        log.info("removed LanceDB folder(s) no reader uses: %s", ", ".join(removed))
    return removed


def swap_in(main: StateWriter, side: sqlite3.Connection, lance_name: str) -> None:
    """Replace the main DB's index tables by the side DB's and point readers at ``lance_name``."""
    side.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    old = main.lance_name()
    path = side.execute("PRAGMA database_list").fetchone()["file"]
    main.conn.execute("ATTACH DATABASE ? AS next", (path,))
    try:
        with main.txn():
            for table in SWAPPED_TABLES:
                main.conn.execute(f'DELETE FROM main."{table}"')  # noqa: S608 - fixed names
                main.conn.execute(f'INSERT INTO main."{table}" SELECT * FROM next."{table}"')  # noqa: S608
            main.conn.execute(
                "UPDATE projects SET lance_dir = ? WHERE project_path = ?", (lance_name, main.project)
            )
            main.conn.execute(
                "INSERT INTO retired_stores(name, retired_at) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET retired_at = excluded.retired_at",
                (old, time.time()),
            )
    finally:
        main.conn.execute("DETACH DATABASE next")
