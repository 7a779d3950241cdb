"""Query-string parsing shared by the monitor's routes (bad values are INVALID_ARGUMENT naming the field)."""

from __future__ import annotations

from collections.abc import Mapping

from local_memory_shared.errors import InvalidArgument


def flag(params: Mapping[str, str], name: str) -> bool:
    """A boolean query parameter: empty/0/false/no/off or 1/true/yes/on."""
    raw = (params.get(name) or "").strip().lower()
    if raw in ("", "0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise InvalidArgument(f"{name} must be true or false", field=name)
