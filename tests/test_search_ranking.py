"""Ranking factors: path priors, name match, per-file diversity, the definition contribution."""

from __future__ import annotations

from dataclasses import replace

import pytest
from local_memory_search.fusion import RankRequest, fuse
from local_memory_search.legs import LegHit, LegResult
from local_memory_search.ranking import (
    KNOBS,
    OFF,
    QueryShape,
    doc_factor,
    file_diversity,
    leg_confidence_exponent,
    name_boost,
    name_factor,
    parent_name_factor,
    path_factor,
    shifted_alpha,
)

NEWEST = "2026-06-01T00:00:00Z"


def leg(name: str, rows: list[tuple[str, float, str]]) -> LegResult:
    hits = tuple(LegHit(cid, i + 1, score) for i, (cid, score, _) in enumerate(rows))
    meta = {cid: {"chunk_id": cid, "file_path": path, "updated_at": NEWEST} for cid, _, path in rows}
    return LegResult(name, "test", hits, 0.0, meta)


def req(query: str = "session handling") -> RankRequest:
    return RankRequest(query=query, mode="hybrid", recency_weight=0.0, gap_threshold=0.0)


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_session.py",
        "src/app/session_test.go",
        "pkg/__tests__/a.ts",
        "examples/demo.py",
        "vendor/x.c",
    ],
)
def test_tests_examples_and_vendored_copies_rank_below_code(path: str) -> None:
    shape = QueryShape.of("session handling")
    assert path_factor(path, shape, KNOBS) == pytest.approx(KNOBS.path_prior)
    assert path_factor("src/app/session.py", shape, KNOBS) == 1.0


def test_a_query_about_tests_keeps_test_files_unpenalised() -> None:
    assert path_factor("tests/test_session.py", QueryShape.of("testing client"), KNOBS) == 1.0


def test_reexport_files_rank_below_the_module_they_reexport() -> None:
    shape = QueryShape.of("session")
    assert path_factor("pkg/__init__.py", shape, KNOBS) == pytest.approx(KNOBS.reexport_prior)


def test_query_words_in_file_and_folder_names_lift_the_file() -> None:
    shape = QueryShape.of("session management")
    stem = name_factor("src/flask/sessions.py", shape, KNOBS)
    folder = name_factor("src/session/store.py", shape, replace(KNOBS, folder_name_boost=0.2))
    assert stem == pytest.approx(1 + KNOBS.file_name_boost / 2)
    assert folder == pytest.approx(1 + 0.2 / 2)
    assert name_factor("src/session/store.py", shape, KNOBS) == pytest.approx(1 + KNOBS.folder_name_boost / 2)
    assert name_factor("src/other.py", shape, KNOBS) == 1.0
    assert name_factor("src/flask/sessions.py", shape, OFF) == 1.0


def test_query_words_in_the_parent_folders_name_lift_the_file() -> None:
    shape = QueryShape.of("how pandoc reads RST documents")  # 4 content words
    boost = KNOBS.parent_name_boost
    # "reads" meets "Readers" (a start of 4 letters); "Writers" meets nothing
    assert parent_name_factor("src/Text/Pandoc/Readers/RST.hs", shape, KNOBS) == pytest.approx(1 + boost / 4)
    assert parent_name_factor("src/Text/Pandoc/Writers/RST.hs", shape, KNOBS) == 1.0
    # only the file's own folder counts, not the folders above it ("pandoc")
    assert parent_name_factor("src/pandoc/Other/RST.hs", shape, KNOBS) == 1.0
    # a module file is already named by its folder (module_file_folder)
    assert parent_name_factor("src/readers/mod.rs", shape, KNOBS) == 1.0
    # one content word, or a name of two parts, is asked for its definition: no folder match
    assert parent_name_factor("src/readers/RST.hs", QueryShape.of("readers"), KNOBS) == 1.0
    assert QueryShape.of("Readers::RST").symbol and len(QueryShape.of("Readers::RST").words) >= 2
    assert parent_name_factor("src/readers/RST.hs", QueryShape.of("Readers::RST"), KNOBS) == 1.0
    # the knob off: none either
    assert parent_name_factor("src/Text/Pandoc/Readers/RST.hs", shape, OFF) == 1.0


