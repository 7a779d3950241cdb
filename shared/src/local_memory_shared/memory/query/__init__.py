"""Pure query languages of agent memory (no I/O): full-text sanitising, the tree syntax, meta
containment and SQL/JSON path predicates, temporal ranges, path globs, field selection and
output formats. The searcher compiles them to LanceDB ``where`` clauses or evaluates them in Python.
"""

from .fulltext import FullTextQuery, Term, fts5_match, fts5_seed000, parse_fulltext
from .globs import glob_match, ignored_area, matches_any_pattern
from .meta import meta_contains
from .metapath import MetaPredicate, parse_meta_predicate
from .select import Selection, apply_selection, parse_select, render, utf16_len, utf16_slice
from .temporal import TemporalFilter, parse_temporal
from .tree import TreeFilter, compile_tree

__all__ = [
    "FullTextQuery",
    "MetaPredicate",
    "Selection",
    "TemporalFilter",
    "Term",
    "TreeFilter",
    "apply_selection",
    "compile_tree",
    "ignored_area",
    "fts5_match",
    "fts5_seed000",
    "glob_match",
    "matches_any_pattern",
    "meta_contains",
    "parse_fulltext",
    "parse_meta_predicate",
    "parse_select",
    "parse_temporal",
    "render",
    "utf16_len",
    "utf16_slice",
]
