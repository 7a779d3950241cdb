"""The read-only status monitor: a web page and a JSON API over the index and the memory vault.

``local-memory-search monitor [--port 3124] [--token T]`` serves it on 127.0.0.1 only. It reads
through the same tool functions as the MCP server, so it can never write: not a file, not a hit
counter (seed 000: the Memory tab is read-only with respect to hits).
"""

from .app import DEFAULT_PORT, create_app, serve

__all__ = ["DEFAULT_PORT", "create_app", "serve"]
