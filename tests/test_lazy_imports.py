"""The deferred Lance REST client: a search needs none of it, and a caller that does gets all of it.

Each check runs in a fresh interpreter (``sys.modules`` is the thing under test); the search runs
against a real index of the sample project.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from conftest import IndexedProject


def run(code: str, **env: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_real_search_never_loads_the_rest_client(indexed_sample: IndexedProject) -> None:
    got = run(
        f"""
        import json, sys
        from local_memory_search.tools import call_tool
        from local_memory_shared.lazy_imports import rest_client_loaded
        answer = call_tool("search_hybrid", {{"query": "retry the connection", "project_path": {str(indexed_sample.project)!r}}})
        print(json.dumps({{
            "ok": answer["ok"], "results": len(answer["results"]),
            "loaded": rest_client_loaded(),
            "api_modules": [m for m in sys.modules if m.startswith("lance_namespace_urllib3_client.api")],
            "urllib3": "urllib3" in sys.modules,
        }}))
        """,
        LOCAL_VECTOR_SEARCH_DATA_ROOT=str(indexed_sample.data_root),
    )
    assert got == {
        "ok": True,
        "results": got["results"],
        "loaded": False,
        "api_modules": [],
        "urllib3": False,
    }
    assert got["results"] > 0


def test_the_rest_client_still_works_for_a_caller_that_uses_it() -> None:
    got = run(
        """
        import json
        import local_memory_indexer, lancedb  # the deferral is in place, lancedb imported through it
        import lance_namespace_urllib3_client as client
        from lance_namespace_urllib3_client import ApiClient, Configuration, NamespaceApi
        from lance_namespace_urllib3_client.exceptions import ApiException
        from local_memory_shared.lazy_imports import rest_client_loaded
        api = NamespaceApi(ApiClient(Configuration(host="http://127.0.0.1:9", retries=0)))
        try:
            api.list_namespaces(id="x", delimiter=".")
            error = None
        except Exception as exc:  # nothing listens on port 9: the real urllib3 stack raised
            error = type(exc).__module__.split(".")[0]
        print(json.dumps({"loaded": rest_client_loaded(), "version": client.__version__,
                          "api": NamespaceApi.__module__, "error": error,
                          "missing": hasattr(client, "NoSuchThing")}))
        """
    )
    assert got["loaded"] is True and got["version"]
    assert got["api"] == "lance_namespace_urllib3_client.api.namespace_api"
    assert got["error"] in {"urllib3", "lance_namespace_urllib3_client"}
    assert got["missing"] is False


def test_deferring_is_a_no_op_once_the_client_was_imported() -> None:
    got = run(
        """
        import json
        import lance_namespace_urllib3_client as eager
        from local_memory_shared.lazy_imports import defer_rest_client, rest_client_loaded
        print(json.dumps({"deferred": defer_rest_client(), "loaded": rest_client_loaded(),
                          "has_api": hasattr(eager, "TableApi")}))
        """
    )
    assert got == {"deferred": False, "loaded": True, "has_api": True}
