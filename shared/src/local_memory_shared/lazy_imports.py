"""Keep ``import lancedb`` from paying for the Lance REST namespace client we never call.

``lancedb`` imports ``lance_namespace``, which imports request/response *models* from
``lance_namespace_urllib3_client.models``. Importing that submodule first runs the client
package's ``__init__``, which eagerly imports every REST API class, ``urllib3`` and the HTTP
configuration: about 70% of ``import lancedb`` (0.5–0.8 s of a fresh search process), for a
client that only a ``rest://`` namespace connection uses. Local Memory opens local folders only.

:func:`defer_rest_client` registers the client package in ``sys.modules`` *without* running its
``__init__``: its ``__path__`` and spec are real, so ``lance_namespace_urllib3_client.models``
and every other submodule import normally, as files. The first access to anything the
``__init__`` itself defines (``ApiClient``, ``TableApi``, ``Configuration``, ...) runs the real
``__init__`` in place and answers from it, so a caller that does use the REST client still gets
exactly the package it would have imported. Nothing is patched in ``lancedb`` or ``lance``.

:func:`lighten_imports` takes more costs out of the *one* ``import lancedb`` statement (about
0.12 s of CPU, a third of what is left of it) and out of ``import mcp``, and only for the duration
of that import (a one-shot meta-path finder wraps the package's real loader; nothing is copied):

* On Python < 3.12 ``lancedb`` decorates about a hundred methods with ``overrides.override``,
  which disassembles the calling frame's bytecode to find and check the base class of each (on
  3.12+ it uses :func:`typing.override`, which only sets ``__override__``). While ``lancedb``'s
  package imports, ``overrides.override`` is that 3.12 behaviour; the real function is restored
  right after, so any other user of ``overrides`` gets its checks.
* The ~150 pydantic request/response models of the REST namespace client (re-exported by
  ``lance_namespace``) and LanceDB's own pydantic classes are created with pydantic's documented
  ``defer_build``: their validators are built on first use instead of at import. A model behaves
  the same either way; only a ``rest://`` connection or an embedding-function registry ever uses
  one. Models created after the import window build eagerly as usual. The MCP SDK's ~550
  message models (``mcp``, ``mcp_types``) are deferred the same way: a server builds the few
  it validates, on the first message that needs them.

:data:`DEFERRED_INITS` goes further for LanceDB: ``lance_namespace`` (the namespace interface,
whose ``__init__`` re-exports ~200 REST models) and the REST client's ``models`` package (whose
``__init__`` imports every one of them) are deferred too, about a third of ``import lancedb``.
``lancedb`` binds nine names of ``lance_namespace`` at import (``from lance_namespace import
LanceNamespace, connect, ListTablesResponse, ...``, :data:`STAND_INS`) and uses them only in
annotations and in namespace/REST calls: a module of ``lancedb`` that imports one of them while
the ``__init__`` is still deferred gets a :class:`StandIn`, which loads the real package and
forwards to the real object on first real use (call, attribute, ``isinstance``, subclassing).
Any other importer, or any other name, runs the real ``__init__`` and gets the real object. The
MCP SDK's streamable-HTTP module gets one the same way from ``sse_starlette`` (whose ``__init__``
imports uvicorn and click), so a stdio server imports neither.

Both steps are skipped when the library does not look as expected (the import is then simply
as slow as before), and neither runs if ``lancedb`` was already imported.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from types import FrameType, ModuleType
from typing import Any

#: The generated OpenAPI client whose package ``__init__`` imports every REST API class.
REST_CLIENT = "lance_namespace_urllib3_client"
#: Its models package, whose ``__init__`` imports all ~200 request/response models.
REST_MODELS = REST_CLIENT + ".models"
#: The namespace interface package; its ``__init__`` re-exports every REST model.
NAMESPACE = "lance_namespace"
#: Server-sent events for Starlette: the MCP SDK's streamable-HTTP transport uses it.
SSE = "sse_starlette"

#: Guards this module's own bookkeeping (pending names, stand-ins, the pydantic default). A leaf
#: lock: nothing holding it imports, finds a spec or runs a package ``__init__``. The import
#: system calls ``_LighterImportFinder.find_spec`` while holding its global import lock, and that
#: takes this lock; so holding this lock while taking the import lock (``find_spec``, an import)
#: would deadlock two threads (seen: a search server's warm-up thread against another importer).
_lock = threading.RLock()


#: Package ``__init__`` files a search or indexer process never needs to run, registered with
#: :func:`defer_package_init` by :func:`defer_package_inits`: the REST client's, its models' and
#: ``lance_namespace``'s (above; lancedb imports their submodules and, as :class:`StandIn`
#: objects, the few names it binds from ``lance_namespace``, see :data:`STAND_INS`); the MCP
#: SDK's top-level one, which imports the whole *client* side (sessions, stdio/HTTP/WebSocket
#: transports, httpx) for a process that only serves; and ``mcp.server``'s, which imports the
#: high-level ``MCPServer`` framework (resources, prompts, templates) beside the low-level
#: ``Server`` we use. A server imports ``mcp.server.lowlevel`` and ``mcp.server.stdio`` directly;
#: ``from mcp import ClientSession`` anywhere still runs the real ``__init__`` first. Last,
#: ``sse_starlette``'s, which imports uvicorn and click (~0.09 s of a stdio server's start) for the
#: SDK's streamable-HTTP transport, which binds one name from it (a :class:`StandIn`).
DEFERRED_INITS = (REST_CLIENT, REST_MODELS, NAMESPACE, "mcp", "mcp.server", SSE)


@dataclass(frozen=True)
class StandInRule:
    """Names of a deferred package's ``__init__`` that modules of ``importers`` get as :class:`StandIn`."""

    names: frozenset[str]
    #: Importing packages (each with its submodules) or modules.
    importers: tuple[str, ...]


