"""The deferred Lance REST client and namespace package: a search needs none of them, and a caller
that does gets all of them.

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
        from local_memory_shared.lazy_imports import package_init_loaded, rest_client_loaded
        answer = call_tool("search_hybrid", {{"query": "retry the connection", "project_path": {str(indexed_sample.project)!r}}})
        print(json.dumps({{
            "ok": answer["ok"], "results": len(answer["results"]),
            "loaded": rest_client_loaded(),
            "api_modules": [m for m in sys.modules if m.startswith("lance_namespace_urllib3_client.api")],
            "urllib3": "urllib3" in sys.modules,
            # registered, their __init__ deferred: lancedb imported through them
            "inits_run": [n for n in ("lance_namespace", "lance_namespace_urllib3_client.models")
                          if package_init_loaded(n)],
            "registered": [n for n in ("lance_namespace", "lance_namespace_urllib3_client.models")
                           if n in sys.modules],
            # only the REST models lancedb's own modules import, not the ~200 of the models __init__
            "models": len([m for m in sys.modules if m.startswith("lance_namespace_urllib3_client.models.")]),
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
        "inits_run": [],
        "registered": ["lance_namespace", "lance_namespace_urllib3_client.models"],
        "models": got["models"],
    }
    assert got["results"] > 0 and got["models"] < 40


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


def test_lancedb_namespace_features_still_work_through_the_stand_ins(tmp_path) -> None:
    """lancedb binds names of ``lance_namespace`` at import while its ``__init__`` is deferred; a
    real namespace use (a directory namespace client, ``connect_namespace``, a response model)
    then runs the real ``__init__`` and works as with an eager import."""
    got = run(
        f"""
        import json
        import local_memory_search, lancedb, lancedb.db
        import pyarrow as pa
        from local_memory_shared.lazy_imports import package_init_loaded
        at_import = package_init_loaded("lance_namespace")
        bound = type(lancedb.db.LanceNamespace).__name__
        db = lancedb.connect({str(tmp_path / "db")!r})
        db.create_table("chunks", pa.table({{"x": [1, 2, 3]}}))
        client = db.namespace_client()  # lancedb calls its `connect` stand-in: lance's DirectoryNamespace
        import lance_namespace
        from lance_namespace import ListTablesRequest
        tables = client.list_tables(ListTablesRequest(id=[])).tables
        ns = lancedb.connect_namespace("dir", {{"root": {str(tmp_path / "db")!r}}})
        empty = lancedb.db.ListNamespacesResponse(namespaces=[])  # what lancedb's DBConnection returns
        print(json.dumps({{
            "at_import": at_import, "bound": bound, "after": package_init_loaded("lance_namespace"),
            "client": type(client).__name__,
            "isinstance": isinstance(client, lancedb.db.LanceNamespace),
            "same_class": isinstance(client, lance_namespace.LanceNamespace),
            "subclass": issubclass(type(client), lancedb.db.LanceNamespace),
            "tables": tables, "rows": ns.open_table("chunks").count_rows(),
            "response": type(empty) is lance_namespace.ListNamespacesResponse,
            "name": lancedb.db.ListNamespacesResponse.__name__,
        }}))
        """
    )
    assert got == {
        "at_import": False,
        "bound": "StandIn",
        "after": True,
        "client": "DirectoryNamespace",
        "isinstance": True,
        "same_class": True,
        "subclass": True,
        "tables": ["chunks"],
        "rows": 3,
        "response": True,
        "name": "ListNamespacesResponse",
    }


def test_only_lancedb_gets_stand_ins_everyone_else_the_real_objects() -> None:
    got = run(
        """
        import json
        import local_memory_search, lancedb
        from local_memory_shared.lazy_imports import package_init_loaded
        deferred = not package_init_loaded("lance_namespace")
        from lance_namespace import ListTablesResponse, LanceNamespace  # not lancedb: the real __init__ runs
        try:
            from lance_namespace import NoSuchThing
            missing = None
        except ImportError as exc:
            missing = type(exc).__name__
        class Mine(lancedb.db.LanceNamespace):  # subclassing lancedb's stand-in subclasses the real ABC
            pass
        print(json.dumps({
            "deferred": deferred, "loaded": package_init_loaded("lance_namespace"),
            "real": [type(ListTablesResponse).__name__, type(LanceNamespace).__name__],
            "module": ListTablesResponse.__module__, "missing": missing,
            "mine": Mine.__mro__[1] is LanceNamespace,
        }))
        """
    )
    assert got == {
        "deferred": True,
        "loaded": True,
        "real": ["ModelMetaclass", "ABCMeta"],
        "module": "lance_namespace_urllib3_client.models.list_tables_response",
        "missing": "ImportError",
        "mine": True,
    }


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


def test_a_real_search_imports_lancedb_without_override_checks_or_eager_rest_models(
    indexed_sample: IndexedProject,
) -> None:
    got = run(
        f"""
        import json, sys
        from local_memory_search.tools import call_tool
        answer = call_tool("search_hybrid", {{"query": "retry the connection", "project_path": {str(indexed_sample.project)!r}}})
        import lancedb.namespace, overrides
        from pydantic._internal._config import config_defaults
        from local_memory_shared.lazy_imports import _FINDER, package_init_loaded
        print(json.dumps({{
            "ok": answer["ok"], "results": len(answer["results"]),
            # built on first use, not at import (defer_build inside the lancedb import window only)
            "rest_model_built": lancedb.namespace.QueryTableRequest.__pydantic_complete__,
            "defer_default_after": config_defaults["defer_build"],
            # the real overrides.override is back for everyone else; lancedb's window is used up
            "override": overrides.override.__module__ + "." + overrides.override.__name__,
            "pending": sorted(_FINDER.pending),
            # MCP SDK modules whose code ran ("mcp" and "mcp.server" are registered, deferred)
            "mcp": [m for m in sys.modules if m.split(".")[0] == "mcp" and package_init_loaded(m)],
        }}))
        """,
        LOCAL_VECTOR_SEARCH_DATA_ROOT=str(indexed_sample.data_root),
    )
    assert got == {
        "ok": True,
        "results": got["results"],
        "rest_model_built": False,
        "defer_default_after": False,
        "override": "overrides.overrides.override",
        # a CLI search never imports the MCP SDK ("mcp" was found once, to defer its __init__)
        "pending": ["mcp.server.lowlevel", "mcp_types", "mcp_types.methods"],
        "mcp": [],
    }
    assert got["results"] > 0


def test_deferred_rest_models_validate_and_serialise_as_eager_ones() -> None:
    code = """
        import json, sys
        if sys.argv[-1] == "light":
            import local_memory_search  # installs the lighter lancedb import
        import lancedb
        from lance_namespace_urllib3_client.models.string_fts_query import StringFtsQuery as model
        from pydantic import ValidationError
        before = model.__pydantic_complete__
        dumped = model(query="retry", columns=["text"]).model_dump(mode="json")
        try:
            model(query=5, columns=[""])
            refused = None
        except ValidationError as exc:
            refused = [e["loc"][0] for e in exc.errors()]
        print(json.dumps({"built_at_import": before, "dumped": dumped, "refused": refused,
                          "schema": sorted(model.model_json_schema()["properties"])}))
    """
    outs = {}
    for variant in ("eager", "light"):
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), variant],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        outs[variant] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert outs["eager"]["built_at_import"] is True and outs["light"]["built_at_import"] is False
    for key in ("dumped", "refused", "schema"):
        assert outs["light"][key] == outs["eager"][key]
    assert outs["light"]["refused"] == ["columns", "query"]


def test_lightening_is_a_no_op_once_lancedb_was_imported() -> None:
    got = run(
        """
        import json, sys
        import lancedb
        from local_memory_shared.lazy_imports import _FINDER, lighten_imports
        print(json.dumps({"lightened": lighten_imports(["lancedb"]), "finder": _FINDER in sys.meta_path}))
        """
    )
    assert got == {"lightened": [], "finder": False}


def test_the_mcp_server_imports_the_sdk_models_deferred_and_they_still_validate() -> None:
    got = run(
        """
        import json, sys
        from local_memory_search.server import build_server
        import mcp_types
        server = build_server()
        untouched = mcp_types.CreateMessageRequest.__pydantic_complete__  # sampling: never used here
        import mcp_types._v2025_11_25 as wire  # the per-version wire models, imported by the low-level server
        untouched = untouched or wire.CreateMessageRequest.__pydantic_complete__
        tool = mcp_types.Tool(name="t", input_schema={"type": "object"})
        from pydantic import ValidationError
        try:
            mcp_types.Tool(name=5, input_schema={})
            refused = None
        except ValidationError as exc:
            refused = exc.errors()[0]["loc"][0]
        print(json.dumps({"untouched_built": untouched, "tool": tool.model_dump(by_alias=True)["name"],
                          "refused": refused, "sdk_in_window": "mcp.server.lowlevel" in sys.modules}))
        """
    )
    assert got == {"untouched_built": False, "tool": "t", "refused": "name", "sdk_in_window": True}


def test_the_stdio_server_answers_without_the_sdk_client_or_high_level_framework(
    indexed_sample: IndexedProject, tmp_path
) -> None:
    """A real stdio round trip (initialize, tools/list, a hybrid search) runs neither the MCP SDK's
    package ``__init__`` (the whole client side) nor ``mcp.server``'s (``MCPServer``)."""
    from mcp_harness import server_env, stdio_session

    errlog_path = tmp_path / "server.stderr"
    args = ["-X", "importtime", "-m", "local_memory_search.cli"]
    with open(errlog_path, "w") as errlog:
        with stdio_session(
            sys.executable, server_env(indexed_sample.data_root), errlog, args=args
        ) as session:
            tools = {t["name"] for t in session.list_tools()}
            answer = session.ok(
                "search_hybrid",
                {"query": "retry the connection", "project_path": str(indexed_sample.project)},
            )
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in errlog_path.read_text().splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "search_hybrid" in tools and answer["results"]
    assert {"mcp.server.lowlevel.server", "mcp.server.stdio", "mcp_types.methods"} <= imported  # the real SDK
    assert not {m for m in imported if m.startswith(("mcp.client", "mcp.server.mcpserver"))}
    # nor the SSE package's __init__ (uvicorn, click): only the HTTP transport answers with SSE
    assert not {m for m in imported if m.split(".")[0] in {"uvicorn", "click"} or m == "sse_starlette.sse"}


