"""The chunk record, LanceDB's Arrow schema and the SQLite mirror DDL describe one row."""

from __future__ import annotations

import sqlite3

from local_memory_shared.schema import (
    CHUNK_FIELDS,
    MIRROR_FIELDS,
    RECORD_FIELDS,
    STATE_DDL,
    VECTOR_COLUMN,
    ChunkRecord,
    chunk_arrow_schema,
    chunk_from_mirror,
    mirror_insert_sql,
)


def mirror_columns() -> list[str]:
    conn = sqlite3.connect(":memory:")
    conn.executescript(STATE_DDL)
    return [row[1] for row in conn.execute("PRAGMA table_info(chunks)")]


def sample() -> ChunkRecord:
    return ChunkRecord(
        chunk_id="a.py:function:f:0", project_path="/p", schema_version=1, file_path="a.py", language="python",
        file_extension="py", chunk_kind="function", symbol_name="f", class_name="", function_name="f",
        chunk_index=0, start_line=1, end_line=2, text="def f(): pass", summary="f", fts_text="a py f",
        tags=("function", "python", "py"), updated_at="2026-01-01T00:00:00Z", last_commit_hash="", content_hash="h",
    )  # fmt: skip


def test_arrow_schema_is_the_record_plus_the_vector() -> None:
    assert chunk_arrow_schema(8).names == [*RECORD_FIELDS, VECTOR_COLUMN]


def test_the_mirror_ddl_holds_the_mirror_fields_and_every_visible_field() -> None:
    assert sorted(mirror_columns()) == sorted(MIRROR_FIELDS)
    assert set(CHUNK_FIELDS) <= set(MIRROR_FIELDS) <= set(RECORD_FIELDS)


def test_a_record_round_trips_through_the_mirror() -> None:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.executescript(STATE_DDL)
    record = sample()
    conn.execute(mirror_insert_sql(), record.mirror_values())
    row = conn.execute("SELECT * FROM chunks").fetchone()
    expected = {k: v for k, v in record.lance_row().items() if k in CHUNK_FIELDS}
    assert chunk_from_mirror(row) == expected
    assert chunk_from_mirror(record.lance_row()) == expected  # a LanceDB row decodes the same way
