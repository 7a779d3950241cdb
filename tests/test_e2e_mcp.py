"""End to end through real MCP client sessions: both servers as stdio subprocesses, one data root.

The indexer server indexes a small real project (``start_indexing``, polled with
``indexing_status``); then the search server walks seed 003's demo journey, one test per tool
in the journey's order, each asserting real content. A tool joins the walk as soon as it is in
the search registry: ``JOURNEY`` holds an assertion block for every seed-003 tool, and a
registry tool without one fails ``test_every_registered_tool_has_a_journey_check``.

Later tests change the project, re-index through the indexer and check the *same* search
session sees the new content (no restart), and that a search during indexing answers from the
last published state. Ollama (the re-ranker) cannot run here: a loopback fake speaks its API.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama, last_user_text
from local_memory_search.tools import TOOLS as REGISTRY
from mcp_harness import INDEXER_CMD, SEARCH_CMD, SyncSession, server_env, stdio_session, write_project

FILES = {
    "src/database/connection.py": '''
        """Database connections: open, retry on failure, and report errors."""
        import logging
        import time

        from src.database.errors import DatabaseError

        log = logging.getLogger(__name__)


        class ConnectionPool:
            """A small pool of open database connections."""

            def __init__(self, url, size=4):
                self.url = url
                self.size = size
                self.connections = []

            def acquire(self):
                """Hand out a connection, opening a new one when the pool is empty."""
                if not self.connections:
                    return connect(self.url)
                return self.connections.pop()


        def connect(url, retries=3, backoff=0.5):
            """Open a database connection, retrying with exponential backoff on connection errors."""
            for attempt in range(retries):
                try:
                    return open_socket(url)
                except OSError as exc:
                    log.warning("connect attempt %d to %s failed: %s", attempt, url, exc)
                    time.sleep(backoff * 2 ** attempt)
            raise DatabaseError(f"could not connect to {url} after {retries} attempts")


        def open_socket(url):
            """The raw transport; raises OSError when the server is unreachable."""
            return {"url": url, "open": True}
        ''',
    "src/database/errors.py": '''
        class DatabaseError(Exception):
            """Raised when the database cannot be reached or a query fails."""


        def handle_database_error(exc):
            """Turn a database error into a user-facing message."""
            return f"database unavailable: {exc}"
        ''',
    "src/database/schema.py": '''
        from src.database.connection import connect


        def initialize_database(url):
            """initializeDatabase: create the tables on a fresh database."""
            conn = connect(url)
            create_tables(conn)
            return conn


        def create_tables(conn):
            conn["tables"] = ["users", "orders"]
        ''',
    "src/app/main.py": '''
        from src.database.errors import DatabaseError, handle_database_error
        from src.database.schema import initialize_database


        def main():
            """Start the application: set up the database, then serve."""
            try:
                conn = initialize_database("postgres://localhost/app")
            except DatabaseError as exc:
                print(handle_database_error(exc))
                return 1
            return serve(conn)


        def serve(conn):
            return 0
        ''',
    "web/db.ts": """
        export interface DbConfig { url: string; retries: number }

        export async function initializeDatabase(config: DbConfig): Promise<Client> {
          const client = await connectWithRetry(config.url, config.retries);
          await client.query("CREATE TABLE IF NOT EXISTS users (id int)");
          return client;
        }

        export async function connectWithRetry(url: string, retries: number): Promise<Client> {
          for (let attempt = 0; attempt < retries; attempt++) {
            try {
              return await Client.open(url);
            } catch (err) {
              await sleep(2 ** attempt * 100);
            }
          }
          throw new Error(`could not connect to ${url}`);
        }
        """,
    "README.md": """
        # Demo shop

        A tiny shop backend used by the end-to-end tests.

        ## Database

        Connections are retried with exponential backoff; see `connect`.
        """,
}

HYBRID_QUERY = "database connection retry logic"
SEMANTIC_QUERY = "how do we handle database connections and errors?"
#: The fake re-ranker reverses the retrieval order, puts first the last candidate from a file
#: other than the retrieval leader's, and notes that file, so a pack led by it (instead of the
#: retrieval leader) proves the LLM's ranking was applied.
RERANK_PICKS: list[str] = []


def _rerank_reply(body: dict[str, Any]) -> str:
    ids = [(int(n), label) for n, label in re.findall(r"^\[(\d+)\] (.+)$", last_user_text(body), flags=re.M)]
    leader = min(ids)[1].split(" — ")[0]
    ordered = sorted(ids, key=lambda item: -item[0])
    pick = next(item for item in ordered if item[1].split(" — ")[0] != leader)
    ordered = [pick, *(item for item in ordered if item != pick)]
    RERANK_PICKS.append(pick[1].split(" — ")[0])
    return json.dumps({"ranking": [n for n, _ in ordered]})


# -- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="module")
def project(workspace) -> Path:
    return write_project(workspace / "shop", FILES).resolve()


@pytest.fixture(scope="module")
def fake_ollama():
    with FakeOllama(reply=_rerank_reply) as fake:
        yield fake


@pytest.fixture(scope="module")
def indexer(workspace) -> SyncSession:
    with open(workspace / "indexer.stderr", "w") as errlog:
        with stdio_session(INDEXER_CMD, server_env(workspace / "data"), errlog) as session:
            yield session


@pytest.fixture(scope="module")
def search(workspace, fake_ollama) -> SyncSession:
    env = server_env(workspace / "data", OLLAMA_BASE_URL=fake_ollama.url)
    with open(workspace / "search.stderr", "w") as errlog:
        with stdio_session(SEARCH_CMD, env, errlog) as session:
            yield session


def _wait_done(indexer: SyncSession, job_id: str, timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        data = indexer.ok("indexing_status", {"job_id": job_id})["data"]
        if data["status"] != "running":
            return data
        time.sleep(0.2)
    raise AssertionError(f"indexing job {job_id} did not finish in {timeout}s")


@pytest.fixture(scope="module")
def indexed(indexer, project) -> dict[str, Any]:
    """The project indexed through the indexer server; the final indexing_status."""
    started = indexer.ok("start_indexing", {"project_path": str(project)})["data"]
    assert started["started"] is True and started["job_id"]
    final = _wait_done(indexer, started["job_id"])
    assert final["status"] == "done", final
    return final


@pytest.fixture(scope="module")
def connect_chunk(search, indexed, project) -> str:
    """chunk_id of ``connect`` as search_hybrid ranks it for the journey's query."""
    hits = search.ok("search_hybrid", {"project_path": str(project), "query": HYBRID_QUERY, "limit": 5})[
        "results"
    ]
    return next(h["chunk_id"] for h in hits if h["symbol_name"] == "connect")


