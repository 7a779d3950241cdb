"""What the indexer's crash, safety and first-answer tests share.

Generated projects of many small modules, read-only looks at the two stores (the state DB and
the published LanceDB version), an indexer subprocess that SIGKILLs itself at a named point, and
an embedder whose backend dies after a number of calls. Nothing here replaces the thing a test
checks: the embedder is the real model until it dies, the stores are real files.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import lancedb
import numpy as np
from local_memory_shared.embedding.base import Embedder, ProgressFn
from local_memory_shared.errors import EmbeddingError
from local_memory_shared.paths import ProjectPaths
from local_memory_shared.schema import ChunkRecord


def use_data_root(monkeypatch: Any, root: Path) -> None:
    """Index under ``root`` with the packaged default model (no EMBED_BACKEND / EMBED_MODEL override)."""
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(root))
    monkeypatch.delenv("EMBED_BACKEND", raising=False)
    monkeypatch.delenv("EMBED_MODEL", raising=False)


def write_modules(
    root: Path, n_files: int, funcs: int, render: Callable[[int, int], str], *, folder: str, stem: str
) -> Path:
    """``n_files`` modules ``folder/stem_NNN.py``, each holding ``render(i, j)`` for j < ``funcs``."""
    for i in range(n_files):
        path = root / folder / f"{stem}_{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n\n".join(render(i, j) for j in range(funcs)) + "\n")
    return root


def function_record(n: int, *, fts_text: str | None = None) -> ChunkRecord:
    """The chunk row of a one-line function ``f{n}`` in ``m{n}.py`` (for tests that write a store directly)."""
    return ChunkRecord(
        chunk_id=f"m{n}.py:function:f{n}:0", project_path="/p", schema_version=1, file_path=f"m{n}.py",
        language="python", file_extension="py", chunk_kind="function", symbol_name=f"f{n}", class_name="",
        function_name=f"f{n}", chunk_index=0, start_line=1, end_line=2, text=f"def f{n}(): return {n}",
        summary=f"f{n}", fts_text=fts_text if fts_text is not None else f"m{n} py f{n}", tags=("function",),
        updated_at="2026-01-01T00:00:00Z", last_commit_hash="", content_hash=f"h{n}",
    )  # fmt: skip


def state_rows(state_db: Path, sql: str, *, timeout: float = 5.0) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` on the state DB, opened read-only (a reader must never take the write lock)."""
    conn = sqlite3.connect(f"file:{state_db}?mode=ro", uri=True, timeout=timeout)
    try:
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def published_version(paths: ProjectPaths) -> int | None:
    rows = state_rows(paths.state_db, "SELECT published_version FROM projects")
    return rows[0][0] if rows else None


def current_lance(paths: ProjectPaths) -> Path:
    """The LanceDB folder the published version lives in (a rebuild swaps in a new one)."""
    return paths.dir / state_rows(paths.state_db, "SELECT lance_dir FROM projects")[0][0]


def lance_rows(
    paths: ProjectPaths, version: int | None = None, columns: Sequence[str] | None = None
) -> list[dict]:
    """The chunk rows of LanceDB ``version`` (the latest when None), optionally only ``columns``."""
    table = lancedb.connect(str(current_lance(paths))).open_table("chunks")
    if version is not None:
        table.checkout(version)
    data = table.to_arrow()
    return (data.select(list(columns)) if columns else data).to_pylist()


#: ``python -c`` prelude: SIGKILL this process on the Nth call of ``target`` (module:Class.method).
KILLER = textwrap.dedent(
    """
    import importlib, os, signal, sys
    from datetime import timedelta
    mod_name, qual = sys.argv[1].split(":")
    nth = int(sys.argv[2])
    cls_name, meth = qual.split(".")
    cls = getattr(importlib.import_module(mod_name), cls_name)
    original = getattr(cls, meth)
    calls = [0]
    def wrapper(self, *args, **kwargs):
        calls[0] += 1
        if calls[0] == nth and (meth != "publish" or kwargs.get("finished")):
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, *args, **kwargs)
    setattr(cls, meth, wrapper)
    if os.environ.get("TEST_NO_GRACE"):
        import local_memory_indexer.store as store
        store.KEEP_VERSIONS_FOR = timedelta(0)
    from local_memory_indexer.cli import main
    sys.exit(main(sys.argv[3:]))
    """
)


def run_cli(
    env_: dict[str, str], *args: str, kill_at: tuple[str, int] | None = None
) -> subprocess.CompletedProcess[str]:
    """``local-memory-indexer ARGS`` in a subprocess; with ``kill_at`` it SIGKILLs itself there."""
    if kill_at is None:
        cmd = [sys.executable, "-m", "local_memory_indexer.cli", *args]
    else:
        cmd = [sys.executable, "-c", KILLER, kill_at[0], str(kill_at[1]), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env_, timeout=600)


def summary_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)["data"]


class DiesAfter(Embedder):
    """The real model for ``calls_ok`` calls, then the backend is gone (like a crashed process).

    ``per="batch"`` counts ``embed_documents`` calls (one per model batch); ``per="group"`` counts
    ``iter_embeddings`` calls (one per group of files the pipeline embeds and publishes).
    """

    def __init__(self, inner: Embedder, calls_ok: int, *, per: Literal["batch", "group"] = "batch"):
        self.inner, self.calls_ok, self.per = inner, calls_ok, per
        self.backend, self.model = inner.backend, inner.model

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def _spend(self, unit: str) -> None:
        if unit != self.per:
            return
        if self.calls_ok <= 0:
            raise EmbeddingError("backend died mid-run")
        self.calls_ok -= 1

    def embed_documents(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        self._spend("batch")
        return self.inner.embed_documents(texts, progress)

    def iter_embeddings(
        self, texts: Sequence[str], progress: ProgressFn | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        if self.per == "batch":
            return super().iter_embeddings(texts, progress)  # the base class batches through embed_documents
        self._spend("group")
        return self.inner.iter_embeddings(texts, progress)
