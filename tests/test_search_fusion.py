"""Fusion arithmetic: weighted RRF with leg confidence, identifier and recency boosts, relevance gap."""

from __future__ import annotations

import pytest
from local_memory_search.hybrid import (
    IDENTIFIER_BOOST,
    RECENCY_HALF_LIFE_DAYS,
    RRF_SCORE_EXPONENT,
    LegHit,
    LegResult,
    RankRequest,
    confidence,
    fts_query_text,
    fuse,
    query_identifiers,
    query_words,
)
from local_memory_search.query_text import semantic_query_text

NEWEST = "2026-06-01T00:00:00Z"


def leg(name: str, rows: list[tuple[str, float]], meta: dict[str, dict] | None = None) -> LegResult:
    hits = tuple(LegHit(cid, i + 1, score) for i, (cid, score) in enumerate(rows))
    info = {
        cid: {"chunk_id": cid, "symbol_name": "", "function_name": "", "class_name": "", "updated_at": NEWEST}
        for cid, _ in rows
    }
    for cid, extra in (meta or {}).items():
        info[cid].update(extra)
    return LegResult(name, "test", hits, 0.0, info)


def req(**kw) -> RankRequest:
    base = {"query": "some words", "mode": "hybrid", "recency_weight": 0.0, "gap_threshold": 0.0}
    return RankRequest(**{**base, **kw})


def by_id(ranked):
    return {s.chunk_id: s for s in ranked}


def test_weighted_rrf_with_confidence_matches_the_formula():
    sem = leg("semantic", [("a", 0.8), ("b", 0.6), ("c", 0.4)])
    kw = leg("keyword", [("b", 10.0), ("d", 5.0)])
    ranked, kept = fuse(req(alpha=0.65, rrf_k=60), 0.65, sem, kw, NEWEST)
    s = by_id(ranked)
    p = RRF_SCORE_EXPONENT
    assert s["a"].score == pytest.approx(0.65 * 1.0 / 61)
    assert s["b"].score == pytest.approx(0.65 * (0.6 / 0.8) ** p / 62 + 0.35 * 1.0 / 61)
    assert s["c"].score == pytest.approx(0.65 * (0.4 / 0.8) ** p / 63)
    assert s["d"].score == pytest.approx(0.35 * (5.0 / 10.0) ** p / 62)
    assert [x.chunk_id for x in ranked] == sorted(s, key=lambda c: -s[c].score)
    assert kept == 4


def test_only_chunks_some_leg_returned_enter_the_fusion():
    sem = leg("semantic", [("a", 0.9)])
    kw = leg("keyword", [("z", 3.0)])
    ranked, _ = fuse(req(), 0.65, sem, kw, NEWEST)
    assert {x.chunk_id for x in ranked} == {"a", "z"}
    assert by_id(ranked)["a"].keyword is None and by_id(ranked)["a"].keyword_rrf == 0.0


def test_alpha_one_and_zero_silence_a_leg():
    sem = leg("semantic", [("a", 0.9), ("b", 0.8)])
    kw = leg("keyword", [("b", 9.0), ("c", 8.0)])
    only_sem, _ = fuse(req(alpha=1.0), 1.0, sem, kw, NEWEST)
    assert by_id(only_sem)["c"].score == 0.0 and only_sem[0].chunk_id == "a"
    only_kw, _ = fuse(req(alpha=0.0), 0.0, sem, kw, NEWEST)
    assert by_id(only_kw)["a"].score == 0.0 and only_kw[0].chunk_id == "b"


def test_rrf_k_flattens_rank_differences():
    sem = leg("semantic", [("a", 0.5), ("b", 0.5)])
    sharp, _ = fuse(req(rrf_k=1), 1.0, sem, None, NEWEST)
    flat, _ = fuse(req(rrf_k=1000), 1.0, sem, None, NEWEST)
    assert sharp[0].score / sharp[1].score == pytest.approx(3 / 2)
    assert flat[0].score / flat[1].score == pytest.approx(1002 / 1001)


def test_identifier_boost_needs_an_exact_symbol_function_or_class_name():
    meta = {
        "cls": {"symbol_name": "LruCache", "class_name": "LruCache"},
        "method": {"symbol_name": "LruCache.get", "class_name": "LruCache", "function_name": "get"},
        "fn": {"symbol_name": "parseConfig", "function_name": "parseConfig"},
        "other": {"symbol_name": "parse_config_file", "function_name": "parse_config_file"},
    }
    sem = leg("semantic", [(c, 0.5) for c in meta], meta)
    s = by_id(fuse(req(query="where is the LruCache"), 1.0, sem, None, NEWEST)[0])
    assert s["cls"].identifier_match == "LruCache" and s["cls"].identifier_multiplier == 1 + IDENTIFIER_BOOST
    assert s["method"].identifier_match is None  # naming a class lifts the class, not each method
    s = by_id(fuse(req(query="LruCache.get"), 1.0, sem, None, NEWEST)[0])
    assert s["method"].identifier_match == "LruCache.get"
    s = by_id(fuse(req(query="parseConfig"), 1.0, sem, None, NEWEST)[0])
    assert s["fn"].identifier_multiplier == 2.0 and s["other"].identifier_multiplier == 1.0
    s = by_id(fuse(req(query="parseconfig"), 1.0, sem, None, NEWEST)[0])
    assert s["fn"].identifier_match is None  # exact, case-sensitive