def test_each_further_chunk_of_a_file_is_discounted() -> None:
    sem = leg("semantic", [("a1", 0.9, "a.py"), ("a2", 0.89, "a.py"), ("b1", 0.85, "b.py")])
    ranked, _ = fuse(req("zzz"), 1.0, sem, None, NEWEST, knobs=replace(OFF, diversity=KNOBS.diversity))
    order = [s.chunk_id for s in ranked]
    assert order == ["a1", "b1", "a2"]
    second = next(s for s in ranked if s.chunk_id == "a2")
    assert dict(second.factors)["diversity"] == pytest.approx(KNOBS.diversity)
    plain, _ = fuse(req("zzz"), 1.0, sem, None, NEWEST, knobs=OFF)
    assert [s.chunk_id for s in plain] == ["a1", "a2", "b1"]


def test_the_definition_contribution_enters_a_chunk_no_leg_retrieved() -> None:
    sem = leg("semantic", [("x", 0.9, "x.py")])
    dfn = leg("definition", [("d", 1.0, "core.py")])
    ranked, _ = fuse(req("Session"), 0.65, sem, None, NEWEST, dfn, knobs=KNOBS)
    d = next(s for s in ranked if s.chunk_id == "d")
    assert d.definition is not None and d.definition_rrf == pytest.approx(KNOBS.definition_weight / 61)
    ranked_off, _ = fuse(req("Session"), 0.65, sem, None, NEWEST, dfn, knobs=OFF)
    assert next(s for s in ranked_off if s.chunk_id == "d").base == 0.0


def test_single_leg_modes_carry_no_ranking_factor() -> None:
    sem = leg("semantic", [("a1", 0.9, "tests/test_a.py"), ("a2", 0.8, "tests/test_a.py")])
    ranked, _ = fuse(RankRequest(query="q", mode="semantic", recency_weight=0.0), 1.0, sem, None, NEWEST)
    assert all(s.factors == () for s in ranked)
    assert [s.score for s in ranked] == [0.9, 0.8]


@pytest.mark.parametrize(
    "path", ["README.md", "docs/guide.rst", "build.zig.zon", "config/app.yaml", "LICENSE"]
)
def test_prose_and_config_files_rank_below_code_unless_the_query_asks_for_them(path: str) -> None:
    knobs = replace(KNOBS, doc_prior=0.5)
    assert doc_factor(path, QueryShape.of("parse the arguments"), knobs) == pytest.approx(0.5)
    assert doc_factor("src/args.zig", QueryShape.of("parse the arguments"), knobs) == 1.0
    assert doc_factor(path, QueryShape.of("readme install steps"), knobs) == 1.0
    assert doc_factor(path, QueryShape.of("parse the arguments"), OFF) == 1.0
    assert path_factor(path, QueryShape.of("parse the arguments"), knobs) == 1.0


@pytest.mark.parametrize(
    ("query", "tests", "examples", "docs"),
    [
        ("how are specs run", True, False, False),
        ("testing the client", True, False, False),
        ("fixtures for the database", True, False, False),
        ("run the examples", False, True, False),
        ("a demo of the router", False, True, False),
        ("documentation of the options", False, False, True),
        ("where is the config read", False, False, True),
        # words that only start like one: the path priors stay on
        ("how nvm installs a specific Node.js version", False, False, False),
        ("demonstrate the retry policy", False, False, False),
        ("sampling rate of the profiler", False, False, False),
        ("how pandoc reads a DocBook XML document", False, False, False),
        ("build the docker image", False, False, False),
    ],
)
def test_what_a_query_asks_about_is_read_from_whole_words(query, tests, examples, docs) -> None:
    shape = QueryShape.of(query)
    assert (shape.asks_tests, shape.asks_examples, shape.asks_docs) == (tests, examples, docs)
    # and so whether tests, examples and docs keep their path prior
    assert (path_factor("tests/test_x.py", shape, KNOBS) == 1.0) == tests
    assert (path_factor("examples/x.py", shape, KNOBS) == 1.0) == examples
    assert (doc_factor("docs/x.md", shape, KNOBS) == 1.0) == docs


