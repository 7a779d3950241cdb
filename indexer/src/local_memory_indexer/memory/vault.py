"""The vault on disk: a git repository of Markdown records, written atomically under one lock.

    <vault>/projects/<project>/<kind>/<uid>-<slug>.md   one record (frontmatter + body)
    <vault>/projects/<project>/<kind>.md                 compiled view of that kind (not indexed)

The writer lock is an ``flock`` on ``<data_root>/memory/writer.lock`` (held across read → modify
→ rename → index), re-entrant inside one process. Git commits are batched: every write asks for
a commit, and :class:`GitBatcher` makes one commit after ``delay`` seconds without a new request,
so a burst of writes becomes one commit.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

from local_memory_shared.errors import StoreError
from local_memory_shared.fs import write_text_atomic

log = logging.getLogger(__name__)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "local-memory",
    "GIT_AUTHOR_EMAIL": "local-memory@localhost",
    "GIT_COMMITTER_NAME": "local-memory",
    "GIT_COMMITTER_EMAIL": "local-memory@localhost",
}


class WriterLock:
    """Process-wide ``flock`` plus a thread lock; re-entrant within one thread."""

    def __init__(self, path: Path):
        self.path = path
        self._rlock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        with self._rlock:
            if self._depth == 0:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._fd = fd
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                    os.close(self._fd)
                    self._fd = None


def file_digest(data: bytes) -> str:
    """sha256 hex of file bytes."""
    return hashlib.sha256(data).hexdigest()


class Vault:
    """Files of the vault (paths are vault-relative with '/')."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def ensure(self) -> None:
        """Create the folder and its git repository if missing."""
        (self.root / "projects").mkdir(parents=True, exist_ok=True)
        if not (self.root / ".git").exists():
            self.git("init", "-q")
            (self.root / ".gitignore").write_text("*.tmp\n.*.tmp\n")

    def git(self, *args: str) -> str:
        """Run git in the vault; raise StoreError on failure."""
        try:
            done = subprocess.run(
                ["git", *args],
                cwd=self.root,
                env={**os.environ, **GIT_ENV},
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise StoreError(f"git {args[0]} failed in {self.root}: {exc}") from exc
        if done.returncode != 0:
            raise StoreError(f"git {' '.join(args)} failed in {self.root}: {done.stderr.strip()}")
        return done.stdout

    def record_files(self) -> list[str]:
        """Every record file (``projects/*/*/*.md``), sorted."""
        base = self.root / "projects"
        return sorted(p.relative_to(self.root).as_posix() for p in base.glob("*/*/*.md") if p.is_file())

    def read(self, rel: str) -> bytes | None:
        try:
            return (self.root / rel).read_bytes()
        except FileNotFoundError:
            return None

    def stat(self, rel: str) -> tuple[float, int]:
        st = (self.root / rel).stat()
        return st.st_mtime, st.st_size

    def write_atomic(self, rel: str, text: str) -> None:
        """Write via a temp file in the same folder + fsync + rename: never a half-written record."""
        write_text_atomic(self.root / rel, text)

    def remove(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.root / rel).unlink()


class GitBatcher:
    """Debounced ``git add -A && git commit``: a burst of writes becomes one commit."""

    def __init__(self, vault: Vault, lock: WriterLock, delay: float = 1.0):
        self.vault = vault
        self.lock = lock
        self.delay = delay
        self._pending = 0
        self._timer: threading.Timer | None = None
        self._mutex = threading.Lock()

    def request(self, n: int = 1) -> None:
        """Note ``n`` changes; commit once ``delay`` passes without another request."""
        with self._mutex:
            self._pending += n
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.delay, self.flush)
            self._timer.daemon = True
            self._timer.start()

    def flush(self) -> bool:
        """Commit pending changes now; True if a commit was made."""
        with self._mutex:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            pending, self._pending = self._pending, 0
        if not pending:
            return False
        try:
            with self.lock.hold():
                self.vault.git("add", "-A", "--", ".")
                if not self.vault.git("status", "--porcelain"):
                    return False
                self.vault.git("commit", "-q", "--no-verify", "-m", f"memory: {pending} change(s)")
            return True
        except StoreError:
            log.exception("vault commit failed; the files are written, the next commit will include them")
            return False