def test_the_http_transport_still_gets_the_real_sse_response() -> None:
    """The SDK's streamable-HTTP module binds ``EventSourceResponse`` while ``sse_starlette``'s
    ``__init__`` is deferred; calling it (as every POST answered over SSE does) makes the real one."""
    got = run(
        """
        import json
        import local_memory_search
        from local_memory_shared.lazy_imports import package_init_loaded
        import mcp.server.streamable_http as transport
        bound = type(transport.EventSourceResponse).__name__
        before = package_init_loaded("sse_starlette")

        async def events():
            yield {"data": "x"}

        response = transport.EventSourceResponse(content=events())
        import sse_starlette
        print(json.dumps({"bound": bound, "before": before, "after": package_init_loaded("sse_starlette"),
                          "real": type(response) is sse_starlette.EventSourceResponse,
                          "media_type": response.media_type}))
        """
    )
    assert got == {
        "bound": "StandIn",
        "before": False,
        "after": True,
        "real": True,
        "media_type": "text/event-stream",
    }


def test_a_deferred_sdk_package_runs_its_real_init_for_a_caller_that_uses_it() -> None:
    got = run(
        """
        import json, sys
        import local_memory_search  # defers mcp's and mcp.server's __init__
        from local_memory_shared.lazy_imports import package_init_loaded
        from mcp.server.lowlevel import Server
        before = [package_init_loaded("mcp"), package_init_loaded("mcp.server")]
        from mcp import ClientSession  # the real mcp/__init__ runs here
        from mcp.server import MCPServer, Server as Reexported
        print(json.dumps({"before": before, "after": [package_init_loaded("mcp"), package_init_loaded("mcp.server")],
                          "client": ClientSession.__module__, "same_server": Reexported is Server,
                          "framework": MCPServer.__module__}))
        """
    )
    assert got == {
        "before": [False, False],
        "after": [True, True],
        "client": "mcp.client.session",
        "same_server": True,
        "framework": "mcp.server.mcpserver.server",
    }


