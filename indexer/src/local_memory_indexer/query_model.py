"""Write the compact query-encoder copy of the ONNX model (what and why: ``local_memory_shared.embedding.query_model``).

:func:`compact_model_bytes` rewrites the graph with the ``onnx`` library; :func:`ensure_compact_model`
writes the result under ``<data root>/models/`` once, after checking that it encodes a few texts
like the original (cosine ≥ :data:`MIN_COSINE`), atomically (temporary file, then rename). Both
are best effort: any failure is logged and leaves the searcher on the original model.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np
from local_memory_shared.embedding.onnx import OnnxEmbedder
from local_memory_shared.embedding.query_model import compact_model_path
from local_memory_shared.heap import trim_heap

log = logging.getLogger(__name__)

#: Each rewritten query vector must stay this close to the original model's (measured ≥ 0.9993).
MIN_COSINE = 0.995
#: Texts the check encodes with both models: a question, an identifier, code.
CHECK_TEXTS = (
    "how are blueprints registered with the application",
    "parse_config",
    "def add(a, b):\n    return a + b",
)
#: ``MatMulNBits``' ``accuracy_level``: 4 = int8 activations (block-wise), see query_model.py.
ACCURACY_LEVEL = 4
#: Block sizes ``MatMulNBits`` accepts (the first that divides K is used; one scale per column).
BLOCK_SIZES = (128, 64, 32, 16)

_written: dict[str, Path] = {}
_lock = threading.Lock()


def compact_model_bytes(source: Path) -> bytes | None:
    """The rewritten model, or None when ``source`` has no int8 ``Mul(Cast(q), scale)`` weights."""
    import onnx

    model = onnx.load(str(source))
    if not _rewrite(model):
        return None
    data: bytes = model.SerializeToString()
    return data


def _rewrite(model: Any) -> int:
    """Rewrite ``model`` in place; answers how many weights were rewritten."""
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    users: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    outputs = {o.name for o in graph.output}
    replaced: dict[int, list[Any]] = {}  # id(node) → the nodes standing in its place ([] = dropped)
    new_inits: list[Any] = []
    dropped_inits: set[str] = set()
    count = 0
    for mul in graph.node:
        found = _dequantized_weight(mul, producer, inits, users)
        if found is None or mul.output[0] in outputs:
            continue
        cast, q_name, s_name = found
        q = numpy_helper.to_array(inits[q_name])
        s = numpy_helper.to_array(inits[s_name])
        weight = mul.output[0]
        consumers = users.get(weight, [])
        if (
            q.ndim == 2
            and s.shape == (q.shape[0], 1)
            and consumers
            and all(_is_row_gather(n, weight) for n in consumers)
        ):
            for gather in consumers:
                ids, out = gather.input[1], gather.output[0]
                replaced[id(gather)] = [
                    helper.make_node("Gather", [q_name, ids], [f"{out}_q"], axis=0),
                    helper.make_node("Cast", [f"{out}_q"], [f"{out}_f"], to=TensorProto.FLOAT),
                    helper.make_node("Gather", [s_name, ids], [f"{out}_s"], axis=0),
                    helper.make_node("Mul", [f"{out}_f", f"{out}_s"], [out]),
                ]
        elif (
            q.ndim == 2
            and s.size == q.shape[1]
            and len(consumers) == 1
            and _is_weight_matmul(consumers[0], weight)
        ):
            k, n = q.shape
            block = next((b for b in BLOCK_SIZES if k % b == 0), None)
            if block is None:
                continue
            matmul = consumers[0]
            blocks = k // block
            # MatMulNBits stores B as uint8 [N, blocks, block] with zero point 128 (its 8-bit default).
            packed = (q.T.astype(np.int16) + 128).astype(np.uint8).reshape(n, blocks, block)
            scales = np.repeat(s.reshape(n, 1).astype(np.float32), blocks, axis=1).reshape(-1)
            b_name, sc_name = f"{q_name}_nbits", f"{q_name}_nbits_scale"
            new_inits += [numpy_helper.from_array(packed, b_name), numpy_helper.from_array(scales, sc_name)]
            dropped_inits |= {q_name, s_name}
            replaced[id(matmul)] = [
                helper.make_node(
                    "MatMulNBits",
                    [matmul.input[0], b_name, sc_name],
                    list(matmul.output),
                    domain="com.microsoft",
                    K=k,
                    N=n,
                    bits=8,
                    block_size=block,
                    accuracy_level=ACCURACY_LEVEL,
                )
            ]
        else:
            continue
        replaced[id(cast)] = []
        replaced[id(mul)] = []
        count += 1
    if not count:
        return 0
    nodes = [new for node in graph.node for new in replaced.get(id(node), [node])]
    del graph.node[:]
    graph.node.extend(nodes)
    kept = [t for t in graph.initializer if t.name not in dropped_inits]
    del graph.initializer[:]
    graph.initializer.extend(kept + new_inits)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return count


def _dequantized_weight(
    mul: Any, producer: dict[str, Any], inits: dict[str, Any], users: dict[str, list[Any]]
) -> tuple[Any, str, str] | None:
    """``(cast node, int8 initializer, scale initializer)`` when ``mul`` is ``Mul(Cast(q), s)``."""
    from onnx import TensorProto

    if mul.op_type != "Mul" or mul.domain not in ("", "ai.onnx") or len(mul.input) != 2:
        return None
    for cast_out, s_name in (mul.input, tuple(reversed(mul.input))):
        cast = producer.get(cast_out)
        if (
            cast is not None
            and cast.op_type == "Cast"
            and cast.input[0] in inits
            and inits[cast.input[0]].data_type == TensorProto.INT8
            and s_name in inits
            and inits[s_name].data_type == TensorProto.FLOAT
            and len(users.get(cast_out, [])) == 1
            and any(a.name == "to" and a.i == TensorProto.FLOAT for a in cast.attribute)
        ):
            return cast, cast.input[0], s_name
    return None


def _is_row_gather(node: Any, weight: str) -> bool:
    axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
    return bool(node.op_type == "Gather" and node.input[0] == weight and axis == 0)


def _is_weight_matmul(node: Any, weight: str) -> bool:
    return bool(node.op_type == "MatMul" and len(node.input) == 2 and node.input[1] == weight)


def ensure_compact_model(data_root: Path, embedder: OnnxEmbedder) -> Path | None:
    """The compact copy of ``embedder``'s model under ``data_root``, written if missing; None if none can be.

    Writing it releases ``embedder``'s session and trims the heap (see :func:`_build`): call it
    once embedding is done.
    """
    source = embedder.source_model_file
    try:
        target = compact_model_path(data_root, source)
    except OSError as exc:
        log.warning("cannot locate the ONNX model for its compact copy: %s", exc)
        return None
    none = target.with_suffix(".none")  # written when the model has nothing to rewrite
    if target.is_file() or none.is_file():
        return target if target.is_file() else None
    with _lock:
        try:
            if target.is_file():
                return target
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            try:
                if not _copy_written(target.name, tmp):
                    built = _build(source, tmp, embedder)
                    trim_heap()  # the copy's session and bytes are gone too: the caller waits holding neither
                    if built is None:
                        none.touch()
                    if not built:
                        return None
                os.replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)
            _written[target.name] = target
            log.info("wrote the compact query model %s", target)
            return target
        except Exception as exc:  # best effort: the searcher falls back to the original model
            log.warning("compact query model not written: %s", exc)
            return None


def _copy_written(name: str, tmp: Path) -> bool:
    """Link or copy the same copy written earlier by this process (another data root), if still there."""
    earlier = _written.get(name)
    if earlier is None or not earlier.is_file():
        return False
    try:
        os.link(earlier, tmp)
    except OSError:
        shutil.copyfile(earlier, tmp)
    return True


def _build(source: Path, tmp: Path, embedder: OnnxEmbedder) -> bool | None:
    """Write and check the copy at ``tmp``: True if usable, False if not, None if there is nothing to rewrite."""
    # The original's vectors first, then its session goes: the two sessions are never held at
    # once (at the end of a first index this was the indexer's peak: 543 MB vs 535 while embedding
    # at 26k chunks, bench/results/indexer_phases-rss-real-26k-s16-512.json). The caller has
    # finished embedding; a later use loads the session again.
    want = embedder.embed_documents(list(CHECK_TEXTS))
    max_tokens = embedder.max_tokens
    if embedder.release():
        trim_heap()
    data = compact_model_bytes(source)
    if data is None:
        log.info("ONNX model %s has no int8 weights to keep compact", source)
        return None
    tmp.write_bytes(data)
    del data
    compact = OnnxEmbedder(embedder.model, threads=1, max_tokens=max_tokens, model_file=tmp)
    try:
        if compact.model_file != tmp:
            return False  # it did not load (logged by the embedder)
        got = compact.embed_documents(list(CHECK_TEXTS))
    finally:
        compact.close()
    worst = float(np.min(np.sum(want * got, axis=1)))
    if worst < MIN_COSINE:
        log.warning("compact query model rejected: cosine %.4f < %.3f", worst, MIN_COSINE)
        return False
    return True
