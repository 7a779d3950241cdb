"""Real damage to a LanceDB index on disk, as a crash, a bad disk or a careless user leaves it."""

from __future__ import annotations

from pathlib import Path

import lancedb
import numpy as np


def delete_fts_files(lance_dir: Path) -> int:
    """Delete every file of every index under ``chunks.lance/_indices`` (the manifest still lists them)."""
    removed = 0
    for path in (lance_dir / "chunks.lance" / "_indices").rglob("*"):
        if path.is_file():
            path.unlink()
            removed += 1
    return removed


def poison_vectors(lance_dir: Path, version: int | None = None) -> int:
    """Overwrite 4 KiB of a data file where stored vectors live with 0xFF bytes (float32 NaN).

    The first stored vector's bytes are located in the data files, so the damage lands on vectors
    (not on text) whatever the file layout; returns how many whole vectors the 4 KiB cover.
    """
    table = lancedb.connect(str(lance_dir)).open_table("chunks")
    if version is not None:
        table.checkout(version)
    batch = table.search().select(["vector"]).limit(1).to_arrow()
    first = np.asarray(batch.column("vector")[0].as_py(), dtype=np.float32).tobytes()
    for path in sorted((lance_dir / "chunks.lance" / "data").glob("*.lance")):
        raw = path.read_bytes()
        at = raw.find(first)
        if at >= 0:
            with path.open("r+b") as fh:
                fh.seek(at)
                fh.write(b"\xff" * 4096)
            return 4096 // len(first)
    raise AssertionError("no data file holds the first stored vector")
