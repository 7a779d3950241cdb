"""The one owner of the storage schema: the chunk record, LanceDB's Arrow schema, the SQLite DDL.

``ChunkRecord`` is the typed chunk row. The indexer builds one per chunk and writes it with
``lance_row()`` (LanceDB) and ``mirror_values()`` (SQLite ``chunks``); readers decode mirror rows
with ``chunk_from_mirror``. ``tests/test_schema.py`` holds the Arrow schema, the ``chunks`` DDL and
the record's fields to one another.

**The one rule for version bumps.** Bump ``SCHEMA_VERSION`` when a chunk row changes: a field of
``ChunkRecord`` (and so the Arrow schema and the mirror DDL) or the meaning of a stored value.
Every search filters on it and ``doctor_index`` reports rows of another version. Nothing else is
bumped by hand: the state DB's stamp (``local_memory_indexer.state_db.STATE_DDL_STAMP``) is derived from ``STATE_DDL``, so
any DDL change (a new table too) makes an older state DB ask for ``index --rebuild``.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Imported by ``chunk_arrow_schema`` only: a process that never builds a LanceDB table (a
    # no-change re-index, ``indexer.unchanged``) never pays for pyarrow (~0.15 s).
    import pyarrow as pa

SCHEMA_VERSION = 1
CHUNKS_TABLE = "chunks"
#: Column that carries the BM25 (FTS) text: path words, qualified symbol, summary, text and
#: split identifiers (``parseConfig`` → ``parse config``), composed by the indexer.
FTS_COLUMN = "fts_text"
VECTOR_COLUMN = "vector"


def definition_terms(name: str) -> list[str]:
    """BM25 terms that say "this chunk *defines* ``name``": ``Client.send`` → defclientsend, defsend.

    The indexer adds them to a definition's FTS text and the searcher adds them to the keyword
    query for identifier-like tokens, so an exact name ranks its definition above the many
    chunks that merely mention its parts (``index_project`` → "index", "project").
    """
    parts = [p for p in re.split(r"\.|::|#", name) if p]
    keys = {"".join(parts), parts[-1]} if parts else set()
    return sorted("def" + k for k in (re.sub(r"[^0-9a-z]", "", k.lower()) for k in keys) if k)


#: Chunk fields an agent can see (``fields`` / ``exclude_fields`` choose among these).
CHUNK_FIELDS: tuple[str, ...] = (
    "chunk_id",
    "file_path",
    "language",
    "file_extension",
    "chunk_kind",
    "symbol_name",
    "class_name",
    "function_name",
    "chunk_index",
    "start_line",
    "end_line",
    "text",
    "summary",
    "tags",
    "updated_at",
    "last_commit_hash",
    "content_hash",
)


@dataclass(frozen=True)
class ChunkRecord:
    """One stored chunk row (without its vector), in the column order of LanceDB's table."""

    chunk_id: str
    project_path: str
    schema_version: int
    file_path: str
    language: str
    file_extension: str
    chunk_kind: str
    symbol_name: str
    class_name: str
    function_name: str
    chunk_index: int
    start_line: int
    end_line: int
    text: str
    summary: str
    fts_text: str
    tags: tuple[str, ...]
    updated_at: str
    last_commit_hash: str
    content_hash: str

    def lance_row(self) -> dict[str, Any]:
        """The row as LanceDB takes it (the caller adds the vector)."""
        row = {f.name: getattr(self, f.name) for f in fields(self)}
        row["tags"] = list(self.tags)
        return row

    def mirror_values(self) -> tuple[Any, ...]:
        """Values for the SQLite ``chunks`` mirror, in ``MIRROR_FIELDS`` order (tags as JSON)."""
        row = self.lance_row()
        row["tags"] = json.dumps(row["tags"])
        return tuple(row[name] for name in MIRROR_FIELDS)


#: Every stored field of a chunk (LanceDB columns minus the vector).
RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ChunkRecord))
#: Fields the SQLite ``chunks`` mirror keeps: all but the project (one DB per project) and the
#: FTS text (BM25 lives in LanceDB).
MIRROR_FIELDS: tuple[str, ...] = tuple(n for n in RECORD_FIELDS if n not in ("project_path", FTS_COLUMN))


def mirror_insert_sql() -> str:
    """The one INSERT statement for mirror rows."""
    return f"INSERT INTO chunks({', '.join(MIRROR_FIELDS)}) VALUES ({','.join('?' * len(MIRROR_FIELDS))})"


