"""An index parsed by another build of the parser is re-parsed once (``parse_identity``).

Real files, real tree-sitter, real LanceDB and the real model: a release that extracts more from
the same files (here C macros and typedefs) must reach an index built before it without
``--full``, and only once.
"""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

import pytest
from indexing_support import use_data_root
from local_memory_indexer.parse_identity import PARSE_REVISION, fingerprint_of, parse_fingerprint
from local_memory_indexer.pipeline import index_project
from local_memory_shared.config import load_settings
from local_memory_shared.embedding import create_embedder
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.paths import project_paths

FILES = {
    "src/store.h": """
        #ifndef STORE_H
        #define STORE_H
        #define STORE_MAX 64
        #define STORE_OK(n) ((n) >= 0 && (n) < STORE_MAX)
        typedef struct store_item store_item_t;
        int store_save(const char *item);
        #endif
    """,
    "src/store.c": """
        #include <string.h>
        #include "store.h"
        static int encode(const char *item) { return (int)strlen(item); }
        int store_save(const char *item) { return STORE_OK(encode(item)); }
    """,
}


@pytest.fixture(scope="module")
def onnx() -> Embedder:
    return create_embedder("onnx")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    use_data_root(monkeypatch, tmp_path / "data")
    root = tmp_path / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip())
    return root


def sql(project: Path, statement: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(project_paths(load_settings().data_root, project).state_db)
    try:
        rows = [tuple(r) for r in conn.execute(statement)]
        conn.commit()
        return rows
    finally:
        conn.close()


def macros(project: Path) -> set[object]:
    return {r[0] for r in sql(project, "SELECT name FROM symbols WHERE kind = 'macro'")}


def test_the_fingerprint_names_the_revision_and_changes_with_the_queries() -> None:
    assert parse_fingerprint().startswith(f"r{PARSE_REVISION}-")
    queries = [("c-tags.scm", b"(preproc_def) @definition.macro"), ("go-tags.scm", b"(x)")]
    base = fingerprint_of(1, queries)
    assert fingerprint_of(1, list(reversed(queries))) == base  # the listing order does not count
    assert fingerprint_of(1, [queries[0], ("go-tags.scm", b"(y)")]) != base  # an edited query
    assert fingerprint_of(1, queries[:1]) != base  # a removed query
    assert fingerprint_of(2, queries) != base  # a bumped revision


def test_an_index_of_another_parser_is_reparsed_once_and_gains_what_it_lacked(
    project: Path, onnx: Embedder
) -> None:
    first = index_project(project, embedder=onnx)
    assert first.reparsed_reason == "" and first.files_parsed == len(FILES)
    assert macros(project) == {"STORE_MAX", "STORE_OK"}
    assert sql(project, "SELECT fingerprint FROM parser") == [(parse_fingerprint(),)]
    # What an older build left: no macro definitions, and its own fingerprint.
    sql(project, "DELETE FROM symbols WHERE kind = 'macro'")
    sql(project, "UPDATE parser SET fingerprint = 'r0-0000000000000000'")

    second = index_project(project, embedder=onnx)
    assert second.reparsed_reason == "parser_changed"
    assert second.files_parsed == len(FILES) and second.chunks_embedded == 0  # vectors from the cache
    assert second.chunks_total == first.chunks_total
    assert macros(project) == {"STORE_MAX", "STORE_OK"}
    assert sql(project, "SELECT fingerprint FROM parser") == [(parse_fingerprint(),)]

    third = index_project(project, embedder=onnx)  # once: the fingerprint now matches
    assert third.reparsed_reason == "" and third.files_parsed == 0


def test_an_index_without_a_recorded_parser_is_reparsed(project: Path, onnx: Embedder) -> None:
    index_project(project, embedder=onnx)
    sql(project, "DELETE FROM parser")  # a state DB upgraded in place from a build before the table
    sql(project, "DELETE FROM symbols WHERE kind = 'macro'")
    again = index_project(project, embedder=onnx)
    assert again.reparsed_reason == "parser_changed" and macros(project) == {"STORE_MAX", "STORE_OK"}


def test_the_same_parser_reparses_nothing(project: Path, onnx: Embedder) -> None:
    index_project(project, embedder=onnx)
    sql(project, "DELETE FROM symbols WHERE kind = 'macro'")  # the same fingerprint: not looked at
    again = index_project(project, embedder=onnx)
    assert again.reparsed_reason == "" and again.files_parsed == 0 and macros(project) == set()
