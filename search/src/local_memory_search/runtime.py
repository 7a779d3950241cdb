"""The one owner of the searcher's process-wide state: every cache registers here, one clear() resets all.

Caches live for the process (a server answers many calls): the result cache, LanceDB table
handles, the query encoder (loaded models and its query-vector LRU), the graph cache and the
per-version memos of the ranking code. Each module that keeps such a cache registers it once,
at import, with :func:`register_cache` — anything with a ``clear()`` method, or a plain
function that resets it::

    RESULT_CACHE = register_cache("results", ResultCache())
    register_cache("graph", graph.clear_graph_cache)

Tests and benchmarks call ``RUNTIME.clear()`` to start cold; :meth:`Runtime.names` lists what is
registered.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

__all__ = ["RUNTIME", "BoundedCache", "Clearable", "Runtime", "register_cache"]


@runtime_checkable
class Clearable(Protocol):
    """A cache that can forget everything it holds."""

    def clear(self) -> None:
        """Forget every entry."""


T = TypeVar("T", bound=Clearable | Callable[[], Any])
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A thread-safe LRU of at most ``size`` values, each made once by an ``opener`` on a miss.

    The opener runs outside the lock (opening a LanceDB table takes milliseconds and may raise), so
    two threads missing the same key at once may both open it; the later value wins, which is
    harmless for the read-only handles kept here.
    """

    def __init__(self, size: int):
        if size < 1:
            raise ValueError("a bounded cache holds at least one value")
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_open(self, key: K, opener: Callable[[], V]) -> V:
        """The value cached under ``key``, or ``opener()``'s, cached (evicting the least recent)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = opener()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value

    def get(self, key: K) -> V | None:
        """The value cached under ``key`` (None on a miss; opens nothing, leaves the order alone)."""
        with self._lock:
            return self._items.get(key)

    def discard(self, stale: Callable[[K], bool]) -> None:
        """Forget every value whose key ``stale`` says is out of date."""
        with self._lock:
            for key in [k for k in self._items if stale(k)]:
                del self._items[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def clear(self) -> None:
        """Forget every value."""
        with self._lock:
            self._items.clear()


class Runtime:
    """Process-wide caches by name, with one ``clear()``."""

    def __init__(self) -> None:
        self._caches: dict[str, Clearable | Callable[[], Any]] = {}
        self._lock = threading.Lock()

    def register_cache(self, name: str, cache: T) -> T:
        """Register ``cache`` (a ``clear()``-able object or a reset function) under ``name``; returns it."""
        if not isinstance(cache, Clearable) and not callable(cache):
            raise TypeError(f"cache {name!r} has no clear() and is not callable")
        with self._lock:
            self._caches[name] = cache
        return cache

    def names(self) -> list[str]:
        """Registered cache names, in registration order."""
        with self._lock:
            return list(self._caches)

    def clear(self) -> None:
        """Reset every registered cache (the next call starts cold)."""
        for name in self.names():
            self.clear_cache(name)

    def clear_cache(self, name: str) -> None:
        """Reset the one cache registered under ``name`` (KeyError if none is)."""
        with self._lock:
            cache = self._caches[name]
        if isinstance(cache, Clearable):
            cache.clear()
        else:
            cache()


#: The searcher's process-wide state.
RUNTIME = Runtime()


def register_cache(name: str, cache: T) -> T:
    """Register a process-wide cache with :data:`RUNTIME` (see the module docstring)."""
    return RUNTIME.register_cache(name, cache)
