"""Property-based fuzz of every read-only tool's arguments, generated from the tools' own JSON schemas.

Two generators per tool: arguments shaped by the published input schema (a small generator over
the JSON-schema subset pydantic emits: types, enums, bounds, ``anyOf``, ``$ref``; values may break
``pattern``/format rules, which is the point),
and arbitrary JSON objects. Either way every call must answer a well-formed envelope; a failure
must carry a contract error code and never be ``INTERNAL`` (that would be a bug escaping the tool).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from local_memory_search.tools import REGISTRY, call_tool
from local_memory_shared.contract import error_codes
from search_support import env, index, write_project

CODES = set(error_codes())
SEARCH_TOOLS = [spec.name for spec in REGISTRY]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
FUZZ = settings(
    max_examples=20, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None
)


def from_schema(schema: dict[str, Any], root: dict[str, Any] | None = None) -> st.SearchStrategy[Any]:
    """A strategy of values shaped by ``schema`` (pydantic's JSON-schema subset)."""
    root = root or schema
    if "$ref" in schema:
        return from_schema(root["$defs"][schema["$ref"].rsplit("/", 1)[-1]], root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of([from_schema(sub, root) for sub in schema[key]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    kind = schema.get("type")
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 40), 40))
    if kind == "integer":
        return st.integers(schema.get("minimum", -(10**6)), schema.get("maximum", 10**6))
    if kind == "number":
        return st.floats(schema.get("minimum", -1e6), schema.get("maximum", 1e6), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(
            from_schema(schema.get("items", {}), root), max_size=min(schema.get("maxItems", 4), 4)
        )
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: from_schema(v, root) for k, v in props.items() if k in required},
            optional={k: from_schema(v, root) for k, v in props.items() if k not in required},
        )
    return JSON


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    root = tmp_path_factory.mktemp("fuzz")
    proj = write_project(root / "proj", git=False)
    index(proj, root / "data")
    return str(proj), root / "data"


def _check(envelope: dict[str, Any], tool: str, args: Any) -> None:
    assert isinstance(envelope, dict) and isinstance(envelope.get("ok"), bool), (tool, args)
    assert isinstance(envelope.get("warnings"), list), (tool, args)
    if not envelope["ok"]:
        code = envelope["error"]["code"]
        assert code in CODES, (tool, args, envelope["error"])
        assert code != "INTERNAL", (tool, args, envelope["error"])


@pytest.mark.parametrize("tool", SEARCH_TOOLS)
def test_schema_valid_arguments_always_answer_an_envelope(project: tuple[str, Path], tool: str) -> None:
    proj, data = project
    schema = REGISTRY.get(tool).input_schema()

    @FUZZ
    @given(from_schema(schema))
    def run(args: dict[str, Any]) -> None:
        if "project_path" in schema.get("properties", {}):
            args = {**args, "project_path": proj}
        with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data)):
            _check(call_tool(tool, args), tool, args)

    run()


@pytest.mark.parametrize("tool", SEARCH_TOOLS)
def test_arbitrary_json_arguments_are_answered_not_crashed(project: tuple[str, Path], tool: str) -> None:
    proj, data = project

    @FUZZ
    @given(st.dictionaries(st.text(max_size=16), JSON, max_size=5) | JSON)
    def run(args: Any) -> None:
        with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data), LOCAL_VECTOR_SEARCH_DEFAULT_PROJECT=proj):
            _check(call_tool(tool, args), tool, args)

    run()
