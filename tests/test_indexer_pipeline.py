"""The indexing pipeline end to end: real tree-sitter, real ONNX model, real LanceDB and SQLite."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Sequence
from concurrent.futures import Executor, Future
from pathlib import Path

import indexing_support
import numpy as np
import pytest
from indexing_support import DiesAfter
from local_memory_indexer import pipeline
from local_memory_indexer.pipeline import index_project
from local_memory_shared.config import load_settings
from local_memory_shared.embedding import create_embedder
from local_memory_shared.embedding.base import Embedder, ProgressFn
from local_memory_shared.errors import EmbeddingError, ProvenanceMismatch
from local_memory_shared.paths import project_paths
from local_memory_shared.state import open_state_ro

FILES = {
    "app/client.py": '''
        """HTTP client for the billing service."""
        import json

        from app.retry import with_retry

        class Client:
            """Talks to the billing API."""

            def __init__(self, base_url):
                self.base_url = base_url

            def send(self, payload):
                """Send one invoice payload and return the parsed answer."""
                body = json.dumps(payload)
                return with_retry(lambda: self._post(body))

            def _post(self, body):
                return {"status": 200, "body": body}
        ''',
    "app/retry.py": '''
        import time

        def with_retry(fn, attempts=3, delay=0.1):
            """Call fn until it succeeds, sleeping with exponential backoff between attempts."""
            for attempt in range(attempts):
                try:
                    return fn()
                except ConnectionError:
                    time.sleep(delay * 2 ** attempt)
            raise RuntimeError("gave up")
        ''',
    "web/connect.ts": """
        export interface DbOptions { url: string; poolSize: number }

        export function initializeDatabase(options: DbOptions): Pool {
          const pool = createPool(options.url, options.poolSize);
          return pool;
        }

        export class Pool {
          constructor(private url: string) {}
          query(sql: string) { return fetchRows(this.url, sql); }
        }
        """,
    "docs/guide.md": """
        # Guide

        Intro text.

        ## Retries

        The client retries failed invoice uploads with exponential backoff.
        """,
    "broken.py": "def broken(:\n    return 1\n\nclass Ok:\n    def fine(self):\n        return 2\n",
    "notes.txt": "plain text notes about the billing rollout\n" * 3,
}


def make_project(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip("\n"))
    return root


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(tmp_path / "data"))
    monkeypatch.delenv("EMBED_BACKEND", raising=False)
    monkeypatch.delenv("EMBED_MODEL", raising=False)
    return tmp_path


@pytest.fixture(scope="module")
def onnx() -> Embedder:
    return create_embedder("onnx")


def lance_rows(project: Path, version: int | None = None) -> list[dict]:
    return indexing_support.lance_rows(project_paths(load_settings().data_root, project), version)


def mirror(project: Path) -> list[dict]:
    paths = project_paths(load_settings().data_root, project)
    conn = open_state_ro(paths.state_db)
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM chunks ORDER BY file_path, chunk_index")]
    finally:
        conn.close()


def test_first_index_writes_every_store_consistently(env: Path, onnx: Embedder) -> None:
    project = make_project(env / "proj")
    summary = index_project(project, embedder=onnx)
    assert summary.files_parsed == len(FILES)
    assert summary.files_unchanged == 0
    assert summary.chunks_written == summary.chunks_total > 0
    assert summary.chunks_embedded == summary.chunks_total
    assert {"python", "typescript", "markdown", "text"} <= set(summary.languages)
    assert set(summary.seconds) >= {"walk", "parse", "graph", "embed", "write", "index"}
    rows = lance_rows(project, summary.published_version)
    assert len(rows) == summary.chunks_total == len(mirror(project))
    by_symbol = {r["symbol_name"]: r for r in rows}
    send = by_symbol["Client.send"]
    assert send["file_path"] == "app/client.py" and send["class_name"] == "Client"
    assert send["function_name"] == "send" and send["chunk_kind"] == "method"
    assert "Send one invoice payload" in send["summary"]
    src = (project / "app/client.py").read_text().splitlines()
    # a method chunk is exactly its source lines (1-based, inclusive)
    assert send["text"].rstrip("\n") == "\n".join(src[send["start_line"] - 1 : send["end_line"]])
    assert len(send["vector"]) == 384 and abs(np.linalg.norm(send["vector"]) - 1) < 1e-3
    # the broken file still produced chunks, and the healthy method in it is found
    assert any(r["file_path"] == "broken.py" and r["symbol_name"] == "Ok.fine" for r in rows)
    # provenance
    conn = open_state_ro(project_paths(load_settings().data_root, project).state_db)
    meta = dict(conn.execute("SELECT * FROM index_meta").fetchone())
    assert (meta["backend"], meta["model"], meta["dimension"]) == ("onnx", onnx.model, 384)
    assert conn.execute("SELECT status FROM projects").fetchone()[0] == "ready"
    conn.close()


def test_reindex_is_incremental_and_ids_are_stable(env: Path, onnx: Embedder) -> None:
    project = make_project(env / "proj")
    first = index_project(project, embedder=onnx)
    ids_before = {r["chunk_id"]: r["symbol_name"] for r in lance_rows(project, first.published_version)}

    again = index_project(project, embedder=onnx)
    assert again.files_parsed == 0 and again.files_unchanged == len(FILES)
    assert again.chunks_embedded == 0

    client = project / "app/client.py"
    client.write_text(
        client.read_text().replace('return {"status": 200, "body": body}', 'return {"status": 201}')
    )
    (project / "notes.txt").unlink()
    third = index_project(project, embedder=onnx)
    assert third.files_parsed == 1 and third.files_deleted == 1
    # only the edited method's text changed: the other chunks of the file come from the cache
    assert 1 <= third.chunks_embedded <= 2
    assert third.chunks_reused >= 1
    rows = lance_rows(project, third.published_version)
    assert not any(r["file_path"] == "notes.txt" for r in rows)
    assert not any(r["file_path"] == "notes.txt" for r in mirror(project))
    ids_after = {r["chunk_id"]: r["symbol_name"] for r in rows}
    for cid, sym in ids_before.items():
        if sym in ("Client.send", "with_retry", "initializeDatabase"):
            assert ids_after.get(cid) == sym  # same code, same id
    assert any("201" in r["text"] for r in rows if r["symbol_name"] == "Client._post")


def test_model_switch_is_refused_without_rebuild(env: Path, onnx: Embedder) -> None:
    project = make_project(env / "proj", {"a.py": "def a():\n    return 1\n"})
    index_project(project, embedder=onnx)

    class Other(Embedder):
        backend, model = "onnx", "other-model"

        @property
        def dimension(self) -> int:
            return 8

        def embed_documents(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
            out = np.zeros((len(texts), 8), dtype=np.float32)
            out[:, 0] = 1
            return out

    with pytest.raises(ProvenanceMismatch) as err:
        index_project(project, embedder=Other())
    assert "--rebuild" in err.value.message
    summary = index_project(project, embedder=Other(), rebuild=True)
    assert summary.dimension == 8 and summary.chunks_embedded == summary.chunks_total
    assert all(len(r["vector"]) == 8 for r in lance_rows(project, summary.published_version))


def test_crash_mid_index_leaves_last_good_state_readable(
    env: Path, onnx: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(env / "proj")
    good = index_project(project, embedder=onnx)
    good_rows = {r["chunk_id"] for r in lance_rows(project, good.published_version)}
    # edit every file so the next run has several batches, then die after the first batch
    for rel in ("app/client.py", "app/retry.py", "web/connect.ts"):
        p = project / rel
        p.write_text(p.read_text() + f"\n# edited {rel}\n")  # distinct text: no cache hits
    monkeypatch.setattr(pipeline, "BATCH_FILES", 1)
    with pytest.raises(EmbeddingError):
        index_project(project, embedder=DiesAfter(onnx, calls_ok=1))
    conn = open_state_ro(project_paths(load_settings().data_root, project).state_db)
    published = conn.execute("SELECT published_version FROM projects").fetchone()[0]
    conn.close()
    rows = lance_rows(project, published)
    # the published version is complete and agrees with the SQLite mirror
    assert {r["chunk_id"] for r in rows} == {r["chunk_id"] for r in mirror(project)}
    # no file vanished: every file of the good index still has its chunks
    good_files = {r["file_path"] for r in lance_rows(project, good.published_version)}
    assert {r["file_path"] for r in rows} == good_files
    assert len(good_rows) > 0
    # the next run finishes the job
    done = index_project(project, embedder=onnx)
    assert done.files_parsed >= 1
    final = lance_rows(project, done.published_version)
    assert {r["chunk_id"] for r in final} == {r["chunk_id"] for r in mirror(project)}
    assert index_project(project, embedder=onnx).files_parsed == 0  # everything caught up


def test_cancel_keeps_published_state(env: Path, onnx: Embedder) -> None:
    project = make_project(env / "proj")
    cancel = threading.Event()
    cancel.set()
    summary = index_project(project, embedder=onnx, cancel=cancel)
    assert summary.cancelled
    done = index_project(project, embedder=onnx)
    assert done.files_parsed == len(FILES) and not done.cancelled


def test_cli_json_summary(env: Path) -> None:
    project = make_project(env / "proj", {"m.py": "def hello():\n    return 'hi'\n", ".env": "SECRET=1\n"})
    out = subprocess.run(
        [sys.executable, "-m", "local_memory_indexer.cli", "index", str(project), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ},
    )
    data = json.loads(out.stdout)["data"]
    for key in (
        "files_parsed",
        "files_unchanged",
        "files_skipped",
        "chunks_written",
        "chunks_embedded",
        "chunks_reused",
        "languages",
        "seconds",
    ):
        assert key in data
    assert data["files_parsed"] == 1 and data["files_skipped"] == {"secret": 1}
    assert data["languages"] == {"python": 1}
    listed = subprocess.run(
        [sys.executable, "-m", "local_memory_indexer.cli", "list", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    projects = json.loads(listed.stdout)["results"]
    assert projects[0]["project_path"] == str(project.resolve()) and projects[0]["chunks"] == 1


def test_cli_reports_errors_cleanly(env: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "local_memory_indexer.cli", "index", str(env / "missing"), "--json"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    err = json.loads(out.stdout)["error"]
    assert err["code"] == "INVALID_ARGUMENT" and err["field"] == "project_path"


def test_state_db_of_another_schema_build_is_refused_then_rebuilt(env: Path, onnx: Embedder) -> None:

    project = make_project(env / "proj", {"a.py": "def a():\n    return 1\n"})
    index_project(project, embedder=onnx)
    db = project_paths(load_settings().data_root, project).state_db
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 12345")  # as if written by an older DDL
    conn.close()
    with pytest.raises(ProvenanceMismatch) as err:
        index_project(project, embedder=onnx)
    assert "--rebuild" in err.value.message
    summary = index_project(project, embedder=onnx, rebuild=True)
    # everything re-parsed, nothing re-embedded: the model-keyed embedding cache survives
    assert summary.files_parsed == 1 and summary.chunks_embedded == 0
    assert summary.chunks_reused == summary.chunks_total == 1


def test_incremental_on_a_real_git_repository(env: Path, onnx: Embedder) -> None:
    """Edit one function, move a file, delete one: only changed text is embedded (cache serves moves)."""
    project = make_project(env / "repo")
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    first = index_project(project, embedder=onnx)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert {r["last_commit_hash"] for r in lance_rows(project, first.published_version)} == {head}

    assert index_project(project, embedder=onnx).chunks_embedded == 0  # nothing changed

    retry = project / "app/retry.py"
    retry.write_text(retry.read_text().replace("attempts=3", "attempts=5"))
    subprocess.run([*git, "mv", "web/connect.ts", "web/database.ts"], check=True)
    subprocess.run([*git, "rm", "-q", "notes.txt"], check=True)
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    second = index_project(project, embedder=onnx)
    assert second.files_parsed == 2  # the edited file and the moved one
    assert second.files_deleted == 2  # the old name of the moved file and notes.txt
    assert second.chunks_embedded == 1  # only with_retry's text changed; the move is served by the cache
    rows = lance_rows(project, second.published_version)
    assert {r["file_path"] for r in rows if r["language"] == "typescript"} == {"web/database.ts"}
    assert not any(r["file_path"] in ("notes.txt", "web/connect.ts") for r in mirror(project))


def test_a_no_change_run_reads_no_file_content(
    env: Path, onnx: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Discovery trusts files whose size and mtime match their row: a stat walk, no content read."""
    from local_memory_shared import discovery as shared_discovery

    project = make_project(env / "proj")
    index_project(project, embedder=onnx)
    real = shared_discovery.content_verdict
    read: list[str] = []

    def counting(path: Path, max_bytes: int) -> str | None:
        read.append(path.name)
        return real(path, max_bytes)

    monkeypatch.setattr(shared_discovery, "content_verdict", counting)
    again = index_project(project, embedder=onnx)
    assert again.files_unchanged == len(FILES) and read == []

    client = project / "app/client.py"
    client.write_text(
        client.read_text() + "\n\nAPI_KEY = 'AKIAABCDEFGHIJKLMNOP'\n"
    )  # now a secret by content
    third = index_project(project, embedder=onnx)
    assert read == ["client.py"]  # the changed file is read (and judged) again
    assert third.files_skipped.get("secret_content") == 1 and third.files_deleted == 1
    full = index_project(project, embedder=onnx, full=True)
    assert full.files_unchanged == 0 and len(read) == 1 + len(FILES)  # --full trusts nothing: all read


