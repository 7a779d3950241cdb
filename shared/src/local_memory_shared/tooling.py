"""The one tool layer of both servers and both CLIs: specs, validation, results, the error boundary.

A tool is a :class:`ToolSpec`: a name, a description, an argument model (a :class:`StrictModel`,
whose JSON schema is the published input schema) and a plain function
``fn(params, context) -> ToolResult``. A :class:`ToolRegistry` holds a server's specs in order
and :meth:`ToolRegistry.call` is the only way a tool runs — from MCP (:mod:`.mcp_adapter`),
from a CLI, or in-process — so every caller sees the same answer to the same mistake:

* arguments are validated once, here, by :func:`validate_args` (pydantic at the edge only);
  a failure is ``INVALID_ARGUMENT`` whose ``field`` is the dotted path of the culprit;
* an unknown tool name is ``INVALID_ARGUMENT`` with ``field = "name"``;
* any other exception becomes an error envelope (``INTERNAL`` for bugs), never a crash.

The context (``Settings`` for the searcher, the job manager for the indexer) is made by a
factory the caller passes, so building it can fail inside the boundary too.
"""

from __future__ import annotations

import copy
import functools
import importlib
import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from .envelope import error, ok
from .errors import InvalidArgument, LocalMemoryError

if TYPE_CHECKING:
    from mcp_types import ToolAnnotations

log = logging.getLogger(__name__)

C = TypeVar("C")
M = TypeVar("M", bound=BaseModel)


# -- arguments ----------------------------------------------------------------------------------


class StrictModel(BaseModel):
    """Base of every tool's arguments: no unknown keys, no type coercion ("10" is not 10), immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


#: A string argument that must carry more than whitespace (the one "not blank" rule).
NotBlank = Annotated[str, AfterValidator(_not_blank)]


#: Deepest nesting of objects/arrays allowed inside a tool's arguments (real tools need 3).
MAX_ARGUMENT_DEPTH = 32
#: Most decimal digits an integer argument may have (any 64-bit value fits).
MAX_INT_DIGITS = 20
_INT_BOUND = 10**MAX_INT_DIGITS
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_argument_limits(arguments: Any) -> None:
    """Refuse arguments too deep, with a huge integer or a lone surrogate: InvalidArgument naming the field.

    Runs before pydantic so no value can make validation recurse or convert without bound.
    """
    stack: list[tuple[Any, tuple[Any, ...]]] = [(arguments, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_ARGUMENT_DEPTH:
            name = _dotted(path[:1]) or "arguments"
            raise InvalidArgument(f"{name}: nested deeper than {MAX_ARGUMENT_DEPTH} levels", field=name)
        if isinstance(value, Mapping):
            for key, item in value.items():
                _check_scalar(key, path)
                stack.append((item, (*path, str(key))))
        elif isinstance(value, list | tuple):
            stack.extend((item, (*path, i)) for i, item in enumerate(value))
        else:
            _check_scalar(value, path)


def _check_scalar(value: Any, path: tuple[Any, ...]) -> None:
    name = _dotted(path) or "arguments"
    if isinstance(value, int) and not isinstance(value, bool) and not -_INT_BOUND < value < _INT_BOUND:
        raise InvalidArgument(f"{name}: integer longer than {MAX_INT_DIGITS} digits", field=name)
    if isinstance(value, str) and _SURROGATE.search(value):
        raise InvalidArgument(f"{name}: not valid Unicode (lone surrogate)", field=name)


def validate_args(model: type[M], arguments: Any) -> M:
    """Validate raw tool arguments with ``model``; any failure raises InvalidArgument naming the field."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise InvalidArgument(
            f"arguments must be a JSON object, got {type(arguments).__name__}", field="arguments"
        )
    check_argument_limits(arguments)
    try:
        return model.model_validate(dict(arguments))
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        loc = tuple(first.get("loc", ()))
        field_ = _dotted(loc) or "arguments"
        if first["type"] == "extra_forbidden":
            message = _unknown_key_message(model, loc)
        elif first["type"] == "missing":
            message = f"{field_} is required"
        else:
            message = f"{field_}: {first['msg']}"
        details = {"errors": [{"field": _dotted(e.get("loc", ())), "message": e["msg"]} for e in errors]}
        raise InvalidArgument(message, field=field_, details=details) from exc


