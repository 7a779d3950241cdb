"""The one adapter holding every version-specific tree-sitter call (tree-sitter 0.21 + tree-sitter-languages 1.10)."""

from __future__ import annotations

import threading
import warnings
from functools import cache
from typing import Any

from local_memory_shared.languages import CODE_LANGUAGES, EXTENSION_LANGUAGE, GRAMMAR, language_for_path

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


@cache
def get_language(language: str) -> Any:
    """The tree-sitter Language object for our language tag."""
    from tree_sitter_languages import get_language as _get_language

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tree-sitter 0.21 warns about Language(path, name)
        return _get_language(GRAMMAR[language])


def get_parser(language: str) -> Any:
    """A fresh parser for our language tag (parsers are not thread-safe: one per use)."""
    from tree_sitter import Parser

    parser = Parser()
    parser.set_language(get_language(language))
    return parser


_last = threading.local()


def parse(language: str, source: bytes) -> Any:
    """Parse ``source``; returns a tree (errors become ERROR nodes, never exceptions).

    The chunker and the graph extractor both parse each file; the indexer calls them one after
    the other on the same ``bytes`` object, so the last tree of this thread is reused when the
    very same object (identity, not equality) is parsed again. Trees are never edited here.
    """
    last = getattr(_last, "entry", None)
    if last is not None and last[0] == language and last[1] is source:
        return last[2]
    tree = get_parser(language).parse(source)
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
