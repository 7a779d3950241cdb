"""Memory routes of the monitor (seed 000's ``/api/records`` and ``/api/records/search``).

Filled in once the memory retrieval library lands; until then each route answers a clear error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from local_memory_shared.config import Settings
from local_memory_shared.errors import NotFound


def dispatch(name: str, params: Mapping[str, str], settings: Settings) -> tuple[int, dict[str, Any]]:
    """Answer one memory route."""
    raise NotFound("memory retrieval is not available in this build", field="route")