def test_a_file_named_example_is_an_example() -> None:
    shape = QueryShape.of("load plugins")
    assert path_factor("lua/lazy/example.lua", shape, KNOBS) == pytest.approx(KNOBS.path_prior)


def test_name_prefix_lets_word_forms_meet_file_names() -> None:
    shape = QueryShape.of("how requests are resolved")
    plain = replace(
        KNOBS, name_prefix=0.0, file_name_boost=1.0, question_name_boost=0.0, question_name_stem=0.0
    )
    fuzzy = replace(plain, name_prefix=4.0)
    assert name_factor("src/http/resolve.ts", shape, plain) == 1.0
    # "resolve" (7 letters) starts "resolved"; "requests" meets "request" through the plural rule
    assert name_factor("src/http/resolve.ts", shape, fuzzy) == pytest.approx(1 + 1 / 2)
    assert name_factor("src/res.ts", shape, fuzzy) == 1.0  # "res" is shorter than the prefix


def test_a_file_holding_several_strong_chunks_gets_the_file_bonus() -> None:
    sem = leg(
        "semantic", [("b1", 0.9, "b.py"), ("a1", 0.89, "a.py"), ("a2", 0.88, "a.py"), ("c", 0.5, "c.py")]
    )
    knobs = replace(OFF, file_bonus=1.0)
    ranked, _ = fuse(req("zzz"), 1.0, sem, None, NEWEST, knobs=knobs)
    assert [s.chunk_id for s in ranked][:2] == ["a1", "a2"]
    a1 = next(s for s in ranked if s.chunk_id == "a1")
    assert 1.0 < dict(a1.factors)["file_bonus"] <= 2.0
    assert [s.chunk_id for s in fuse(req("zzz"), 1.0, sem, None, NEWEST, knobs=OFF)[0]][0] == "b1"


def test_the_leg_confidence_uses_the_knobs_exponent() -> None:
    sem = leg("semantic", [("a", 0.8, "a.py"), ("b", 0.4, "b.py")])
    for knobs in (KNOBS, OFF, replace(OFF, confidence_exponent=1.0)):
        ranked, _ = fuse(req("zzz"), 1.0, sem, None, NEWEST, knobs=knobs)
        b = next(s for s in ranked if s.chunk_id == "b")
        assert b.semantic_confidence == pytest.approx(0.5**knobs.confidence_exponent)


def test_name_precision_prefers_the_file_the_query_names_wholly() -> None:
    # Both names hold "http" and "cache"; only one is nothing but those words.
    sem = leg(
        "semantic", [("legacy", 0.90, "cache/HttpCacheLegacy.kt"), ("cache", 0.88, "cache/HttpCache.kt")]
    )
    query = req("how the http cache stores responses")
    ranked, _ = fuse(query, 1.0, sem, None, NEWEST, knobs=KNOBS)
    assert [s.chunk_id for s in ranked] == ["cache", "legacy"]
    legacy = dict(next(s for s in ranked if s.chunk_id == "legacy").factors)
    boost = name_boost(QueryShape.of(query.query), KNOBS)  # a question: question_name_boost
    assert legacy["name_match"] == pytest.approx(1 + boost * 2 / 4)
    # 2 of the name's 3 words matched: the file-name share is scaled by 2/3
    assert legacy["name_match"] * legacy["name_precision"] == pytest.approx(1 + boost * 2 / 4 * 2 / 3)
    assert dict(next(s for s in ranked if s.chunk_id == "cache").factors)["name_precision"] == 1.0
    plain, _ = fuse(query, 1.0, sem, None, NEWEST, knobs=replace(KNOBS, name_precision=0.0))
    assert [s.chunk_id for s in plain] == ["legacy", "cache"]


