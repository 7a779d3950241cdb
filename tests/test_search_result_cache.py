"""The result cache: keys from the arguments' JSON, answers kept as independent copies."""

from __future__ import annotations

import dataclasses
import json

from local_memory_search import degradation as W
from local_memory_search.api import ResultCache, Shape, _jsonable
from local_memory_search.filters import SearchFilters
from local_memory_search.fusion import RankRequest
from local_memory_shared.tooling import Paging, ToolResult


def _args() -> dict[str, object]:
    filters = SearchFilters(language="python", file_extensions=(".py", ".pyi"), tags=("a",))
    req = RankRequest(query="evict the oldest entry", mode="hybrid", alpha=0.4, filters=filters, depth=0)
    return {"req": req, "limit": 10, "offset": 20, "shape": Shape(fields=("text",), max_chars=50)}


def test_argument_json_is_what_asdict_gives() -> None:
    """The key's JSON is built field by field; it must equal the ``dataclasses.asdict`` JSON
    it replaced (cached answers stay addressable by the same keys)."""

    def via_asdict(value: object) -> object:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return via_asdict(dataclasses.asdict(value))
        if isinstance(value, dict):
            return {k: via_asdict(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [via_asdict(v) for v in value]
        return value

    args = _args()
    assert json.dumps(_jsonable(args), sort_keys=True) == json.dumps(via_asdict(args), sort_keys=True)
    assert _jsonable(args)["req"]["filters"]["file_extensions"] == [".py", ".pyi"]  # type: ignore[index]


def _answer() -> ToolResult:
    return ToolResult(
        results=[{"chunk_id": "c1", "text": "x", "score": 0.5}],
        warnings=[],
        extra={"search": {"timings_ms": {"total": 1.0}, "cached": False}},
        paging=Paging(0, 10, 1),
    )


def test_a_cached_answer_is_a_copy_both_ways() -> None:
    cache = ResultCache(size=2)
    answer = _answer()
    cache.put("k", answer)
    answer.results.append({"chunk_id": "late"})  # type: ignore[union-attr]
    answer.extra["search"]["cached"] = True
    hit = cache.get("k")
    assert hit == _answer() and hit is not answer
    hit.results.clear()  # type: ignore[union-attr]
    hit.extra["search"]["timings_ms"]["total"] = 9.0
    assert cache.get("k") == _answer()


def test_degraded_answers_are_not_kept_and_the_oldest_is_evicted() -> None:
    cache = ResultCache(size=2)
    degraded = _answer()
    degraded.warnings.append(W.warn(sorted(W.DEGRADED)[0], "leg down"))
    cache.put("bad", degraded)
    assert cache.get("bad") is None
    for key in ("a", "b", "c"):
        cache.put(key, _answer())
    assert cache.get("a") is None and cache.get("b") == cache.get("c") == _answer()
