"""``imports``: the import graph of one file (both directions) or of the whole project."""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Any

from local_memory_shared.envelope import warning
from local_memory_shared.errors import InvalidArgument

from .reader import SqlReader
from .records import DEFAULT_IMPORT_LIMIT, W_TRUNCATED, GraphResult, Warnings, check_cap, result


@dataclass(frozen=True)
class ImportQuery:
    """An ``imports`` question: one file's import edges, or (``file_path`` None) the project's."""

    file_path: str | None = None
    limit: int = DEFAULT_IMPORT_LIMIT


def imports(conn: Any, query: ImportQuery) -> GraphResult:
    """Import edges of one file (both directions) or, without ``file_path``, of the whole project."""
    file_path, limit = query.file_path, query.limit
    if file_path is not None and (not isinstance(file_path, str) or not file_path.strip()):
        raise InvalidArgument("file_path must be a repo-relative path or omitted", field="file_path")
    limit = check_cap(limit, "limit")
    graph = SqlReader(conn)
    warnings: Warnings = []
    if file_path is None:
        return result(_project_imports(graph, limit, warnings), warnings)
    path = file_path.strip().replace("\\", "/").removeprefix("./")
    if not _known_file(graph, path):
        data = {
            "file_path": path,
            "status": "not_found",
            "imports": [],
            "imported_by": [],
            "message": f"{path} is not in the index (paths are repo-relative, with '/')",
        }
        return result(data, warnings)
    outgoing = [
        _import_json(row)
        for row in graph.query(
            "SELECT file_path, module, resolved_path, resolved_kind, line, names FROM import_edges "
            "WHERE file_path = ? ORDER BY line, module",
            (path,),
        )
    ]
    importers = [
        _import_json(row)
        for row in graph.query(
            "SELECT file_path, module, resolved_path, resolved_kind, line, names FROM import_edges "
            "WHERE resolved_path = ? OR (resolved_kind = 'directory' AND resolved_path = ?) ORDER BY file_path, line",
            (path, posixpath.dirname(path)),
        )
    ]
    internal = sum(1 for i in outgoing if i["target"])
    return result(
        {
            "file_path": path,
            "status": "ok",
            "imports": outgoing,
            "imported_by": importers,
            "message": (
                f"{path} imports {len(outgoing)} module(s) ({internal} in the project) "
                f"and is imported by {len({i['source'] for i in importers})} file(s)"
            ),
        },
        warnings,
    )


def _known_file(graph: SqlReader, path: str) -> bool:
    for sql in (
        "SELECT 1 FROM files WHERE path = ? LIMIT 1",
        "SELECT 1 FROM import_edges WHERE file_path = ? OR resolved_path = ? LIMIT 1",
        "SELECT 1 FROM symbols WHERE file_path = ? LIMIT 1",
        "SELECT 1 FROM call_edges WHERE file_path = ? LIMIT 1",
    ):
        params: tuple[str, ...] = (path, path) if sql.count("?") == 2 else (path,)
        if graph.query(sql, params):
            return True
    return False


def _import_json(row: Any) -> dict[str, Any]:
    source, module, target, kind, line, names = row
    out: dict[str, Any] = {"source": source, "module": module, "target": target, "line": line}
    if target:
        out["target_kind"] = kind or "file"
    imported = json.loads(names or "[]")
    if imported:
        out["names"] = imported
    return out


def _project_imports(graph: SqlReader, limit: int, warnings: Warnings) -> dict[str, Any]:
    rows = graph.query(
        "SELECT file_path, module, resolved_path, resolved_kind, min(line) AS line, names FROM import_edges "
        "WHERE resolved_path IS NOT NULL GROUP BY file_path, resolved_path ORDER BY file_path, line"
    )
    edges = [_import_json(r) for r in rows[:limit]]
    external = graph.query(
        "SELECT module, count(DISTINCT file_path) AS n FROM import_edges WHERE resolved_path IS NULL "
        "GROUP BY module ORDER BY n DESC, module LIMIT ?",
        (limit,),
    )
    files = graph.query("SELECT count(DISTINCT file_path) FROM import_edges")[0][0]
    truncated = len(rows) > limit
    if truncated:
        warnings.append(
            warning(W_TRUNCATED, f"listed the first {limit} of {len(rows)} internal import edges")
        )
    data = {
        "status": "ok",
        "edges": edges,
        "external_modules": [{"module": m, "importers": n} for m, n in external],
        "files": files,
        "internal_edges": len(rows),
        "truncated": truncated,
        "message": (
            f"{len(rows)} import edge(s) between project files across {files} importing file(s); "
            f"{len(external)} external module(s)"
        ),
    }
    return data