@pytest.mark.parametrize("path", ["src/routing/mod.rs", "lua/routing/init.lua", "src/routing/index.ts"])
def test_a_module_file_is_named_by_its_folder(path: str) -> None:
    shape = QueryShape.of("how routing works")
    assert name_factor(path, shape, KNOBS) == pytest.approx(1 + name_boost(shape, KNOBS) / 2)
    assert name_factor(path, shape, replace(KNOBS, module_file_folder=0.0)) == 1.0
    assert name_factor("src/routing/other.rs", shape, KNOBS) == 1.0


def test_a_test_files_marker_is_not_a_name_word_the_query_misses() -> None:
    shape = QueryShape.of("a group with a custom command class")
    # test_custom_classes is named "custom classes": the query names all of it
    assert name_factor("tests/test_custom_classes.py", shape, KNOBS) == pytest.approx(
        name_factor("src/custom_classes.py", shape, KNOBS)
    )


@pytest.mark.parametrize(
    ("query", "prose"),
    [
        ("how are cookies persisted between requests", True),
        ("where is the session cookie signed", True),
        ("how does CookieJar persist cookies", False),  # names a class
        ("where is parse_config called from", False),  # names a function
        ("session handling", False),  # two content words
        ("how is it done", False),  # function words only
    ],
)
def test_a_query_of_three_content_words_and_no_name_is_prose(query: str, prose: bool) -> None:
    assert QueryShape.of(query).prose is prose


def test_a_prose_query_uses_the_prose_diversity_discount() -> None:
    # a1 / a2 are one file's two chunks; b1 a weaker chunk of another file that the stronger
    # prose discount (0.45 against 0.6) lets past a2.
    sem = leg("semantic", [("a1", 0.9, "a.py"), ("a2", 0.89, "a.py"), ("b1", 0.76, "b.py")])
    knobs = replace(OFF, diversity=0.6, prose_diversity=0.45)
    prose, _ = fuse(req("how are cookies persisted across requests"), 1.0, sem, None, NEWEST, knobs=knobs)
    assert [s.chunk_id for s in prose] == ["a1", "b1", "a2"]
    assert dict(next(s for s in prose if s.chunk_id == "a2").factors)["diversity"] == pytest.approx(0.45)
    named, _ = fuse(
        req("how CookieJar persists cookies across requests"), 1.0, sem, None, NEWEST, knobs=knobs
    )
    assert [s.chunk_id for s in named] == ["a1", "a2", "b1"]
    assert dict(next(s for s in named if s.chunk_id == "a2").factors)["diversity"] == pytest.approx(0.6)
    # prose_diversity 0 leaves prose queries to ``diversity``
    unset, _ = fuse(
        req("how are cookies persisted across requests"),
        1.0,
        sem,
        None,
        NEWEST,
        knobs=replace(knobs, prose_diversity=0),
    )
    assert [s.chunk_id for s in unset] == ["a1", "a2", "b1"]
    prose = QueryShape.of("how are cookies persisted across requests")
    assert file_diversity(prose, knobs) == 0.45
    assert file_diversity(QueryShape.of("session handling"), knobs) == 0.6
    assert file_diversity(QueryShape.of("cookies persisted across requests"), KNOBS) == (
        KNOBS.prose_diversity or KNOBS.diversity
    )