#: Per deferred package: the names its importers bind at import time but use only later
#: (annotations, calls), which they get as :class:`StandIn` objects instead of running the
#: ``__init__``. A name missing here costs time, never correctness.
STAND_INS: dict[str, StandInRule] = {
    # lancedb 0.30 (``db``, ``namespace``, ``remote.db``): annotations and namespace/REST calls.
    NAMESPACE: StandInRule(
        frozenset(
            {
                "LanceNamespace",
                "connect",
                "CreateNamespaceResponse",
                "DescribeNamespaceResponse",
                "DropNamespaceResponse",
                "ListNamespacesResponse",
                "ListTablesResponse",
                "NamespaceExistsRequest",
                "TableExistsRequest",
            }
        ),
        ("lancedb",),
    ),
    # The SDK's streamable-HTTP transport answers SSE with it (a call, HTTP only); the package
    # __init__ imports uvicorn and click, which a stdio server never needs.
    SSE: StandInRule(frozenset({"EventSourceResponse"}), ("mcp.server.streamable_http",)),
}

#: Frames of the import machinery between an importing module and a package's ``__getattr__``.
_IMPORT_MACHINERY = ("importlib._bootstrap", "importlib._bootstrap_external")


class StandIn:
    """Placeholder for ``name`` of the deferred package ``package``: the real object, on first real use.

    Calling it, reading an attribute, ``isinstance``/``issubclass`` against it, or subclassing it
    runs the package's real ``__init__`` (once) and forwards to the real object. Only its identity
    differs (``StandIn is not the real class``), which the importers listed in
    :data:`STAND_INS` never test.
    """

    __slots__ = ("_package", "_name")

    def __init__(self, package: str, name: str) -> None:
        self._package = package
        self._name = name

    def resolve(self) -> Any:
        """The real object (running the package's deferred ``__init__`` first if it has not run)."""
        return getattr(importlib.import_module(self._package), self._name)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.resolve(), attribute)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __instancecheck__(self, instance: Any) -> bool:
        return isinstance(instance, self.resolve())

    def __subclasscheck__(self, subclass: Any) -> bool:
        return issubclass(subclass, self.resolve())

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[Any, ...]:
        return (self.resolve(),)

    def __or__(self, other: Any) -> Any:
        return self.resolve() | other

    def __ror__(self, other: Any) -> Any:
        return other | self.resolve()

    def __repr__(self) -> str:
        return f"<StandIn for {self._package}.{self._name}>"


