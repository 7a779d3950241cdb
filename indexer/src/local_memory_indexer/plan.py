"""What every index run shares, light enough for a run that writes nothing (``unchanged``).

The run's summary and progress sink, the writer lock, the project's git HEAD, and the plan: which
files a run must (re-)index and which are gone. Nothing here imports LanceDB, pyarrow, ONNX
Runtime or tree-sitter; ``pipeline`` (which does) re-exports these names for its callers.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import sqlite3
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from local_memory_shared.discovery import SourceFile
from local_memory_shared.errors import IndexLocked
from local_memory_shared.paths import ProjectPaths


class ProgressSink(Protocol):
    """Receives progress; the CLI draws a bar, the MCP job manager writes the jobs table."""

    def phase(self, name: str) -> None: ...
    def files(self, done: int, total: int) -> None: ...
    def chunks(self, embedded: int, total: int) -> None: ...


class NullProgress:
    """Progress sink that ignores everything."""

    def phase(self, name: str) -> None:
        pass

    def files(self, done: int, total: int) -> None:
        pass

    def chunks(self, embedded: int, total: int) -> None:
        pass


@dataclass
class IndexSummary:
    """What one run did; ``--json`` prints this."""

    project_path: str
    backend: str
    model: str
    dimension: int
    files_seen: int = 0
    files_parsed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    files_failed: int = 0
    files_skipped: dict[str, int] = field(default_factory=dict)
    chunks_written: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_deleted: int = 0
    chunks_total: int = 0
    languages: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    published_version: int | None = None
    #: Files re-indexed because LanceDB and the mirror disagreed (after a crash), and why.
    files_repaired: int = 0
    repair_reason: str = ""
    indices_rebuilt: list[str] = field(default_factory=list)
    #: Why every file was parsed again though the run was not ``--full`` ("parser_changed": the
    #: index was built by another build of the parser, ``parse_identity``), or "".
    reparsed_reason: str = ""
    errors: list[str] = field(default_factory=list)
    cancelled: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Timer:
    """Times the phases of a run into its summary (and tells the progress sink)."""

    def __init__(self, summary: IndexSummary, progress: ProgressSink):
        self.summary = summary
        self.progress = progress

    def add(self, name: str, seconds: float) -> None:
        """Move ``seconds`` into phase ``name`` (a phase timed inside another one)."""
        self.summary.seconds[name] = round(self.summary.seconds.get(name, 0.0) + seconds, 4)

    @contextlib.contextmanager
    def phase(self, name: str, *, shown: str | None = None) -> Iterator[None]:
        """Time phase ``name`` (the progress sink is told ``shown`` when given)."""
        self.progress.phase(shown or name)
        start = time.perf_counter()
        try:
            yield
        finally:
            self.summary.seconds[name] = round(
                self.summary.seconds.get(name, 0.0) + time.perf_counter() - start, 4
            )


@contextlib.contextmanager
def writer_lock(paths: ProjectPaths) -> Iterator[None]:
    """One writer per project: an exclusive, non-blocking flock on ``writer.lock``."""
    paths.dir.mkdir(parents=True, exist_ok=True)
    with open(paths.lock_file, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise IndexLocked(f"another indexer is writing {paths.project_path}") from exc
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def git_head(root: Path) -> str:
    """HEAD commit of ``root`` when it is a git work tree, else ''."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_source(f: SourceFile, summary: IndexSummary) -> bytes | None:
    """``f``'s bytes, or None with the failure counted in ``summary`` (unreadable: skipped this run)."""
    try:
        return f.abs_path.read_bytes()
    except OSError as exc:
        summary.files_failed += 1
        summary.errors.append(f"{f.path}: {exc}")
        return None


@dataclass(frozen=True)
class Plan:
    """What a run will do: files to index, files gone, and the project's file set."""

    #: Files to (re-)index; their content is read batch by batch (``_Run._batches``), never all at
    #: once: a first index of 13.7k files held every file's bytes until the run's end (~200 MB).
    changed: tuple[SourceFile, ...]
    deleted: tuple[str, ...]
    project_files: frozenset[str]
    adds_files: bool
    #: ``(mtime, path)`` of files whose mtime changed but whose content did not (recorded, not indexed).
    touched: tuple[tuple[float, str], ...] = ()

    @property
    def unchanged(self) -> bool:
        """Nothing to index and nothing gone: the index already holds every file as it is."""
        return not self.changed and not self.deleted


def plan_files(
    files: Sequence[SourceFile],
    known: dict[str, sqlite3.Row],
    summary: IndexSummary,
    *,
    full: bool = False,
    drift: frozenset[str] = frozenset(),
) -> Plan:
    """Compare the walk's ``files`` with the ``files`` table rows (``known``), counting into ``summary``.

    A file whose size and mtime match its row is unchanged; one whose content hash matches is too
    (its new mtime goes in ``Plan.touched``); ``full`` and ``drift`` files are never trusted.
    """
    changed: list[SourceFile] = []
    touched: list[tuple[float, str]] = []
    for f in files:
        row = known.get(f.path)
        if full or f.path in drift:
            row = None  # not trusted: re-read and re-hash
        if row is not None and row["size"] == f.size and row["mtime"] == f.mtime:
            summary.files_unchanged += 1
            continue
        if row is None:
            changed.append(f)  # new or untrusted: read (and hashed) with its batch
            continue
        data = read_source(f, summary)
        if data is None:
            continue
        if row["content_hash"] == sha256_hex(data):
            summary.files_unchanged += 1
            touched.append((f.mtime, f.path))
            continue
        changed.append(f)  # its content is read again with its batch, not held until then
    on_disk = frozenset(f.path for f in files)
    return Plan(
        changed=tuple(changed),
        deleted=tuple(sorted(p for p in known.keys() | drift if p not in on_disk)),
        project_files=on_disk,
        adds_files=any(f.path not in known for f in changed),
        touched=tuple(touched),
    )
