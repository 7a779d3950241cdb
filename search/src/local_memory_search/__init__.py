"""The strictly read-only Local Memory searcher."""

from local_memory_shared.lazy_imports import defer_rest_client

# Before anything imports lancedb: skip the REST namespace client's eager import (see lazy_imports).
defer_rest_client()