def _unknown_key_message(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    parent = _dotted(loc[:-1])
    owner = _model_at(model, loc[:-1])
    accepted = ", ".join(owner.model_fields) if owner is not None else "?"
    if not parent:
        return f"unknown argument {_dotted(loc)!r}; accepted: {accepted}"
    return f"unsupported {parent} key {loc[-1]!r}; {parent} accepts only: {accepted}"


def _model_at(model: type[BaseModel], path: tuple[Any, ...]) -> type[BaseModel] | None:
    """The nested argument model at ``path`` (list indexes skipped), or None."""
    current: type[BaseModel] | None = model
    for part in path:
        if isinstance(part, int) or current is None:
            continue
        info = current.model_fields.get(str(part))
        current = _submodel(info.annotation) if info is not None else None
    return current


def _submodel(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _submodel(arg)
        if found is not None:
            return found
    return None


def _dotted(loc: Iterable[Any]) -> str:
    """``("filters", "tags", 2)`` → ``filters.tags[2]`` (the error's ``field``)."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def coerce_json_strings(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Parse object/array arguments some clients send as JSON text (``'["py"]'``) back into JSON."""
    props = schema.get("properties") or {}
    out = dict(arguments)
    for key, value in arguments.items():
        if not isinstance(value, str) or key not in props:
            continue
        if "string" in _schema_types(props[key], schema):
            continue
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, dict | list):
            out[key] = parsed
    return out


def _schema_types(prop: Mapping[str, Any], root: Mapping[str, Any]) -> set[str]:
    if "$ref" in prop:
        name = str(prop["$ref"]).rsplit("/", 1)[-1]
        prop = (root.get("$defs") or {}).get(name, {})
    kinds: set[str] = set()
    declared = prop.get("type")
    if isinstance(declared, str):
        kinds.add(declared)
    elif isinstance(declared, list):
        kinds.update(str(k) for k in declared)
    if "enum" in prop or "const" in prop:
        kinds.add("string")
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in prop.get(key) or ():
            kinds |= _schema_types(sub, root)
    return kinds


# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Paging:
    """Where one page sits in a ranked list: the envelope's paging fields."""

    offset: int
    limit: int
    total: int

    def to_dict(self) -> dict[str, Any]:
        """``offset, limit, total, has_more, next_offset`` (contract paging fields)."""
        has_more = self.offset + self.limit < self.total
        return {
            "offset": self.offset,
            "limit": self.limit,
            "total": self.total,
            "has_more": has_more,
            "next_offset": self.offset + self.limit if has_more else None,
        }


@dataclass(frozen=True)
class ToolResult:
    """What every tool answers before it becomes the contract-1.0 envelope.

    ``results`` for list answers, ``data`` for one object; ``paging`` on paged lists; ``extra``
    holds further top-level envelope keys (e.g. the searcher's ``search`` block).
    """

    results: list[dict[str, Any]] | None = None
    data: dict[str, Any] | None = None
    warnings: list[dict[str, str]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    paging: Paging | None = None

    def envelope(self) -> dict[str, Any]:
        """The contract-1.0 success envelope."""
        top = {**(self.paging.to_dict() if self.paging else {}), **self.extra}
        return ok(results=self.results, data=self.data, warnings=list(self.warnings), **top)


@functools.cache
def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


# -- the registry -------------------------------------------------------------------------------

#: A tool body: validated params and the server's context in, a result out.
ToolFn = Callable[[Any, C], ToolResult]


@dataclass(frozen=True)
class ImportedTool:
    """A tool body named by module and attribute, imported on its first call (a :data:`ToolFn`).

    A registry can then publish a tool (name, description, argument model: all ``tools/list``
    needs) without importing its implementation: a server's first answer pays only for the
    modules of the tools it calls. ``import_module`` caches, so only the first call imports.
    """

    module: str
    attribute: str

    def resolve(self) -> Callable[..., ToolResult]:
        """The tool body itself (importing its module if it has not been)."""
        fn: Callable[..., ToolResult] = getattr(importlib.import_module(self.module), self.attribute)
        return fn

    def __call__(self, params: Any, context: Any) -> ToolResult:
        return self.resolve()(params, context)


def tool_title(name: str) -> str:
    """The default display title of a tool: ``search_hybrid`` → ``Search hybrid``."""
    return name.replace("_", " ").capitalize()


@dataclass(frozen=True)
class ToolSpec(Generic[C]):
    """One tool: its contract (name, description, argument model, hints) and its body."""

    name: str
    fn: ToolFn[C]
    params_model: type[BaseModel]
    description: str
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    title: str | None = None

    def input_schema(self) -> dict[str, Any]:
        """JSON schema of the arguments (what MCP clients see and the manifest publishes)."""
        return copy.deepcopy(_schema_of(self.params_model))

    def annotations(self) -> ToolAnnotations:
        """MCP tool annotations (readOnlyHint, destructiveHint, idempotentHint; never open-world)."""
        from mcp_types import ToolAnnotations  # the MCP schema types only when MCP lists the tools

        return ToolAnnotations(
            title=self.title or tool_title(self.name),
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=False,
        )


class ToolRegistry(Generic[C]):
    """A server's tools in registration order, and the one error boundary that runs them."""

    def __init__(self, specs: Iterable[ToolSpec[C]] = ()):
        self.specs: dict[str, ToolSpec[C]] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: ToolSpec[C]) -> ToolSpec[C]:
        """Add a tool (a second tool of the same name is a programming error)."""
        if spec.name in self.specs:
            raise ValueError(f"duplicate tool {spec.name!r}")
        self.specs[spec.name] = spec
        return spec

    def __iter__(self) -> Iterator[ToolSpec[C]]:
        return iter(self.specs.values())

    def __len__(self) -> int:
        return len(self.specs)

    def get(self, name: str) -> ToolSpec[C]:
        """The spec of tool ``name``; an unknown name is INVALID_ARGUMENT on field ``name``."""
        spec = self.specs.get(name)
        if spec is None:
            raise InvalidArgument(
                f"unknown tool {name!r}; tools: {', '.join(sorted(self.specs))}", field="name"
            )
        return spec

    def call(self, name: str, arguments: Any, context: Callable[[], C]) -> dict[str, Any]:
        """Validate, run and answer tool ``name``'s envelope; never raises (the one catch-all boundary)."""
        try:
            spec = self.get(name)
            if isinstance(arguments, Mapping):
                arguments = coerce_json_strings(arguments, _schema_of(spec.params_model))
            params = validate_args(spec.params_model, arguments)
            return spec.fn(params, context()).envelope()
        except LocalMemoryError as exc:
            return error(exc)
        except Exception as exc:  # the edge: a bug must answer an error envelope, not kill the server
            log.exception("tool %s failed", name)
            return error(LocalMemoryError(f"{name} failed unexpectedly: {type(exc).__name__}: {exc}"))
