"""Diagnostics over one project's index: ``health_check``, ``index_status`` and ``doctor_index``.

All three only read. They open the index through :func:`store.open_index` (SQLite ``mode=ro`` +
``query_only``, LanceDB wrapped read-only and pinned to the published version), stat and read
project files through the shared bounded reader, and never write anything anywhere.

One module per job:

- :mod:`.health` — ``health_check``: ``ready`` / ``degraded`` / ``not_ready`` with reasons;
  :mod:`.capabilities` derives the per-tool table from the tool registry.
- :mod:`.status` — ``index_status``: counts, languages, model and freshness (the indexer's own
  discovery rules, from ``local_memory_shared.discovery``).
- :mod:`.doctor` — ``doctor_index``: SQLite vs LanceDB vs graph consistency, FTS files and stored
  vectors; every finding names the ``local-memory-indexer`` command that repairs it.
- :mod:`.environment` — versions, platform, CPU features, paths, the re-ranker probe.
- :mod:`.common` — status words, the fix command, the FTS and vector integrity probes.
- :mod:`.edge` — the pydantic tool arguments and the thin ``*_tool`` wrappers the registry uses.

Each library function returns plain data: ``{"data": {...}, "warnings": [...]}``.
"""

from __future__ import annotations

from ..params import DoctorIndexParams, HealthCheckParams, IndexStatusParams
from .capabilities import Facts, capabilities
from .common import INDEXER, VectorSample, fix_command, fts_probe, sample_vectors
from .doctor import Finding, doctor_index
from .edge import doctor_index_tool, health_check_tool, index_status_tool
from .environment import cpu_features, environment_report
from .health import Check, health_check
from .status import Freshness, compute_freshness, index_status

__all__ = [
    "INDEXER",
    "Check",
    "DoctorIndexParams",
    "Facts",
    "Finding",
    "Freshness",
    "HealthCheckParams",
    "IndexStatusParams",
    "VectorSample",
    "capabilities",
    "compute_freshness",
    "cpu_features",
    "doctor_index",
    "doctor_index_tool",
    "environment_report",
    "fix_command",
    "fts_probe",
    "health_check",
    "health_check_tool",
    "index_status",
    "index_status_tool",
    "sample_vectors",
]
