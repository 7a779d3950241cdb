"""Tool arguments: seed-003 defaults and bounds, strict filters, errors that name the field."""

from __future__ import annotations

import pytest
from local_memory_search.params import (
    FILTER_KEYS,
    ExplainMatchParams,
    GetChunkParams,
    ReadChunkNeighborsParams,
    SearchHybridParams,
    SearchKeywordParams,
    SearchSemanticParams,
    SearchSimilarParams,
    validate,
)
from local_memory_search.tools import TOOLS, call_tool
from local_memory_shared.errors import InvalidArgument


def test_search_defaults_match_seed_003():
    p = validate(SearchHybridParams, {"query": "connect"})
    assert (p.limit, p.offset, p.max_chars, p.summary_only, p.filters, p.fields, p.exclude_fields) == (
        10,
        0,
        800,
        False,
        None,
        None,
        None,
    )
    assert (p.recency_weight, p.gap_threshold, p.cache_bust, p.alpha, p.rrf_k) == (0.1, 0.15, False, 0.65, 60)
    for model in (SearchSemanticParams, SearchKeywordParams):
        q = validate(model, {"query": "x"})
        assert (q.limit, q.max_chars, q.recency_weight, q.gap_threshold) == (10, 800, 0.1, 0.15)
        assert not hasattr(q, "alpha")


def test_other_tool_defaults_match_seed_003():
    g = validate(GetChunkParams, {"chunk_id": "c"})
    assert (g.max_chars, g.fields) == (0, None)
    n = validate(ReadChunkNeighborsParams, {"chunk_id": "c"})
    assert (n.before, n.after) == (2, 2)
    s = validate(SearchSimilarParams, {"file_path": "a.py"})
    assert (s.limit, s.max_chars, s.function_name, s.filters) == (10, 800, None, None)
    e = validate(ExplainMatchParams, {"query": "q", "result_id": "c"})
    assert (e.alpha, e.verbosity) == (0.65, "compact")


@pytest.mark.parametrize(
    ("model", "args", "field"),
    [
        (SearchHybridParams, {"query": "q", "limit": 0}, "limit"),
        (SearchHybridParams, {"query": "q", "limit": 51}, "limit"),
        (SearchHybridParams, {"query": "q", "offset": -1}, "offset"),
        (SearchHybridParams, {"query": "q", "max_chars": -5}, "max_chars"),
        (SearchHybridParams, {"query": "q", "alpha": 1.5}, "alpha"),
        (SearchHybridParams, {"query": "q", "alpha": -0.1}, "alpha"),
        (SearchHybridParams, {"query": "q", "rrf_k": 0}, "rrf_k"),
        (SearchHybridParams, {"query": "q", "recency_weight": -1}, "recency_weight"),
        (SearchHybridParams, {"query": "q", "gap_threshold": 2}, "gap_threshold"),
        (SearchHybridParams, {"query": "q", "limit": "10"}, "limit"),
        (SearchHybridParams, {"query": "q", "limit": True}, "limit"),
        (SearchHybridParams, {"query": "q", "summary_only": "yes"}, "summary_only"),
        (SearchHybridParams, {"query": ""}, "query"),
        (SearchHybridParams, {"query": "   "}, "query"),
        (SearchHybridParams, {}, "query"),
        (SearchHybridParams, {"query": 5}, "query"),
        (SearchHybridParams, {"query": "q", "fields": ["text", "nonsense"]}, "fields[1]"),
        (SearchHybridParams, {"query": "q", "exclude_fields": ["vector"]}, "exclude_fields[0]"),
        (SearchHybridParams, {"query": "q", "bogus": 1}, "bogus"),
        (SearchKeywordParams, {"query": "q", "alpha": 0.5}, "alpha"),
        (ReadChunkNeighborsParams, {"chunk_id": "c", "before": 6}, "before"),
        (ReadChunkNeighborsParams, {"chunk_id": "c", "after": 6}, "after"),
        (ReadChunkNeighborsParams, {"chunk_id": "c", "after": -1}, "after"),
        (GetChunkParams, {}, "chunk_id"),
        (GetChunkParams, {"chunk_id": "c", "max_chars": -1}, "max_chars"),
        (SearchSimilarParams, {}, "file_path"),
        (SearchSimilarParams, {"file_path": "a.py", "limit": 99}, "limit"),
        (ExplainMatchParams, {"query": "q"}, "result_id"),
        (ExplainMatchParams, {"query": "q", "result_id": "c", "verbosity": "loud"}, "verbosity"),
    ],
)
def test_bad_arguments_raise_invalid_argument_naming_the_field(model, args, field):
    with pytest.raises(InvalidArgument) as info:
        validate(model, args)
    assert info.value.code == "INVALID_ARGUMENT"
    assert info.value.field == field


