"""A state DB written by the previous schema build is upgraded in place; an unknown one is refused."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from local_memory_indexer.state_db import STATE_DDL_STAMP, UPGRADES, open_state_rw
from local_memory_shared.errors import ProvenanceMismatch
from local_memory_shared.schema import STATE_DDL

PENDING_COLUMN = (
    "    chunk_count  INTEGER NOT NULL,\n"
    "    vectors_pending INTEGER NOT NULL DEFAULT 0  -- 1: rows published before their vectors (keyword-only)\n"
)
PENDING_INDEX = (
    "-- Every search reads how much is still keyword-only: only pending files are in this index.\n"
    "CREATE INDEX IF NOT EXISTS files_vectors_pending ON files(path) WHERE vectors_pending = 1;\n"
)


def stamp_of(ddl: str) -> int:
    return int(hashlib.sha256(ddl.encode()).hexdigest()[:7], 16)


def before_parser_ddl() -> str:
    """The DDL of the build before the parser fingerprint's table, rebuilt from today's text."""
    start = STATE_DDL.index("-- What parsed the files this state describes")
    end = STATE_DDL.index("CREATE TABLE IF NOT EXISTS jobs (")
    return STATE_DDL[:start] + STATE_DDL[end:]


def previous_ddl() -> str:
    """The DDL of the build before two-phase publication, rebuilt from today's text."""
    ddl = before_parser_ddl()
    assert PENDING_COLUMN in ddl and PENDING_INDEX in ddl
    return ddl.replace(PENDING_COLUMN, "    chunk_count  INTEGER NOT NULL\n").replace(PENDING_INDEX, "")


def write_old_db(path: Path, ddl: str) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(ddl)
    conn.execute(
        "INSERT INTO files (path, content_hash, size, mtime, language, indexed_at, chunk_count) "
        "VALUES ('a.py', 'h', 1, 0.0, 'python', 'now', 3)"
    )
    conn.execute(f"PRAGMA user_version = {stamp_of(ddl)}")
    conn.commit()
    conn.close()


def test_the_upgrade_key_is_the_stamp_of_the_previous_ddl() -> None:
    assert stamp_of(previous_ddl()) in UPGRADES
    assert stamp_of(before_parser_ddl()) in UPGRADES


@pytest.mark.parametrize("ddl", [previous_ddl, before_parser_ddl])
def test_each_earlier_build_gains_the_parser_table_with_no_fingerprint(tmp_path: Path, ddl) -> None:
    db = tmp_path / "state.db"
    write_old_db(db, ddl())
    conn = open_state_rw(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == STATE_DDL_STAMP
        assert conn.execute("SELECT COUNT(*) FROM parser").fetchone()[0] == 0  # re-parsed by the next run
        assert conn.execute("SELECT COUNT(*) FROM files").fetchone()[0] == 1
    finally:
        conn.close()


def test_a_db_of_the_previous_build_is_upgraded_in_place_and_keeps_its_rows(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    write_old_db(db, previous_ddl())
    conn = open_state_rw(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == STATE_DDL_STAMP
        row = conn.execute("SELECT path, chunk_count, vectors_pending FROM files").fetchone()
        assert tuple(row) == ("a.py", 3, 0)
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        assert "files_vectors_pending" in names
    finally:
        conn.close()
    open_state_rw(db).close()  # a second open finds the current stamp: nothing to do


def test_a_db_of_an_unknown_build_is_still_refused_with_the_rebuild_advice(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    write_old_db(db, previous_ddl() + "-- a build this code has no upgrade for\n")
    with pytest.raises(ProvenanceMismatch) as err:
        open_state_rw(db)
    assert "--rebuild" in err.value.message
