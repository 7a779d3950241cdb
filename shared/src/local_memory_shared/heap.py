"""glibc heap settings of a long-lived process (issue 14: search server and indexer resident memory).

Two knobs that a client-launched MCP server cannot get from the environment (the client starts
it, so ``MALLOC_ARENA_MAX`` is not ours to set), applied from inside with ``mallopt``:

- :func:`limit_malloc_arenas`: glibc gives each thread that meets a locked heap its own arena (up
  to 8 per core), and freed memory stays cached per arena. A search process runs ~20 threads
  (LanceDB's runtime, ONNX Runtime, the MCP worker), one query at a time; capping the arenas at
  :data:`DEFAULT_ARENAS` saved 10–15 MB after 300 queries at unchanged latency
  (bench/search_memory.py, README "Memory"). The indexer is hit far harder: LanceDB's writer
  threads (add, merge-insert, compaction, FTS folding) spread their buffers over up to 16 arenas
  on 2 cores, and each arena keeps its freed pages, so a first index of laravel (16k chunks)
  peaked at 882 MB with glibc's default and 619 MB with 2 arenas (bench/indexer_phases.py).
- :class:`IdleTrim`: ``malloc_trim(0)`` once the process has been idle for
  :data:`IDLE_TRIM_SECONDS`, handing the free pages of every arena back to the OS while
  nobody waits for an answer.
- :class:`LibraryPageout` / :func:`release_library_pages` (on unless ``LOCAL_MEMORY_RELEASE_LIBRARY_PAGES=0``):
  once, after a server's first call, ask
  the kernel to reclaim the clean pages of the shared libraries' files (``madvise(MADV_PAGEOUT)``).
  Loading and initialising LanceDB, pyarrow and ONNX Runtime touches far more of their code than
  answering queries does (the dynamic linker's relocation tables, every static initialiser, ONNX
  Runtime's kernel registry, pyarrow's dataset/S3/Parquet modules that LanceDB imports), and the
  kernel maps 64 KB around every page a fault touches; a search process then kept ~140–190 MB of
  library pages resident: 140 MB before, 74 MB after 1,000 queries with the release (flask,
  bench/search_memory.py); at 100k chunks on an idle machine 144 -> 80 MB, RSS 325 -> 261 MB,
  p95 unchanged over 4 interleaved rounds (bench/real100k.py, session 11), hence on by default.
  Pages another process maps too (an indexer from the same install) are not reclaimed: they are
  shared, and the release then lowers the search process's RSS less.
  Only file-backed, read-only mappings with no private (copied-on-write) page are advised: nothing
  anonymous is swapped, and a page another process maps is left alone by the kernel.

Both are no-ops (False) where the C library is not glibc.

And one for Python's own collector, for a fresh process's first answer (issue 14 item 3):

- :func:`pause_gc` / :func:`settle_gc`: a fresh search process creates ~200,000 objects while it
  imports (the MCP SDK's and LanceDB's pydantic models, pyarrow, numpy) and keeps nearly all of
  them; the cyclic collector ran ~320 times over them (two full passes), about a tenth of the
  start-up CPU, and found ~400–2,500 garbage objects. :func:`pause_gc` turns it off at start;
  :func:`settle_gc`, once the server is built, moves every object alive then into the permanent
  generation (``gc.freeze``: later collections never scan them again, so a full collection no
  longer walks the whole import graph in the middle of a query) and turns the collector back on.
  The few cyclic leftovers of the imports stay frozen (tens of KB).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from .config import load_settings

log = logging.getLogger(__name__)

#: glibc's ``M_ARENA_MAX`` parameter number.
M_ARENA_MAX = -8
#: Arenas a server process keeps (``LOCAL_MEMORY_MALLOC_ARENAS``; 0 = glibc's default of 8 per core).
DEFAULT_ARENAS = 2
#: Idle seconds after a call before the heap is trimmed.
IDLE_TRIM_SECONDS = 2.0

_libc: Any = None
#: True while :func:`pause_gc` holds the collector off (so :func:`settle_gc` knows it is its to resume).
_gc_paused = False


def _glibc() -> Any:
    global _libc
    if _libc is None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _libc = libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else False
        except OSError:
            _libc = False
    return _libc


def limit_malloc_arenas(arenas: int = DEFAULT_ARENAS) -> bool:
    """Cap glibc's malloc arenas at ``arenas`` (call before starting threads); False if not applied."""
    libc = _glibc()
    if not libc or arenas < 1:
        return False
    return bool(libc.mallopt(M_ARENA_MAX, arenas))