def chunk_from_mirror(row: sqlite3.Row | dict[str, Any]) -> dict[str, Any]:
    """A mirror (or LanceDB) row as the chunk dict agents see: ``CHUNK_FIELDS``, tags decoded."""
    out = {k: row[k] for k in CHUNK_FIELDS}
    tags = out["tags"]
    if isinstance(tags, str) or tags is None:
        try:
            tags = json.loads(tags or "[]")
        except (TypeError, ValueError):
            tags = []
    out["tags"] = list(tags)
    return out


def chunk_arrow_schema(dimension: int) -> pa.Schema:
    """Arrow schema of the LanceDB ``chunks`` table for vectors of ``dimension``."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("project_path", pa.string(), nullable=False),
            pa.field("schema_version", pa.int32(), nullable=False),
            pa.field("file_path", pa.string(), nullable=False),
            pa.field("language", pa.string()),
            pa.field("file_extension", pa.string()),
            pa.field("chunk_kind", pa.string()),
            pa.field("symbol_name", pa.string()),
            pa.field("class_name", pa.string()),
            pa.field("function_name", pa.string()),
            pa.field("chunk_index", pa.int32()),
            pa.field("start_line", pa.int32()),
            pa.field("end_line", pa.int32()),
            pa.field("text", pa.string()),
            pa.field("summary", pa.string()),
            pa.field(FTS_COLUMN, pa.string()),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("updated_at", pa.string()),
            pa.field("last_commit_hash", pa.string()),
            pa.field("content_hash", pa.string()),
            pa.field(VECTOR_COLUMN, pa.list_(pa.float32(), dimension)),
        ]
    )


STATE_DDL = """
CREATE TABLE IF NOT EXISTS projects (
    project_path      TEXT PRIMARY KEY,
    key               TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    last_indexed_at   TEXT,
    last_commit_hash  TEXT,
    published_version INTEGER,          -- LanceDB table version the searcher reads
    status            TEXT NOT NULL DEFAULT 'new',  -- new | indexing | ready | failed
    lance_dir         TEXT NOT NULL DEFAULT 'lance' -- LanceDB folder (in the project dir) readers open
);

-- Provenance (seed 003): which backend/model/dimension produced the vectors.
CREATE TABLE IF NOT EXISTS index_meta (
    project_path   TEXT PRIMARY KEY,
    backend        TEXT NOT NULL,
    model          TEXT NOT NULL,
    dimension      INTEGER NOT NULL,
    schema_version INTEGER NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS files (
    path         TEXT PRIMARY KEY,      -- repo-relative, '/'
    content_hash TEXT NOT NULL,
    size         INTEGER NOT NULL,
    mtime        REAL NOT NULL,
    language     TEXT,
    indexed_at   TEXT NOT NULL,
    chunk_count  INTEGER NOT NULL,
    vectors_pending INTEGER NOT NULL DEFAULT 0  -- 1: rows published before their vectors (keyword-only)
);
-- Every search reads how much is still keyword-only: only pending files are in this index.
CREATE INDEX IF NOT EXISTS files_vectors_pending ON files(path) WHERE vectors_pending = 1;

-- Mirror of the LanceDB rows without vectors: SQLite fallback, neighbours, doctor.
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id         TEXT PRIMARY KEY,
    file_path        TEXT NOT NULL,
    chunk_index      INTEGER NOT NULL,
    language         TEXT,
    file_extension   TEXT,
    chunk_kind       TEXT,
    symbol_name      TEXT,
    class_name       TEXT,
    function_name    TEXT,
    start_line       INTEGER NOT NULL,
    end_line         INTEGER NOT NULL,
    text             TEXT NOT NULL,
    summary          TEXT,
    tags             TEXT NOT NULL DEFAULT '[]',   -- JSON array
    updated_at       TEXT,
    last_commit_hash TEXT,
    content_hash     TEXT NOT NULL,
    schema_version   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks(file_path, chunk_index);

-- Code graph (owned by local_memory_indexer.graph; rows die with their file). Calls are stored
-- by name and resolved to definitions at query time, so editing one file never leaves another
-- file's edges pointing at dead rows.
CREATE TABLE IF NOT EXISTS symbols (
    id             INTEGER PRIMARY KEY,
    file_path      TEXT NOT NULL,
    name           TEXT NOT NULL,       -- short name: send
    qualified_name TEXT NOT NULL,       -- Client.send (classes nest within the file)
    kind           TEXT NOT NULL,       -- function | method | class | interface | struct | enum | trait | module | type
    language       TEXT,
    start_line     INTEGER NOT NULL,
    end_line       INTEGER NOT NULL,
    chunk_id       TEXT                 -- tightest chunk holding start_line
);
CREATE INDEX IF NOT EXISTS symbols_by_name ON symbols(name);
CREATE INDEX IF NOT EXISTS symbols_by_qname ON symbols(qualified_name);
CREATE INDEX IF NOT EXISTS symbols_by_file ON symbols(file_path);

CREATE TABLE IF NOT EXISTS call_edges (
    id               INTEGER PRIMARY KEY,
    file_path        TEXT NOT NULL,     -- file of the call site
    caller_symbol_id INTEGER,           -- enclosing definition (NULL = module level)
    caller_qualified TEXT NOT NULL,     -- '<module>' for module-level code
    callee_name      TEXT NOT NULL,     -- name as written at the call site (last segment)
    callee_text      TEXT,              -- full callee expression, e.g. self.client.send
    line             INTEGER NOT NULL,
    dynamic          INTEGER NOT NULL DEFAULT 0,  -- 1: target computed at run time (getattr, obj[k]())
    language         TEXT,
    receiver_type    TEXT               -- declared/constructed type of the receiver: c = Client(); c.send()
);
CREATE INDEX IF NOT EXISTS call_edges_by_callee ON call_edges(callee_name);
CREATE INDEX IF NOT EXISTS call_edges_by_caller ON call_edges(caller_symbol_id);
CREATE INDEX IF NOT EXISTS call_edges_by_file ON call_edges(file_path);

CREATE TABLE IF NOT EXISTS import_edges (
    id            INTEGER PRIMARY KEY,
    file_path     TEXT NOT NULL,
    module        TEXT NOT NULL,        -- as written
    resolved_path TEXT,                 -- project file (or package folder) it resolves to, if any
    line          INTEGER NOT NULL,
    resolved_kind TEXT,                 -- file | directory (Go packages, Java wildcards)
    names         TEXT NOT NULL DEFAULT '[]',   -- JSON array: names imported from the module
    language      TEXT
);
CREATE INDEX IF NOT EXISTS import_edges_by_file ON import_edges(file_path);
CREATE INDEX IF NOT EXISTS import_edges_by_target ON import_edges(resolved_path);

-- Bumped in the same transaction as every graph change: a reader's snapshot sees the version of
-- the rows it reads, so the searcher can keep resolved call edges in memory between calls.
CREATE TABLE IF NOT EXISTS graph_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    nonce   TEXT NOT NULL,              -- random per state DB: a recreated DB never reuses a version
    version INTEGER NOT NULL
);

