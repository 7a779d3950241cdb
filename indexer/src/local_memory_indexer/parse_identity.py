"""What parsed an index's files: a fingerprint the state DB keeps (table ``parser``).

A release that extracts more from the same file (a new definition kind in a tags query, a chunker
rule) must reach the indexes built before it: the pipeline compares the fingerprint the state DB
recorded with this build's and, where they differ, re-parses every file once (as ``--full`` does;
vectors come from the embedding cache). The no-change fast path refuses on a difference too.

The fingerprint is ``PARSE_REVISION`` and the text of every tags query: editing a query changes it
by itself; a code change to the chunker or the extractor that changes their output bumps
``PARSE_REVISION`` by hand.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import cache
from importlib import resources

#: Bump when a code change makes the chunker or the graph extractor produce other rows for the
#: same file (the tags queries are hashed: editing one needs no bump). 2: a ``.h`` header written
#: in C++ is parsed as C++ (``languages.language_for_source``), and C / C++ lines holding a bare
#: macro are parsed as blanks (``Language.masked_lines``). 3: module code is cut into runs of at
#: most 60 lines (``chunking.code.MODULE_RUN_LINES``), and TypeScript overload signatures join the
#: chunk of the function they declare.
PARSE_REVISION = 3


def fingerprint_of(revision: int, queries: Iterable[tuple[str, bytes]]) -> str:
    """``r<revision>-<sha256 of the (name, text) pairs, sorted by name>`` (16 hex digits)."""
    digest = hashlib.sha256()
    for name, text in sorted(queries):
        digest.update(name.encode() + b"\0" + text + b"\0")
    return f"r{revision}-{digest.hexdigest()[:16]}"


@cache
def parse_fingerprint() -> str:
    """This build's fingerprint: ``PARSE_REVISION`` and every tags query shipped with it."""
    queries = resources.files("local_memory_indexer.graph").joinpath("queries")
    return fingerprint_of(
        PARSE_REVISION,
        ((e.name, e.read_bytes()) for e in queries.iterdir() if e.name.endswith(".scm")),
    )