_stand_ins: dict[tuple[str, str], StandIn] = {}


def _stand_in_for(package: str, attribute: str) -> StandIn | None:
    """A :class:`StandIn` when ``attribute`` is in :data:`STAND_INS` and the importer may get one.

    The importer is the first frame above ``__getattr__`` outside the import machinery: the module
    executing ``from package import attribute`` (directly, or through ``_handle_fromlist``).
    """
    rule = STAND_INS.get(package)
    if rule is None or attribute not in rule.names:
        return None
    frame: FrameType | None = sys._getframe(2)  # 0: here, 1: the package's __getattr__
    while frame is not None and frame.f_globals.get("__name__") in _IMPORT_MACHINERY:
        frame = frame.f_back
    importer = "" if frame is None else str(frame.f_globals.get("__name__", ""))
    if not any(importer == p or importer.startswith(p + ".") for p in rule.importers):
        return None
    with _lock:
        return _stand_ins.setdefault((package, attribute), StandIn(package, attribute))


def defer_package_init(name: str) -> bool:
    """Register package ``name`` with its ``__init__`` deferred; False when it was already imported.

    The module's ``__path__`` and spec are real, so its submodules import normally, as files. The
    first access to anything the ``__init__`` itself defines runs the real ``__init__`` in place
    and answers from it (PEP 562 ``__getattr__``), so such a caller gets exactly the package it
    would have imported. A dotted ``name`` needs its parent importable (or itself deferred) first.
    """
    if name in sys.modules:
        return False
    # Outside ``_lock``: finding the spec takes the import lock (and imports a dotted name's parent).
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return False
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    state = {"loaded": False}
    #: Runs the real ``__init__`` once; held while it imports, so it is this package's alone.
    init_lock = threading.RLock()

    def load_now(attribute: str) -> Any:
        # PEP 562: called only for names the module does not have yet.
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        if not state["loaded"]:
            stand_in = _stand_in_for(name, attribute)
            if stand_in is not None:
                return stand_in
        with init_lock:
            if not state["loaded"]:
                state["loaded"] = True
                del module.__dict__["__getattr__"]
                try:
                    loader.exec_module(module)
                except BaseException:
                    sys.modules.pop(name, None)
                    raise
        try:
            return module.__dict__[attribute]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None

    module.__dict__["__getattr__"] = load_now
    with _lock:
        if name in sys.modules:  # another thread imported or deferred it meanwhile
            return False
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent and parent in sys.modules:  # as the import system binds a submodule on its package
            setattr(sys.modules[parent], child, module)
    return True


def defer_package_inits(names: Iterable[str] = DEFERRED_INITS) -> list[str]:
    """:func:`defer_package_init` for each of ``names`` in order; answers those deferred now."""
    return [name for name in names if defer_package_init(name)]


def defer_rest_client() -> bool:
    """Register :data:`REST_CLIENT` with its ``__init__`` deferred; False when it was already imported."""
    return defer_package_init(REST_CLIENT)


def package_init_loaded(name: str) -> bool:
    """True once package ``name``'s ``__init__`` has run (False: not imported, or still deferred)."""
    module: ModuleType | None = sys.modules.get(name)
    return module is not None and "__getattr__" not in module.__dict__


def rest_client_loaded() -> bool:
    """True once the REST client package's ``__init__`` has run (for tests and the import bench)."""
    return package_init_loaded(REST_CLIENT)


#: The package whose import :func:`lighten_lancedb_import` makes cheaper.
LANCEDB = "lancedb"


