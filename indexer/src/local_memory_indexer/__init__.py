"""The Local Memory writer: discovery, chunking, graph extraction, embedding, storage, jobs."""

from local_memory_shared.lazy_imports import defer_rest_client, lighten_imports

# Before anything imports lancedb: skip the REST namespace client's eager import, and the bytecode
# override checks and eager pydantic builds of the lancedb and MCP SDK imports (see lazy_imports).
defer_rest_client()
lighten_imports()