def limit_malloc_arenas_from_settings() -> bool:
    """:func:`limit_malloc_arenas` with ``LOCAL_MEMORY_MALLOC_ARENAS``; a process calls it first thing.

    A bad setting is left for the command itself to report (with its field), so this never raises.
    """
    try:
        settings = load_settings()
    except Exception:
        return False
    return limit_malloc_arenas(settings.malloc_arenas)


#: Linux ``prctl`` option: the signal a process gets when its parent exits.
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Have the kernel SIGKILL this (child) process when its parent exits (Linux; no-op elsewhere).

    ``parent`` is the pid the child expects: if it already exited (the child was re-parented
    before the request took effect), the child exits now.
    """
    import os
    import signal

    libc = _glibc()
    if libc and hasattr(libc, "prctl"):
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def trim_heap() -> bool:
    """Hand free heap pages back to the OS now (``malloc_trim(0)``); True if any were released."""
    libc = _glibc()
    return bool(libc and libc.malloc_trim(0))


class IdleTrim:
    """Trims the heap once no call has ended for ``seconds`` (one daemon thread, started on first
    use), after running ``before_trim`` (the collector's idle sweep, :class:`FullCollectionFreeze`)."""

    def __init__(
        self, seconds: float = IDLE_TRIM_SECONDS, before_trim: Callable[[], object] | None = None
    ) -> None:
        self.seconds = seconds
        self.before_trim = before_trim
        self.trims = 0
        self._last: float | None = None  # when the last call ended; None = nothing to trim
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def touch(self) -> None:
        """A call just ended: (re)start the idle countdown."""
        if not _glibc():
            return
        with self._wake:
            self._last = time.monotonic()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="heap-idle-trim", daemon=True)
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._last is None:
                    self._wake.wait()
                idle = time.monotonic() - self._last
                if idle < self.seconds:
                    self._wake.wait(self.seconds - idle)
                    continue
                self._last = None
            if self.before_trim is not None:
                self.before_trim()
            trim_heap()
            self.trims += 1


#: Linux ``madvise`` advice: reclaim these pages now (Linux 5.4+; EINVAL on older kernels).
MADV_PAGEOUT = 21


def library_mappings(smaps: str = "/proc/self/smaps") -> list[tuple[int, int, str]]:
    """``(start, end, path)`` of this process's read-only mappings of shared-library files that hold
    no private page (``Anonymous: 0``): what :func:`release_library_pages` may hand back."""
    found: list[tuple[int, int, str]] = []
    current: tuple[int, int, str] | None = None
    try:
        with open(smaps, encoding="utf-8") as lines:
            for line in lines:
                head = line.split(maxsplit=5)
                if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
                    current = None
                    path = head[5].strip() if len(head) > 5 else ""
                    name = path.rsplit("/", 1)[-1]
                    if (
                        path.startswith("/")
                        and "w" not in head[1]
                        and (name.endswith(".so") or ".so." in name)
                    ):
                        start, end = (int(x, 16) for x in head[0].split("-"))
                        current = (start, end, path)
                elif current is not None and line.startswith("Anonymous:"):
                    if int(line.split()[1]) == 0:
                        found.append(current)
                    current = None
    except OSError:  # no /proc (not Linux)
        return []
    return found


def release_library_pages() -> int:
    """Ask the kernel to reclaim the resident pages of this process's shared-library files
    (``MADV_PAGEOUT`` on :func:`library_mappings`); answers how many mappings it advised (0 where
    the C library, the kernel or ``/proc`` does not offer it). Pages a later call needs are read
    back on their first touch (from the page cache when another process still holds them)."""
    libc = _glibc()
    if not libc or not hasattr(libc, "madvise"):
        return 0
    madvise = libc.madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    advised = 0
    for start, end, _path in library_mappings():
        if madvise(start, end - start, MADV_PAGEOUT) == 0:
            advised += 1
    return advised


