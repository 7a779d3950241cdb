"""Find where LanceDB and the SQLite mirror disagree, so a run repairs what an earlier one broke.

A run writes a batch to LanceDB first and publishes it with the mirror in one SQLite commit. A
process killed between the two leaves LanceDB's latest version ahead of the mirror (deleted rows
not yet re-added, or rows the mirror never heard of); a deleted LanceDB folder leaves it empty.
The next run compares both per file and re-indexes every file that differs, before it publishes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .state_writer import StateWriter
from .store import ChunkStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Drift:
    """Files whose LanceDB rows differ from their mirror rows, and why the check ran."""

    files: frozenset[str]
    reason: str


def find_drift(store: ChunkStore, state: StateWriter, *, interrupted: bool) -> Drift:
    """Per-file comparison of LanceDB (latest version) with the mirror.

    It always runs after an unfinished run, after the LanceDB table was recreated, and when the
    row counts differ (a cheap check every run); otherwise nothing is read.
    """
    if store.created and state.mirror_total():
        reason = "the LanceDB table was missing"
    elif interrupted:
        reason = "the previous run did not finish"
    elif store.count() != state.mirror_total():
        reason = "LanceDB and the mirror hold different row counts"
    else:
        return Drift(frozenset(), "")
    lance, mirror = store.chunk_keys(), state.mirror_keys()
    files = frozenset(p for p in lance.keys() | mirror.keys() if lance.get(p) != mirror.get(p))
    if files:
        log.warning("repairing %d file(s): %s", len(files), reason)
    return Drift(files, reason)