def test_a_changed_file_is_read_when_its_batch_forms_not_held_from_the_walk(
    env: Path, onnx: Embedder
) -> None:
    """The plan keeps no file content (a first index of 13.7k files held every file's bytes to the end):
    a file rewritten after the first batch is published is indexed with its new content."""
    project = indexing_support.write_modules(
        env / "proj", 40, 1, lambda i, j: f"def f{i}_{j}():\n    return {i}\n", folder="pkg", stem="mod"
    )
    last = project / "pkg" / "mod_039.py"

    class RewriteAfterFirstBatch(pipeline.NullProgress):
        def files(self, done: int, total: int) -> None:
            if done == pipeline.FIRST_BATCH_FILES:
                last.write_text("def rewritten_after_the_walk():\n    return 'new'\n")

    summary = index_project(project, embedder=onnx, progress=RewriteAfterFirstBatch())
    assert summary.files_parsed == 40 and summary.files_failed == 0
    paths = project_paths(load_settings().data_root, project)
    conn = open_state_ro(paths.state_db)
    try:
        symbols = [
            r[0] for r in conn.execute("SELECT symbol_name FROM chunks WHERE file_path = 'pkg/mod_039.py'")
        ]
    finally:
        conn.close()
    assert symbols == ["rewritten_after_the_walk"]


