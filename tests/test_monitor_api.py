"""The status monitor's JSON API, served by a real ``local-memory-search monitor`` process."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from local_memory_shared.catalog import job_progress
from monitor_support import MEMORY, TOKEN, Monitor, build_project, start_monitor, stop_monitor
from search_support import snapshot


@pytest.fixture(scope="module")
def monitor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Monitor]:
    project, data_root = build_project(tmp_path_factory.mktemp("monitor"))
    mon = start_monitor(project, data_root)
    try:
        yield mon
    finally:
        stop_monitor(mon)


def q(mon: Monitor, route: str, **params: object) -> str:
    args = {"project": mon.project, **params}
    return route + "?" + "&".join(f"{k}={quote(str(v))}" for k, v in args.items())


def test_every_api_route_needs_the_token_but_the_page_does_not(monitor: Monitor) -> None:
    for route in ("/api/health", "/api/projects", q(monitor, "/api/search", q="cache")):
        status, body = monitor.get(route, token=None)
        assert status == 401 and body["error"]["code"] == "UNAUTHORIZED"
        status, body = monitor.get(route, token="wrong")
        assert status == 401
    status, page = monitor.get("/", token=None)
    assert status == 200 and "status monitor" in page
    assert monitor.get("/static/vendor/cytoscape.min.js", token=None)[0] == 200


def test_a_foreign_host_header_is_refused(monitor: Monitor) -> None:
    status, body = monitor.get("/api/health", host="attacker.example:3124")
    assert status == 403 and body["error"]["code"] == "FORBIDDEN_HOST"
    assert monitor.get("/", token=None, host="attacker.example")[0] == 403
    assert monitor.get("/api/health", host="localhost:3124")[0] == 200


def test_projects_show_health_counts_and_freshness(monitor: Monitor) -> None:
    status, body = monitor.get("/api/projects")
    assert status == 200
    (row,) = body["data"]["projects"]
    assert row["project_path"] == monitor.project
    assert row["health"] == "ready" and row["chunks"] > 5 and row["files"] >= 7
    assert row["freshness"]["fresh"] is True and row["model"] == "all-MiniLM-L6-v2"


def test_code_search_with_explain_names_the_file_and_every_factor(monitor: Monitor) -> None:
    status, body = monitor.get(
        q(monitor, "/api/search", q="retry connection with exponential backoff", explain="true")
    )
    assert status == 200 and body["ok"]
    top = body["results"][0]
    assert top["file_path"] == "src/db.py"
    explain = top["explain"]
    assert explain["result_id"] == top["chunk_id"] and explain["rank"] == 1
    assert {"semantic", "keyword", "final_score"} <= set(explain)
    status, body = monitor.get(q(monitor, "/api/search", q="LruCache", mode="keyword"))
    assert body["results"][0]["file_path"] == "src/cache.py" and "explain" not in body["results"][0]


def test_bad_arguments_answer_400_naming_the_field(monitor: Monitor) -> None:
    for route, field in (
        (q(monitor, "/api/search"), "q"),
        (q(monitor, "/api/search", q="x", limit=999), "limit"),
        (q(monitor, "/api/search", q="x", mode="fuzzy"), "mode"),
        (q(monitor, "/api/graph/symbol", symbol="dial", depth=9), "depth"),
    ):
        status, body = monitor.get(route)
        assert status == 400, route
        assert body["error"]["code"] == "INVALID_ARGUMENT" and body["error"]["field"] == field


def test_call_graph_around_a_symbol_has_its_callers_and_their_callers(monitor: Monitor) -> None:
    status, body = monitor.get(q(monitor, "/api/graph/symbol", symbol="dial", depth=2))
    assert status == 200
    nodes = {n["label"]: n for n in body["data"]["nodes"]}
    assert nodes["dial"]["role"] == "center"
    assert nodes["initialize"]["role"] == "caller" and nodes["main"]["role"] == "caller"
    edges = {(e["source"], e["target"]) for e in body["data"]["edges"]}
    assert (nodes["initialize"]["id"], nodes["dial"]["id"]) in edges
    assert (nodes["main"]["id"], nodes["initialize"]["id"]) in edges
    chunk = monitor.get(q(monitor, "/api/chunk", id=nodes["initialize"]["chunk_id"]))[1]
    assert "def initialize" in chunk["data"]["text"]


def test_import_graph_of_a_file(monitor: Monitor) -> None:
    status, body = monitor.get(q(monitor, "/api/graph/imports", path="app/main.py"))
    assert status == 200
    edges = {(e["source"], e["target"]) for e in body["data"]["edges"]}
    assert ("app/main.py", "app/db.py") in edges


def test_doctor_and_jobs_routes(monitor: Monitor) -> None:
    status, body = monitor.get(q(monitor, "/api/doctor"))
    assert status == 200 and body["ok"]
    status, body = monitor.get("/api/jobs")
    assert status == 200 and body["data"]["jobs"] == []  # the CLI-less fixture ran no indexing job


def test_job_progress_derives_rate_and_eta_from_the_published_row() -> None:
    import os

    now = datetime(2026, 1, 1, 12, 0, 10, tzinfo=UTC)
    row = {
        "job_id": "j1",
        "project_path": "/p",
        "status": "running",
        "phase": "embed",
        "pid": os.getpid(),
        "files_done": 50,
        "files_total": 200,
        "chunks_embedded": 400,
        "chunks_total": 1000,
        "started_at": (now - timedelta(seconds=10)).isoformat(),
        "updated_at": now.isoformat(),
    }
    job = job_progress(row, now=now)
    assert job.alive and job.progress == 0.25
    assert job.chunks_per_second == 40.0 and job.eta_seconds == 15.0
    dead = job_progress({**row, "pid": 2**22 + 12345}, now=now)
    assert not dead.alive and dead.eta_seconds is None


def test_memory_listing_hides_ephemeral_kinds_and_sorts_by_hits(monitor: Monitor) -> None:
    status, body = monitor.get(q(monitor, "/api/records"))
    assert status == 200
    ids = [r["id"] for r in body["records"]]
    assert MEMORY["trap"] in ids and MEMORY["untagged"] in ids and MEMORY["scratch"] not in ids
    assert MEMORY["old"] not in ids  # superseded: its successor stands in for it
    status, body = monitor.get(q(monitor, "/api/records", includeEphemeral="true"))
    assert MEMORY["scratch"] in [r["id"] for r in body["records"]]
    status, body = monitor.get(q(monitor, "/api/records", untagged="true", includeEphemeral="true"))
    assert [r["id"] for r in body["records"]] == [MEMORY["untagged"]]
    assert monitor.get(q(monitor, "/api/records", sort="nonsense"))[1]["error"]["field"] == "sort"


def test_memory_search_answers_hits_with_explain(monitor: Monitor) -> None:
    status, body = monitor.get(
        q(monitor, "/api/records/search", q="connection leak when retrying", explain="true")
    )
    assert status == 200 and set(body) >= {"ok", "hits", "warnings"}
    assert body["hits"][0]["id"] == MEMORY["trap"]
    assert "explain" in body["hits"][0]


def test_a_record_comes_with_its_supersession_chain(monitor: Monitor) -> None:
    status, body = monitor.get(q(monitor, f"/api/records/{MEMORY['new']}"))
    assert status == 200
    assert body["data"]["record"]["title"] == "Cache sessions in Redis"
    assert [c["id"] for c in body["data"]["chain"]] == [MEMORY["old"], MEMORY["new"]]
    assert monitor.get(q(monitor, "/api/records/NOT-A-UID"))[1]["error"]["field"] == "uid"


def test_the_monitor_writes_nothing_under_the_data_root(monitor: Monitor) -> None:
    before = snapshot(monitor.data_root)
    for route in (
        q(monitor, "/api/records"),
        q(monitor, f"/api/records/{MEMORY['trap']}"),
        q(monitor, "/api/records/search", q="pool"),
        "/api/projects",
        "/api/jobs",
        q(monitor, "/api/search", q="cache", explain="true"),
        q(monitor, "/api/graph/symbol", symbol="dial"),
        q(monitor, "/api/doctor"),
    ):
        monitor.get(route)
    assert snapshot(monitor.data_root) == before


def test_token_from_environment(tmp_path: Path) -> None:
    from local_memory_search.monitor import create_app
    from starlette.testclient import TestClient

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOCAL_MEMORY_HTTP_TOKEN", TOKEN)
        mp.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(tmp_path))
        client = TestClient(create_app(), base_url="http://127.0.0.1")
        assert client.get("/api/health").status_code == 401
        assert client.get("/api/health", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
