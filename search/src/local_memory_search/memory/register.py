"""Registers the memory tools in the searcher's registry (one import line in ``tools.py``)."""

from __future__ import annotations

from ..tools import ToolSpec, register
from . import tools as T

register(ToolSpec("memory_search", T.memory_search, T.MemorySearchParams,
    "Search agent memory: semantic, fulltext (BM25, OR, stemmed) or hybrid (weighted RRF); every filter of seeds "
    "000/004 (kinds, status, tags, path globs, tree, meta, metaPredicate, temporal, grep, asOf) applied before "
    "ranking; superseded records give way to their successor; near-duplicates collapsed; explain per hit."))  # fmt: skip
register(ToolSpec("get_memory", T.get_memory, T.GetMemoryParams,
    "One memory in full (content paged at 40,000 characters); counts a hit for trap/decision/spec/plan."))  # fmt: skip
register(ToolSpec("list_by_domain", T.list_by_domain, T.ListParams,
    "Everything under a domain path, newest first (creation order, never similarity)."))  # fmt: skip
register(ToolSpec("must_read", T.must_read, T.ListParams,
    "Headers of what is open (active/draft) in a domain, optionally one kind (type), newest first."))  # fmt: skip
register(ToolSpec("timeline", T.timeline, T.TimelineParams,
    "What was written in the same project just before and after a memory, in creation order."))  # fmt: skip
register(ToolSpec("pulse", T.pulse, T.ListParams, "The newest memories of the project, newest first."))  # fmt: skip
