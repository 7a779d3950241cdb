"""Agent memory records shared by the writer (indexer) and the read-only searcher."""

from .frontmatter import parse_record, serialise_record
from .model import (
    EPHEMERAL_KINDS,
    EXPIRING_KINDS,
    HIT_ELIGIBLE_KINDS,
    KINDS,
    SEVERITIES,
    STATUSES,
    MemoryRecord,
    build_record,
    canonical_time,
    project_for_cwd,
    project_slug,
    utc_now,
)
from .schema import (
    FTS_BOOSTS,
    FTS_COLUMNS,
    MEMORIES_TABLE,
    MEMORY_DDL,
    MEMORY_SCHEMA_VERSION,
    MemoryPaths,
    memory_arrow_schema,
    memory_paths,
    published_version,
)
from .uid import is_uid, new_uid

__all__ = [
    "EPHEMERAL_KINDS",
    "EXPIRING_KINDS",
    "FTS_BOOSTS",
    "FTS_COLUMNS",
    "HIT_ELIGIBLE_KINDS",
    "KINDS",
    "MEMORIES_TABLE",
    "MEMORY_DDL",
    "MEMORY_SCHEMA_VERSION",
    "SEVERITIES",
    "STATUSES",
    "MemoryPaths",
    "MemoryRecord",
    "build_record",
    "canonical_time",
    "is_uid",
    "memory_arrow_schema",
    "memory_paths",
    "new_uid",
    "parse_record",
    "project_for_cwd",
    "project_slug",
    "published_version",
    "serialise_record",
    "utc_now",
]
