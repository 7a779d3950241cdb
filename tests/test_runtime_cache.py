"""The searcher's bounded LRU (``runtime.BoundedCache``): open once, evict the least recent, clear."""

from __future__ import annotations

import threading

import pytest
from local_memory_search.runtime import BoundedCache


def test_a_value_is_opened_once_and_the_least_recent_is_evicted() -> None:
    opened: list[str] = []

    def opener(key: str):
        return lambda: opened.append(key) or f"handle:{key}"

    cache: BoundedCache[str, str] = BoundedCache(2)
    assert cache.get_or_open("a", opener("a")) == "handle:a"
    assert cache.get_or_open("b", opener("b")) == "handle:b"
    assert cache.get_or_open("a", opener("a")) == "handle:a"  # a hit: a becomes the most recent
    assert opened == ["a", "b"]
    cache.get_or_open("c", opener("c"))  # evicts b, not a
    assert len(cache) == 2
    cache.get_or_open("a", opener("a"))
    assert opened == ["a", "b", "c"]
    cache.get_or_open("b", opener("b"))
    assert opened == ["a", "b", "c", "b"]


def test_a_failing_opener_caches_nothing_and_clear_forgets_everything() -> None:
    cache: BoundedCache[str, int] = BoundedCache(4)

    def broken() -> int:
        raise OSError("no such table")

    with pytest.raises(OSError):
        cache.get_or_open("x", broken)
    assert len(cache) == 0
    assert cache.get_or_open("x", lambda: 7) == 7
    cache.clear()
    assert len(cache) == 0 and cache.get_or_open("x", lambda: 8) == 8


def test_concurrent_callers_share_one_bounded_cache() -> None:
    cache: BoundedCache[int, int] = BoundedCache(8)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for i in range(500):
                key = (seed * 7 + i) % 16
                assert cache.get_or_open(key, lambda k=key: k * k) == key * key
                assert len(cache) <= 8
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(cache) == 8


def test_a_cache_holds_at_least_one_value() -> None:
    with pytest.raises(ValueError):
        BoundedCache(0)


def test_get_peeks_without_opening_and_discard_drops_only_the_stale_keys() -> None:
    cache: BoundedCache[tuple[str, int], str] = BoundedCache(4)
    assert cache.get(("idx", 1)) is None and len(cache) == 0  # a peek opens nothing
    for key in [("idx", 1), ("idx", 2), ("other", 1)]:
        cache.get_or_open(key, lambda key=key: f"{key[0]}@{key[1]}")
    assert cache.get(("idx", 2)) == "idx@2"
    cache.discard(lambda k: k[0] == "idx" and k != ("idx", 2))  # older versions of one index
    assert cache.get(("idx", 1)) is None
    assert cache.get(("idx", 2)) == "idx@2" and cache.get(("other", 1)) == "other@1" and len(cache) == 2
