"""Hit events to the writer: the searcher sends ``{ids, session_id}`` over ``<data_root>/writer.sock``
(owned by the running indexer) fire-and-forget, and writes nothing itself (DESIGN.md "Memory").
No indexer listening → a ``hits_not_recorded`` warning; the answer is never held up.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from local_memory_shared.contract import HITS_NOT_RECORDED  # noqa: E402
from local_memory_shared.envelope import warning
from local_memory_shared.memory.model import HIT_ELIGIBLE_KINDS

SEND_TIMEOUT_S = 0.5


def eligible(rows: list[dict[str, Any]]) -> list[str]:
    """Ids of hit-eligible records (seed 000: trap, decision, spec, plan)."""
    return [r["id"] for r in rows if r.get("kind") in HIT_ELIGIBLE_KINDS]


def send_hits(sock_path: Path, ids: list[str], session_id: str | None) -> dict[str, str] | None:
    """Hand ``ids`` to the writer; a warning dict when it could not be reached, else None."""
    if not ids:
        return None
    message = json.dumps({"ids": ids, "session_id": session_id}).encode() + b"\n"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(SEND_TIMEOUT_S)
            s.connect(str(sock_path))
            s.sendall(message)
            try:
                s.recv(256)  # the writer's short ack; not waiting longer than the timeout
            except OSError:
                pass
    except OSError as exc:
        return warning(
            HITS_NOT_RECORDED,
            f"No indexer is listening on {sock_path} ({exc.strerror or exc}); {len(ids)} hit(s) not recorded. "
            "Run `local-memory-indexer serve` (or its MCP server) to count hits.",
        )
    return None
