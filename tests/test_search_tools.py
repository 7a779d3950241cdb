"""The seven search tools over a real index (real pipeline, tree-sitter, ONNX model, LanceDB, SQLite)."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest
from local_memory_search.api import RESULT_CACHE, explain_matches
from local_memory_search.params import ExplainMatchParams
from local_memory_search.runtime import RUNTIME
from local_memory_search.tools import call_tool
from search_support import env, snapshot


@pytest.fixture(scope="module")
def project(indexed_sample) -> Path:
    return indexed_sample.project


@pytest.fixture(scope="module")
def data_root(indexed_sample) -> Path:
    return indexed_sample.data_root


@pytest.fixture(autouse=True)
def _env(data_root, project):
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data_root), LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT=str(project)):
        yield


def call(tool: str, **args):
    env_ = call_tool(tool, args)
    assert env_["ok"], env_
    return env_


def symbols(envelope) -> list[str]:
    return [r["symbol_name"] for r in envelope["results"]]


# -- search ---------------------------------------------------------------------------------


def test_hybrid_finds_code_by_meaning(project):
    env_ = call(
        "search_hybrid", query="retry the database connection with backoff", project_path=str(project)
    )
    assert symbols(env_)[0] == "ConnectionPool.connect"
    assert env_["search"]["legs"] == {"semantic": "lance_flat", "keyword": "lance_fts"}
    assert env_["warnings"] == []
    hit = env_["results"][0]
    assert hit["file_path"] == "src/db.py" and hit["language"] == "python"
    assert hit["start_line"] <= 11 <= hit["end_line"] and "retries" in hit["text"]
    scores = [r["score"] for r in env_["results"]]
    assert scores == sorted(scores, reverse=True)


def test_exact_identifier_comes_first_in_every_mode():
    for tool in ("search_hybrid", "search_keyword", "search_semantic"):
        env_ = call(tool, query="initializeDatabase")
        assert symbols(env_)[0] == "initializeDatabase", tool
    assert symbols(call("search_hybrid", query="ComputeChecksum"))[0] == "ComputeChecksum"
    assert symbols(call("search_keyword", query="HttpClient.send"))[0] == "HttpClient.send"


def test_keyword_splits_camel_case_and_matches_nothing_for_gibberish():
    assert "parseConfig" in symbols(call("search_keyword", query="parse config"))
    env_ = call("search_keyword", query="zzqxj wvvpl")
    assert env_["results"] == [] and env_["total"] == 0
    codes = [w["code"] for w in env_["warnings"]]
    assert codes == ["no_matches"]
    assert "chunks are indexed" in env_["warnings"][0]["message"]


def test_paging_walks_every_result_once():
    first = call("search_hybrid", query="cache entry value", limit=2, gap_threshold=0.0)
    assert (first["offset"], first["limit"], first["has_more"], first["next_offset"]) == (0, 2, True, 2)
    total = first["total"]
    seen = [r["chunk_id"] for r in first["results"]]
    offset = first["next_offset"]
    while offset is not None:
        page = call("search_hybrid", query="cache entry value", limit=2, offset=offset, gap_threshold=0.0)
        assert page["total"] == total
        seen += [r["chunk_id"] for r in page["results"]]
        offset = page["next_offset"]
    assert len(seen) == len(set(seen)) == total
    past = call("search_hybrid", query="cache entry value", limit=2, offset=total + 5, gap_threshold=0.0)
    assert past["results"] == [] and [w["code"] for w in past["warnings"]] == ["page_empty"]


def test_gap_threshold_trims_the_tail():
    loose = call("search_hybrid", query="least recently used cache", gap_threshold=0.0, limit=50)
    tight = call("search_hybrid", query="least recently used cache", gap_threshold=0.9, limit=50)
    assert tight["total"] < loose["total"]
    top = tight["results"][0]["score"]
    assert all(r["score"] >= 0.9 * top for r in tight["results"])


def test_max_chars_summary_only_fields_and_exclude_fields():
    full = call("search_hybrid", query="LruCache", max_chars=0)["results"][0]
    cut = call("search_hybrid", query="LruCache", max_chars=40)["results"][0]
    assert len(cut["text"]) == 40 and cut["truncated"] is True and cut["text_chars"] == len(full["text"])
    assert "truncated" not in full
    summary = call("search_hybrid", query="LruCache", summary_only=True)["results"][0]
    assert "text" not in summary and summary["summary"]
    only = call("search_hybrid", query="LruCache", fields=["file_path", "start_line"])["results"][0]
    assert set(only) == {"chunk_id", "file_path", "start_line"}
    with_score = call("search_hybrid", query="LruCache", fields=["file_path", "score"])["results"][0]
    assert set(with_score) == {"chunk_id", "file_path", "score"}
    lean = call("search_hybrid", query="LruCache", exclude_fields=["text", "summary", "score"])["results"][0]
    assert not {"text", "summary", "score"} & set(lean) and "file_path" in lean


@pytest.mark.parametrize(
    ("filters", "check"),
    [
        ({"language": "typescript"}, lambda r: r["language"] == "typescript"),
        ({"file_extensions": ["go", "ts"]}, lambda r: r["file_extension"] in ("go", "ts")),
        ({"path_prefix": "src/"}, lambda r: r["file_path"].startswith("src/")),
        ({"updated_after": "2021-01-01T00:00:00Z"}, lambda r: r["file_path"] != "legacy/old_parser.py"),
        ({"tags": ["class"]}, lambda r: "class" in r["tags"]),
        ({"class_name": "LruCache"}, lambda r: r["class_name"] == "LruCache"),
        ({"function_name": "connect"}, lambda r: r["function_name"] == "connect"),
    ],
)
def test_each_filter_restricts_every_mode(filters, check):
    for tool in ("search_hybrid", "search_keyword", "search_semantic"):
        env_ = call(tool, query="function that returns a value", filters=filters, limit=50, gap_threshold=0.0)
        assert env_["results"], (tool, filters)
        assert all(check(r) for r in env_["results"]), (tool, filters, env_["results"])


def test_updated_after_and_commit_filters_match_the_index(project):
    everything = call("search_keyword", query="tokens", limit=50, gap_threshold=0.0)
    assert "legacy/old_parser.py" in {r["file_path"] for r in everything["results"]}
    head = subprocess.run(
        ["git", "-C", str(project), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    same = call(
        "search_keyword", query="tokens", limit=50, gap_threshold=0.0, filters={"last_commit_hash": head}
    )
    assert same["total"] == everything["total"]
    other = call("search_keyword", query="tokens", filters={"last_commit_hash": "0" * 40})
    assert other["results"] == [] and other["warnings"][0]["code"] == "no_matches"
    assert "with these filters" in other["warnings"][0]["message"]
    old = call(
        "search_keyword", query="tokens", filters={"updated_after": "2019-06-01T00:00:00+00:00"}, limit=50
    )
    assert "legacy/old_parser.py" in {r["file_path"] for r in old["results"]}


def test_result_cache_and_cache_bust():
    RUNTIME.clear()
    args = {"query": "evict the oldest entry"}
    first = call_tool("search_hybrid", args)
    second = call_tool("search_hybrid", args)
    busted = call_tool("search_hybrid", {**args, "cache_bust": True})
    assert (first["search"]["cached"], second["search"]["cached"], busted["search"]["cached"]) == (
        False,
        True,
        False,
    )
    assert first["results"] == second["results"] == busted["results"]
    second["results"].clear()  # a caller mutating its answer must not poison the cache
    assert call_tool("search_hybrid", args)["results"] == first["results"]


def test_one_runtime_clear_resets_every_process_wide_cache():
    import local_memory_search.graph_tools  # noqa: F401  (registers the graph cache)
    from local_memory_search import legs, store
    from local_memory_search.encoder import ENCODER

    call_tool("search_hybrid", {"query": "evict the oldest entry"})
    call("find_callers", symbol_name="connect")
    assert {"results", "tables", "encoder", "graph", "newest_updated_at", "index_languages"} <= set(
        RUNTIME.names()
    )
    assert (
        len(RESULT_CACHE._items) and len(store._TABLES._items) and len(ENCODER._vectors) and len(legs._NEWEST)
    )
    RUNTIME.clear()
    assert not RESULT_CACHE._items and not store._TABLES._items and not ENCODER._vectors
    assert not len(legs._NEWEST) and not len(legs._LANGUAGES)
    again = call_tool("search_hybrid", {"query": "evict the oldest entry"})
    assert again["search"]["cached"] is False  # starts cold, answers the same
    assert again["results"] and again["results"][0]["symbol_name"]


# -- navigation -----------------------------------------------------------------------------


def _chunk_id(symbol: str) -> str:
    env_ = call("search_keyword", query=symbol)
    return next(r["chunk_id"] for r in env_["results"] if r["symbol_name"] == symbol)


def test_get_chunk_returns_the_whole_chunk_and_honours_max_chars_and_fields():
    cid = _chunk_id("ConnectionPool.connect")
    data = call("get_chunk", chunk_id=cid)["data"]
    assert data["chunk_id"] == cid and data["symbol_name"] == "ConnectionPool.connect"
    assert data["text"].lstrip().startswith("def connect") and "RuntimeError" in data["text"]
    short = call("get_chunk", chunk_id=cid, max_chars=10, fields=["text", "file_path"])["data"]
    assert (
        set(short) == {"chunk_id", "text", "file_path", "truncated", "text_chars"}
        and len(short["text"]) == 10
    )
    missing = call_tool("get_chunk", {"chunk_id": "nope"})
    assert (
        missing["ok"] is False
        and missing["error"]["code"] == "NOT_FOUND"
        and missing["error"]["field"] == "chunk_id"
    )


def test_read_chunk_neighbors_follows_file_order():
    cid = _chunk_id("open_socket")
    data = call("read_chunk_neighbors", chunk_id=cid, before=1, after=1)["data"]
    assert data["file_path"] == "src/db.py"
    assert data["chunk"]["chunk_id"] == cid
    assert [c["symbol_name"] for c in data["after"]] == ["initializeDatabase"]
    assert len(data["before"]) == 1 and data["before"][0]["start_line"] < data["chunk"]["start_line"]
    wide = call("read_chunk_neighbors", chunk_id=cid, before=5, after=5)["data"]
    lines = [c["start_line"] for c in [*wide["before"], wide["chunk"], *wide["after"]]]
    assert lines == sorted(lines) and len(wide["before"]) + len(wide["after"]) + 1 == wide["file_chunk_count"]
    none = call("read_chunk_neighbors", chunk_id=cid, before=0, after=0)["data"]
    assert none["before"] == [] and none["after"] == []


def test_search_similar_from_a_function_and_from_a_file():
    by_function = call("search_similar", file_path="src/db.py", function_name="initializeDatabase", limit=5)
    ids = {r["chunk_id"] for r in by_function["results"]}
    assert _chunk_id("initializeDatabase") not in ids
    assert by_function["seed"]["chunk_ids"] == [_chunk_id("initializeDatabase")]
    assert by_function["results"][0]["file_path"] == "src/db.py"  # its own module is the nearest code
    by_file = call("search_similar", file_path="src/cache.py", limit=5)
    assert by_file["results"] and all(r["file_path"] != "src/cache.py" for r in by_file["results"])
    bad = call_tool("search_similar", {"file_path": "src/nope.py"})
    assert bad["error"]["code"] == "NOT_FOUND" and bad["error"]["field"] == "file_path"
    bad_fn = call_tool("search_similar", {"file_path": "src/db.py", "function_name": "nope"})
    assert bad_fn["error"]["field"] == "function_name"


# -- explain --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "gap"),
    [
        ("retry the database connection with backoff", 0.25),
        ("retry the database connection with backoff", 0.0),
        ("LruCache", 0.0),
        ("parse key value configuration lines", 0.0),
    ],
)
def test_explain_reproduces_the_hybrid_order_and_scores(query, gap):
    hits = call("search_hybrid", query=query, limit=10, cache_bust=True, gap_threshold=gap)["results"]
    assert len(hits) >= 2
    explained = [
        call("explain_match", query=query, result_id=h["chunk_id"], verbosity="full", gap_threshold=gap)[
            "data"
        ]
        for h in hits
    ]
    for position, (hit, ex) in enumerate(zip(hits, explained, strict=True), start=1):
        assert ex["found"] and ex["in_results"]
        assert ex["rank"] == position
        assert ex["final_score"] == pytest.approx(hit["score"], rel=1e-12)
        rrf = (
            ex["semantic"]["contribution"] + ex["keyword"]["contribution"] + ex["definition"]["contribution"]
        )
        assert ex["rrf_score"] == pytest.approx(rrf)
        for leg in ("semantic", "keyword"):
            part = ex[leg]
            if part["rank"] is not None:
                assert part["contribution"] == pytest.approx(
                    part["weight"] * part["confidence"] / (60 + part["rank"])
                )
        product = rrf * ex["identifier_boost"]["multiplier"] * ex["recency_boost"]["multiplier"]
        assert set(ex["ranking_factors"]) >= {"path_prior", "doc_prior", "name_match"}
        product *= math.prod(ex["ranking_factors"].values())
        assert ex["final_score"] == pytest.approx(product)
    finals = [ex["final_score"] for ex in explained]
    assert finals == sorted(finals, reverse=True)


def test_explain_matches_gives_each_hit_what_explain_match_gives_it_from_one_ranking(project):
    query = "retry the database connection with backoff"
    hits = call("search_hybrid", query=query, limit=5, cache_bust=True)["results"]
    ids = [h["chunk_id"] for h in hits] + ["no-such-chunk"]
    params = ExplainMatchParams.model_validate(
        {"project_path": str(project), "query": query, "result_id": ids[0], "verbosity": "full"}
    )
    many = explain_matches(params, ids).data["explanations"]
    assert many["no-such-chunk"] is None
    for cid in ids[:-1]:
        one = call("explain_match", query=query, result_id=cid, verbosity="full")["data"]
        assert many[cid] == one


def test_explain_shows_the_identifier_and_recency_boosts():
    cid = _chunk_id("initializeDatabase")
    ex = call("explain_match", query="initializeDatabase", result_id=cid, verbosity="full")["data"]
    assert ex["identifier_boost"] == {"matched": "initializeDatabase", "multiplier": 2.0}
    assert ex["recency_boost"]["recency"] == pytest.approx(1.0, abs=0.05)
    old = _chunk_id("tokenize_legacy")
    ex_old = call("explain_match", query="tokenize_legacy", result_id=old, verbosity="full")["data"]
    assert ex_old["recency_boost"]["age_days"] > 365 and ex_old["recency_boost"][
        "multiplier"
    ] == pytest.approx(1.0)
    compact = call("explain_match", query="initializeDatabase", result_id=cid)["data"]
    assert "formula" not in compact and compact["rank"] == 1


def test_explain_of_an_unretrieved_chunk_and_of_an_unknown_id():
    cid = _chunk_id("ComputeChecksum")
    # The filter keeps Go code out of both legs, so this chunk was never a candidate.
    ex = call("explain_match", query="checksum of bytes", result_id=cid, filters={"language": "python"})[
        "data"
    ]
    assert ex["found"] is False and ex["rank"] is None and "neither leg" in ex["reason"]
    missing = call_tool("explain_match", {"query": "x", "result_id": "nope"})
    assert missing["error"]["code"] == "NOT_FOUND"


def test_alpha_extremes_use_one_leg():
    kw = call("search_hybrid", query="open a socket", alpha=0.0, cache_bust=True)
    sem = call("search_hybrid", query="open a socket", alpha=1.0, cache_bust=True)
    assert kw["search"]["legs"] == {"keyword": "lance_fts"}
    assert sem["search"]["legs"] == {"semantic": "lance_flat"}


# -- project selection and states ----------------------------------------------------------


def test_project_path_defaults_to_env_then_cwd(project, tmp_path, monkeypatch):
    assert call("search_keyword", query="LruCache")["results"]  # env default
    monkeypatch.delenv("LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT")
    monkeypatch.chdir(project / "src")
    # cwd is src/, which is not the indexed root: that is a different, unindexed project.
    assert call_tool("search_keyword", {"query": "LruCache"})["error"]["code"] == "NOT_INDEXED"
    monkeypatch.chdir(project)
    assert call("search_keyword", query="LruCache")["results"]


def test_unindexed_and_missing_projects_are_errors_not_empty_answers(tmp_path):
    env_ = call_tool("search_hybrid", {"query": "x", "project_path": str(tmp_path)})
    assert env_["ok"] is False and env_["error"]["code"] == "NOT_INDEXED"
    assert "local-memory-indexer" in env_["error"]["message"]
    gone = call_tool("search_hybrid", {"query": "x", "project_path": str(tmp_path / "nope")})
    assert gone["error"]["code"] == "INVALID_ARGUMENT" and gone["error"]["field"] == "project_path"


# -- read-only, proven on disk -------------------------------------------------------------


def test_no_tool_changes_any_file_under_the_data_root(data_root, project):
    before = snapshot(data_root)
    assert before
    cid = _chunk_id("ConnectionPool.connect")
    calls = [
        ("search_hybrid", {"query": "retry connection", "cache_bust": True}),
        ("search_semantic", {"query": "retry connection", "cache_bust": True}),
        ("search_keyword", {"query": "retry connection", "cache_bust": True}),
        (
            "search_hybrid",
            {"query": "x", "filters": {"tags": ["class"], "path_prefix": "src/"}, "cache_bust": True},
        ),
        ("get_chunk", {"chunk_id": cid}),
        ("read_chunk_neighbors", {"chunk_id": cid, "before": 5, "after": 5}),
        ("search_similar", {"file_path": "src/db.py", "function_name": "connect", "cache_bust": True}),
        ("explain_match", {"query": "retry connection", "result_id": cid, "verbosity": "full"}),
    ]
    for tool, args in calls:
        assert call_tool(tool, args)["ok"], tool
    assert call_tool("search_hybrid", {"query": "x", "filters": {"nope": 1}})["ok"] is False
    assert snapshot(data_root) == before


def test_search_is_a_plain_library_function(project):
    from local_memory_search.api import Shape, search
    from local_memory_search.store import open_index

    with open_index(str(project)) as reader:
        page = search(reader, "evict the oldest entry", mode="keyword", limit=2, shape=Shape(max_chars=20))
        assert page.paging is not None and page.paging.limit == 2 and len(page.results or []) <= 2
        assert all(len(r["text"]) <= 20 for r in page.results or [])
        # The tool answers the same page through the same library call.
        tool = call("search_keyword", query="evict the oldest entry", limit=2, max_chars=20, cache_bust=True)
        assert [r["chunk_id"] for r in tool["results"]] == [r["chunk_id"] for r in page.results or []]