@contextmanager
def _plain_overrides() -> Iterator[None]:
    """``overrides.override`` as Python 3.12's ``typing.override`` (mark, do not check) inside the block."""
    if sys.version_info >= (3, 12):  # lancedb uses typing.override there: nothing to do
        yield
        return
    try:
        import overrides
    except ImportError:
        yield
        return
    real = overrides.override

    def mark_only(method: Any = None, **_options: Any) -> Any:
        if method is None:  # @override(check_signature=...) form
            return mark_only
        try:
            method.__override__ = True
        except (AttributeError, TypeError):
            pass
        return method

    overrides.override = mark_only
    try:
        yield
    finally:
        overrides.override = real


_defer_depth = 0


@contextmanager
def _deferred_pydantic_builds() -> Iterator[None]:
    """Pydantic models created inside the block default to ``defer_build=True`` (re-entrant)."""
    global _defer_depth
    try:
        from pydantic._internal import _config
    except ImportError:
        yield
        return
    defaults = getattr(_config, "config_defaults", None)
    if not isinstance(defaults, dict) or "defer_build" not in defaults:
        yield
        return
    with _lock:
        if _defer_depth == 0 and defaults["defer_build"] is not False:  # someone else's setting: leave it
            owner = False
        else:
            owner = True
            _defer_depth += 1
            defaults["defer_build"] = True
    try:
        yield
    finally:
        if owner:
            with _lock:
                _defer_depth -= 1
                if _defer_depth == 0:
                    defaults["defer_build"] = False


#: Packages whose own import runs lighter: lancedb without the override checks and eager
#: pydantic builds; the MCP SDK (``mcp``, ``mcp_types``: ~550 pydantic message models) without
#: eager pydantic builds.
LIGHTER_IMPORTS: dict[str, tuple[Callable[[], AbstractContextManager[None]], ...]] = {
    LANCEDB: (_plain_overrides, _deferred_pydantic_builds),
    "mcp": (_deferred_pydantic_builds,),
    "mcp_types": (_deferred_pydantic_builds,),
    # With the two package __init__s above deferred, a server's SDK import is these two: the
    # low-level server (auth, HTTP and session models) and the per-version wire models (~1,000).
    "mcp.server.lowlevel": (_deferred_pydantic_builds,),
    "mcp_types.methods": (_deferred_pydantic_builds,),
}


class _LighterImportFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the real loader of a :data:`LIGHTER_IMPORTS` package (once each)."""

    def __init__(self) -> None:
        self.pending: set[str] = set()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        with _lock:
            if fullname not in self.pending:
                return None
            self.pending.discard(fullname)
            if not self.pending and self in sys.meta_path:
                sys.meta_path.remove(self)
        spec = _find_elsewhere(self, fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real_exec: Callable[[ModuleType], None] = spec.loader.exec_module
        windows = LIGHTER_IMPORTS[fullname]

        def exec_module(module: ModuleType) -> None:
            with ExitStack() as stack:
                for window in windows:
                    stack.enter_context(window())
                real_exec(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]  # this one loader object
        return spec


def _find_elsewhere(
    me: importlib.abc.MetaPathFinder, fullname: str, path: Sequence[str] | None
) -> importlib.machinery.ModuleSpec | None:
    """The spec the rest of ``sys.meta_path`` finds for ``fullname`` (``path``: its package's ``__path__``)."""
    for finder in list(sys.meta_path):
        if finder is me or not hasattr(finder, "find_spec"):
            continue
        spec = finder.find_spec(fullname, path)
        if spec is not None:
            return spec
    return None


_FINDER = _LighterImportFinder()


def lighten_imports(names: Iterable[str] = tuple(LIGHTER_IMPORTS)) -> list[str]:
    """Make the coming imports of ``names`` (keys of :data:`LIGHTER_IMPORTS`) lighter; idempotent.

    Answers the names that will be lightened (those not imported yet).
    """
    with _lock:
        todo = [name for name in names if name in LIGHTER_IMPORTS and name not in sys.modules]
        _FINDER.pending.update(todo)
        if _FINDER.pending and _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)
        return todo