def test_prose_words_are_not_identifiers_but_short_queries_are():
    assert query_identifiers("python check file is readonly") == set()
    assert query_identifiers("how does parse_config handle errors") == {"parse_config"}
    assert query_identifiers("check") == {"check"}
    assert query_identifiers("LruCache get") == {"LruCache", "get"}
    # two plain words are a topic ("session management"), not two names: unless asked for
    assert query_identifiers("session management") == set()
    assert query_identifiers("session management", plain_words=2) == {"session", "management"}
    assert query_identifiers("session", plain_words=0) == set()
    assert "Client.send" in query_identifiers("who calls Client.send in the retry loop")


def test_recency_boost_halves_every_half_life_and_is_off_at_zero():
    meta = {"new": {"updated_at": NEWEST}, "old": {"updated_at": "2026-05-02T00:00:00Z"}}
    sem = leg("semantic", [("old", 0.5), ("new", 0.5)], meta)
    ranked, _ = fuse(req(recency_weight=0.5), 1.0, sem, None, NEWEST)
    s = by_id(ranked)
    assert s["old"].age_days == pytest.approx(RECENCY_HALF_LIFE_DAYS)
    assert s["old"].recency_multiplier == pytest.approx(1 + 0.5 * 0.5)
    assert s["new"].recency_multiplier == pytest.approx(1.5)
    assert ranked[0].chunk_id == "new"  # equal relevance: the fresher chunk wins
    off = by_id(fuse(req(recency_weight=0.0), 1.0, sem, None, NEWEST)[0])
    assert off["old"].recency_multiplier == off["new"].recency_multiplier == 1.0


def test_gap_threshold_keeps_a_prefix_above_the_fraction_of_the_top():
    sem = leg("semantic", [("a", 1.0), ("b", 0.9), ("c", 0.5), ("d", 0.1)])
    ranked, kept = fuse(req(mode="semantic", gap_threshold=0.5), 1.0, sem, None, NEWEST)
    assert [x.chunk_id for x in ranked] == ["a", "b", "c", "d"] and kept == 3
    assert fuse(req(mode="semantic", gap_threshold=0.0), 1.0, sem, None, NEWEST)[1] == 4


def test_single_leg_modes_score_with_the_raw_leg_score():
    kw = leg("keyword", [("a", 12.5), ("b", 3.0)])
    ranked, _ = fuse(req(mode="keyword"), 0.0, None, kw, NEWEST)
    assert [x.score for x in ranked] == [12.5, 3.0]


def test_confidence_is_a_bounded_power_of_the_relative_score():
    assert confidence(5.0, 10.0) == pytest.approx(0.5**RRF_SCORE_EXPONENT)
    assert confidence(10.0, 10.0) == 1.0 and confidence(-1.0, 10.0) == 0.0 and confidence(3.0, 0.0) == 1.0


def test_query_words_split_identifiers_and_keep_order():
    assert query_words("parseConfig HTTPServer snake_case_name") == [
        "parseconfig",
        "parse",
        "config",
        "httpserver",
        "http",
        "server",
        "snake_case_name",
        "snake",
        "case",
        "name",
    ]
    assert query_identifiers("call Client.send or os::path") == {
        "Client.send",
        "send",
        "os::path",
        "os.path",
        "path",
    }


def _words(fts_text: str) -> str:
    return " ".join(w for w in fts_text.split() if not w.startswith("def"))


def test_the_models_query_drops_a_language_name_that_scopes_it_only_at_its_ends():
    py = frozenset({"python", "markdown"})
    assert semantic_query_text("python check file is readonly", py) == "check file is readonly"
    assert semantic_query_text("declaring empty numpy array in python", py) == "declaring empty numpy array"
    assert semantic_query_text("how to save a file Python", py) == "how to save a file"
    # inside the sentence it is content; too short a query or a language the index lacks stays
    assert semantic_query_text("Convert the Python object to JSON", py) == "Convert the Python object to JSON"
    assert semantic_query_text("python json", py) == "python json"
    assert semantic_query_text("rust check file is readonly", py) == "rust check file is readonly"
    assert semantic_query_text("python check file", frozenset()) == "python check file"
    assert semantic_query_text("read  a\nfile", py) == "read  a\nfile"  # untouched, spacing too
    # ambiguous names (go, c) are words first
    assert semantic_query_text("go to the next page", frozenset({"go"})) == "go to the next page"


def test_keyword_query_drops_prose_function_words_and_index_languages_only_in_prose():
    assert fts_query_text("how to sort a list in python", frozenset({"python"})) == "sort list in"
    assert _words(fts_query_text("python", frozenset({"python"}))) == "python"
    assert _words(fts_query_text("to do", frozenset())) == "to do"
    assert fts_query_text("what is the go channel", frozenset({"go"})) == "go channel"


def test_exact_names_also_ask_for_their_definition():
    assert fts_query_text("index_project", frozenset()).split() == [
        "index_project",
        "index",
        "project",
        "defindexproject",
    ]
    assert "defclientsend" in fts_query_text("where is Client.send retried", frozenset()).split()
    # prose words are not names: no definition terms for them
    assert fts_query_text("session management", frozenset()).split() == ["session", "management"]
    assert "defsession" in fts_query_text("session management", frozenset(), plain_words=2).split()
    assert not any(
        w.startswith("def") for w in fts_query_text("how are retries handled here", frozenset()).split()
    )
