"""A ``.h`` header written in C++ is parsed as C++ (``languages.language_for_source``).

C++ projects (abseil, Chromium, LLVM) keep most of their code in ``.h`` files. Parsed with the C
grammar, their classes, templates and namespaces are error nodes: no class chunk, no methods, no
``using`` alias in the symbol table, so ``absl::optional`` had no defining chunk to find. Real
files, real tree-sitter, the real model, LanceDB and SQLite; the search goes through the tool.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from local_memory_search.tools import call_tool
from local_memory_shared.languages import language_for_source
from search_support import env, index, state_rw, write_project

CPP_HEADER = """
    // A small cache, the way a C++ library writes its public header.
    #ifndef LRU_CACHE_H_
    #define LRU_CACHE_H_

    #include <list>
    #include <optional>

    namespace kit {

    using std::optional;

    template <typename K, typename V>
    class LruCache {
     public:
      explicit LruCache(int capacity) : capacity_(capacity) {}

      // Evicts the least recently used entry once the cache is full.
      void Put(const K& key, const V& value) {
        if (static_cast<int>(entries_.size()) >= capacity_) entries_.pop_back();
        entries_.emplace_front(key, value);
      }

      optional<V> Get(const K& key) const {
        for (const auto& e : entries_) if (e.first == key) return e.second;
        return std::nullopt;
      }

     private:
      int capacity_;
      std::list<std::pair<K, V>> entries_;
    };

    }  // namespace kit

    #endif  // LRU_CACHE_H_
"""

# A C header as curl writes them: the ``extern "C"`` guard for C++ callers is no C++ marker.
C_HEADER = """
    #ifndef STORE_H
    #define STORE_H
    #ifdef __cplusplus
    extern "C" {
    #endif
    #define STORE_MAX 64
    struct store { int used; char *items[STORE_MAX]; };
    typedef struct store store_t;
    int store_save(store_t *s, const char *item);
    #ifdef __cplusplus
    }
    #endif
    #endif
