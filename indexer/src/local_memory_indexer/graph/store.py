"""Write one file's graph rows (``symbols``, ``call_edges``, ``import_edges``) into the state DB.

Every function runs inside the caller's transaction: the pipeline publishes a file's chunks
and its graph together, so a crash never leaves half a file. Nothing here begins or commits.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict

from local_memory_shared.errors import StoreError

from .extract import MODULE_CALLER, FileGraph, ImportRef
from .resolve import project_index, resolve_import


def bump_graph_version(conn: sqlite3.Connection) -> None:
    """Mark the graph changed (the searcher's in-memory resolutions of older versions are dropped)."""
    try:
        conn.execute(
            "INSERT INTO graph_version (id, nonce, version) VALUES (1, lower(hex(randomblob(8))), 1) "
            "ON CONFLICT(id) DO UPDATE SET version = version + 1"
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot bump the graph version: {exc}") from exc


def delete_file_graph(conn: sqlite3.Connection, file_path: str) -> None:
    """Remove every graph row that came from ``file_path`` (edited or deleted file)."""
    try:
        conn.execute("DELETE FROM call_edges WHERE file_path = ?", (file_path,))
        conn.execute("DELETE FROM import_edges WHERE file_path = ?", (file_path,))
        conn.execute("DELETE FROM symbols WHERE file_path = ?", (file_path,))
        bump_graph_version(conn)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot delete graph rows of {file_path}: {exc}") from exc


def chunk_for_span(chunk_spans: list[tuple[str, int, int]], start_line: int, end_line: int) -> str | None:
    """The tightest chunk holding ``start_line``; else the first chunk overlapping the span."""
    holding = [c for c in chunk_spans if c[1] <= start_line <= c[2]]
    if holding:
        return min(holding, key=lambda c: (c[2] - c[1], -c[1]))[0]
    overlapping = [c for c in chunk_spans if c[1] <= end_line and c[2] >= start_line]
    return min(overlapping, key=lambda c: c[1])[0] if overlapping else None


def write_file_graph(
    conn: sqlite3.Connection,
    file_path: str,
    language: str,
    graph: FileGraph,
    chunk_spans: list[tuple[str, int, int]],
    project_files: frozenset[str],
) -> None:
    """Replace ``file_path``'s graph rows with ``graph``, resolving its imports to project files."""
    delete_file_graph(conn, file_path)
    try:
        conn.executemany(
            "INSERT INTO symbols (file_path, name, qualified_name, kind, language, start_line, end_line, chunk_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    file_path,
                    s.name,
                    s.qualified_name,
                    s.kind,
                    language,
                    s.start_line,
                    s.end_line,
                    chunk_for_span(chunk_spans, s.start_line, s.end_line),
                )
                for s in graph.symbols
            ],
        )
        ids = _symbol_ids(conn, file_path)
        conn.executemany(
            "INSERT INTO call_edges (file_path, caller_symbol_id, caller_qualified, callee_name, callee_text, "
            "line, dynamic, language, receiver_type) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    file_path,
                    _caller_id(ids, call.caller_qualified, call.line),
                    call.caller_qualified,
                    call.callee_name,
                    call.callee_text,
                    call.line,
                    int(call.dynamic),
                    language,
                    call.receiver_type,
                )
                for call in graph.calls
            ],
        )
        _insert_imports(conn, file_path, language, graph.imports, project_files)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot write graph rows of {file_path}: {exc}") from exc


def reresolve_imports(conn: sqlite3.Connection, project_files: frozenset[str]) -> int:
    """Re-resolve every import after files were added or removed; returns the rows changed.

    An import is resolved when its file is written; a target created (or deleted) later would
    otherwise stay unresolved (or dangle) until the importing file itself changes.
    """
    try:
        rows = conn.execute(
            "SELECT file_path, module, line, names, language, group_concat(coalesce(resolved_path, ''), '\n') "
            "FROM import_edges GROUP BY file_path, module, line, names, language"
        ).fetchall()
        changed = 0
        for file_path, module, line, names, language, resolved in rows:
            ref = ImportRef(module, line, tuple(json.loads(names)))
            targets = resolve_import(language or "", file_path, ref, project_index(project_files))
            before = sorted(p for p in resolved.split("\n") if p)
            if sorted(t.path for t in targets) == before:
                continue
            conn.execute(
                "DELETE FROM import_edges WHERE file_path = ? AND module = ? AND line = ?",
                (file_path, module, line),
            )
            _insert_imports(conn, file_path, language or "", (ref,), project_files)
            changed += 1
        if changed:
            bump_graph_version(conn)
        return changed
    except sqlite3.Error as exc:
        raise StoreError(f"cannot re-resolve imports: {exc}") from exc


def _insert_imports(
    conn: sqlite3.Connection,
    file_path: str,
    language: str,
    imports: tuple[ImportRef, ...],
    project_files: frozenset[str],
) -> None:
    project = project_index(project_files)
    rows: list[tuple[str, str, str | None, int, str | None, str, str]] = []
    for ref in imports:
        names = json.dumps(list(ref.names))
        targets = [t for t in resolve_import(language, file_path, ref, project) if t.path != file_path]
        if not targets:
            rows.append((file_path, ref.module, None, ref.line, None, names, language))
        for target in targets:
            rows.append((file_path, ref.module, target.path, ref.line, target.kind, names, language))
    conn.executemany(
        "INSERT INTO import_edges (file_path, module, resolved_path, line, resolved_kind, names, language) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )


def _symbol_ids(conn: sqlite3.Connection, file_path: str) -> dict[str, list[tuple[int, int, int]]]:
    ids: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for row in conn.execute(
        "SELECT id, qualified_name, start_line, end_line FROM symbols WHERE file_path = ?", (file_path,)
    ):
        ids[row[1]].append((row[0], row[2], row[3]))
    return ids


def _caller_id(ids: dict[str, list[tuple[int, int, int]]], qualified: str, line: int) -> int | None:
    if qualified == MODULE_CALLER:
        return None
    candidates = ids.get(qualified, [])
    # Redefinitions share a qualified name (property setters, overloads): take the one around the line.
    holding = [c for c in candidates if c[1] <= line <= c[2]]
    pick = min(holding, key=lambda c: c[2] - c[1]) if holding else (candidates[0] if candidates else None)
    return pick[0] if pick else None
