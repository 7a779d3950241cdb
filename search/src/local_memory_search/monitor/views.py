"""What each monitor route answers: thin functions over the read-only tools and the catalogue.

Every method takes the request's query parameters (strings) and returns ``(http_status, body)``.
Code answers come from :func:`local_memory_search.tools.call_tool`, so the page sees exactly the
envelopes an MCP client sees; nothing here opens a store for writing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from local_memory_shared import catalog
from local_memory_shared.config import Settings
from local_memory_shared.envelope import error
from local_memory_shared.errors import InvalidArgument, LocalMemoryError

from ..api import explain_matches
from ..params import ExplainMatchParams
from . import graphview
from .params import flag as _flag

log = logging.getLogger(__name__)

SEARCH_TOOLS = {"hybrid": "search_hybrid", "keyword": "search_keyword", "semantic": "search_semantic"}
MAX_LIMIT = 50
#: Hits that get an explain breakdown (all from one ranking of the query, as ``explain_match`` gives).
MAX_EXPLAINED = 20

Answer = tuple[int, dict[str, Any]]


def _text(params: Mapping[str, str], name: str, *, required: bool = False, default: str = "") -> str:
    value = (params.get(name) or "").strip()
    if required and not value:
        raise InvalidArgument(f"{name} is required", field=name)
    return value or default


def _int(params: Mapping[str, str], name: str, default: int, lo: int, hi: int) -> int:
    raw = params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(str(raw))
    except ValueError as exc:
        raise InvalidArgument(f"{name} must be an integer", field=name) from exc
    if not lo <= value <= hi:
        raise InvalidArgument(f"{name} must be between {lo} and {hi}", field=name)
    return value


def _call(tool: str, args: dict[str, Any], settings: Settings) -> dict[str, Any]:
    from ..tools import call_tool  # the monitor is a client of the tool layer, never the reverse

    return call_tool(tool, args, settings=settings)


def _status_of(envelope: Mapping[str, Any]) -> int:
    if envelope.get("ok"):
        return 200
    code = (envelope.get("error") or {}).get("code")
    return {"INVALID_ARGUMENT": 400, "NOT_FOUND": 404, "NOT_INDEXED": 404}.get(str(code), 500)


class MonitorApi:
    """The route handlers, bound to one settings object (data root, default project)."""

    def __init__(self, settings: Settings, *, token_required: bool = False):
        self.settings = settings
        self.token_required = token_required

    # -- plumbing ---------------------------------------------------------------------------

    def _guarded(self, fn: Callable[[Mapping[str, str]], Answer], params: Mapping[str, str]) -> Answer:
        try:
            return fn(params)
        except LocalMemoryError as exc:
            return _status_of({"ok": False, "error": {"code": exc.code}}), error(exc)
        except Exception as exc:  # the edge: a bug answers an envelope, the server keeps serving
            log.exception("monitor route failed")
            return 500, error(LocalMemoryError(f"{type(exc).__name__}: {exc}"))

    def _project(self, params: Mapping[str, str]) -> str:
        chosen = _text(params, "project")
        if chosen:
            return chosen
        projects = catalog.list_projects(self.settings.data_root)
        if len(projects) == 1:
            return str(projects[0]["project_path"])
        return str(self.settings.default_project)

    def _tool(self, tool: str, args: dict[str, Any]) -> Answer:
        envelope = _call(tool, args, self.settings)
        return _status_of(envelope), envelope

    # -- code side ---------------------------------------------------------------------------

    def health(self, params: Mapping[str, str]) -> Answer:
        """The monitor itself."""
        from ..tools import TOOLS

        data = {"service": "local-memory-search monitor", "token_required": self.token_required}
        data["tools"] = sorted(TOOLS)
        return 200, {"ok": True, "data": data, "warnings": []}

    def projects(self, params: Mapping[str, str]) -> Answer:
        """Indexed projects with counts, freshness, health status and their newest job."""
        return self._guarded(self._projects, params)

    def _projects(self, params: Mapping[str, str]) -> Answer:
        rows = catalog.list_projects(self.settings.data_root)
        jobs = catalog.list_jobs(self.settings.data_root, limit=200)
        for row in rows:
            status = _call("index_status", {"project_path": row["project_path"]}, self.settings)
            data = status.get("data") or {}
            row["health"] = data.get("status") or (status.get("error") or {}).get("code")
            row["freshness"] = data.get("freshness")
            row["warnings"] = status.get("warnings", [])
            newest = next((j for j in jobs if j.project_path == row["project_path"]), None)
            row["job"] = newest.to_dict() if newest else None
        return 200, {"ok": True, "data": {"projects": rows}, "warnings": []}

    def jobs(self, params: Mapping[str, str]) -> Answer:
        """Indexing jobs, running first, with rate and ETA."""

        def run(p: Mapping[str, str]) -> Answer:
            project = _text(p, "project") or None
            limit = _int(p, "limit", 20, 1, 200)
            found = catalog.list_jobs(self.settings.data_root, project_path=project, limit=limit)
            return 200, {"ok": True, "data": {"jobs": [j.to_dict() for j in found]}, "warnings": []}

        return self._guarded(run, params)

    def search(self, params: Mapping[str, str]) -> Answer:
        """Code search; ``explain=true`` attaches each hit's ``explain_match`` breakdown."""
        return self._guarded(self._search, params)

    def _search(self, params: Mapping[str, str]) -> Answer:
        query = _text(params, "q", required=True)
        mode = _text(params, "mode", default="hybrid")
        if mode not in SEARCH_TOOLS:
            raise InvalidArgument(f"mode must be one of {', '.join(SEARCH_TOOLS)}", field="mode")
        project = self._project(params)
        args = {"project_path": project, "query": query, "limit": _int(params, "limit", 10, 1, MAX_LIMIT)}
        status, envelope = self._tool(SEARCH_TOOLS[mode], args)
        if status == 200 and _flag(params, "explain"):
            hits = (envelope.get("results") or [])[:MAX_EXPLAINED]
            explained = self._explain(project, query, [hit["chunk_id"] for hit in hits])
            for hit in hits:
                hit["explain"] = explained.get(hit["chunk_id"])
        return status, envelope

    def _explain(self, project: str, query: str, chunk_ids: list[str]) -> dict[str, Any]:
        """``explain_match`` of each hit, from one ranking of ``query`` (empty if it cannot run)."""
        if not chunk_ids:
            return {}
        try:
            params = ExplainMatchParams.model_validate(
                {"project_path": project, "query": query, "result_id": chunk_ids[0]}
            )
            data = explain_matches(params, chunk_ids, self.settings).data or {}
        except (LocalMemoryError, ValueError) as exc:  # ValueError: pydantic's validation error
            log.warning("monitor explain failed: %s", exc)
            return {}
        explained: dict[str, Any] = data.get("explanations", {})
        return explained

    def chunk(self, params: Mapping[str, str]) -> Answer:
        """One chunk's code (the page opens it when a graph node is clicked)."""

        def run(p: Mapping[str, str]) -> Answer:
            args = {"project_path": self._project(p), "chunk_id": _text(p, "id", required=True)}
            return self._tool("get_chunk", args)

        return self._guarded(run, params)

    def graph_symbol(self, params: Mapping[str, str]) -> Answer:
        """Callers and callees around a symbol, as nodes and edges for the canvas."""

        def run(p: Mapping[str, str]) -> Answer:
            args = {
                "project_path": self._project(p),
                "symbol_name": _text(p, "symbol", required=True),
                "depth": _int(p, "depth", 1, 1, 3),
            }
            callers = _call("find_callers", args, self.settings)
            callees = _call("find_callees", args, self.settings)
            if not callers.get("ok"):
                return _status_of(callers), callers
            return 200, graphview.call_graph(callers, callees)

        return self._guarded(run, params)

    def graph_imports(self, params: Mapping[str, str]) -> Answer:
        """The import graph of a file (or every file under a folder)."""

        def run(p: Mapping[str, str]) -> Answer:
            project, path = self._project(p), _text(p, "path", required=True)
            envelope = _call("get_import_graph", {"project_path": project, "file_path": path}, self.settings)
            if not envelope.get("ok"):
                return _status_of(envelope), envelope
            return 200, graphview.import_graph(envelope)

        return self._guarded(run, params)

    def doctor(self, params: Mapping[str, str]) -> Answer:
        """``doctor_index`` findings with their fixing commands."""
        return self._guarded(lambda p: self._tool("doctor_index", {"project_path": self._project(p)}), params)

    # -- memory side -------------------------------------------------------------------------

    def records(self, params: Mapping[str, str]) -> Answer:
        """Seed 000's read-only Memory listing (never increments hits)."""
        return self._guarded(lambda p: self._memory("list_records", p), params)

    def records_search(self, params: Mapping[str, str]) -> Answer:
        """Seed 000's ``GET /api/records/search``: answers ``{hits}``."""
        return self._guarded(lambda p: self._memory("search_records", p), params)

    def record(self, params: Mapping[str, str]) -> Answer:
        """One record in full, with its supersession chain and links (no hit is counted)."""
        return self._guarded(lambda p: self._memory("get_record", p), params)

    def _memory(self, name: str, params: Mapping[str, str]) -> Answer:
        from . import memoryview

        return memoryview.dispatch(name, params, self.settings)
