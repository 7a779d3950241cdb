"""The strictly read-only Local Memory searcher."""
