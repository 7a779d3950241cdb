"""The one adapter holding every version-specific tree-sitter call (tree-sitter 0.21 + tree-sitter-languages 1.10)."""

from __future__ import annotations

import threading
import warnings
from functools import cache
from typing import Any

from local_memory_shared.languages import (
    CODE_LANGUAGES,
    EXTENSION_LANGUAGE,
    GRAMMAR,
    language_for_path,
    masked_for_parse,
)

# Language facts (extensions, grammar names, which languages are chunked from a tree) have one owner:
# ``local_memory_shared.languages``. They are re-exported here for the indexer's existing callers.
__all__ = [
    "CODE_LANGUAGES",
    "EXTENSION_LANGUAGE",
    "GRAMMAR",
    "get_language",
    "get_parser",
    "language_for_path",
    "node_text",
    "parse",
    "query",
]


#: Grammars tree-sitter-languages lacks, from their own PyPI packages (module name). Such a
#: package hands out its grammar as a PyCapsule; tree-sitter 0.21 takes the raw pointer, and
#: accepts grammars of ABI 13-14 only: hence tree-sitter-swift 0.0.1 (ABI 14), not 0.7.x (ABI 15).
#: Lua: tree-sitter-languages 1.10.2's grammar mis-lexes ``=`` (``local x = 1`` is an ERROR, most
#: of a Lua file became line windows) and loops for good on ``f(a)``; tree-sitter-lua 0.2.0 is the
#: tree-sitter-grammars one, the last release of ABI 14.
SEPARATE_GRAMMARS = {"zig": "tree_sitter_zig", "swift": "tree_sitter_swift", "lua": "tree_sitter_lua"}


@cache
def get_language(language: str) -> Any:
    """The tree-sitter Language object for our language tag."""
    grammar = GRAMMAR[language]
    if grammar in SEPARATE_GRAMMARS:
        return _capsule_language(SEPARATE_GRAMMARS[grammar], grammar)
    from tree_sitter_languages import get_language as _get_language

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tree-sitter 0.21 warns about Language(path, name)
        return _get_language(grammar)


def _capsule_language(module: str, name: str) -> Any:
    """A grammar package's ``language()`` capsule as a tree-sitter 0.21 ``Language``."""
    import ctypes
    import importlib

    from tree_sitter import Language

    capsule = importlib.import_module(module).language()
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype = ctypes.c_void_p
    pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Language(pointer(capsule, b"tree_sitter.Language"), name)


#: A parse may take ``PARSE_TIMEOUT_BASE_US`` plus ``PARSE_TIMEOUT_PER_BYTE_US`` per byte of
#: source (5 s, and 10 s more per MB; tree-sitter reads several MB a second), then it fails with
#: ``ValueError`` and the file is chunked as line windows. A grammar can loop for good on some
#: input (tree-sitter-languages 1.10.2's Lua grammar did on ``f(a)``): without a limit one such
#: file stalled the whole index run.
PARSE_TIMEOUT_BASE_US = 5_000_000
PARSE_TIMEOUT_PER_BYTE_US = 10


def get_parser(language: str, source_bytes: int = 0) -> Any:
    """A fresh parser for our language tag (parsers are not thread-safe: one per use), with the
    parse time limit for a source of ``source_bytes``."""
    from tree_sitter import Parser

    parser = Parser()
    parser.set_language(get_language(language))
    parser.set_timeout_micros(PARSE_TIMEOUT_BASE_US + PARSE_TIMEOUT_PER_BYTE_US * source_bytes)
    return parser


_last = threading.local()


def parse(language: str, source: bytes) -> Any:
    """Parse ``source``; returns a tree (syntax errors become ERROR nodes; a parse longer than its
    limit raises ``ValueError``, see ``PARSE_TIMEOUT_BASE_US``).

    The chunker and the graph extractor both parse each file; the indexer calls them one after
    the other on the same ``bytes`` object, so the last tree of this thread is reused when the
    very same object (identity, not equality) is parsed again. Trees are never edited here.
    """
    last = getattr(_last, "entry", None)
    if last is not None and last[0] == language and last[1] is source:
        return last[2]
    # lines the grammar cannot read (C's bare macros) are parsed as blanks of the same length:
    # every node's byte range still slices ``source`` itself
    tree = get_parser(language, len(source)).parse(masked_for_parse(language, source))  # ValueError: too slow
    _last.entry = (language, source, tree)
    return tree


def forget_last_tree() -> None:
    """Drop this thread's remembered tree (the indexer calls it after each file)."""
    _last.entry = None


def query(language: str, source: str) -> Any:
    """Compile a tree-sitter query (S-expression text) for our language tag."""
    return get_language(language).query(source)


def node_text(node: Any, source: bytes) -> str:
    """Text of ``node`` decoded as UTF-8 (undecodable bytes replaced)."""
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
