"""Where a project's index lives under the data root.

    <data_root>/projects/<key>/state.db     SQLite state (WAL): provenance, files, mirror, graph, jobs
    <data_root>/projects/<key>/lance/       LanceDB database holding table ``chunks``
    <data_root>/projects/<key>/writer.lock  one writer per project

``key`` is a readable slug of the folder name plus a hash of the resolved absolute path, so
two projects never share a folder and the same project always finds its own.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import InvalidArgument


def normalize_project_path(project_path: str | Path, *, field: str = "project_path") -> Path:
    """Absolute, resolved project root; it must be an existing directory (else InvalidArgument on ``field``)."""
    shown = repr(str(project_path)[:200])
    if "\x00" in str(project_path):
        raise InvalidArgument(f"{field} {shown} contains a NUL byte", field=field)
    try:
        path = Path(project_path).expanduser().resolve()
        is_dir = path.is_dir()
    except (OSError, RuntimeError, ValueError) as exc:
        # ENAMETOOLONG (over the OS path/name limit), ELOOP, EACCES…: the caller's path is bad.
        reason = getattr(exc, "strerror", None) or exc
        raise InvalidArgument(f"cannot resolve {field} {shown}: {reason}", field=field) from exc
    if not is_dir:
        raise InvalidArgument(f"{field} {str(path)[:200]!r} is not a directory", field=field)
    return path


def project_key(project_path: Path) -> str:
    """Stable folder name for a resolved project path."""
    digest = hashlib.sha256(str(project_path).encode()).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", project_path.name or "root")[:40].strip("-") or "project"
    return f"{slug}-{digest}"


@dataclass(frozen=True)
class ProjectPaths:
    """The files of one project's index."""

    data_root: Path
    project_path: Path
    key: str

    @property
    def dir(self) -> Path:
        return self.data_root / "projects" / self.key

    @property
    def state_db(self) -> Path:
        return self.dir / "state.db"

    @property
    def lance_dir(self) -> Path:
        return self.dir / "lance"

    @property
    def lock_file(self) -> Path:
        return self.dir / "writer.lock"


def project_paths(data_root: Path, project_path: str | Path) -> ProjectPaths:
    """Paths of the index for ``project_path`` (which must exist)."""
    root = normalize_project_path(project_path)
    return ProjectPaths(data_root=Path(data_root).expanduser(), project_path=root, key=project_key(root))


def iter_project_dirs(data_root: Path) -> list[Path]:
    """Every project folder under the data root that has a state DB."""
    base = Path(data_root).expanduser() / "projects"
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if (p / "state.db").is_file())
