"""Helpers for the memory searcher's tests: one ``memory_search`` call through the real tool layer."""

from __future__ import annotations

from typing import Any

from local_memory_search.tools import call_tool


def memory_search(**args: Any) -> dict[str, Any]:
    """``memory_search`` in project ``acme`` unless another is given; the call must succeed."""
    args.setdefault("projectId", "acme")
    out: dict[str, Any] = call_tool("memory_search", args)
    assert out["ok"], out
    return out


def ids_of(out: dict[str, Any]) -> list[str]:
    """The result ids of a search answer, in order."""
    return [r["id"] for r in out["results"]]
