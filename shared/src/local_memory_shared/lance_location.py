"""Where a project's LanceDB data lives: a folder under the data root, or an object store.

By default (``LOCAL_MEMORY_LANCE_URI`` unset) the LanceDB database of a project is the folder
``<data_root>/projects/<key>/<name>`` (``name`` = ``lance`` or ``lance.<n>`` after a rebuild),
exactly as before. With ``LOCAL_MEMORY_LANCE_URI=s3://bucket/prefix`` (or ``s3+ddb://``,
``gs://``, ``az://``) the same database lives at ``<uri>/projects/<key>/<name>`` on the store,
opened by LanceDB's own object-store client. Everything else stays with the coordinator under
the data root: the SQLite state DB (provenance, mirror, graph, jobs) and the *published version*
(``projects.published_version`` + ``projects.lance_dir``), so the publication rule is the same
SQLite commit as for a local index; the local folder ``<name>`` is kept as an empty marker so
the rebuild bookkeeping (``lance.<n>`` names, leftovers of killed rebuilds) works unchanged.

Credentials and endpoint come from the standard variables (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_ENDPOINT_URL``, ``AWS_REGION`` /
``AWS_DEFAULT_REGION``; an ``http://`` endpoint sets ``allow_http``), plus any LanceDB storage
option as JSON in ``LOCAL_MEMORY_LANCE_STORAGE_OPTIONS`` (Google / Azure keys, timeouts…).

LanceDB commits a version on S3 with a conditional PUT (``If-None-Match``); the indexer checks
that the store honours it before it writes (``local_memory_indexer.remote``).
"""

from __future__ import annotations

import contextlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .config import storage_options_from_env


@dataclass(frozen=True)
class LanceLocation:
    """One LanceDB database: a local folder, or a URI on an object store (with its local marker)."""

    #: The folder under the project dir (the database itself when local, a marker when remote).
    local: Path
    #: The remote database URI, or None for a local folder.
    uri: str | None = None
    #: LanceDB ``storage_options`` as sorted pairs (hashable).
    options: tuple[tuple[str, str], ...] = ()

    @property
    def remote(self) -> bool:
        return self.uri is not None

    @property
    def target(self) -> str:
        """What ``lancedb.connect`` opens."""
        return self.uri if self.uri is not None else str(self.local)

    @property
    def storage_options(self) -> dict[str, str]:
        return dict(self.options)

    def __str__(self) -> str:
        return self.target

    def connect(self, **kwargs: Any) -> Any:
        """``lancedb.connect`` on this database (local folders are created by the caller)."""
        import lancedb

        if self.uri is None:
            return lancedb.connect(str(self.local), **kwargs)
        return lancedb.connect(self.uri, storage_options=self.storage_options, **kwargs)

    def remove(self) -> None:
        """Delete the database (every table on the store, then the local folder)."""
        if self.uri is not None and self.local.exists():
            with contextlib.suppress(Exception):  # best effort: a missing prefix is already gone
                db = self.connect()
                for name in list(db.list_tables().tables):
                    db.drop_table(name)
        shutil.rmtree(self.local, ignore_errors=True)


def lance_location(
    project_dir: Path, name: str, lance_uri: str | None, options: dict[str, str] | None = None
) -> LanceLocation:
    """The database ``name`` (``lance``, ``lance.<n>``) of the project whose index folder is ``project_dir``."""
    local = project_dir / Path(name).name
    if lance_uri is None:
        return LanceLocation(local)
    uri = _join(lance_uri, f"projects/{project_dir.name}/{local.name}")
    opts = storage_options_from_env() if options is None else options
    return LanceLocation(local, uri, tuple(sorted(opts.items())))


def _join(uri: str, sub: str) -> str:
    """``uri`` + ``/sub``, keeping a query string (``?ddbTableName=…``) at the end."""
    parts = urlsplit(uri)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + sub))