-- What parsed the files this state describes: ``local_memory_indexer.parse_identity``'s fingerprint
-- (the chunker's and the graph extractor's revision, the tags queries' text). A run that finds
-- another one re-parses every file, so an upgrade's new symbols reach existing indexes.
CREATE TABLE IF NOT EXISTS parser (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    fingerprint TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS jobs (
    job_id          TEXT PRIMARY KEY,
    project_path    TEXT NOT NULL,
    status          TEXT NOT NULL,      -- running | done | failed | cancelled
    phase           TEXT NOT NULL,
    files_total     INTEGER NOT NULL DEFAULT 0,
    files_done      INTEGER NOT NULL DEFAULT 0,
    chunks_total    INTEGER NOT NULL DEFAULT 0,
    chunks_embedded INTEGER NOT NULL DEFAULT 0,
    started_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    finished_at     TEXT,
    errors          TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
    summary         TEXT,                         -- JSON summary when done
    pid             INTEGER
);

-- Unchanged text is never embedded twice: keyed by (backend:model:dimension, sha256(text)).
CREATE TABLE IF NOT EXISTS embed_cache (
    model_key TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (model_key, text_hash)
);

-- Run journal: a row per index run, closed with its outcome. A row left open (outcome NULL) while
-- no process holds writer.lock is a run that was killed; the next run repairs after it.
CREATE TABLE IF NOT EXISTS runs (
    run_id      INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,          -- index | full | rebuild
    pid         INTEGER NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    outcome     TEXT                    -- NULL: running or killed | done | cancelled | failed
);

-- Every LanceDB version ever published, so old versions are pruned only once no reader can hold
-- them (superseded longer ago than the grace period).
CREATE TABLE IF NOT EXISTS publications (
    version      INTEGER PRIMARY KEY,
    published_at REAL NOT NULL          -- unix time
);

-- LanceDB folders a --rebuild swapped out: kept until no reader can still hold them.
CREATE TABLE IF NOT EXISTS retired_stores (
    name       TEXT PRIMARY KEY,        -- folder name in the project dir, e.g. lance.2
    retired_at REAL NOT NULL            -- unix time of the swap
);
"""