class LibraryPageout:
    """:func:`release_library_pages` once, on a daemon thread, when ``after_calls`` calls have ended.

    The first call touches the pages a query needs; what start-up alone touched is then handed back.
    ``enabled`` None (the default) reads ``LOCAL_MEMORY_RELEASE_LIBRARY_PAGES`` at the first
    :meth:`touch`; when off, :meth:`touch` does nothing.
    """

    def __init__(self, after_calls: int = 1, enabled: bool | None = None) -> None:
        self.after_calls = after_calls
        self.enabled = enabled
        self.calls = 0
        #: Mappings advised by the one release (None until it has run).
        self.advised: int | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def touch(self) -> None:
        """A call just ended: start the release once ``after_calls`` calls have."""
        if self.enabled is None:
            try:
                self.enabled = load_settings().release_library_pages
            except Exception:  # a bad setting is reported by the tools themselves
                self.enabled = False
        if not self.enabled:
            return
        with self._lock:
            self.calls += 1
            if self._thread is not None or self.calls < self.after_calls:
                return
            self._thread = threading.Thread(target=self._run, name="library-pageout", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        self.advised = release_library_pages()
        log.debug("library pages released: %d mappings advised", self.advised)

    def wait(self, timeout: float | None = None) -> None:
        """Return once the release has run (at once when it never started)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)


def pause_gc() -> bool:
    """Turn the cyclic collector off for a fresh process's imports; False if it was already off."""
    global _gc_paused
    if not gc.isenabled():
        return False
    gc.disable()
    _gc_paused = True
    return True


def settle_gc() -> bool:
    """End of start-up: freeze what is alive now and turn the collector back on (once; only after
    :func:`pause_gc`). Answers whether it did."""
    global _gc_paused
    if not _gc_paused:
        return False
    _gc_paused = False
    gc.freeze()
    gc.enable()
    return True


#: Objects frozen since the last sweep (:class:`FullCollectionFreeze`) that make the idle sweep
#: unfreeze and collect everything once, so cyclic garbage among them is not kept for good.
SWEEP_AFTER_FROZEN = 100_000


class FullCollectionFreeze:
    """Keeps the cyclic collector's full passes off a long-lived server's query path.

    A search server's memos fill with long-lived objects (``ranking.path_info``'s 10k entries
    after 400 queries hold ~60k frozensets: sets are always tracked), and each full collection
    walked every one of them: 112k tracked objects, 40–54 ms per pass, once every ~130 queries,
    inside whichever query allocated at that moment (bench/README.md, session 15). So after a
    call during which a full collection ran, :meth:`after_call` freezes the survivors
    (``gc.freeze``): later full passes walk only what was created since, a few ms.

    What is frozen is never scanned again, so cyclic garbage made of frozen objects would stay.
    Survivors of a full pass were reachable when it ended, and what becomes garbage later is
    mostly freed by reference counting (evicted memo entries hold no cycles); for the rest,
    :meth:`idle_sweep` (run by the idle trim, when nobody waits for an answer) unfreezes and
    collects everything once ``SWEEP_AFTER_FROZEN`` objects were frozen since its last sweep.
    """

    def __init__(self, sweep_after: int = SWEEP_AFTER_FROZEN) -> None:
        self.sweep_after = sweep_after
        self.freezes = 0
        self.sweeps = 0
        self._full_passes = gc.get_stats()[2]["collections"]
        #: Frozen objects at the last sweep; None until the first call (start-up's freeze,
        #: :func:`settle_gc`, comes after this object is made and is no reason to sweep).
        self._frozen_at_sweep: int | None = None
        self._lock = threading.Lock()

    def after_call(self) -> None:
        """A call just ended: freeze the survivors if a full collection ran since the last call."""
        if self._frozen_at_sweep is None:
            self._frozen_at_sweep = gc.get_freeze_count()
        passes = gc.get_stats()[2]["collections"]
        if passes == self._full_passes:
            return
        with self._lock:
            self._full_passes = passes
            gc.freeze()
            self.freezes += 1

    def idle_sweep(self) -> bool:
        """Unfreeze and collect everything once enough was frozen since the last sweep; whether it did."""
        with self._lock:
            base = self._frozen_at_sweep
            if base is None or gc.get_freeze_count() - base < self.sweep_after:
                return False
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self._frozen_at_sweep = gc.get_freeze_count()
            self._full_passes = gc.get_stats()[2]["collections"]
            self.sweeps += 1
            return True
