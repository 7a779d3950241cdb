"""Find the files of a project worth indexing, and say why every other file was skipped.

Rules, in order: never leave the project (symlinks resolved and checked), never loop (visited
real directories are remembered), `.git` and vendored/generated folders are skipped, then
`.gitignore` files at every level and a `.localmemoryignore` (gitignore syntax, at any level)
decide, then secret-looking names, minified bundles and lock files, the size cap, and binary
content. Ignore rules come from pathspec's GitIgnoreSpec (git's own semantics, negation
included); a deeper ignore file overrides a shallower one, as in git.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

from .treesitter import language_for_path

log = logging.getLogger(__name__)

IGNORE_FILES = (".gitignore", ".localmemoryignore")

#: Folder names that hold vendored, generated or tool-state content.
VENDORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        "jspm_packages",
        ".venv",
        "venv",
        ".env",
        "virtualenv",
        "site-packages",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        "dist",
        "build",
        "out",
        "target",
        "vendor",
        "third_party",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".gradle",
        ".idea",
        ".vscode",
        "coverage",
        "htmlcov",
        ".terraform",
        ".cache",
        ".eggs",
        "Pods",
        "DerivedData",
    }
)

#: Secret-looking file names (fnmatch, matched case-insensitively on the base name).
SECRET_PATTERNS = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.asc",
    "*.gpg",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*credentials*",
    "*secret*",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".htpasswd",
    "*.kdbx",
    "gemini.key",
    ".google_api_key",
)

#: Generated single files: minified bundles, source maps, lock files.
GENERATED_PATTERNS = (
    "*.min.js",
    "*.min.css",
    "*.min.mjs",
    "*.bundle.js",
    "*.chunk.js",
    "*.map",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "poetry.lock",
    "uv.lock",
    "Cargo.lock",
    "composer.lock",
    "Gemfile.lock",
    "go.sum",
    "*.pb.go",
    "*_pb2.py",
    "*.generated.*",
)

BINARY_EXTENSIONS = frozenset(
    "png jpg jpeg gif bmp ico webp tiff psd svgz pdf zip gz tgz bz2 xz 7z rar tar jar war ear class "
    "so dll dylib exe o a lib obj pyc pyo pyd whl egg woff woff2 ttf otf eot mp3 mp4 wav ogg flac avi "
    "mov mkv webm onnx bin pt pth safetensors h5 pkl npy npz parquet arrow lance db sqlite sqlite3 "
    "dat iso dmg deb rpm".split()
)


@dataclass(frozen=True)
class SourceFile:
    """A file selected for indexing."""

    path: str  # repo-relative, '/'-separated
    abs_path: Path
    size: int
    mtime: float
    language: str


@dataclass
class Discovery:
    """What a walk found: the files to index and a count of skips per reason."""

    files: list[SourceFile] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, p.lower()) for p in patterns)


def is_secret_name(name: str) -> bool:
    """True for names that look like credentials or keys."""
    if name.lower() in {".env.example", ".env.sample", ".env.template"}:
        return False
    return _matches(name, SECRET_PATTERNS)


def sniff(path: Path, sniff_bytes: int = 8192) -> str | None:
    """'binary' or 'minified' when the file's name or first bytes say so, else None."""
    if path.suffix.lower().lstrip(".") in BINARY_EXTENSIONS:
        return "binary"
    with path.open("rb") as fh:
        head = fh.read(sniff_bytes)
    if b"\x00" in head:
        return "binary"
    # Generated one-liners (minified bundles, data blobs) make one giant useless chunk.
    if len(head) == sniff_bytes and head.count(b"\n") < sniff_bytes // 1000:
        return "minified"
    return None


class _IgnoreStack:
    """Ignore specs from the root down to the current folder; the deepest decision wins."""

    def __init__(self, specs: tuple[tuple[str, GitIgnoreSpec], ...] = ()):
        self.specs = specs

    def child(self, rel_dir: str, abs_dir: Path) -> _IgnoreStack:
        added = []
        for name in IGNORE_FILES:
            candidate = abs_dir / name
            if candidate.is_file():
                try:
                    lines = candidate.read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError as exc:
                    log.warning("cannot read %s: %s", candidate, exc)
                    continue
                added.append((rel_dir, GitIgnoreSpec.from_lines(lines)))
        return _IgnoreStack(self.specs + tuple(added)) if added else self

    def ignored(self, rel_path: str, is_dir: bool) -> bool:
        decision: bool | None = None
        for base, spec in self.specs:
            if base:
                if not rel_path.startswith(base + "/"):
                    continue
                local = rel_path[len(base) + 1 :]
            else:
                local = rel_path
            result = spec.check_file(local + "/" if is_dir else local)
            if result.include is not None:
                decision = result.include
        return bool(decision)


def discover(root: Path, *, max_file_bytes: int, skip_secrets: bool = True) -> Discovery:
    """Walk ``root`` and return the files to index plus skip counts per reason."""
    root = root.resolve()
    out = Discovery()
    visited: set[tuple[int, int]] = set()
    _walk(root, root, "", _IgnoreStack().child("", root), out, visited, max_file_bytes, skip_secrets)
    out.files.sort(key=lambda f: f.path)
    return out


def _inside(root: Path, target: Path) -> bool:
    return target == root or root in target.parents


def _walk(
    root: Path,
    abs_dir: Path,
    rel_dir: str,
    ignores: _IgnoreStack,
    out: Discovery,
    visited: set[tuple[int, int]],
    max_file_bytes: int,
    skip_secrets: bool,
) -> None:
    try:
        st = abs_dir.stat()
    except OSError:
        out.skipped["unreadable"] += 1
        return
    ident = (st.st_dev, st.st_ino)
    if ident in visited:
        out.skipped["symlink_loop"] += 1
        return
    visited.add(ident)
    try:
        entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
    except OSError as exc:
        log.warning("cannot list %s: %s", abs_dir, exc)
        out.skipped["unreadable"] += 1
        return
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        path = Path(entry.path)
        try:
            if entry.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    out.skipped["symlink_broken"] += 1
                    continue
                if not _inside(root, target):
                    out.skipped["symlink_outside"] += 1
                    continue
            is_dir = entry.is_dir()
        except OSError:
            out.skipped["unreadable"] += 1
            continue
        if is_dir:
            if entry.name in VENDORED_DIRS or entry.name.endswith(".egg-info"):
                out.skipped["vendored"] += 1
                continue
            if ignores.ignored(rel, is_dir=True):
                out.skipped["ignored"] += 1
                continue
            _walk(root, path, rel, ignores.child(rel, path), out, visited, max_file_bytes, skip_secrets)
            continue
        if not entry.is_file():
            out.skipped["special"] += 1
            continue
        if entry.name in IGNORE_FILES:
            continue
        if ignores.ignored(rel, is_dir=False):
            out.skipped["ignored"] += 1
            continue
        if skip_secrets and is_secret_name(entry.name):
            out.skipped["secret"] += 1
            continue
        if _matches(entry.name, GENERATED_PATTERNS):
            out.skipped["generated"] += 1
            continue
        try:
            fst = path.stat()
            if fst.st_size > max_file_bytes:
                out.skipped["too_large"] += 1
                continue
            if fst.st_size == 0:
                out.skipped["empty"] += 1
                continue
            verdict = sniff(path)
            if verdict is not None:
                out.skipped[verdict] += 1
                continue
        except OSError:
            out.skipped["unreadable"] += 1
            continue
        out.files.append(
            SourceFile(
                path=rel, abs_path=path, size=fst.st_size, mtime=fst.st_mtime, language=language_for_path(rel)
            )
        )
