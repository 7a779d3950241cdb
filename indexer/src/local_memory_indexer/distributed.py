"""Indexing on a Ray cluster (``local-memory-indexer index PATH… --ray [--address ray://…]``).

Needs the optional extra ``local-memory-indexer[distributed]`` (Ray); nothing here is imported by
a local run. Parsing (chunking + symbol/call/import extraction) and embedding move to the cluster:

- :class:`RayParser` is a :class:`concurrent.futures.Executor` the pipeline hands every changed
  file to (``parse_worker.parse_file``, the unit both local paths run, so the rows are the
  same): one Ray task per file, its bytes travel with the task (workers on other machines need
  not see the checkout), the chunk drafts and graph come back;
- :class:`RayEmbedder` is an :class:`Embedder` whose ``iter_embeddings`` cuts the texts into
  slices and sends them to a pool of ``EmbedWorker`` actors; each actor opens **one** model
  session (the same backend/model/dimension as a local run, so the index and its provenance are
  identical) and answers each slice with an Arrow ``FixedSizeList<float32>`` array;
- the driver process stays the **one committer**: it walks each project (the ignore rules and
  the size/mtime/hash check against its state DB decide what changed, so it reads the changed
  files), turns the workers' drafts into rows, writes LanceDB and SQLite and publishes batch by
  batch exactly as a local run (two-phase publication, embedding cache, crash safety, index
  maintenance), pulling vectors from the actors as they finish, with at most two slices in
  flight per actor;
- many projects run one after another against one actor pool (the model is loaded once per
  actor for the whole run); progress is the local run's; Ctrl-C / the cancel event stops the
  committer between batches and ``close`` kills the actors.

The pool is kept smaller than the cluster's CPUs by one (at least one actor): Ray pipelines whose
actor pool took every CPU starved the stage that feeds it and hung (measured, issue 16).
"""

from __future__ import annotations

import logging
import os
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future
from typing import Any

import numpy as np
from local_memory_shared.embedding.base import Embedder, ProgressFn
from local_memory_shared.errors import EmbeddingError, InvalidArgument

log = logging.getLogger(__name__)

#: Texts per slice sent to one actor (big enough to amortise a round trip, small for balance).
SLICE = 96
#: Slices in flight per actor: one running, one queued, so an actor never waits for the driver.
IN_FLIGHT_PER_ACTOR = 2
#: Seconds the actors may take to be placed and load their model.
START_TIMEOUT = 180.0
#: Environment variables that choose the embedding model; actors build their embedder from them.
EMBED_ENV = (
    "EMBED_BACKEND",
    "EMBED_MODEL",
    "EMBED_DIMENSION",
    "OLLAMA_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_API_KEY_FILE",
    "GEMINI_BASE_URL",
)


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise InvalidArgument(
            "--ray needs Ray: pip install 'local-memory-indexer[distributed]'", field="ray"
        ) from exc
    return ray


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """Run ``fn(*args)`` on a Ray worker (the body of :class:`RayParser`'s task)."""
    return fn(*args)


class RayParser(Executor):
    """Runs the pipeline's parse calls as Ray tasks on the cluster ``ray`` is connected to.

    Each task takes one CPU while one is free after the embedding actors were placed (the
    default pool leaves one); with every CPU held by actors, tasks take none rather than wait
    forever. Ray re-runs a task whose worker died; an error comes back through the future and
    the pipeline parses that batch in process.
    """

    def __init__(self) -> None:
        ray = _ray()
        if not ray.is_initialized():
            raise InvalidArgument("RayParser needs a connected Ray cluster (start RayEmbedder first)")
        free = float(ray.available_resources().get("CPU", 0.0))
        self._task = ray.remote(num_cpus=1 if free >= 1 else 0)(_call)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if kwargs:
            raise TypeError("RayParser.submit takes positional arguments only")
        future: Future[Any] = self._task.remote(fn, *args).future()
        return future


class _EmbedWorker:
    """One model session on one Ray worker (wrapped by ``ray.remote`` in :class:`RayEmbedder`)."""

    def __init__(self, env: dict[str, str], threads: int):
        os.environ.update(env)
        os.environ["LOCAL_MEMORY_EMBED_THREADS"] = str(threads)
        from local_memory_shared.config import load_settings
        from local_memory_shared.embedding import embedder_from_settings

        self.embedder = embedder_from_settings(load_settings())

    def describe(self) -> tuple[str, str, int]:
        return self.embedder.backend, self.embedder.model, self.embedder.dimension

    def embed(self, texts: list[str]) -> Any:
        import pyarrow as pa

        vectors = np.ascontiguousarray(self.embedder.embed_documents(texts), dtype=np.float32)
        return pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), vectors.shape[1])


