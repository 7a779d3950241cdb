"""The one owner of the memory index's storage: where it lives, the LanceDB ``memories`` schema,
the SQLite DDL and ``MEMORY_SCHEMA_VERSION``.

    <vault>                                 LOCAL_MEMORY_VAULT, default <data_root>/vault (a git repo)
    <data_root>/memory/lance/               LanceDB database holding table ``memories``
    <data_root>/memory/index.db             SQLite (WAL): memory_meta, memory_files, memory_links,
                                            memory_hits, hit_sessions
    <data_root>/memory/writer.lock          the writer lock (flock) every vault write holds
    <data_root>/writer.sock                 Unix socket (0600) the running indexer receives hits on

Publication: the writer adds/updates LanceDB rows first, then in one SQLite transaction updates
``memory_files``/``memory_links`` and ``memory_meta.published_version``. A reader opens the table
read-only and checks out ``published_version`` (see :func:`published_version`), so it never sees
a half-applied write. Every vault record is one row; the index is disposable (``memory rebuild``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Imported by ``memory_arrow_schema`` only: the indexer CLI imports this package for its
    # ``memory`` sub-commands, and an ``index`` run must not pay for pyarrow (~0.15 s).
    import pyarrow as pa

MEMORY_SCHEMA_VERSION = 1
MEMORIES_TABLE = "memories"
VECTOR_COLUMN = "vector"
#: Multi-column FTS: each column has its own FTS index; queries use MultiMatchQuery with these boosts.
FTS_BOOSTS: dict[str, float] = {"title": 1.5, "content": 1.0, "tags": 0.8, "domain": 0.3, "also": 0.3}
FTS_COLUMNS: tuple[str, ...] = tuple(FTS_BOOSTS)
#: The searcher's full-text leg: an SQLite FTS5 table in index.db with one row per record of the
#: published version (columns ``FTS_COLUMNS``; list columns joined by spaces), porter stemming
#: over unicode61 words, ranked by ``bm25()`` with ``FTS_BOOSTS`` as column weights. Its rowid is
#: the record's ``docid`` in ``memory_fts_ids``: ``slot << FTS5_PROJECT_SHIFT`` + a sequence, the
#: slot being its project's in ``memory_fts_projects``, so a project's records are one rowid range
#: (:func:`project_docids`) that FTS5 seeks to instead of scoring every project's matches. The writer
#: changes the rows in the transaction that publishes the LanceDB version and records that version
#: as ``memory_meta.fts_version``: a reader whose pinned version differs (an index written by an
#: older writer) falls back to LanceDB's FTS.
FTS5_TABLE = "memory_fts"
FTS5_IDS_TABLE = "memory_fts_ids"
FTS5_PROJECTS_TABLE = "memory_fts_projects"
FTS5_PROJECT_SHIFT = 32
FTS5_TOKENIZE = "porter unicode61"
FTS5_VERSION_KEY = "fts_version"
SOCKET_NAME = "writer.sock"


@dataclass(frozen=True)
class MemoryPaths:
    """Files of the memory index under one data root, and the vault."""

    data_root: Path
    vault: Path

    @property
    def dir(self) -> Path:
        return self.data_root / "memory"

    @property
    def lance_dir(self) -> Path:
        return self.dir / "lance"

    @property
    def index_db(self) -> Path:
        return self.dir / "index.db"

    @property
    def lock_file(self) -> Path:
        return self.dir / "writer.lock"

    @property
    def socket(self) -> Path:
        return self.data_root / SOCKET_NAME


def memory_paths(data_root: Path, vault: Path | None = None) -> MemoryPaths:
    """Paths for ``data_root``; the vault defaults to ``<data_root>/vault``."""
    root = Path(data_root).expanduser()
    return MemoryPaths(data_root=root, vault=Path(vault).expanduser() if vault else root / "vault")


def memory_arrow_schema(dimension: int) -> pa.Schema:
    """Arrow schema of the LanceDB ``memories`` table (times are canonical ``...Z`` strings)."""
    import pyarrow as pa

    s, ls = pa.string(), pa.list_(pa.string())
    return pa.schema(
        [
            pa.field("id", s, nullable=False),
            pa.field("project", s, nullable=False),
            pa.field("kind", s, nullable=False),
            pa.field("status", s, nullable=False),
            pa.field("title", s, nullable=False),
            pa.field("content", s, nullable=False),
            pa.field("tags", ls),
            pa.field("domain", s),
            pa.field("tree_labels", ls),
            pa.field("also", ls),
            pa.field("paths", ls),
            pa.field("severity", s),
            pa.field("confidence", pa.float64()),
            pa.field("meta", pa.json_(pa.utf8())),
            pa.field("created", s, nullable=False),
            pa.field("updated", s, nullable=False),
            pa.field("created_by", s),
            pa.field("valid_from", s),
            pa.field("valid_to", s),
            pa.field("expires", s),
            pa.field("supersedes", ls),
            pa.field("succeeded_by", s),
            pa.field("contradicted_by", ls),
            pa.field("links", ls),
            pa.field("occurrences", pa.int32(), nullable=False),
            pa.field("last_seen", s),
            pa.field("hits", pa.int32(), nullable=False),
            pa.field("last_hit", s),
            pa.field("version", pa.int32(), nullable=False),
            pa.field("version_hash", s, nullable=False),
            pa.field("file_path", s, nullable=False),
            pa.field("schema_version", pa.int32(), nullable=False),
            pa.field(VECTOR_COLUMN, pa.list_(pa.float32(), dimension)),
        ]
    )


MEMORY_DDL = (
    """
