"""MCP server ``local-memory-search``: one read-only MCP tool per entry of the tool registry.

Built generically from :data:`local_memory_search.tools.REGISTRY`, so a tool registered there
appears here (schema from its pydantic model, ``readOnlyHint`` true) with no change to this
file. Each call goes through the registry's one boundary, which validates, runs and answers the
contract-1.0 envelope. There is deliberately no delete tool on this server.
"""

from __future__ import annotations

import logging
import sys
import threading
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from typing import Any

from local_memory_shared.config import load_settings
from local_memory_shared.contract import SEARCH_HTTP_PORT, SEARCH_SERVER
from local_memory_shared.heap import FullCollectionFreeze, IdleTrim, LibraryPageout, settle_gc
from local_memory_shared.mcp_adapter import build_mcp_server, run_server, transport_args
from mcp.server.lowlevel import Server

log = logging.getLogger(__name__)

#: Freezes what survives a full collection, so the next one walks only what is new (heap.py).
GC_FREEZE = FullCollectionFreeze()
#: Hands the heap's free pages back to the OS once the server has been idle a moment (heap.py),
#: after the collector's sweep of what was frozen, when enough was.
IDLE_TRIM = IdleTrim(before_trim=GC_FREEZE.idle_sweep)
#: Hands back the library pages only start-up touched, once the first call has ended (heap.py).
LIBRARY_PAGEOUT = LibraryPageout()

SERVER_NAME = SEARCH_SERVER
INSTRUCTIONS = (
    "Read-only code memory over projects indexed by local-memory-indexer. Start with health_check and "
    "index_status; search with search_hybrid (or search_keyword for exact identifiers, search_semantic for "
    "concepts); open hits with get_chunk / read_chunk_neighbors; map code with find_callers, find_callees, "
    "trace_path, get_import_graph; build prompts with retrieve_context_pack. Every answer is an envelope "
    "{ok, results|data, warnings[]}; degradations are warnings, never errors."
)


def server_version() -> str:
    """Installed version of this distribution."""
    try:
        return dist_version("local-memory-search")
    except PackageNotFoundError:
        return "0.0.0"


def build_server() -> Server[Any]:
    """The search MCP server (used by ``main`` and by in-process tests)."""
    from .tools import REGISTRY

    return build_mcp_server(
        SERVER_NAME,
        server_version(),
        INSTRUCTIONS,
        REGISTRY,
        load_settings,
        after_call=after_call,
        before_call=WARM_UP.wait,
    )


def after_call() -> None:
    """What the server runs after every tool call: the freeze of a full collection's survivors,
    the idle heap trim's countdown, and the one release of library pages after the first call
    (``LOCAL_MEMORY_RELEASE_LIBRARY_PAGES``)."""
    GC_FREEZE.after_call()
    IDLE_TRIM.touch()
    LIBRARY_PAGEOUT.touch()


def main(http: bool = False, port: int = SEARCH_HTTP_PORT, token: str | None = None) -> None:
    """Run ``local-memory-search``: stdio by default, streamable HTTP on 127.0.0.1 with ``http=True``."""
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
        )
    server = build_server()
    from .store import STATE_POOL

    # This process never writes a state DB, so its read-only connections may outlive a call.
    STATE_POOL.enable()
    settle_gc()  # start-up imports done: freeze them and resume the collector (after cli's pause_gc)
    WARM_UP.start()
    run_server(server, http=http, port=port, token=token)


class StackWarmup:
    """LanceDB's import on the ``lancedb-warm`` thread, and the gate every tool call passes first.

    Two threads importing one package must not interleave: while the warm-up imports ``lancedb``,
    a tool module that runs ``from lancedb.query import …`` on a worker thread takes the
    submodule's import lock and waits for the package's, the warm-up holds the package's and waits
    for the submodule's, and Python breaks that deadlock by handing one of them the partially
    initialised module (``ImportError: cannot import name … from partially initialized module
    'lancedb.query'``, seen in CI). So a call waits until the warm-up has ended: it would pay for the
    same import anyway, and it waits only for the part not yet done.
    """

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the warm-up thread (once per process)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=warm_search_stack, name="lancedb-warm", daemon=True)
                self._thread.start()

    def wait(self) -> None:
        """Return once the warm-up has ended (at once when it never started or has ended)."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()


#: The search server's one warm-up (``main`` starts it; every tool call waits for it first).
WARM_UP = StackWarmup()


def warm_search_stack() -> None:
    """Import LanceDB and create the process's read-only session (``readonly.lance_session``).

    The server runs it on a thread once it is built: the import (~0.15 s of CPU, the largest part
    of a first search's own cost) then overlaps the client's handshake (``initialize``,
    ``tools/list``) instead of following it. Every tool call waits for it first (``StackWarmup``);
    a failure here is left for the first search to report.
    """
    try:
        from .readonly import lance_session

        lance_session()
    except Exception:
        log.debug("LanceDB warm-up failed; the first search imports it", exc_info=True)


if __name__ == "__main__":
    _http, _port, _token = transport_args("python -m local_memory_search.server", SEARCH_HTTP_PORT)
    main(http=_http, port=_port, token=_token)
