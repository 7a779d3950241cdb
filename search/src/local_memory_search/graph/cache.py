"""What resolving calls learns about one version of one graph, kept across queries until the graph changes."""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from .records import CallEdge, Resolution, Symbol

if TYPE_CHECKING:
    from .scope import Candidates, ImportScope

#: graph versions kept in memory (each holds at most one resolution per stored call site)
MAX_CACHED_GRAPHS = 4


class GraphCache:
    """The memo of one graph version; shared by every query that reads that version."""

    def __init__(self) -> None:
        self.named: dict[str, list[Symbol]] = {}
        self.by_id: dict[int, Symbol] = {}
        self.by_key: dict[str, list[Symbol]] = {}
        self.scopes: dict[str, ImportScope] = {}
        self.aliases: dict[str, set[str]] = {}
        self.resolved: dict[tuple[Any, ...], Resolution] = {}
        self.candidates: dict[tuple[str, bool], Candidates] = {}
        self.edges_by_name: dict[str, list[CallEdge]] = {}
        self.edges_by_caller: dict[int | str, list[CallEdge]] = {}


class GraphCaches:
    """Per-version graph memos, least recently used first out; ``clear()`` forgets them all.

    A version is ``(db file, nonce, version)`` from the state DB's ``graph_version`` row, which every
    indexer write bumps in its own transaction, so a changed index is never answered from memory.
    """

    def __init__(self, capacity: int = MAX_CACHED_GRAPHS) -> None:
        self.capacity = capacity
        self._caches: OrderedDict[tuple[Any, ...], GraphCache] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every cached graph version."""
        with self._lock:
            self._caches.clear()

    def __len__(self) -> int:
        return len(self._caches)

    def for_connection(self, conn: sqlite3.Connection) -> GraphCache:
        """The memo of the graph version ``conn`` sees (a fresh, unshared one when it is not versioned)."""
        token = graph_token(conn)
        if token is None:
            return GraphCache()
        with self._lock:
            cache = self._caches.get(token)
            if cache is None:
                cache = self._caches[token] = GraphCache()
                while len(self._caches) > self.capacity:
                    self._caches.popitem(last=False)
            self._caches.move_to_end(token)
            return cache


#: the process-wide memo the graph queries use unless given another
GRAPH_CACHES = GraphCaches()


def clear_graph_cache() -> None:
    """Forget every cached graph version (benchmarks measure cold calls with it)."""
    GRAPH_CACHES.clear()


def graph_token(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
    """``(db file, nonce, version)`` as this connection's snapshot sees it; None when not versioned."""
    try:
        row = conn.execute("SELECT nonce, version FROM graph_version WHERE id = 1").fetchone()
        files = [r[2] for r in conn.execute("PRAGMA database_list").fetchall() if r[1] == "main"]
    except sqlite3.Error:
        return None  # a state DB from before graph_version: no sharing, every call reads afresh
    if row is None or not files or not files[0]:
        return None
    return (files[0], row[0], row[1])