def test_filters_accept_exactly_the_eight_seed_keys():
    assert FILTER_KEYS == (
        "language",
        "file_extensions",
        "path_prefix",
        "updated_after",
        "tags",
        "class_name",
        "function_name",
        "last_commit_hash",
    )
    full = {
        "language": "python",
        "file_extensions": [".PY", "ts"],
        "path_prefix": "./src/",
        "updated_after": "2026-01-02",
        "tags": ["function"],
        "class_name": "Client",
        "function_name": "send",
        "last_commit_hash": "abc123",
    }
    f = validate(SearchHybridParams, {"query": "q", "filters": full}).filters
    assert f is not None
    assert f.file_extensions == ["py", "ts"]
    assert f.path_prefix == "src/"
    assert f.updated_after == "2026-01-02T00:00:00Z"


@pytest.mark.parametrize("key", ["file_path", "chunk_kind", "symbol_name", "Language"])
def test_unknown_filter_keys_are_rejected_by_name(key):
    with pytest.raises(InvalidArgument) as info:
        validate(SearchHybridParams, {"query": "q", "filters": {key: "x"}})
    assert info.value.field == f"filters.{key}"
    assert repr(key) in info.value.message
    assert "language" in info.value.message  # says what is supported


@pytest.mark.parametrize(
    ("filters", "field"),
    [
        ({"updated_after": "yesterday"}, "filters.updated_after"),
        ({"updated_after": "2026-13-01"}, "filters.updated_after"),
        ({"file_extensions": "py"}, "filters.file_extensions"),
        ({"file_extensions": []}, "filters.file_extensions"),
        ({"file_extensions": ["."]}, "filters.file_extensions"),
        ({"tags": [1]}, "filters.tags[0]"),
        ({"path_prefix": "/abs/path"}, "filters.path_prefix"),
        ({"language": ""}, "filters.language"),
    ],
)
def test_bad_filter_values_name_the_filter(filters, field):
    with pytest.raises(InvalidArgument) as info:
        validate(SearchHybridParams, {"query": "q", "filters": filters})
    assert info.value.field == field


def test_timezones_are_normalised_to_utc():
    f = validate(
        SearchKeywordParams, {"query": "q", "filters": {"updated_after": "2026-01-02T03:04:05+02:00"}}
    ).filters
    assert f is not None and f.updated_after == "2026-01-02T01:04:05Z"


def test_arguments_must_be_an_object():
    with pytest.raises(InvalidArgument) as info:
        validate(SearchHybridParams, ["query"])
    assert info.value.field == "arguments"


def test_call_tool_answers_a_structured_error_and_never_raises():
    env = call_tool("search_hybrid", {"query": "q", "filters": {"file_path": "a.py"}})
    assert env["ok"] is False
    assert env["error"]["code"] == "INVALID_ARGUMENT"
    assert env["error"]["field"] == "filters.file_path"
    assert env["warnings"] == []
    # One code for an unknown tool on every surface (was NOT_FOUND here, INVALID_ARGUMENT over MCP).
    assert call_tool("no_such_tool", {})["error"]["code"] == "INVALID_ARGUMENT"
    assert call_tool("get_chunk", None)["error"]["field"] == "chunk_id"


def test_registry_has_the_seven_search_tools_with_schemas():
    names = {
        "search_hybrid",
        "search_semantic",
        "search_keyword",
        "get_chunk",
        "read_chunk_neighbors",
        "search_similar",
        "explain_match",
    }
    assert names <= set(TOOLS)
    for name in names:
        spec = TOOLS[name]
        assert spec.read_only and spec.description
        schema = spec.input_schema()
        assert schema["type"] == "object"
    hybrid = TOOLS["search_hybrid"].input_schema()
    assert hybrid["required"] == ["query"]
    assert hybrid["properties"]["limit"]["maximum"] == 50
    assert hybrid["properties"]["alpha"]["default"] == 0.65