def test_an_index_run_imports_neither_the_mcp_sdk_nor_the_memory_writer(tmp_path) -> None:
    """`local-memory-indexer index` (the CLI's main job, a no-change run above all) pays for neither
    the MCP server stack (only `serve` needs it) nor the memory writer (only `memory …` needs it)."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    got = run(
        f"""
        import contextlib, io, json, sys
        from local_memory_indexer.cli import main
        from local_memory_shared.lazy_imports import package_init_loaded
        with contextlib.redirect_stdout(io.StringIO()):
            rc = main(["index", {str(project)!r}, "--json"])
        print(json.dumps({{
            "rc": rc,
            # MCP SDK modules whose code ran ("mcp" and "mcp.server" are registered, deferred)
            "mcp": sorted(m for m in sys.modules if m.split(".")[0] == "mcp" and package_init_loaded(m)),
            "memory_writer": [m for m in ("local_memory_indexer.memory.writer", "local_memory_indexer.memory.sync",
                                          "local_memory_indexer.memory.hits") if m in sys.modules],
        }}))
        """,
        LOCAL_VECTOR_SEARCH_DATA_ROOT=str(tmp_path / "data"),
    )
    assert got == {"rc": 0, "mcp": [], "memory_writer": []}


def test_a_no_change_index_run_never_creates_the_onnx_session(tmp_path) -> None:
    """A re-index with nothing to embed learns the model's dimension from its config.json: it neither
    creates the ONNX session (0.3-0.4 s, ~100 MB) nor imports onnxruntime; a run that embeds does."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    code = f"""
        import contextlib, io, json, sys
        from local_memory_indexer.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(["index", {str(project)!r}, "--json"])
        data = json.loads(out.getvalue())["data"]
        print(json.dumps({{"rc": rc, "parsed": data["files_parsed"], "dimension": data["dimension"],
                          "onnxruntime": "onnxruntime" in sys.modules}}))
        """
    data_root = str(tmp_path / "data")
    first = run(code, LOCAL_VECTOR_SEARCH_DATA_ROOT=data_root)
    assert first == {"rc": 0, "parsed": 1, "dimension": 384, "onnxruntime": True}
    again = run(code, LOCAL_VECTOR_SEARCH_DATA_ROOT=data_root)
    assert again == {"rc": 0, "parsed": 0, "dimension": 384, "onnxruntime": False}


def test_no_lazy_imports_lock_is_held_while_the_import_lock_is_taken() -> None:
    """The import system calls our meta-path finder with its global import lock held, and the
    finder takes ``lazy_imports._lock``; so deferring a package or running its deferred
    ``__init__`` must never take the import lock while holding ``_lock`` (two threads would
    deadlock: seen with a search server's warm-up thread beside another importer). Every
    acquisition of the import lock is checked here, through a deferred package whose ``__init__``
    imports a submodule (``sqlite3`` → ``sqlite3.dbapi2``)."""
    got = run(
        """
        import json, sys, traceback
        import importlib._bootstrap as bootstrap
        import _imp
        from local_memory_shared import lazy_imports

        fresh = "sqlite3" not in sys.modules
        held = []

        class Checked:  # the import machinery's _imp, checking who holds our lock as it locks
            def __getattr__(self, name):
                return getattr(_imp, name)

            def acquire_lock(self):
                if lazy_imports._lock._is_owned():
                    held.append(traceback.format_stack(limit=8)[-4])
                return _imp.acquire_lock()

        bootstrap._imp = Checked()
        try:
            deferred = lazy_imports.defer_package_init("sqlite3")
            import sqlite3
            answer = sqlite3.connect(":memory:").execute("select 41 + 1").fetchone()[0]
            lazy_imports.lighten_imports()
            import sqlite3.dump
        finally:
            bootstrap._imp = _imp
        print(json.dumps({"fresh": fresh, "deferred": deferred, "answer": answer, "held": held}))
        """
    )
    assert got == {"fresh": True, "deferred": True, "answer": 42, "held": []}