def test_a_question_uses_the_question_diversity_discount() -> None:
    # a1 / a2 are one file's two chunks, b1 a weaker chunk of another file: the question's 0.2
    # discount lets b1 past a2 where prose's 0.9 does not
    sem = leg("semantic", [("a1", 0.9, "a.py"), ("a2", 0.89, "a.py"), ("b1", 0.76, "b.py")])
    knobs = replace(OFF, diversity=0.6, prose_diversity=0.9, question_diversity=0.2)
    question, _ = fuse(req("how are cookies persisted across requests"), 1.0, sem, None, NEWEST, knobs=knobs)
    assert [s.chunk_id for s in question] == ["a1", "b1", "a2"]
    assert dict(next(s for s in question if s.chunk_id == "a2").factors)["diversity"] == pytest.approx(0.2)
    prose, _ = fuse(req("cookies persisted across requests"), 1.0, sem, None, NEWEST, knobs=knobs)
    assert [s.chunk_id for s in prose] == ["a1", "a2", "b1"]
    assert dict(next(s for s in prose if s.chunk_id == "a2").factors)["diversity"] == pytest.approx(0.9)
    # 0 leaves a question to prose_diversity / diversity
    unset = replace(knobs, question_diversity=0)
    assert file_diversity(QueryShape.of("how are cookies persisted across requests"), unset) == 0.9
    assert file_diversity(QueryShape.of("how to persist cookies across requests"), knobs) == 0.9  # a recipe
    assert file_diversity(QueryShape.of("how does CookieJar persist"), knobs) == 0.2
    assert (
        file_diversity(QueryShape.of("how are cookies persisted"), KNOBS) == KNOBS.question_diversity == 0.2
    )


def test_a_prose_query_leans_on_the_semantic_leg() -> None:
    knobs = replace(KNOBS, prose_alpha_shift=0.08, symbol_alpha_shift=0.1)
    assert shifted_alpha("how are cookies persisted across requests", 0.65, knobs) == pytest.approx(0.73)
    assert shifted_alpha("CookieJar", 0.65, knobs) == pytest.approx(0.55)
    assert shifted_alpha("session handling", 0.65, knobs) == pytest.approx(0.65)  # neither
    assert shifted_alpha("how does CookieJar persist cookies", 0.65, knobs) == pytest.approx(0.65)
    assert shifted_alpha("how are cookies persisted across requests", 0.95, knobs) == 1.0
    assert shifted_alpha("how are cookies persisted across requests", 0.65, OFF) == pytest.approx(0.65)


@pytest.mark.parametrize(
    ("query", "question"),
    [
        ("how are routes registered", True),
        ("How does tRPC merge routers", True),  # names are allowed in a question
        ("where is the session cookie signed", True),
        ("which serializer signs the session", True),
        ("how to read a file line by line", False),  # a recipe (CoSQA's phrasing) wants a function
        ("how do I read a file", False),
        ("Return the session cookie", False),  # a docstring's phrasing
        ("When called with decode_unicode, return text", False),  # a docstring's condition
        ("session handling", False),
        ("how is it done", False),  # function words only
        ("however the session is stored", False),  # the word, not a prefix of it
    ],
)
def test_a_question_opens_with_a_question_word_and_is_not_a_recipe(query: str, question: bool) -> None:
    assert QueryShape.of(query).question is question


