"""Where the compact query-encoder copy of an ONNX model lives (the indexer writes it, the searcher reads it).

The packaged all-MiniLM-L6-v2 stores its weights as int8 with per-row/per-column scales and
dequantises them in the graph (``Mul(Cast(int8), scale)``). ONNX Runtime's constant folding
turns all of them into float32 at load: a 23 MB file becomes ~96 MB of session memory, the
largest single part of a search process (bench/search_memory.py). The *compact* copy keeps the
weights int8 in memory:

- embedding tables: ``Gather(Mul(Cast(q), s), ids)`` becomes ``Mul(Cast(Gather(q, ids)),
  Gather(s, ids))`` — the same float operations on the gathered rows only, so the vectors are
  bit-identical (−34 MB);
- weight matrices: ``MatMul(x, Mul(Cast(q), s))`` becomes ONNX Runtime's ``MatMulNBits`` (8 bits,
  the same int8 values and scales, block-wise) with ``accuracy_level`` 4: the activations are
  quantised block-wise to int8 too, which is about 2× faster on one query and keeps the matrices at
  one byte per weight (−32 MB more); query vectors then differ from the float path by about 5e-3
  per component (cosine ≥ 0.999), measured on the bench (README "Memory").

Only the **query** encoder uses it; the indexer embeds documents with the original model, so
stored vectors never change. The file is derived data: named after the source model file (its
real path, size and mtime) and :data:`COMPACT_VERSION`, written once by the indexer under
``<data root>/models/`` (atomically, after checking its vectors against the original), and read
by the searcher when present. A missing or unreadable copy only means the original model is
used; the searcher never writes it (it is read-only).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

#: Bumped whenever the rewrite changes; old copies are then simply not found (and not used).
COMPACT_VERSION = 1
#: Folder under the data root holding derived model files.
MODELS_DIR = "models"


def compact_model_path(data_root: Path, source: Path) -> Path:
    """The compact copy's path for ``source`` (an ONNX file); raises OSError if ``source`` is unreadable."""
    real = source.resolve()
    stat = real.stat()
    key = f"{real}|{stat.st_size}|{stat.st_mtime_ns}|{COMPACT_VERSION}"
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()
    return data_root / MODELS_DIR / f"{real.stem}-compact-{digest}.onnx"


def find_compact_model(data_root: Path, source: Path) -> Path | None:
    """The compact copy of ``source`` under ``data_root`` when the indexer has written one."""
    try:
        path = compact_model_path(data_root, source)
    except OSError:
        return None
    return path if os.path.isfile(path) else None
