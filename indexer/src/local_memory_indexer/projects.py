"""Projects under the data root: listing and deletion (deletion exists only on the indexer side)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

from local_memory_shared.config import Settings
from local_memory_shared.errors import NotIndexed
from local_memory_shared.paths import ProjectPaths, iter_project_dirs, project_key
from local_memory_shared.state import open_state_ro

from .pipeline import writer_lock


def list_projects(settings: Settings) -> list[dict[str, Any]]:
    """Every indexed project with file and chunk counts, model, dimension and last indexed time."""
    out = []
    for folder in iter_project_dirs(settings.data_root):
        try:
            conn = open_state_ro(folder / "state.db")
        except Exception:  # an unreadable project must not hide the others
            continue
        try:
            for proj in conn.execute("SELECT * FROM projects"):
                meta = conn.execute(
                    "SELECT backend, model, dimension, schema_version FROM index_meta WHERE project_path = ?",
                    (proj["project_path"],),
                ).fetchone()
                out.append(
                    {
                        "project_path": proj["project_path"],
                        "key": proj["key"],
                        "status": proj["status"],
                        "files": conn.execute("SELECT COUNT(*) FROM files").fetchone()[0],
                        "chunks": conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0],
                        "backend": meta["backend"] if meta else None,
                        "model": meta["model"] if meta else None,
                        "dimension": meta["dimension"] if meta else None,
                        "schema_version": meta["schema_version"] if meta else None,
                        "last_indexed_at": proj["last_indexed_at"],
                        "published_version": proj["published_version"],
                        "exists_on_disk": Path(proj["project_path"]).is_dir(),
                    }
                )
        except sqlite3.Error:
            continue
        finally:
            conn.close()
    return sorted(out, key=lambda p: p["project_path"])


def delete_project_index(settings: Settings, project_path: str | Path) -> dict[str, Any]:
    """Remove a project's whole index folder (LanceDB, state DB, lock). The project files are untouched."""
    # The project folder itself may be gone already, so don't require it to exist.
    resolved = Path(project_path).expanduser().resolve()
    paths = ProjectPaths(data_root=settings.data_root, project_path=resolved, key=project_key(resolved))
    if not paths.dir.exists():
        raise NotIndexed(f"{resolved} has no index under {settings.data_root}", field="project_path")
    with writer_lock(paths):
        shutil.rmtree(paths.lance_dir, ignore_errors=True)
        for suffix in ("", "-wal", "-shm"):
            Path(str(paths.state_db) + suffix).unlink(missing_ok=True)
    shutil.rmtree(paths.dir, ignore_errors=True)
    return {"project_path": str(resolved), "deleted": True}