def test_a_question_weighs_file_names_by_question_name_boost() -> None:
    knobs = replace(OFF, file_name_boost=3.0, question_name_boost=6.0)
    question = QueryShape.of("how are sessions stored")
    statement = QueryShape.of("sessions stored")
    assert name_boost(question, knobs) == 6.0 and name_boost(statement, knobs) == 3.0
    # "session" is one of the query's two content words: half the boost
    assert name_factor("src/flask/sessions.py", question, knobs) == pytest.approx(1 + 6.0 / 2)
    assert name_factor("src/flask/sessions.py", statement, knobs) == pytest.approx(1 + 3.0 / 2)
    # 0 leaves questions to file_name_boost; a recipe is never a question
    assert name_boost(question, replace(knobs, question_name_boost=0)) == 3.0
    assert name_boost(QueryShape.of("how to store sessions"), knobs) == 3.0
    # the order follows: b.py, named by the question, passes a.py's stronger hit only with the boost
    sem = leg("semantic", [("a1", 0.9, "src/app.py"), ("b1", 0.8, "src/sessions.py")])
    lifted, _ = fuse(
        req("how are sessions stored"), 1.0, sem, None, NEWEST, knobs=replace(knobs, file_name_boost=0.2)
    )
    plain, _ = fuse(
        req("how are sessions stored"),
        1.0,
        sem,
        None,
        NEWEST,
        knobs=replace(knobs, file_name_boost=0.2, question_name_boost=0),
    )
    assert [s.chunk_id for s in lifted] == ["b1", "a1"] and [s.chunk_id for s in plain] == ["a1", "b1"]


def test_a_question_weighs_the_legs_confidence_by_question_confidence_exponent() -> None:
    knobs = replace(OFF, confidence_exponent=2.0, question_confidence_exponent=1.0)
    question = QueryShape.of("how are sessions stored")
    assert leg_confidence_exponent(question, knobs) == 1.0
    assert leg_confidence_exponent(QueryShape.of("sessions stored"), knobs) == 2.0
    assert leg_confidence_exponent(QueryShape.of("how to store sessions"), knobs) == 2.0  # a recipe
    assert leg_confidence_exponent(None, knobs) == 2.0  # not a hybrid ranking
    assert leg_confidence_exponent(question, replace(knobs, question_confidence_exponent=0)) == 2.0
    # a weaker leg's hit keeps more of its weight: (0.7 / 1.0) ** 1 instead of ** 2, so the chunk
    # both legs found (b1: second in each) passes the one only the semantic leg ranked first (a1)
    sem = leg("semantic", [("a1", 1.0, "src/a.py"), ("b1", 0.7, "src/b.py")])
    kw = leg("keyword", [("c1", 10.0, "src/c.py"), ("b1", 7.0, "src/b.py")])
    asked, _ = fuse(req("how are sessions stored"), 0.65, sem, kw, NEWEST, knobs=knobs)
    stated, _ = fuse(req("sessions stored"), 0.65, sem, kw, NEWEST, knobs=knobs)
    assert [s.semantic_confidence for s in asked if s.chunk_id == "b1"] == [pytest.approx(0.7)]
    assert [s.semantic_confidence for s in stated if s.chunk_id == "b1"] == [pytest.approx(0.49)]
    assert asked[0].chunk_id == "b1" and stated[0].chunk_id == "a1"


def test_name_stem_lets_words_that_share_their_first_letters_meet_a_file_name() -> None:
    knobs = replace(OFF, file_name_boost=3.0, name_prefix=4.0)
    shape = QueryShape.of("how a model is distilled from a sentence transformer")
    # "distilled" does not start "distillation" nor the reverse: only a shared stem meets it
    assert name_factor("model2vec/distill/distillation.py", shape, knobs) == 1.0
    stemmed = name_factor("model2vec/distill/distillation.py", shape, replace(knobs, name_stem=5))
    assert stemmed == pytest.approx(1 + 3.0 / len(shape.words))
    # both words must be at least name_stem letters long, and their first name_stem letters agree
    registered = QueryShape.of("registered handlers")
    assert name_factor("src/registry.py", registered, replace(knobs, name_stem=5)) > 1.0  # "regis"
    assert (
        name_factor("src/registry.py", registered, replace(knobs, name_stem=7)) == 1.0
    )  # "registe" / "registr"
    assert name_factor("src/register.py", QueryShape.of("regular lookup"), replace(knobs, name_stem=5)) == 1.0


