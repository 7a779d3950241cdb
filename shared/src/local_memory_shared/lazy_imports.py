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
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

#: The generated OpenAPI client whose package ``__init__`` imports every REST API class.
REST_CLIENT = "lance_namespace_urllib3_client"

_lock = threading.RLock()


def defer_rest_client() -> bool:
    """Register :data:`REST_CLIENT` with its ``__init__`` deferred; False when it was already imported."""
    with _lock:
        if REST_CLIENT in sys.modules:
            return False
        spec = importlib.util.find_spec(REST_CLIENT)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return False
        module = importlib.util.module_from_spec(spec)
        loader = spec.loader
        state = {"loaded": False}

        def load_now(name: str) -> Any:
            # PEP 562: called only for names the module does not have yet.
            if name.startswith("__") and name.endswith("__"):
                raise AttributeError(name)
            with _lock:
                if not state["loaded"]:
                    state["loaded"] = True
                    del module.__dict__["__getattr__"]
                    try:
                        loader.exec_module(module)
                    except BaseException:
                        sys.modules.pop(REST_CLIENT, None)
                        raise
            try:
                return module.__dict__[name]
            except KeyError:
                raise AttributeError(f"module {REST_CLIENT!r} has no attribute {name!r}") from None

        module.__dict__["__getattr__"] = load_now
        sys.modules[REST_CLIENT] = module
        return True


def rest_client_loaded() -> bool:
    """True once the REST client package's ``__init__`` has run (for tests and the import bench)."""
    module: ModuleType | None = sys.modules.get(REST_CLIENT)
    return module is not None and "__getattr__" not in module.__dict__
