"""Registers the memory tools in the searcher's registry (one import line in ``tools.py``)."""

from __future__ import annotations

from local_memory_shared.tooling import ImportedTool

from ..tools import ToolSpec, register
from . import params as P

#: The tool bodies, imported on the first memory tool call (the reader, search and their libraries).
_TOOLS = "local_memory_search.memory.tools"

register(ToolSpec("memory_search", ImportedTool(_TOOLS, "memory_search"), P.MemorySearchParams,
    "Search agent memory: semantic, fulltext (BM25, OR, stemmed) or hybrid (weighted RRF); every filter of seeds "
    "000/004 (kinds, status, tags, path globs, tree, meta, metaPredicate, temporal, grep, asOf) applied before "
    "ranking; superseded records give way to their successor; near-duplicates collapsed; explain per hit."))  # fmt: skip
register(ToolSpec("get_memory", ImportedTool(_TOOLS, "get_memory"), P.GetMemoryParams,
    "One memory in full (content paged at 40,000 characters); counts a hit for trap/decision/spec/plan."))  # fmt: skip
register(ToolSpec("list_by_domain", ImportedTool(_TOOLS, "list_by_domain"), P.ListParams,
    "Everything under a domain path, newest first (creation order, never similarity)."))  # fmt: skip
register(ToolSpec("must_read", ImportedTool(_TOOLS, "must_read"), P.ListParams,
    "Headers of what is open (active/draft) in a domain, optionally one kind (type), newest first."))  # fmt: skip
register(ToolSpec("timeline", ImportedTool(_TOOLS, "timeline"), P.TimelineParams,
    "What was written in the same project just before and after a memory, in creation order."))  # fmt: skip
register(ToolSpec("pulse", ImportedTool(_TOOLS, "pulse"), P.ListParams, "The newest memories of the project, newest first."))  # fmt: skip
