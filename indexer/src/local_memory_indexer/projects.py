"""Projects under the data root: listing and deletion (deletion exists only on the indexer side)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from local_memory_shared import catalog
from local_memory_shared.config import Settings
from local_memory_shared.errors import NotIndexed
from local_memory_shared.lance_location import lance_location
from local_memory_shared.paths import ProjectPaths, project_key

from .plan import writer_lock


def list_projects(settings: Settings) -> list[dict[str, Any]]:
    """Every indexed project with file and chunk counts, model, dimension and last indexed time."""
    return catalog.list_projects(settings.data_root)


def delete_project_index(settings: Settings, project_path: str | Path) -> dict[str, Any]:
    """Remove a project's whole index folder (LanceDB, state DB, lock). The project files are untouched."""
    # The project folder itself may be gone already, so don't require it to exist.
    resolved = Path(project_path).expanduser().resolve()
    paths = ProjectPaths(data_root=settings.data_root, project_path=resolved, key=project_key(resolved))
    if not paths.dir.exists():
        raise NotIndexed(f"{resolved} has no index under {settings.data_root}", field="project_path")
    with writer_lock(paths):
        for child in sorted(paths.dir.glob("lance*")):
            if child.is_dir():  # the database, or with an object-store root its marker + remote data
                lance_location(paths.dir, child.name, settings.lance_uri).remove()
        for suffix in ("", "-wal", "-shm"):
            Path(str(paths.state_db) + suffix).unlink(missing_ok=True)
    shutil.rmtree(paths.dir, ignore_errors=True)
    return {"project_path": str(resolved), "deleted": True}
