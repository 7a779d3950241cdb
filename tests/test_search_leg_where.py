"""The legs drop the scope predicate (project, schema version) only when every row matches it."""

from __future__ import annotations

import dataclasses

from conftest import IndexedProject
from local_memory_search.filters import SearchFilters, lance_where
from local_memory_search.fusion import RankRequest
from local_memory_search.legs import keyword_leg, leg_where, semantic_leg
from local_memory_search.runtime import RUNTIME
from local_memory_search.store import open_index
from local_memory_shared.config import load_settings
from search_support import env


def test_scope_predicate_is_dropped_only_where_every_row_matches_it(indexed_sample: IndexedProject):
    RUNTIME.clear()
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(indexed_sample.data_root)):
        with open_index(indexed_sample.project, load_settings()) as reader:
            assert leg_where(reader, None).sql == ""
            python = SearchFilters(language="python")
            assert leg_where(reader, python) == lance_where(reader.project, python)
            req = RankRequest(query="connection pool retry", mode="keyword")
            assert keyword_leg(reader, req, []).hits

            # The same table read as another project's: no row is in scope, so the predicate stays
            # and both legs find nothing (dropping it would return this project's rows).
            other = dataclasses.replace(reader, project="/somewhere/else", warnings=[])
            assert leg_where(other, None) == lance_where("/somewhere/else", None)
            assert keyword_leg(other, req, []).hits == ()
            assert semantic_leg(other, dataclasses.replace(req, mode="semantic"), []).hits == ()
    RUNTIME.clear()
