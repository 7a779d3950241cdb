"""The one adapter holding every version-specific tree-sitter call (tree-sitter 0.21 + tree-sitter-languages 1.10)."""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import PurePosixPath
from typing import Any

#: file extension (lower case, no dot) → our language tag
EXTENSION_LANGUAGE: dict[str, str] = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "hxx": "cpp",
    "cs": "csharp",
    "rb": "ruby",
    "php": "php",
    "kt": "kotlin",
    "kts": "kotlin",
    "md": "markdown",
    "markdown": "markdown",
}

#: our language tag → tree-sitter-languages grammar name
GRAMMAR: dict[str, str] = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "csharp": "c_sharp",
    "ruby": "ruby",
    "php": "php",
    "kotlin": "kotlin",
    "markdown": "markdown",
}

#: languages whose definitions are chunked from a syntax tree
CODE_LANGUAGES = frozenset(GRAMMAR) - {"markdown"}


def language_for_path(path: str) -> str:
    """Language tag for a repo-relative path; 'text' when we have no grammar."""
    suffix = PurePosixPath(path).suffix.lower().lstrip(".")
    return EXTENSION_LANGUAGE.get(suffix, "text")


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


def parse(language: str, source: bytes) -> Any:
    """Parse ``source``; returns a tree (errors become ERROR nodes, never exceptions)."""
    return get_parser(language).parse(source)


def query(language: str, source: str) -> Any:
    """Compile a tree-sitter query (S-expression text) for our language tag."""
    return get_language(language).query(source)


def node_text(node: Any, source: bytes) -> str:
    """Text of ``node`` decoded as UTF-8 (undecodable bytes replaced)."""
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