class _StalledPool(Executor):
    """A parse pool whose tasks never finish (a stuck cluster): futures stay pending until released."""

    def __init__(self) -> None:
        self.futures: list[Future] = []

    def submit(self, fn, /, *args, **kwargs) -> Future:  # type: ignore[no-untyped-def, override]
        future: Future = Future()
        self.futures.append(future)
        return future

    def release(self) -> None:
        for future in self.futures:
            if not future.done():
                future.set_exception(RuntimeError("released by the test"))


def test_a_stalled_parse_pool_is_given_up_and_the_batch_parsed_in_process(
    env: Path, onnx: Embedder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Parse futures that never finish (seen: a Ray task's future on a loaded machine) must not
    hang the run: after ``PARSE_STALL_SECONDS`` with no progress the batch is parsed in process,
    and the index is the one a run without a pool writes."""
    project = indexing_support.write_modules(
        env / "many",
        60,
        2,
        lambda i, j: f"def task_{i}_{j}(job):\n    return job + {i * j}\n",
        folder="pkg",
        stem="m",
    )
    monkeypatch.setattr(pipeline, "PARSE_STALL_SECONDS", 0.3)
    pool = _StalledPool()
    outcome: list = []
    worker = threading.Thread(
        target=lambda: outcome.append(index_project(project, embedder=onnx, parser=pool))
    )
    with caplog.at_level("WARNING", logger="local_memory_indexer.pipeline"):
        worker.start()
        worker.join(120)  # liveness, not speed: a hung run never ends
        hung = worker.is_alive()
        pool.release()
        worker.join(60)
    assert not hung and outcome, "the run waited for parse tasks that never finish"
    summary = outcome[0]
    assert pool.futures and all(f.cancelled() or f.done() for f in pool.futures)
    assert summary.files_parsed == 60 and summary.chunks_total >= 60 and not summary.errors
    assert "made no progress" in caplog.text
    rows = lance_rows(project, summary.published_version)
    names = sorted(name for r in rows for name in r["symbol_name"].split("+"))  # small siblings merge
    assert names == sorted(f"task_{i}_{j}" for i in range(60) for j in range(2))
