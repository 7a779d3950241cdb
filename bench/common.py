"""What the single-purpose bench scripts share: printing the report, another commit's source, and
the resident memory a call adds at its peak.

Each ``bench/*.py`` script prints its report as indented JSON on stdout (and writes it to
``--out``/``--json`` when given), and several time this checkout against an older commit whose
source is exported with ``git archive`` (the baseline of an interleaved A/B run).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def emit(report: Any, out: Path | None = None) -> str:
    """Print ``report`` as indented JSON on stdout, and write it to ``out`` too when given."""
    text = json.dumps(report, indent=2)
    if out is not None:
        out.write_text(text + "\n")
    sys.stdout.write(text + "\n")
    return text


def export_ref(ref: str, target: Path, paths: Sequence[str] = ()) -> Path:
    """``git archive REF [PATHS]`` unpacked into ``target`` (reused when already there); returns it.

    The archive is unpacked beside ``target`` and renamed into place, so an interrupted export
    never leaves a half tree that a later run would take for a whole one.
    """
    if target.is_dir() and any(target.iterdir()):
        return target
    tmp = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", ref, *paths], capture_output=True, check=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if target.exists():
        target.rmdir()  # an empty folder (e.g. from mkdtemp) is replaced
    tmp.rename(target)
    return target


def rss_mb() -> float:
    """This process's resident memory (MB), from ``/proc/self/statm``."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss(fn: Callable[[], Any], interval: float = 0.01) -> tuple[Any, float, float]:
    """``fn()``'s result, this process's RSS before it and its peak while it ran (MB), sampled
    every ``interval`` seconds on a thread."""
    base = rss_mb()
    peak = [base]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss_mb())
            stop.wait(interval)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        out = fn()
    finally:
        stop.set()
        thread.join()
    return out, base, peak[0]