class RayEmbedder(Embedder):
    """An embedder whose work runs on a pool of Ray actors, one model session each."""

    def __init__(self, address: str | None = None, actors: int | None = None, threads: int = 1):
        ray = _ray()
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            with warnings.catch_warnings():
                # Ray starts its processes with fork + exec; lance's before-fork hook warns on any fork.
                warnings.filterwarnings("ignore", "lance is not fork-safe", UserWarning)
                warnings.filterwarnings("ignore", "lancedb fork support is experimental", RuntimeWarning)
                try:
                    ray.init(address=address, include_dashboard=False, log_to_driver=False)
                except (ConnectionError, TimeoutError, ValueError, RuntimeError) as exc:
                    if address is None:
                        raise
                    raise InvalidArgument(
                        f"cannot reach the Ray cluster at {address!r} (a running head node's "
                        f"ray://host:10001 or host:6379 address?): {exc}",
                        field="address",
                    ) from exc
            self._started = True
        cpus = int(ray.cluster_resources().get("CPU", 1))
        count = actors if actors is not None else max(1, cpus - 1)
        if count < 1:
            raise InvalidArgument("--ray-actors must be at least 1", field="ray_actors")
        env = {k: os.environ[k] for k in EMBED_ENV if os.environ.get(k)}
        worker = ray.remote(num_cpus=threads)(_EmbedWorker)
        self._actors = [worker.remote(env, threads) for _ in range(count)]
        try:
            described = ray.get([a.describe.remote() for a in self._actors], timeout=START_TIMEOUT)
        except Exception as exc:  # a worker that cannot load the model, or no CPU free to place it
            self.close()
            raise EmbeddingError(
                f"{count} Ray embedding worker(s) of {threads} CPU each did not start within "
                f"{START_TIMEOUT:.0f} s (the cluster has {cpus} CPU(s); fewer --ray-actors?): {exc}"
            ) from exc
        self.backend, self.model, self._dimension = described[0]
        log.info("embedding on %d Ray actor(s) (%s/%s)", count, self.backend, self.model)

    @property
    def dimension(self) -> int:
        return int(self._dimension)

    @property
    def actors(self) -> int:
        return len(self._actors)

    def embed_documents(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for positions, vectors in self.iter_embeddings(texts, progress):
            out[positions] = vectors
        return out

    def iter_embeddings(
        self, texts: Sequence[str], progress: ProgressFn | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(positions, vectors)`` as actors finish slices (in completion order)."""
        ray = self._ray
        total = len(texts)
        slices = deque(range(0, total, SLICE))
        pending: dict[Any, int] = {}
        free = deque(self._actors * IN_FLIGHT_PER_ACTOR)
        owner: dict[Any, Any] = {}
        done = 0
        while slices or pending:
            while slices and free:
                start = slices.popleft()
                actor = free.popleft()
                ref = actor.embed.remote(list(texts[start : start + SLICE]))
                pending[ref] = start
                owner[ref] = actor
            ready, _ = ray.wait(list(pending), num_returns=1)
            ref = ready[0]
            start = pending.pop(ref)
            free.append(owner.pop(ref))
            try:
                array = ray.get(ref)
            except Exception as exc:
                raise EmbeddingError(f"a Ray embedding worker failed: {exc}") from exc
            vectors = np.asarray(array.flatten().to_numpy(zero_copy_only=False), dtype=np.float32)
            vectors = self.check_dimension(vectors.reshape(-1, self.dimension))
            done += len(vectors)
            yield np.arange(start, start + len(vectors), dtype=np.int64), vectors
            if progress is not None:
                progress(done, total)

    def close(self) -> None:
        for actor in getattr(self, "_actors", []):
            try:
                self._ray.kill(actor)
            except Exception as exc:  # an actor already gone is fine
                log.debug("killing a Ray actor failed: %s", exc)
        self._actors = []
        if self._started:
            self._ray.shutdown()
            self._started = False