# -- the indexer server ---------------------------------------------------------------------------


def test_start_indexing_then_status_until_done(indexed, indexer, project):
    assert indexed["files_done"] == indexed["files_total"] == len(FILES)
    assert indexed["chunks_embedded"] >= len(FILES)
    assert indexed["errors"] == [] and indexed["eta_seconds"] == 0.0 and indexed["elapsed_seconds"] > 0
    assert indexed["summary"]["languages"].keys() >= {"python", "typescript", "markdown"}
    projects = indexer.ok("list_projects")["results"]
    entry = next(p for p in projects if p["project_path"] == str(project))
    assert entry["files"] == len(FILES) and entry["chunks"] == indexed["summary"]["chunks_total"]
    assert (entry["backend"], entry["dimension"], entry["status"]) == ("onnx", 384, "ready")


# -- seed 003's demo journey on the search server -------------------------------------------------


def _text(envelope: dict[str, Any]) -> str:
    return json.dumps(envelope)


def check_health_check(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    env = s.ok("health_check", {"project_path": p, "verbose": True})
    data = env["data"]
    assert data["status"] == "ready", data
    assert data["checks"]["lancedb"]["status"] == "ok"
    assert (
        data["checks"]["provenance"]["backend"] == "onnx" and data["checks"]["provenance"]["dimension"] == 384
    )
    assert data["checks"]["schema"]["status"] == "ok"


def check_index_status(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    data = s.ok("index_status", {"project_path": p})["data"]
    assert data["indexed_files"] == len(FILES)
    assert data["indexed_chunks"] == ctx["indexed"]["summary"]["chunks_total"]
    assert data["model"]["backend"] == "onnx" and data["model"]["dimension"] == 384
    assert data["stale_ratio"] == 0.0 and data["last_indexed_at"]


def check_search_keyword(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    env = s.ok("search_keyword", {"project_path": p, "query": "initializeDatabase"})
    top = env["results"][0]
    assert (top["file_path"], top["symbol_name"]) == ("web/db.ts", "initializeDatabase")
    assert "initialize_database" in {h["symbol_name"] for h in env["results"]}  # camelCase ↔ snake_case
    assert {"offset", "limit", "total", "has_more", "next_offset"} <= set(env)
    assert env["total"] == len(env["results"]) and env["has_more"] is False


def check_search_semantic(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    env = s.ok("search_semantic", {"project_path": p, "query": SEMANTIC_QUERY, "limit": 5})
    files = [h["file_path"] for h in env["results"]]
    assert sum(f.startswith("src/database/") for f in files[:3]) >= 2, files
    assert env["warnings"] == []


def check_search_hybrid(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    env = s.ok("search_hybrid", {"project_path": p, "query": HYBRID_QUERY, "alpha": 0.65})
    top3 = [(h["file_path"], h["symbol_name"]) for h in env["results"][:3]]
    assert ("src/database/connection.py", "connect") in top3, top3
    scores = [h["score"] for h in env["results"]]
    assert scores == sorted(scores, reverse=True)


def check_explain_match(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    data = s.ok("explain_match", {"project_path": p, "query": HYBRID_QUERY, "result_id": ctx["chunk"]})[
        "data"
    ]
    assert data["found"] is True and data["symbol_name"] == "connect" and data["rank"] <= 3
    assert data["semantic"]["rank"] >= 1 and data["keyword"]["rank"] >= 1
    assert data["final_score"] > 0 and "identifier_boost" in data and "recency_boost" in data


def check_get_chunk(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    data = s.ok("get_chunk", {"project_path": p, "chunk_id": ctx["chunk"]})["data"]
    assert data["chunk_id"] == ctx["chunk"] and data["file_path"] == "src/database/connection.py"
    assert data["text"].startswith("def connect(") and data["text"].rstrip().endswith('attempts")')
    assert not data.get("truncated")


def check_read_chunk_neighbors(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    env = s.ok("read_chunk_neighbors", {"project_path": p, "chunk_id": ctx["chunk"], "before": 2, "after": 2})
    data = env["data"]
    assert data["chunk"]["chunk_id"] == ctx["chunk"]
    before = [c["symbol_name"] for c in data["before"]]
    after = [c["symbol_name"] for c in data["after"]]
    assert "ConnectionPool.acquire" in before and after[:1] == ["open_socket"], (before, after)
    assert {c["file_path"] for c in data["before"] + data["after"]} == {"src/database/connection.py"}


def check_search_similar(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    env = s.ok(
        "search_similar",
        {"project_path": p, "file_path": "src/database/connection.py", "function_name": "connect"},
    )
    ids = [h["chunk_id"] for h in env["results"]]
    assert ids and ctx["chunk"] not in ids  # the seed itself is not "similar to itself"
    assert env["seed"]["chunk_ids"] == [ctx["chunk"]]
    assert {"open_socket", "ConnectionPool.acquire"} & {h["symbol_name"] for h in env["results"][:5]}


def check_get_import_graph(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    text = _text(s.ok("get_import_graph", {"project_path": p}))
    for path in ("src/app/main.py", "src/database/schema.py", "src/database/connection.py"):
        assert path in text, path
    one = _text(s.ok("get_import_graph", {"project_path": p, "file_path": "src/database/schema.py"}))
    assert "src/database/connection.py" in one and "src/app/main.py" not in one.split("schema.py", 1)[0]


def check_find_callers(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    direct = _text(s.ok("find_callers", {"project_path": p, "symbol_name": "connect", "depth": 1}))
    assert "initialize_database" in direct and "acquire" in direct
    deep = _text(s.ok("find_callers", {"project_path": p, "symbol_name": "connect", "depth": 2}))
    assert '"main"' in deep or "src/app/main.py" in deep, (
        "depth 2 must reach main() through initialize_database"
    )


def check_find_callees(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    text = _text(s.ok("find_callees", {"project_path": p, "symbol_name": "connect", "depth": 2}))
    assert "open_socket" in text
    deep = _text(s.ok("find_callees", {"project_path": p, "symbol_name": "main", "depth": 2}))
    assert "initialize_database" in deep and "connect" in deep


def check_trace_path(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    env = s.ok("trace_path", {"project_path": p, "source_symbol": "main", "target_symbol": "connect"})
    text = _text(env)
    assert text.index("main") < text.index("initialize_database") < text.rindex("connect")


def _chats(ctx: dict[str, Any]) -> int:
    return sum(r.path == "/api/chat" for r in ctx["fake_ollama"].requests)


def check_retrieve_context_pack(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    chats_before = _chats(ctx)
    args = {
        "project_path": p,
        "query": SEMANTIC_QUERY,
        "max_chars": 12000,
        "include_neighbors": True,
        "rerank": False,
    }
    plain = s.ok("retrieve_context_pack", args)["data"]
    assert plain["rerank"]["applied"] is False and _chats(ctx) == chats_before
    data = s.ok("retrieve_context_pack", {**args, "rerank": True})["data"]
    assert data["rerank"]["applied"] is True, data["rerank"]
    favourite = RERANK_PICKS[-1]
    assert favourite != plain["files"][0]["file_path"], (
        "reversing the candidates must change the leading file"
    )
    assert data["files"][0]["file_path"] == favourite  # the (fake) LLM's order was applied
    assert "def connect(" in data["text"] and "class DatabaseError" in data["text"]
    assert 0 < data["chars"] <= 12000 and data["est_tokens"] > 0
    assert _chats(ctx) == chats_before + 1, "one re-rank, one LLM call"


def check_doctor_index(s: SyncSession, p: str, ctx: dict[str, Any]) -> None:
    data = s.ok("doctor_index", {"project_path": p})["data"]
    assert data["healthy"] is True and data["findings"] == [], data["findings"]
    assert {"provenance", "fts", "sqlite_vs_lancedb"} <= set(data["checked"])


#: Seed 003's demo journey, in its order: one assertion block per tool.
JOURNEY: dict[str, Callable[[SyncSession, str, dict[str, Any]], None]] = {
    "health_check": check_health_check,
    "index_status": check_index_status,
    "search_keyword": check_search_keyword,
    "search_semantic": check_search_semantic,
    "search_hybrid": check_search_hybrid,
    "explain_match": check_explain_match,
    "get_chunk": check_get_chunk,
    "read_chunk_neighbors": check_read_chunk_neighbors,
    "search_similar": check_search_similar,
    "get_import_graph": check_get_import_graph,
    "find_callers": check_find_callers,
    "find_callees": check_find_callees,
    "trace_path": check_trace_path,
    "retrieve_context_pack": check_retrieve_context_pack,
    "doctor_index": check_doctor_index,
}


#: The memory reading tools have their own stdio journey: tests/test_memory_search.py::test_memory_tools_over_mcp_stdio.
MEMORY_TOOLS = {"memory_search", "get_memory", "list_by_domain", "must_read", "timeline", "pulse"}


def test_every_registered_tool_has_a_journey_check():
    assert sorted(set(REGISTRY) - set(JOURNEY) - MEMORY_TOOLS) == []


def test_the_search_server_lists_what_the_registry_holds(search):
    assert sorted(t["name"] for t in search.list_tools()) == sorted(REGISTRY)


@pytest.mark.parametrize("tool", [name for name in JOURNEY if name in REGISTRY])
def test_demo_journey(tool, search, project, indexed, connect_chunk, fake_ollama):
    ctx = {"indexed": indexed, "chunk": connect_chunk, "fake_ollama": fake_ollama}
    JOURNEY[tool](search, str(project), ctx)


# -- new index versions reach the running search server -------------------------------------------

NEW_FUNCTION = '''


def reconcile_ledger_totals(entries):
    """Sum ledger entries per account so nightly reconciliation can compare them."""
    totals = {}
    for account, amount in entries:
        totals[account] = totals.get(account, 0) + amount
    return totals
'''


def test_the_same_search_session_sees_a_reindex_without_restart(search, indexer, project, indexed):
    args = {"project_path": str(project), "query": "reconcile_ledger_totals", "cache_bust": True}
    before = search.ok("search_keyword", args)
    assert not any(h["symbol_name"] == "reconcile_ledger_totals" for h in before["results"])
    version_before = before["search"]["published_version"]

    with open(project / "src" / "database" / "connection.py", "a") as fh:
        fh.write(NEW_FUNCTION)
    job = indexer.ok("start_indexing", {"project_path": str(project)})["data"]

    # A search while the job runs answers from the last published state, never an error.
    during = search.ok(
        "search_hybrid", {"project_path": str(project), "query": HYBRID_QUERY, "cache_bust": True}
    )
    assert during["results"] and during["search"]["published_version"] >= version_before

    final = _wait_done(indexer, job["job_id"])
    assert final["status"] == "done" and final["summary"]["files_parsed"] == 1
    assert final["summary"]["files_unchanged"] == len(FILES) - 1

    after = search.ok("search_keyword", args)
    hit = after["results"][0]
    assert (hit["symbol_name"], hit["file_path"]) == ("reconcile_ledger_totals", "src/database/connection.py")
    assert after["search"]["published_version"] > version_before
    semantic = search.ok(
        "search_semantic",
        {"project_path": str(project), "query": "nightly reconciliation of account ledger sums"},
    )
    assert semantic["results"][0]["symbol_name"] == "reconcile_ledger_totals"


def test_a_search_during_indexing_answers_the_last_published_state(search, indexer, project, indexed):
    """Many new files make a run long enough to query mid-way: each answer is one published version."""
    extra = project / "src" / "generated"
    extra.mkdir(exist_ok=True)
    for i in range(40):
        (extra / f"handler_{i}.py").write_text(
            "\n\n".join(
                f"def handle_{i}_{j}(event):\n    '''Route event {i}-{j} to its queue.'''\n    return ('q{i}', event)\n"
                for j in range(4)
            )
        )
    args = {
        "project_path": str(project),
        "query": "Route event to its queue",
        "cache_bust": True,
        "limit": 50,
    }
    version_before = search.ok("search_keyword", args)["search"]["published_version"]
    job = indexer.ok("start_indexing", {"project_path": str(project)})["data"]
    in_run = {"walk", "parse", "graph", "embed", "write"}  # the pipeline has marked the project 'indexing'
    answers = []
    while True:
        before = indexer.ok("indexing_status", {"job_id": job["job_id"]})["data"]
        if before["status"] != "running":
            break
        env = search.ok("search_keyword", args)  # never an error while the writer works
        after = indexer.ok("indexing_status", {"job_id": job["job_id"]})["data"]
        answers.append((env, before["phase"] in in_run and after["phase"] in in_run))
        time.sleep(0.05)
    assert before["status"] == "done"
    mid_run = [env for env, inside in answers if inside]
    assert mid_run, "the index run ended before any search could overlap it"
    for env in mid_run:
        assert "index_updating" in {w["code"] for w in env["warnings"]}, env["warnings"]
    versions = [env["search"]["published_version"] for env, _ in answers]
    assert versions == sorted(versions), "answers must never go back to an older version"
    for env, _ in answers:
        generated = [h for h in env["results"] if h["file_path"].startswith("src/generated/")]
        if env["search"]["published_version"] == version_before:
            assert not generated, "rows of an unpublished batch leaked into an answer"
    final = search.ok("search_keyword", args)
    assert (
        final["search"]["published_version"] >= max(versions)
        and final["search"]["published_version"] > version_before
    )
    assert final["total"] >= 40 and not {w["code"] for w in final["warnings"]} & {
        "index_updating",
        "index_building",
    }
    handlers = search.ok("search_keyword", {**args, "query": "handle_39_3"})["results"]
    assert handlers[0]["symbol_name"] == "handle_39_3"


def test_deleting_through_the_indexer_reaches_the_search_server(search, indexer, project, indexed):
    assert indexer.ok("delete_project_index", {"project_path": str(project)})["data"]["deleted"] is True
    env = search.call(
        "search_keyword", {"project_path": str(project), "query": "connect", "cache_bust": True}
    )
    assert env["ok"] is False and env["error"]["code"] == "NOT_INDEXED"
    assert "delete_project_index" not in {t["name"] for t in search.list_tools()}
