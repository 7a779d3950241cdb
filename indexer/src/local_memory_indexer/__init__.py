"""The Local Memory writer: discovery, chunking, graph extraction, embedding, storage, jobs."""

from local_memory_shared.lazy_imports import defer_package_inits, lighten_imports

# Before anything imports lancedb or the MCP SDK: the bytecode override checks and eager pydantic
# builds of those imports, then the package __init__s a server never needs (the REST namespace
# client's, the MCP SDK's client side and high-level framework) are skipped (see lazy_imports).
lighten_imports()
defer_package_inits()
