"""The response envelope every tool answers (contract 1.0, see server.manifest.json).

Success: ``{"ok": true, "results"|"data": ..., "warnings": [{code, message}], paging...}``.
Bad arguments / hard failures: ``{"ok": false, "error": {code, message, field?}, "warnings": []}``.
Degradation is never an error: it adds a warning with a stable code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import LocalMemoryError

CONTRACT_VERSION = "1.1"


@dataclass(frozen=True)
class Warning_:
    """One degradation note with a stable code."""

    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def warning(code: str, message: str) -> dict[str, str]:
    """A warning entry for ``warnings[]``."""
    return Warning_(code, message).to_dict()


def ok(
    *, results: Any = None, data: Any = None, warnings: list[dict[str, str]] | None = None, **extra: Any
) -> dict[str, Any]:
    """A success envelope with ``results`` (lists of hits) or ``data`` (one object)."""
    out: dict[str, Any] = {"ok": True}
    if results is not None:
        out["results"] = results
    if data is not None:
        out["data"] = data
    out.update(extra)
    out["warnings"] = _dedupe(warnings or [])
    return out


def error(exc: LocalMemoryError, warnings: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """An error envelope from one of our exceptions."""
    return {"ok": False, "error": exc.to_dict(), "warnings": _dedupe(warnings or [])}


def _dedupe(warnings: list[dict[str, str]]) -> list[dict[str, str]]:
    seen: set[tuple[str, str]] = set()
    out = []
    for w in warnings:
        key = (w["code"], w["message"])
        if key not in seen:
            seen.add(key)
            out.append(w)
    return out
