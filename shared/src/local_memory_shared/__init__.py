"""What the Local Memory indexer and searcher share, and nothing more.

Config (``config``), data-root layout (``paths``), the LanceDB/SQLite schema and
``SCHEMA_VERSION`` (``schema``), the state DB helpers (``state``),
embedding backends (``embedding``), the response envelope (``envelope``)
and the rooted exception tree (``errors``).
"""

__version__ = "0.1.0"
