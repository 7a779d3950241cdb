"""Fetch, verify and unpack the pinned corpora of ``corpora.json`` into ``bench/cache/``.

Each archive comes from its registry through the ordinary client (``pip download --no-deps
--no-binary :all:`` for sdists, ``npm pack`` for npm packages), is checked against its pinned
sha256, and is unpacked once into ``bench/cache/src/<name>-<version>/`` (top folder stripped).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
CACHE_DIR = BENCH_DIR / "cache"
PINS_FILE = BENCH_DIR / "corpora.json"

log = logging.getLogger(__name__)


class CorpusError(RuntimeError):
    """A pinned corpus could not be fetched or did not match its pin."""


@dataclass(frozen=True)
class Corpus:
    """One pinned, unpacked corpus."""

    key: str
    kind: str
    name: str
    version: str
    sha256: str
    root: Path

    def describe(self) -> dict[str, str]:
        """Pin facts for the results JSON."""
        return {"kind": self.kind, "name": self.name, "version": self.version, "sha256": self.sha256}


def load_pins() -> dict[str, dict[str, str]]:
    """The ``corpora`` mapping of ``corpora.json``."""
    return json.loads(PINS_FILE.read_text())["corpora"]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _download(pin: dict[str, str], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    if pin["kind"] == "pypi":
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"{pin['name']}=={pin['version']}",
            "-d",
            str(dest),
        ]
    elif pin["kind"] == "npm":
        cmd = ["npm", "pack", "--silent", f"{pin['name']}@{pin['version']}", "--pack-destination", str(dest)]
    else:
        raise CorpusError(f"unknown corpus kind {pin['kind']!r}")
    log.info("fetching %s", " ".join(cmd))
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", "") or ""
        raise CorpusError(f"cannot fetch {pin['name']}=={pin['version']}: {exc} {detail[-400:]}") from exc


def fetch(key: str) -> Corpus:
    """Make sure corpus ``key`` is downloaded, verified and unpacked; return where it is."""
    pins = load_pins()
    if key not in pins:
        raise CorpusError(f"no pinned corpus {key!r}; known: {sorted(pins)}")
    pin = pins[key]
    dl_dir = CACHE_DIR / "dl"
    archive = dl_dir / pin["file"]
    if not archive.is_file():
        _download(pin, dl_dir)
    if not archive.is_file():
        raise CorpusError(f"{pin['name']}=={pin['version']} was fetched but {archive.name} is not there")
    digest = _sha256(archive)
    if digest != pin["sha256"]:
        raise CorpusError(f"{archive.name}: sha256 {digest} does not match the pin {pin['sha256']}")
    root = CACHE_DIR / "src" / f"{pin['name']}-{pin['version']}"
    marker = root / ".bench-unpacked"
    if not marker.is_file():
        shutil.rmtree(root, ignore_errors=True)
        tmp = root.with_name(root.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        tops = list(tmp.iterdir())
        inner = tops[0] if len(tops) == 1 and tops[0].is_dir() else tmp
        inner.rename(root)
        shutil.rmtree(tmp, ignore_errors=True)
        marker.write_text(digest + "\n")
    return Corpus(key, pin["kind"], pin["name"], pin["version"], pin["sha256"], root)


def main() -> None:
    """``python -m bench.corpora [KEY ...]``: fetch the named (default: all) corpora."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    keys = sys.argv[1:] or list(load_pins())
    for key in keys:
        corpus = fetch(key)
        log.info("%s %s -> %s", key, corpus.version, corpus.root)


if __name__ == "__main__":
    main()