"""


def dedent(text: str) -> bytes:
    return textwrap.dedent(text).lstrip().encode()


@pytest.mark.parametrize(
    "line",
    [
        "namespace absl {",
        "namespace {",
        "template <typename T>",
        " public:",
        "using std::optional;",
        "using namespace std;",
        "class Flag {",
        "class ABSL_MUST_USE_RESULT Status final",
        "#include <string>",
        "inline std::string Name() { return {}; }",
    ],
)
def test_each_cpp_marker_makes_a_header_cpp(line: str) -> None:
    data = f"#pragma once\n// header\n{line}\n".encode()
    assert language_for_source("lib/x.h", data) == "cpp"
    assert language_for_source("lib/x.H", data) == "cpp"


def test_c_headers_and_other_suffixes_keep_their_language() -> None:
    assert language_for_source("include/store.h", dedent(C_HEADER)) == "c"
    assert language_for_source("include/macros.h", b"#define MAX(a, b) ((a) > (b) ? (a) : (b))\n") == "c"
    assert language_for_source("include/io.h", b"#include <stdio.h>\nint read_all(FILE *f);\n") == "c"
    # Only a header is sniffed: a .c file stays C, whatever its comments say.
    assert language_for_source("src/store.c", b"/* like std::vector */\nint n;\n") == "c"
    assert language_for_source("src/cache.hpp", b"int n;\n") == "cpp"
    assert language_for_source("src/app.py", b"class A:\n    pass\n") == "python"
    # The sniff reads the head of the file only (a marker 64 KiB down does not count).
    assert language_for_source("big.h", b"int a;\n" * 10000 + b"namespace far {\n") == "c"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    files = {
        "include/kit/lru_cache.h": dedent(CPP_HEADER).decode(),
        "include/store.h": dedent(C_HEADER).decode(),
    }
    project = write_project(tmp_path_factory.mktemp("cpp-headers"), files)
    root = tmp_path_factory.mktemp("cpp-headers-data")
    summary = index(project, root)
    assert not summary.errors
    return project, root


def test_a_cpp_header_is_chunked_and_tagged_as_cpp(indexed: tuple[Path, Path]) -> None:
    project, root = indexed
    conn = state_rw(root, project)
    try:

        def rows(sql: str) -> list[tuple[str, ...]]:
            return [tuple(r) for r in conn.execute(sql)]

        languages = dict(rows("SELECT path, language FROM files"))
        chunks = rows(
            "SELECT chunk_kind, symbol_name, language FROM chunks WHERE file_path = 'include/kit/lru_cache.h'"
        )
        symbols = rows("SELECT name, kind FROM symbols WHERE file_path = 'include/kit/lru_cache.h'")
        c_symbols = rows("SELECT name, kind FROM symbols WHERE file_path = 'include/store.h'")
    finally:
        conn.close()
    assert languages == {"include/kit/lru_cache.h": "cpp", "include/store.h": "c"}
    kinds = {(kind, name) for kind, name, _ in chunks}
    assert ("class", "LruCache") in kinds  # the C grammar sees no class in a template
    assert {("method", "LruCache.Put"), ("method", "LruCache.Get")} <= kinds
    assert {lang for *_, lang in chunks} == {"cpp"}
    assert ("optional", "alias") in symbols and ("LruCache", "class") in symbols
    assert ("STORE_MAX", "macro") in c_symbols and ("store", "struct") in c_symbols


def test_the_using_alias_of_a_cpp_header_is_found_by_name(indexed: tuple[Path, Path]) -> None:
    project, root = indexed
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(root), LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT=str(project)):
        out = call_tool("search_hybrid", {"query": "kit::optional", "cache_bust": True})
        assert out["ok"], out
        first = out["results"][0]
        explained = call_tool("explain_match", {"query": "kit::optional", "result_id": first["chunk_id"]})
    assert first["file_path"] == "include/kit/lru_cache.h"
    assert explained["ok"], explained
    assert explained["data"]["definition"]["rank"] == 1, explained["data"]


# abseil's layout: a bare macro between two namespaces (it expands to an inline namespace).
NAMESPACED = """
    #include <cstddef>

    namespace absl {
    ABSL_NAMESPACE_BEGIN
    namespace container_internal {

    // Counts the slots a table of `capacity` needs.
    inline size_t SlotCount(size_t capacity) { return capacity + 1; }

    class Table {
     public:
      size_t size() const { return size_; }
      void clear() { size_ = 0; }

     private:
      size_t size_ = 0;
    };

    }  // namespace container_internal
    ABSL_NAMESPACE_END
    }  // namespace absl
"""


def test_a_bare_macro_line_is_read_as_blank_by_the_parser_only() -> None:
    from local_memory_shared.languages import masked_for_parse

    source = b"namespace a {\nABSL_NAMESPACE_BEGIN\n  G_BEGIN_DECLS  \nFOO;\n#define X \\\n  Y\nint OK;\n}\n"
    masked = masked_for_parse("cpp", source)
    assert len(masked) == len(source) and masked.count(b"\n") == source.count(b"\n")
    assert b"ABSL_NAMESPACE_BEGIN" not in masked and b"G_BEGIN_DECLS" not in masked
    # a statement, a macro body line and short names are code, not bare macros
    for kept in (b"FOO;", b"  Y", b"int OK;"):
        assert kept in masked
    assert masked_for_parse("python", b"CONSTANT\n") == b"CONSTANT\n"  # C and C++ only


def test_a_bare_macro_between_namespaces_no_longer_turns_the_file_into_windows() -> None:
    from local_memory_indexer.chunking import chunk_file

    data = dedent(NAMESPACED)
    chunks = list(chunk_file("absl/container/internal/table.h", data, "cpp"))
    kinds = {(c.chunk_kind, c.symbol_name) for c in chunks}
    # Read as C++ without the mask, the macro is the return type of a "function" spanning the
    # rest of the file, and the file was cut into 60-line windows.
    assert "window" not in {c.chunk_kind for c in chunks}, kinds
    assert {("function", "SlotCount"), ("class", "Table")} <= kinds
    assert ("method", "Table.size+Table.clear") in kinds  # two one-line siblings merge
    # the chunks hold the file's own text: the macro line is still in a module chunk
    lines = data.decode().splitlines()
    for c in chunks:
        if c.chunk_kind == "class":
            assert c.text.splitlines()[0] == lines[c.start_line - 1]
    assert any("ABSL_NAMESPACE_BEGIN" in c.text for c in chunks)
