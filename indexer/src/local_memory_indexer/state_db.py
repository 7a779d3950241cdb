"""The state DB's write side: only the indexer opens a project's state DB read-write (WAL).

Every read (``open_state_ro``, the typed rows, writer liveness) lives in
:mod:`local_memory_shared.state_reader`; this module is the one place that creates or resets
the tables. The version-bump rule is in :mod:`local_memory_shared.schema`'s docstring.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from pathlib import Path

from local_memory_shared.errors import ProvenanceMismatch, StoreError
from local_memory_shared.schema import STATE_DDL

__all__ = ["STATE_DDL_STAMP", "UPGRADES", "open_state_rw"]

log = logging.getLogger(__name__)


#: Stamped into ``PRAGMA user_version``: any change to the DDL changes it, so a state DB written
#: by another build of the schema is detected instead of failing later on a missing column.
STATE_DDL_STAMP = int(hashlib.sha256(STATE_DDL.encode()).hexdigest()[:7], 16)


#: In-place upgrades of a state DB written by an earlier schema build: the earlier build's stamp →
#: the statements that bring it to this one. Only additive changes belong here (a new column with
#: a default, a new index); anything else is refused with the ``--rebuild`` advice.
_PARSER_TABLE = (
    "CREATE TABLE IF NOT EXISTS parser (id INTEGER PRIMARY KEY CHECK (id = 1), fingerprint TEXT NOT NULL);\n"
)

UPGRADES: dict[int, str] = {
    # Two-phase publication (keyword rows before vectors): files.vectors_pending and its index.
    198612326: (
        "ALTER TABLE files ADD COLUMN vectors_pending INTEGER NOT NULL DEFAULT 0;\n"
        "CREATE INDEX IF NOT EXISTS files_vectors_pending ON files(path) WHERE vectors_pending = 1;\n"
        + _PARSER_TABLE
    ),
    # The parser fingerprint (``parse_identity``): an index without one is re-parsed once.
    118973948: _PARSER_TABLE,
}


def _upgrade(conn: sqlite3.Connection, stamp: int) -> bool:
    """Bring a DB of the build stamped ``stamp`` to this build in one transaction; False if unknown."""
    script = UPGRADES.get(stamp)
    if script is None:
        return False
    conn.executescript(f"BEGIN IMMEDIATE;\n{script}PRAGMA user_version = {STATE_DDL_STAMP};\nCOMMIT;")
    log.info("state DB upgraded in place from schema build %s to %s", stamp, STATE_DDL_STAMP)
    return True


def open_state_rw(path: Path, *, reset: bool = False) -> sqlite3.Connection:
    """Open (and create) the state DB for writing. Only the indexer calls this.

    ``reset`` drops every table first (``--rebuild``); without it a DB of another schema build
    is refused with the command that rebuilds it.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        stamp = conn.execute("PRAGMA user_version").fetchone()[0]
        if tables and stamp != STATE_DDL_STAMP and not reset and _upgrade(conn, stamp):
            stamp = STATE_DDL_STAMP
        if tables and stamp != STATE_DDL_STAMP:
            if not reset:
                conn.close()
                raise ProvenanceMismatch(
                    f"the state DB {path} was written by another schema build; rebuild the index with: "
                    "local-memory-indexer index PROJECT --rebuild",
                    details={"state_stamp": stamp, "expected_stamp": STATE_DDL_STAMP},
                )
        if reset:
            # A rebuild keeps the job log (the running job's own row lives there) unless the
            # schema itself changed.
            # The embedding cache is keyed by model, so it survives any rebuild while its own shape
            # is unchanged: a rebuild after a schema change re-embeds nothing.
            keep = {"jobs"} if stamp == STATE_DDL_STAMP else set()
            cache_cols = [r[1] for r in conn.execute("PRAGMA table_info(embed_cache)")]
            if cache_cols == ["model_key", "text_hash", "vector"]:
                keep.add("embed_cache")
            for name in tables:
                if name not in keep and not name.startswith("sqlite_"):
                    conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        conn.executescript(STATE_DDL)
        conn.execute(f"PRAGMA user_version = {STATE_DDL_STAMP}")
        return conn
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open state DB {path}: {exc}") from exc
