"""One rooted exception tree with stable string codes.

    LocalMemoryError                 code=INTERNAL
     ├── InvalidArgument             code=INVALID_ARGUMENT   (.field names the offending argument)
     │    └── MalformedRecord        code=MALFORMED_RECORD   (a vault file: details.path, details.line)
     ├── NotIndexed                  code=NOT_INDEXED
     ├── NotFound                    code=NOT_FOUND
     ├── ReadOnlyViolation           code=READONLY_VIOLATION
     ├── ProvenanceMismatch          code=PROVENANCE_MISMATCH
     ├── IndexLocked                 code=INDEX_LOCKED
     ├── StoreError                  code=STORE_ERROR
     ├── VersionConflict             code=VERSION_CONFLICT   (memory edit with a stale expected_version)
     └── EmbeddingError              code=EMBEDDING_UNAVAILABLE
          └── DimensionMismatch      code=DIMENSION_MISMATCH

Foreign errors (sqlite3, lancedb, httpx, tree-sitter) are mapped at the boundary with
``raise X from exc``. Codes are part of the frozen contract: never rename one.
"""

from __future__ import annotations

from typing import Any


class LocalMemoryError(Exception):
    """Root of every error this project raises on purpose."""

    code = "INTERNAL"

    def __init__(self, message: str, *, field: str | None = None, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        self.field = field
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        """The error object of the response envelope."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field is not None:
            out["field"] = self.field
        if self.details:
            out["details"] = self.details
        return out


class InvalidArgument(LocalMemoryError):
    """A tool or CLI argument is missing, of the wrong type or out of bounds."""

    code = "INVALID_ARGUMENT"


class NotIndexed(LocalMemoryError):
    """The project has no index (or no completed index) under the data root."""

    code = "NOT_INDEXED"


class NotFound(LocalMemoryError):
    """A chunk, file, job or symbol that was asked for does not exist."""

    code = "NOT_FOUND"


class ReadOnlyViolation(LocalMemoryError):
    """The read-only searcher attempted a write."""

    code = "READONLY_VIOLATION"


class ProvenanceMismatch(LocalMemoryError):
    """Indexing with another backend/model/dimension than the existing index."""

    code = "PROVENANCE_MISMATCH"


class IndexLocked(LocalMemoryError):
    """Another writer holds the project's index lock."""

    code = "INDEX_LOCKED"


class StoreError(LocalMemoryError):
    """LanceDB or SQLite failed underneath us."""

    code = "STORE_ERROR"


class EmbeddingError(LocalMemoryError):
    """The embedding backend is unreachable, refused, or answered garbage."""

    code = "EMBEDDING_UNAVAILABLE"


class DimensionMismatch(EmbeddingError):
    """A vector's dimension differs from the one expected."""

    code = "DIMENSION_MISMATCH"


class MalformedRecord(InvalidArgument):
    """A memory file in the vault has frontmatter that does not parse or validate."""

    code = "MALFORMED_RECORD"


class VersionConflict(LocalMemoryError):
    """A memory edit named an ``expected_version`` that is no longer the record's version."""

    code = "VERSION_CONFLICT"
