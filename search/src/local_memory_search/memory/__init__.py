"""Agent-memory retrieval in the read-only searcher (issue 12): reader, ranking, tools, CLI."""
