"""The indexer's MCP tools through a real client session (in-process transport), real pipeline."""

from __future__ import annotations

import dataclasses
import time

import pytest
from local_memory_indexer.jobs import JobManager
from local_memory_indexer.pipeline import index_project
from local_memory_indexer.server import build_server
from local_memory_shared.config import load_settings
from local_memory_shared.paths import project_paths
from mcp_harness import memory_session, write_project

FILES = {
    "app/store.py": '''
        class Store:
            """Key-value store backed by a dict."""

            def get(self, key):
                return self.items.get(key)

            def put(self, key, value):
                self.items[key] = value
        ''',
    "app/cli.py": """
        from app.store import Store

        def run():
            store = Store()
            store.put("a", 1)
            return store.get("a")
        """,
}


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    return dataclasses.replace(load_settings(), data_root=tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def session(settings):
    with memory_session(build_server(JobManager(settings))) as s:
        yield s


def _poll(session, job_id: str, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        data = session.ok("indexing_status", {"job_id": job_id})["data"]
        if data["status"] != "running":
            return data
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still running after {timeout}s")


def test_start_status_list_delete(session, settings, tmp_path):
    project = write_project(tmp_path / "proj", FILES)
    started = session.ok("start_indexing", {"project_path": str(project)})
    job = started["data"]
    assert job["started"] is True and job["status"] == "running" and job["job_id"]

    again = session.ok("start_indexing", {"project_path": str(project)})
    assert again["data"]["job_id"] == job["job_id"] and again["data"]["started"] is False
    assert [w["code"] for w in again["warnings"]] == ["job_already_running"]

    refused = session.call("delete_project_index", {"project_path": str(project)})
    assert refused["ok"] is False and refused["error"]["code"] == "INDEX_LOCKED"

    done = _poll(session, job["job_id"])
    assert done["status"] == "done", done
    for key in (
        "phase",
        "files_done",
        "files_total",
        "chunks_embedded",
        "elapsed_seconds",
        "eta_seconds",
        "errors",
    ):
        assert key in done
    assert done["files_done"] == done["files_total"] == 2
    assert done["project"]["chunks"] >= 3 and done["project"]["status"] == "ready"

    by_project = session.ok("indexing_status", {"project_path": str(project)})["data"]
    assert by_project["job_id"] == job["job_id"]

    listed = session.ok("list_projects")
    entry = next(p for p in listed["results"] if p["project_path"] == str(project.resolve()))
    assert entry["files"] == 2 and entry["chunks"] >= 3
    assert entry["backend"] == "onnx" and entry["dimension"] == 384 and entry["model"]
    assert entry["last_indexed_at"] and entry["running_job_id"] is None
    assert listed["total"] == len(listed["results"])

    deleted = session.ok("delete_project_index", {"project_path": str(project)})
    assert deleted["data"]["deleted"] is True
    assert not project_paths(settings.data_root, project).dir.exists()
    assert (project / "app" / "store.py").exists(), "deleting an index never touches the project"
    assert all(p["project_path"] != str(project.resolve()) for p in session.ok("list_projects")["results"])
    gone = session.call("delete_project_index", {"project_path": str(project)})
    assert gone["error"]["code"] == "NOT_INDEXED"


def test_status_of_a_project_indexed_by_the_cli(session, settings, tmp_path):
    project = write_project(tmp_path / "cli", FILES)
    index_project(project, settings=settings)
    status = session.ok("indexing_status", {"project_path": str(project)})
    assert status["data"]["job_id"] is None and status["data"]["project"]["chunks"] >= 3
    assert [w["code"] for w in status["warnings"]] == ["no_job_recorded"]


def test_cancel_through_the_tool(session, tmp_path):
    project = write_project(tmp_path / "cancel", FILES)
    job = session.ok("start_indexing", {"project_path": str(project), "full": True})["data"]
    cancelled = session.ok("cancel_indexing", {"job_id": job["job_id"]})["data"]
    assert cancelled["job_id"] == job["job_id"] and cancelled["cancel_requested"] is True
    final = _poll(session, job["job_id"])
    # A tiny project may finish before the first cancel checkpoint; either way the job ended cleanly.
    assert final["status"] in {"cancelled", "done"}
    late = session.ok("cancel_indexing", {"project_path": str(project)})
    assert late["data"]["was_running"] is False and [w["code"] for w in late["warnings"]] == [
        "job_not_running"
    ]


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("start_indexing", {}, "project_path"),
        ("start_indexing", {"project_path": "/definitely/not/here"}, "project_path"),
        ("start_indexing", {"project_path": ".", "fast": True}, "fast"),
        ("indexing_status", {}, "job_id"),
        ("cancel_indexing", {"job_id": 7}, "job_id"),
        ("delete_project_index", {"project_path": ["a"]}, "project_path"),
    ],
)
def test_bad_arguments(session, tool, args, field):
    envelope = session.call(tool, args)
    assert envelope["ok"] is False
    assert envelope["error"]["code"] == "INVALID_ARGUMENT"
    assert envelope["error"]["field"] == field
    assert envelope["error"]["message"]


def test_unknown_job_is_not_found(session):
    envelope = session.call("indexing_status", {"job_id": "feedface"})
    assert envelope["error"]["code"] == "NOT_FOUND" and envelope["error"]["field"] == "job_id"