def test_test_name_share_scales_a_questions_name_match_of_test_files_only() -> None:
    knobs = replace(OFF, file_name_boost=3.0)
    shape = QueryShape.of("how is the invoice total computed")
    full = 1 + 3.0 * 2 / 3  # "invoice" and "total" of three content words
    assert name_factor("tests/test_invoice_total.py", shape, knobs) == pytest.approx(full)
    half = replace(knobs, test_name_share=0.5)
    assert name_factor("tests/test_invoice_total.py", shape, half) == pytest.approx(1 + 3.0 * 0.5 * 2 / 3)
    assert name_factor("src/invoice_total.py", shape, half) == pytest.approx(full)  # code keeps it all
    # a query that is no question keeps the test file's whole name match
    phrase = QueryShape.of("invoice total")
    assert name_factor("tests/test_invoice_total.py", phrase, half) == pytest.approx(1 + 3.0)
    # so does a question about tests
    asks = QueryShape.of("how are invoice totals tested")
    assert name_factor("tests/test_invoice_total.py", asks, half) == name_factor(
        "tests/test_invoice_total.py", asks, knobs
    )
    assert KNOBS.test_name_share == 0.0
    assert name_factor("tests/test_invoice_total.py", shape, replace(knobs, test_name_share=0.0)) == 1.0


def test_the_name_prefix_memo_stays_bounded_over_many_distinct_queries() -> None:
    """Its keys can carry each query's own word set: distinct queries must not grow it without bound."""
    from local_memory_search import ranking

    knobs = replace(KNOBS, name_prefix=4.0, file_name_boost=1.0, folder_name_boost=1.0)
    ranking._name_index.cache_clear()
    for q in range(1500):
        shape = QueryShape.of(f"resolving handler{q} requests{q} sessions")
        for f in range(8):
            name_factor(f"src/module{f}/resolve_handler{f}.py", shape, knobs)
    held = ranking._name_index.cache_info().currsize
    assert 0 < held <= ranking.PREFIX_MEMO, held
    # and the memo answers the same file's names again for the next query
    before = ranking._name_index.cache_info().hits
    shape = QueryShape.of("resolving handlers again")
    for _ in range(2):
        name_factor("src/module1/resolve_handler1.py", shape, knobs)
    assert ranking._name_index.cache_info().hits > before


def _matched_by_definition(words: frozenset[str], names: frozenset[str], prefix: int, stem: int) -> int:
    """The rule of ``ranking._matched`` spelt out pair by pair (the reference for its set look-ups)."""

    def meets(w: str, n: str) -> bool:
        if w == n:
            return True
        short, long = (w, n) if len(w) <= len(n) else (n, w)
        if prefix and len(short) >= prefix and long.startswith(short):
            return True
        return bool(stem and len(short) >= stem and long[:stem] == short[:stem])

    return sum(1 for w in words if any(meets(w, n) for n in names))


def test_name_matching_by_set_lookups_agrees_with_the_rule_pair_by_pair() -> None:
    import random

    from local_memory_search import ranking

    rng = random.Random(13)
    alphabet = "aeiourstln"
    vocab = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9))) for _ in range(60)]
    vocab += ["depend", "dependencies", "distilled", "distillation", "registered", "registry", "reg"]
    vocab += [w[:k] for w in vocab[:30] for k in (2, 3, 4, 5, 6) if len(w) > k]  # names that start others
    checked = matched = 0
    for _ in range(3000):
        words = frozenset(rng.sample(vocab, rng.randint(1, 5)))
        names = frozenset(rng.sample(vocab, rng.randint(1, 6)))
        for prefix, stem in ((0, 0), (4, 0), (3, 0), (0, 5), (4, 5), (2, 3)):
            got = ranking._matched(words, names, prefix, stem)
            assert got == _matched_by_definition(words, names, prefix, stem), (words, names, prefix, stem)
            checked += 1
            matched += got > len(words & names)
    assert checked == 18000 and matched > 1000  # the prefix and stem rules really were exercised
