"""The monitor's HTTP layer: routes, bearer auth on ``/api/*``, and DNS-rebinding protection.

Routes (all ``GET``, JSON unless noted; the answers of tool-backed routes are the tools' own
contract-1.0 envelopes):

``/``                         the page (HTML; its assets under ``/static/``, no CDN)
``/api/health``               the monitor itself: version, whether a token is required
``/api/projects``             indexed projects with counts, freshness, health and the newest job
``/api/jobs``                 indexing jobs (``project``), running first, with rate and ETA
``/api/search``               code search (``project``, ``q``, ``mode``, ``limit``, ``explain``)
``/api/chunk``                one chunk (``project``, ``id``)
``/api/graph/symbol``         callers and callees around a symbol (``project``, ``symbol``, ``depth``)
``/api/graph/imports``        the import graph of a file or folder (``project``, ``path``)
``/api/doctor``               ``doctor_index`` findings (``project``)
``/api/records``              seed 000's memory listing
``/api/records/search``       seed 000's memory search, answers ``{hits}``
``/api/records/{uid}``        one memory record with its supersession chain and links
"""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
from pathlib import Path
from typing import Any

from local_memory_shared.config import Settings, load_settings
from local_memory_shared.contract import FORBIDDEN_HOST, MONITOR_HTTP_PORT, TOKEN_ENV, UNAUTHORIZED
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from . import views

log = logging.getLogger(__name__)

DEFAULT_PORT = MONITOR_HTTP_PORT
STATIC_DIR = Path(__file__).with_name("static")
LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "127.0.0.1", "::1"})


def _host_is_loopback(host_header: str) -> bool:
    """True when a ``Host`` header names the loopback interface (with or without a port)."""
    host = host_header.strip().lower()
    if host.startswith("["):  # [::1]:3124
        host = host[1 : host.find("]")] if "]" in host else host
    elif host.count(":") == 1:
        host = host.rsplit(":", 1)[0]
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class GuardMiddleware:
    """Rejects a non-loopback ``Host`` (DNS rebinding) and checks the bearer token on ``/api/*``."""

    def __init__(self, app: ASGIApp, token: str | None):
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not _host_is_loopback(headers.get("host", "")):
            await _deny(scope, receive, send, 403, FORBIDDEN_HOST, "Host must be the loopback address")
            return
        if self.token and scope.get("path", "").startswith("/api/") and not self._authorized(headers):
            await _deny(scope, receive, send, 401, UNAUTHORIZED, "missing or wrong bearer token")
            return
        await self.app(scope, receive, send)

    def _authorized(self, headers: dict[str, str]) -> bool:
        scheme, _, value = headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and secrets.compare_digest(value.strip(), self.token or "")


async def _deny(scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str) -> None:
    body = {"ok": False, "error": {"code": code, "message": message, "field": None}, "warnings": []}
    await JSONResponse(body, status_code=status)(scope, receive, send)


def create_app(settings: Settings | None = None, *, token: str | None = None) -> Starlette:
    """The monitor's ASGI app; ``token`` (or ``LOCAL_MEMORY_HTTP_TOKEN``) guards every ``/api/*`` route."""
    token = token if token is not None else os.environ.get(TOKEN_ENV) or None
    api = views.MonitorApi(settings or load_settings(), token_required=bool(token))

    def route(path: str, fn: Any) -> Route:
        async def endpoint(request: Request) -> Response:
            status, body = await _run(fn, request)
            return JSONResponse(body, status_code=status)

        return Route(path, endpoint, methods=["GET"])

    routes = [
        Route("/", lambda request: FileResponse(STATIC_DIR / "index.html"), methods=["GET"]),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
        route("/api/health", api.health),
        route("/api/projects", api.projects),
        route("/api/jobs", api.jobs),
        route("/api/search", api.search),
        route("/api/chunk", api.chunk),
        route("/api/graph/symbol", api.graph_symbol),
        route("/api/graph/imports", api.graph_imports),
        route("/api/doctor", api.doctor),
        route("/api/records/search", api.records_search),
        route("/api/records/{uid}", api.record),
        route("/api/records", api.records),
    ]
    return Starlette(routes=routes, middleware=[Middleware(GuardMiddleware, token=token)])


async def _run(fn: Any, request: Request) -> tuple[int, dict[str, Any]]:
    from starlette.concurrency import run_in_threadpool

    params = dict(request.query_params)
    params.update(request.path_params)
    return await run_in_threadpool(fn, params)


def serve(*, port: int = DEFAULT_PORT, token: str | None = None, settings: Settings | None = None) -> None:
    """Serve the monitor on 127.0.0.1:``port`` until interrupted (logs go to stderr)."""
    import uvicorn

    app = create_app(settings, token=token)
    log.info("status monitor on http://127.0.0.1:%d/", port)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
