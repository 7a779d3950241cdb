"""Read-only SQL access to the graph tables, memoised per graph version (see ``cache``)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from local_memory_shared.errors import StoreError

from .cache import GRAPH_CACHES, GraphCache
from .records import DYNAMIC, EDGE_COLUMNS, MODULE, SYMBOL_COLUMNS, CallEdge, Symbol, chunks, symbol
from .scope import ImportScope


class SqlReader:
    """Read-only access to the graph tables through one connection (resolution lives in ``resolve``).

    What it resolves is kept per graph version (``graph_version``, bumped by every indexer write in
    the same transaction), so later calls on an unchanged index skip the work, and a changed
    index is never answered from stale memory.
    """

    def __init__(self, conn: sqlite3.Connection, cache: GraphCache | None = None):
        self.conn = conn
        shared = cache if cache is not None else GRAPH_CACHES.for_connection(conn)
        self._named = shared.named
        self._by_id = shared.by_id
        self._by_key = shared.by_key
        self._scopes = shared.scopes
        self._aliases = shared.aliases
        self._resolved = shared.resolved
        self._candidates = shared.candidates
        self._edges_by_name = shared.edges_by_name
        self._edges_by_caller = shared.edges_by_caller
        # the chunk mirror is the pipeline's, not versioned with the graph: per call only
        self._module_chunks: dict[tuple[str, int], str | None] = {}

    # --- raw access ----------------------------------------------------------------------------

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Rows of ``sql`` as plain tuples (``sqlite3.Row`` costs too much at graph volumes)."""
        try:
            cursor = self.conn.cursor()
            cursor.row_factory = None
            return cursor.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the code graph: {exc}") from exc

    def named(self, name: str) -> list[Symbol]:
        """Every definition called ``name``."""
        found = self._named.get(name)
        if found is None:
            found = [
                symbol(r) for r in self.query(f"SELECT {SYMBOL_COLUMNS} FROM symbols WHERE name = ?", (name,))
            ]
            self._named[name] = found
            for s in found:
                self._by_id[s.id] = s  # type: ignore[index]
        return found

    def by_id(self, symbol_id: int | None) -> Symbol | None:
        """The definition with row id ``symbol_id``."""
        if symbol_id is None:
            return None
        found = self._by_id.get(symbol_id)
        if found is None:
            rows = self.query(f"SELECT {SYMBOL_COLUMNS} FROM symbols WHERE id = ?", (symbol_id,))
            if not rows:
                return None
            found = self._by_id[symbol_id] = symbol(rows[0])
        return found

    def rows_of(self, key: str) -> list[Symbol]:
        """All rows of a logical symbol (overloads share a key)."""
        return self._by_key.get(key, [])

    def remember(self, symbols: list[Symbol]) -> None:
        """Record the rows behind each key seen, so a key can be expanded later."""
        for s in symbols:
            rows = self._by_key.setdefault(s.key, [])
            if s not in rows:
                rows.append(s)

    def module_symbol(self, file_path: str, line: int) -> Symbol:
        """The ``<module>`` pseudo-definition of ``file_path``, with the chunk around ``line``."""
        cache_key = (file_path, line)
        if cache_key not in self._module_chunks:
            try:
                row = self.conn.execute(
                    "SELECT chunk_id FROM chunks WHERE file_path = ? AND start_line <= ? AND end_line >= ? "
                    "ORDER BY end_line - start_line LIMIT 1",
                    (file_path, line, line),
                ).fetchone()
            except sqlite3.Error:
                row = None  # the chunks mirror belongs to the pipeline; the graph answers without it
            self._module_chunks[cache_key] = row[0] if row else None
        return Symbol(
            None, file_path, MODULE, MODULE, "module", line, line, self._module_chunks[cache_key], None
        )

    def scope(self, file_path: str) -> ImportScope:
        """What ``file_path`` imports."""
        found = self._scopes.get(file_path)
        if found is None:
            self._load_scopes([file_path])
            found = self._scopes[file_path]
        return found

    def _load_scopes(self, files: list[str]) -> None:
        missing = sorted(set(files) - self._scopes.keys())
        scopes = {f: ImportScope() for f in missing}
        for chunk in chunks(missing):
            for path, module, target, kind, names in self.query(
                "SELECT file_path, module, resolved_path, resolved_kind, names FROM import_edges "
                f"WHERE file_path IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            ):
                scopes[path].add(module, target, kind, json.loads(names or "[]"))
        self._scopes.update(scopes)

    def imports_of(self, file_path: str) -> tuple[frozenset[str], frozenset[str]]:
        """Project files and package folders ``file_path`` imports."""
        scope = self.scope(file_path)
        return frozenset(scope.files), frozenset(scope.dirs)

    def reexported(self, files: frozenset[str], name: str) -> frozenset[str]:
        """Files that ``files`` import ``name`` from: one hop through ``__init__`` / ``index`` re-exports."""
        out: set[str] = set()
        for f in files:
            out |= self.scope(f).names.get(name, set())
        return frozenset(out - files)

    def aliases_of(self, name: str) -> set[str]:
        """Local names ``name`` is imported under somewhere (``from x import name as alias``)."""
        if not self._aliases:
            # one scan per graph version: aliases are few, and every callers query needs them
            self._aliases["\0loaded"] = set()
            for (names,) in self.query(
                "SELECT names FROM import_edges WHERE resolved_path IS NOT NULL AND names LIKE '% as %'"
            ):
                for entry in json.loads(names):
                    exported, _, local = entry.partition(" as ")
                    if local and exported not in ("*", "default"):
                        self._aliases.setdefault(exported, set()).add(local)
        return self._aliases.get(name, set())

    def edges_calling(self, names: list[str]) -> list[CallEdge]:
        """Static call sites whose callee is written as one of ``names`` (one query per 500 new names)."""
        missing = sorted(set(names) - self._edges_by_name.keys())
        fetched: dict[str, list[CallEdge]] = {n: [] for n in missing}
        for chunk in chunks(missing):
            for r in self.query(
                f"SELECT {EDGE_COLUMNS} FROM call_edges WHERE dynamic = 0 AND callee_name IN "
                f"({','.join('?' * len(chunk))})",
                tuple(chunk),
            ):
                edge = CallEdge(*r)
                fetched[edge.callee_name].append(edge)
        self.prefetch([e for group in fetched.values() for e in group])
        self._edges_by_name.update(fetched)
        edges = [e for n in set(names) for e in self._edges_by_name[n]]
        edges.sort(key=lambda e: (e.file_path, e.line, e.id))
        return edges

    def dynamic_naming(self, name: str) -> list[CallEdge]:
        """Dynamic call sites whose literal names ``name`` (``getattr(o, "name")``)."""
        return [
            CallEdge(*r)
            for r in self.query(
                f"SELECT {EDGE_COLUMNS} FROM call_edges WHERE callee_name = ? AND dynamic = 1", (name,)
            )
        ]

    def edges_from(self, symbols: list[Symbol]) -> list[CallEdge]:
        """Call sites inside ``symbols`` (static and dynamic; ``<module>`` means top-level code)."""
        keys: list[int | str] = sorted({s.id if s.id is not None else s.file_path for s in symbols}, key=str)
        ids = [k for k in keys if isinstance(k, int) and k not in self._edges_by_caller]
        fetched: dict[int | str, list[CallEdge]] = {k: [] for k in ids}
        for chunk in chunks(ids):
            for r in self.query(
                f"SELECT {EDGE_COLUMNS} FROM call_edges WHERE caller_symbol_id IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            ):
                edge = CallEdge(*r)
                fetched[edge.caller_symbol_id].append(edge)  # type: ignore[index]
        for path in (k for k in keys if isinstance(k, str) and k not in self._edges_by_caller):
            fetched[path] = [
                CallEdge(*r)
                for r in self.query(
                    f"SELECT {EDGE_COLUMNS} FROM call_edges WHERE file_path = ? AND caller_symbol_id IS NULL",
                    (path,),
                )
            ]
        self.prefetch([e for group in fetched.values() for e in group])
        self._edges_by_caller.update(fetched)
        edges = [e for k in keys for e in self._edges_by_caller[k]]
        edges.sort(key=lambda e: (e.file_path, e.line, e.id))
        return edges

    def prefetch(self, edges: list[CallEdge]) -> None:
        """Load, in a few queries, the callers, imports and candidates that resolving ``edges`` needs."""
        ids = sorted(
            {e.caller_symbol_id for e in edges if e.caller_symbol_id is not None} - self._by_id.keys()
        )
        for chunk in chunks(ids):
            for r in self.query(
                f"SELECT {SYMBOL_COLUMNS} FROM symbols WHERE id IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            ):
                self._by_id[r[0]] = symbol(r)
        self._load_scopes(sorted({e.file_path for e in edges}))
        names = sorted({e.callee_name for e in edges if not e.dynamic} - self._named.keys())
        fetched: dict[str, list[Symbol]] = {n: [] for n in names}
        for chunk in chunks(names):
            for r in self.query(
                f"SELECT {SYMBOL_COLUMNS} FROM symbols WHERE name IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            ):
                found = symbol(r)
                fetched[found.name].append(found)
                self._by_id[found.id] = found  # type: ignore[index]
        self._named.update(fetched)

    def count_anonymous_dynamic(self) -> int:
        """Dynamic call sites whose target no literal names (``handlers[key]()``)."""
        return int(
            self.query("SELECT count(*) FROM call_edges WHERE dynamic = 1 AND callee_name = ?", (DYNAMIC,))[
                0
            ][0]
        )
