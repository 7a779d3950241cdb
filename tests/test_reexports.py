"""A Rust ``pub use`` re-export is an alias definition of each name it brings in.

axum's ``extract/mod.rs`` re-exports ``FromRequest`` from ``axum_core``, which is outside the
project: the re-export is where the name enters it, so a search for ``FromRequest`` should land
there. A name also defined in the project keeps its real definition first. Real tree-sitter,
the real pipeline, model, LanceDB and SQLite; the search goes through the tool.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from local_memory_indexer.graph import extract_file_graph
from local_memory_search.tools import call_tool
from search_support import env, index, write_project

LIB = """pub mod task;

pub use crate::task::spawn;
pub use runtime_core::handle::{Handle, Remote as RemoteHandle, builder::Builder};
pub(crate) use crate::task::Inner;
use std::fmt;
"""

TASK = """/// Runs a future on the runtime and returns its join handle.
pub fn spawn(name: &str) -> usize {
    name.len()
}

pub struct Inner;
"""


def test_pub_use_names_are_alias_definitions() -> None:
    graph = extract_file_graph("src/lib.rs", LIB.encode(), "rust")
    aliases = {(s.name, s.start_line) for s in graph.symbols if s.kind == "alias"}
    # each name of the list, an ``as`` name under its new name; not ``pub(crate)``, not a plain ``use``
    assert aliases == {("spawn", 3), ("Handle", 4), ("RemoteHandle", 4), ("Builder", 4)}
    # the import edges stay as they were
    assert {i.module for i in graph.imports} >= {"crate::task::spawn", "runtime_core::handle", "std::fmt"}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    project = write_project(tmp_path_factory.mktemp("reexports"), {"src/lib.rs": LIB, "src/task.rs": TASK})
    root = tmp_path_factory.mktemp("reexports-data")
    summary = index(project, root)
    assert not summary.errors
    return project, root


def first_hit(indexed: tuple[Path, Path], query: str) -> tuple[dict, dict]:
    project, root = indexed
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(root), LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT=str(project)):
        out = call_tool("search_hybrid", {"query": query, "cache_bust": True})
        assert out["ok"], out
        first = out["results"][0]
        explained = call_tool("explain_match", {"query": query, "result_id": first["chunk_id"]})
    assert explained["ok"], explained
    return first, explained["data"]


def test_a_name_defined_only_by_a_re_export_is_found_there(indexed) -> None:
    first, explained = first_hit(indexed, "Handle")
    assert first["file_path"] == "src/lib.rs"
    assert explained["definition"]["rank"] == 1


def test_a_name_defined_in_the_project_keeps_its_definition_first(indexed) -> None:
    first, explained = first_hit(indexed, "spawn")
    assert first["file_path"] == "src/task.rs"  # the function, not its re-export in lib.rs
    assert explained["definition"]["rank"] == 1
