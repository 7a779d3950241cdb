"""Safe file reads: open only regular files, never block, never read past a bound.

A path that was a file when it was indexed can be a FIFO (``open`` blocks until a writer comes),
a symlink to ``/dev/zero`` (``read`` never ends) or a device by the time someone reads it again.
Every read of a project file by the indexer's discovery and the searcher's diagnostics goes
through :func:`open_regular`: ``O_NONBLOCK`` so a FIFO opens at once, then ``fstat`` on the open
descriptor (no race with a rename) and anything but a regular file is refused with
:class:`NotRegularFile`. Both errors are ``OSError`` subclasses, so callers that already skip
unreadable files skip these too.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
from pathlib import Path

CHUNK = 1 << 20


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device or directory, not a regular file."""


class FileTooLarge(OSError):
    """The file holds more bytes than the caller's bound."""


def open_regular(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor on ``path`` if it (or its symlink target) is a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, f"not a regular file ({stat.filemode(mode)})", str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular_file(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` bytes; FileTooLarge when longer."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLarge(errno.EFBIG, f"more than {max_bytes} bytes", str(path))
    return data


def read_head(path: str | os.PathLike[str], n_bytes: int) -> bytes:
    """The first ``n_bytes`` bytes (or fewer) of a regular file."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(n_bytes)


def sha256_regular_file(path: str | os.PathLike[str], max_bytes: int) -> str:
    """Hex SHA-256 of a regular file of at most ``max_bytes`` bytes (read in 1 MiB blocks)."""
    fd = open_regular(path)
    digest = hashlib.sha256()
    seen = 0
    with os.fdopen(fd, "rb") as fh:
        while block := fh.read(min(CHUNK, max_bytes + 1 - seen)):
            seen += len(block)
            if seen > max_bytes:
                raise FileTooLarge(errno.EFBIG, f"more than {max_bytes} bytes", str(Path(path)))
            digest.update(block)
    return digest.hexdigest()


def write_text_atomic(target: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``target`` through a temp file in the same folder, fsync and rename:
    a reader sees the old file or the whole new one, never half of it (an error removes the temp)."""
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
