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
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["RUNTIME", "Clearable", "Runtime", "register_cache"]


@runtime_checkable
class Clearable(Protocol):
    """A cache that can forget everything it holds."""

    def clear(self) -> None:
        """Forget every entry."""


T = TypeVar("T", bound=Clearable | Callable[[], Any])


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
