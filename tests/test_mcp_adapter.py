"""The shared tool layer and MCP adapter: argument validation, JSON-string coercion, envelopes, bearer check."""

from __future__ import annotations

import json

import anyio
import pytest
from local_memory_search.server import build_server as build_search_server
from local_memory_shared.errors import InvalidArgument
from local_memory_shared.mcp_adapter import BearerTokenMiddleware, envelope_result, read_only_annotations
from local_memory_shared.tooling import coerce_json_strings, validate_args
from mcp_harness import memory_session
from pydantic import BaseModel, ConfigDict, Field


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tags: list[str] = Field(default_factory=list)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    count: int = 1
    inner: Inner | None = None


def test_validate_args_names_the_offending_field_as_a_dotted_path():
    assert validate_args(Args, {"name": "x"}).count == 1
    cases = [
        ({}, "name", "name is required"),
        ({"name": "x", "count": "many"}, "count", "count:"),
        ({"name": "x", "inner": {"tags": ["a", 3]}}, "inner.tags[1]", "inner.tags[1]:"),
        ({"name": "x", "colour": "red"}, "colour", "unknown argument 'colour'"),
    ]
    for args, field, message in cases:
        with pytest.raises(InvalidArgument) as err:
            validate_args(Args, args)
        assert err.value.field == field
        assert err.value.message.startswith(message), err.value.message
        assert err.value.details["errors"][0]["field"] == field
    with pytest.raises(InvalidArgument) as err:
        validate_args(Args, ["not", "an", "object"])  # type: ignore[arg-type]
    assert err.value.field == "arguments"


def test_json_text_is_parsed_only_where_the_schema_wants_an_object_or_array():
    schema = Args.model_json_schema()
    got = coerce_json_strings({"name": '["looks", "like", "json"]', "inner": '{"tags": ["py"]}'}, schema)
    assert got == {"name": '["looks", "like", "json"]', "inner": {"tags": ["py"]}}
    assert coerce_json_strings({"inner": "{not json"}, schema) == {"inner": "{not json"}


def test_envelope_result_mirrors_ok_into_is_error():
    good = envelope_result({"ok": True, "results": [1], "warnings": []})
    bad = envelope_result({"ok": False, "error": {"code": "NOT_FOUND", "message": "m"}, "warnings": []})
    assert (good.is_error, bad.is_error) == (False, True)
    assert json.loads(bad.content[0].text) == bad.structured_content
    assert read_only_annotations().read_only_hint is True


def test_a_client_sending_filters_as_json_text_is_understood(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(tmp_path / "data"))
    with memory_session(build_search_server()) as session:
        envelope = session.call(
            "search_keyword",
            {"project_path": str(tmp_path), "query": "x", "filters": '{"language": "python"}'},
        )
    # The filters passed validation (JSON text became an object); the project is simply not indexed.
    assert envelope["error"]["code"] == "NOT_INDEXED", envelope


async def _asgi_status(app: BearerTokenMiddleware, headers: list[tuple[bytes, bytes]]) -> int:
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    await app({"type": "http", "headers": headers}, receive, send)
    return sent[0]["status"]


def test_bearer_middleware_accepts_only_the_token():
    async def inner(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    app = BearerTokenMiddleware(inner, "tok")
    for headers, status in [
        ([], 401),
        ([(b"authorization", b"Bearer nope")], 401),
        ([(b"authorization", b"Basic tok")], 401),
        ([(b"authorization", b"Bearer tok")], 200),
        ([(b"authorization", b"bearer tok")], 200),  # the scheme is case-insensitive
    ]:
        assert anyio.run(_asgi_status, app, headers) == status, headers
    with pytest.raises(ValueError):
        BearerTokenMiddleware(inner, "")