-- key/value: published_version (LanceDB version readers check out), fts_version (the version the
-- FTS5 rows mirror), backend, model, dimension, schema_version, rebuilt_at.
CREATE TABLE IF NOT EXISTS memory_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- One row per Markdown file under <vault>/projects/*/*/ (malformed ones too, with their error).
CREATE TABLE IF NOT EXISTS memory_files (
    path         TEXT PRIMARY KEY,      -- vault-relative, '/'
    id           TEXT,                  -- NULL when the file is malformed
    project      TEXT NOT NULL,
    kind         TEXT NOT NULL,
    content_hash TEXT NOT NULL,         -- sha256 of the file bytes
    mtime        REAL NOT NULL,
    size         INTEGER NOT NULL,
    version      INTEGER,
    indexed_at   TEXT NOT NULL,
    error        TEXT,                  -- MALFORMED_RECORD message, NULL when valid
    error_line   INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS memory_files_by_id ON memory_files(id) WHERE id IS NOT NULL;

-- link_type: supersedes | succeeded_by | contradicted_by | links | mentions (a uid in the body).
CREATE TABLE IF NOT EXISTS memory_links (
    source_id      TEXT NOT NULL,
    target_id      TEXT NOT NULL,
    link_type      TEXT NOT NULL,
    source_project TEXT NOT NULL,
    PRIMARY KEY (source_id, target_id, link_type)
);
CREATE INDEX IF NOT EXISTS memory_links_by_target ON memory_links(target_id);

-- Live hit counters (authoritative between flushes); flushed_hits = what the frontmatter holds.
CREATE TABLE IF NOT EXISTS memory_hits (
    id           TEXT PRIMARY KEY,
    hits         INTEGER NOT NULL,
    last_hit     TEXT,
    flushed_hits INTEGER NOT NULL DEFAULT 0
);

-- Seed 000 session de-dupe: one hit per (session, record), rows older than 7 days are purged.
CREATE TABLE IF NOT EXISTS hit_sessions (
    session_id TEXT NOT NULL,
    id         TEXT NOT NULL,
    seen_at    TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
);
"""
    # Full-text leg (see FTS5_TABLE): docid = the FTS5 rowid of a record, stable while it exists.
    + f"CREATE TABLE IF NOT EXISTS {FTS5_IDS_TABLE} (docid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE);\n"
    f"CREATE TABLE IF NOT EXISTS {FTS5_PROJECTS_TABLE} (slot INTEGER PRIMARY KEY, project TEXT NOT NULL UNIQUE);\n"
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS5_TABLE} USING fts5({', '.join(FTS_COLUMNS)},"
    f" tokenize='{FTS5_TOKENIZE}');\n"
)


def project_docids(slot: int) -> tuple[int, int]:
    """The first and last FTS5 docid of the project in ``slot`` (see ``FTS5_TABLE``)."""
    return slot << FTS5_PROJECT_SHIFT, ((slot + 1) << FTS5_PROJECT_SHIFT) - 1


def published_version(conn: sqlite3.Connection) -> int | None:
    """The LanceDB ``memories`` version readers must check out (None before the first write)."""
    row = conn.execute("SELECT value FROM memory_meta WHERE key = 'published_version'").fetchone()
    return int(row[0]) if row else None
