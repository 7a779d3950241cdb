"""Code graph: definitions, calls and imports from tree-sitter tag queries, stored in SQLite.

The pipeline calls :func:`extract_file_graph` for each changed file and, inside its own
transaction, :func:`write_file_graph` (or :func:`delete_file_graph` for a deleted file); after a
run that added or removed files, :func:`reresolve_imports` refreshes import targets.
"""

from .extract import (
    DYNAMIC_CALLEE,
    MODULE_CALLER,
    CallSite,
    FileGraph,
    ImportRef,
    SymbolDef,
    extract_file_graph,
    supported_languages,
)
from .resolve import ProjectFiles, Target, project_index, resolve_import
from .store import bump_graph_version, chunk_for_span, delete_file_graph, reresolve_imports, write_file_graph

__all__ = [
    "DYNAMIC_CALLEE",
    "MODULE_CALLER",
    "CallSite",
    "FileGraph",
    "ImportRef",
    "ProjectFiles",
    "SymbolDef",
    "bump_graph_version",
    "Target",
    "chunk_for_span",
    "delete_file_graph",
    "extract_file_graph",
    "project_index",
    "reresolve_imports",
    "resolve_import",
    "supported_languages",
    "write_file_graph",
]
