"""Local Memory benchmark suite: retrieval quality, latency, indexing and read-only isolation (see README.md)."""
