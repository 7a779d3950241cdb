"""The no-change fast path (``local_memory_indexer.unchanged``): real indexes, real model, real files.

A re-index that finds nothing changed answers from SQLite alone (no LanceDB, pyarrow or ONNX
Runtime) with the summary the full pipeline gives; anything that may have changed the index
since the last run that ended "done" sends the run the full way, which repairs it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from indexing_support import current_lance, run_cli, summary_of, use_data_root, write_modules
from local_memory_indexer import unchanged
from local_memory_indexer.pipeline import index_project
from local_memory_indexer.plan import IndexSummary
from local_memory_shared.config import load_settings
from local_memory_shared.embedding import create_embedder
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.embedding.onnx import OnnxEmbedder
from local_memory_shared.paths import ProjectPaths, project_paths

FILES, FUNCS = 6, 3


def write_project(root: Path) -> Path:
    return write_modules(
        root,
        FILES,
        FUNCS,
        lambda i, j: f"def step_{i}_{j}(x):\n    return x * {i + j} + {j}",
        folder="pkg",
        stem="mod",
    )


@pytest.fixture(scope="module")
def onnx() -> Embedder:
    return create_embedder("onnx")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    use_data_root(monkeypatch, tmp_path / "data")
    return write_project(tmp_path / "proj")


def paths_of(project: Path) -> ProjectPaths:
    return project_paths(load_settings().data_root, project)


def run(
    project: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture, **kwargs: bool
) -> tuple[IndexSummary, str]:
    """One run and why it went the way it did ('nothing changed' on the fast path)."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="local_memory_indexer.indexing"):
        summary = index_project(project, embedder=embedder, **kwargs)
    said = [r.getMessage() for r in caplog.records if r.name == "local_memory_indexer.indexing"]
    assert len(said) <= 1, said
    if not said:
        return summary, "not asked"  # --full / --rebuild never ask
    return summary, "nothing changed" if said[0].startswith("no-change run") else said[0].split(": ", 1)[1]


def state(project: Path, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(paths_of(project).state_db)
    try:
        rows = [tuple(r) for r in conn.execute(sql, args)]
        conn.commit()
        return rows
    finally:
        conn.close()


def test_a_no_change_run_loads_no_lancedb_pyarrow_or_onnxruntime_and_answers_the_same_summary(
    tmp_path: Path,
) -> None:
    project = write_project(tmp_path / "proj")
    env_ = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(tmp_path / "data")}
    first = summary_of(run_cli(env_, "index", str(project), "--json"))
    code = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        from local_memory_indexer.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(["index", {str(project)!r}, "--json"])
        heavy = ("lancedb", "pyarrow", "onnxruntime", "tree_sitter", "pydantic", "numpy")
        print(json.dumps({{"rc": rc, "summary": json.loads(out.getvalue())["data"],
                          "loaded": [m for m in heavy if m in sys.modules]}}))
        """
    )

    def no_change_run() -> dict:
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env_, timeout=300
        )
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    fast = no_change_run()
    assert fast["rc"] == 0 and fast["loaded"] == []
    assert (paths_of_root(tmp_path, project).dir / unchanged.INTACT_FILE).is_file()
    (paths_of_root(tmp_path, project).dir / unchanged.INTACT_FILE).unlink()  # the full way, once
    slow = no_change_run()
    assert {"lancedb", "pyarrow"} <= set(slow["loaded"])

    def comparable(summary: dict) -> dict:
        return {k: v for k, v in summary.items() if k != "seconds"} | {"phases": sorted(summary["seconds"])}

    assert comparable(fast["summary"]) == comparable(slow["summary"])
    assert (
        fast["summary"]["files_unchanged"] == FILES
        and fast["summary"]["chunks_total"] == first["chunks_total"]
    )
    runs = sqlite3.connect(paths_of_root(tmp_path, project).state_db).execute(
        "SELECT kind, outcome FROM runs ORDER BY run_id"
    )
    assert runs.fetchall() == [("index", "done")] * 3  # the fast run is journalled like any other


def paths_of_root(tmp_path: Path, project: Path) -> ProjectPaths:
    return project_paths(tmp_path / "data", project)


def test_the_fast_path_refreshes_what_a_no_change_run_refreshes(
    project: Path, onnx: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    first, _ = run(project, onnx, caplog)
    before = state(project, "SELECT published_version, last_indexed_at FROM projects")[0]
    published_at = state(project, "SELECT published_at FROM publications WHERE version = ?", (before[0],))
    os.utime(project / "pkg" / "mod_001.py", ns=(1_000_000_000, 1_000_000_000))  # mtime only
    summary, why = run(project, onnx, caplog)
    assert why == "nothing changed" and summary.files_unchanged == FILES and summary.files_parsed == 0
    assert summary.published_version == before[0] and summary.chunks_total == first.chunks_total
    after = state(project, "SELECT published_version, last_indexed_at, status FROM projects")[0]
    assert after[0] == before[0] and after[2] == "ready"
    assert (
        state(project, "SELECT published_at FROM publications WHERE version = ?", (before[0],)) > published_at
    )
    assert state(project, "SELECT mtime FROM files WHERE path = 'pkg/mod_001.py'") == [(1.0,)]


def test_an_index_big_enough_for_a_vector_index_of_an_older_kind_goes_the_full_way(
    project: Path, onnx: Embedder, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record written before the kind was recorded (an IVF_PQ index) or naming an older kind
    sends a table of ``ANN_MIN_ROWS`` rows or more the full way, whose index step retrains it."""
    run(project, onnx, caplog)
    record_file = unchanged.intact_path(paths_of(project))
    record = json.loads(record_file.read_text())
    assert record["vector_index"] is None  # 18 rows: no vector index
    _, why = run(project, onnx, caplog)
    assert why == "nothing changed"
    monkeypatch.setattr(unchanged, "ANN_MIN_ROWS", record["rows"])  # as if the table had one
    for older in ({"vector_index": "IvfPq"}, {}):
        stale = {k: v for k, v in record.items() if k != "vector_index"} | older
        record_file.write_text(json.dumps(stale))
        _, why = run(project, onnx, caplog)
        assert "vector index is of an older kind" in why, why
    monkeypatch.setattr(unchanged, "ANN_MIN_ROWS", record["rows"] + 1)
    _, why = run(project, onnx, caplog)
    assert why == "nothing changed"


def _delete_indices(paths: ProjectPaths) -> None:
    for index_dir in (current_lance(paths) / "chunks.lance" / "_indices").iterdir():
        shutil.rmtree(index_dir)


def _touch_a_lance_file(paths: ProjectPaths) -> None:
    data = sorted((current_lance(paths) / "chunks.lance" / "data").iterdir())[0]
    os.utime(data, ns=(data.stat().st_atime_ns, data.stat().st_mtime_ns + 1_000_000_000))


def _add_a_lance_file(paths: ProjectPaths) -> None:
    (current_lance(paths) / "chunks.lance" / "_versions" / "stray.manifest").write_bytes(b"x")


def _await_vectors(paths: ProjectPaths) -> None:
    conn = sqlite3.connect(paths.state_db)
    conn.execute("UPDATE files SET vectors_pending = 1 WHERE path = 'pkg/mod_002.py'")
    conn.commit()
    conn.close()


def _unfinished_run(paths: ProjectPaths) -> None:
    conn = sqlite3.connect(paths.state_db)
    conn.execute("INSERT INTO runs(kind, pid, started_at) VALUES ('index', 1, '2026-01-01T00:00:00Z')")
    conn.commit()
    conn.close()


def _side_db(paths: ProjectPaths) -> None:
    (paths.dir / "state.next.db").write_bytes(b"")


def _remove_compact_model(paths: ProjectPaths) -> None:
    models = paths.data_root / "models"
    for f in models.iterdir():
        f.unlink()


BREAKAGES: dict[str, tuple[Callable[[ProjectPaths], None], str]] = {
    "deleted_lance_files": (_delete_indices, "LanceDB files differ"),
    "touched_lance_file": (_touch_a_lance_file, "LanceDB files differ"),
    "added_lance_file": (_add_a_lance_file, "LanceDB files differ"),
    "file_awaiting_vectors": (_await_vectors, "files await vectors"),
    "run_interrupted": (_unfinished_run, "last run did not end done"),
    "side_db_left": (_side_db, "side DB"),
    "compact_model_missing": (_remove_compact_model, "compact query model"),
}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_each_breakage_goes_the_full_way_and_is_repaired(
    project: Path, onnx: Embedder, caplog: pytest.LogCaptureFixture, breakage: str
) -> None:
    break_it, reason = BREAKAGES[breakage]
    first, why = run(project, onnx, caplog)
    assert why == "no intact record" and first.files_parsed == FILES
    paths = paths_of(project)
    break_it(paths)
    summary, why = run(project, onnx, caplog)
    assert reason in why, why
    assert summary.files_parsed == 0 and summary.chunks_total == first.chunks_total
    if breakage == "deleted_lance_files":
        assert summary.indices_rebuilt == ["fts"]
    if breakage == "file_awaiting_vectors":
        waiting = state(project, "SELECT chunk_count FROM files WHERE path = 'pkg/mod_002.py'")[0][0]
        assert summary.chunks_reused == waiting  # embedded again (from the cache) and published
        assert state(project, "SELECT COUNT(*) FROM files WHERE vectors_pending = 1") == [(0,)]
    if breakage == "run_interrupted":
        assert summary.repair_reason == "the previous run did not finish"
    if breakage == "side_db_left":
        assert not (paths.dir / "state.next.db").exists()
    if breakage == "compact_model_missing":
        assert any((paths.data_root / "models").iterdir())
    again, why = run(project, onnx, caplog)  # the full run left a new record
    assert why == "nothing changed" and again.files_unchanged == FILES


@pytest.mark.parametrize("change", ["edited", "added", "deleted"])
def test_a_changed_added_or_deleted_source_file_goes_the_full_way_with_the_walk_reused(
    project: Path, onnx: Embedder, caplog: pytest.LogCaptureFixture, change: str
) -> None:
    run(project, onnx, caplog)
    target = project / "pkg" / "mod_003.py"
    if change == "edited":
        target.write_text(target.read_text() + "\n\ndef extra(y):\n    return y - 1\n")
    elif change == "added":
        (project / "pkg" / "new.py").write_text("def fresh(z):\n    return z\n")
    else:
        target.unlink()
    summary, why = run(project, onnx, caplog)
    assert why == "the walk found changed, added or deleted files"
    expected = {"edited": (1, 0, FILES), "added": (1, 0, FILES + 1), "deleted": (0, 1, FILES - 1)}[change]
    assert (summary.files_parsed, summary.files_deleted, summary.files_seen) == expected
    assert state(project, "SELECT COUNT(*) FROM files") == [(expected[2],)]
    again, why = run(project, onnx, caplog)
    assert why == "nothing changed" and again.files_seen == expected[2]


def test_a_changed_model_file_goes_the_full_way(
    project: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    builtin = OnnxEmbedder().model_files
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(builtin.model, folder / "model.onnx")
    shutil.copy(builtin.tokenizer, folder / "tokenizer.json")
    assert builtin.config_dir is not None
    for name in ("config.json", "sentence_bert_config.json"):
        if (builtin.config_dir / name).is_file():
            shutil.copy(builtin.config_dir / name, folder / name)
    embedder = create_embedder("onnx", str(folder))
    first, _ = run(project, embedder, caplog)
    assert run(project, embedder, caplog)[1] == "nothing changed"
    os.utime(folder / "model.onnx")  # the same name, another file (a re-download, an edit)
    summary, why = run(project, create_embedder("onnx", str(folder)), caplog)
    assert "embedding model differs" in why and summary.chunks_total == first.chunks_total


def test_full_and_rebuild_never_take_the_fast_path_and_a_writing_run_drops_the_record(
    project: Path, onnx: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    run(project, onnx, caplog)
    record = paths_of(project).dir / unchanged.INTACT_FILE
    assert record.is_file()
    summary, why = run(project, onnx, caplog, full=True)
    assert why == "not asked" and summary.files_parsed == FILES
    summary, why = run(project, onnx, caplog, rebuild=True)
    assert why == "not asked" and summary.files_parsed == FILES
    assert record.is_file() and json.loads(record.read_text())["lance_dir"] != "lance"  # the swap's folder
    assert run(project, onnx, caplog)[1] == "nothing changed"


def test_a_run_killed_as_it_writes_has_already_dropped_the_record(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj")
    env_ = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(tmp_path / "data")}
    summary_of(run_cli(env_, "index", str(project), "--json"))
    record = paths_of_root(tmp_path, project).dir / unchanged.INTACT_FILE
    assert record.is_file()
    target = project / "pkg" / "mod_004.py"
    target.write_text(target.read_text() + "\n\ndef later(q):\n    return q\n")
    killed = run_cli(
        env_,
        "index",
        str(project),
        "--json",
        kill_at=("local_memory_indexer.store:ChunkStore.replace_files", 1),
    )
    assert killed.returncode == -signal.SIGKILL
    assert not record.exists()  # LanceDB may hold rows no publication names: nothing may trust it
    summary = summary_of(run_cli(env_, "index", str(project), "--json"))
    assert summary["files_parsed"] == 1 and summary["repair_reason"] == "the previous run did not finish"
    assert record.is_file()


class _Phases:
    """A progress sink that records each phase with the project's status in the state DB then."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.seen: list[tuple[str, str]] = []

    def phase(self, name: str) -> None:
        rows = state(self.project, "SELECT status FROM projects")
        self.seen.append((name, str(rows[0][0]) if rows else "-"))

    def files(self, done: int, total: int) -> None:
        pass

    def chunks(self, embedded: int, total: int) -> None:
        pass


def test_the_no_change_check_shows_phase_check_and_marks_nothing_indexing(
    project: Path, onnx: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    """A search during the read-only check must not be told the index is updating (it is not):
    the check is shown as ``check``; ``walk`` and later phases only once the project is marked."""
    run(project, onnx, caplog)
    quiet = _Phases(project)
    index_project(project, embedder=onnx, progress=quiet)
    assert [name for name, _ in quiet.seen] == ["check", "index"]
    assert {status for _, status in quiet.seen} == {"ready"}

    (project / "pkg" / "new.py").write_text("def fresh(z):\n    return z\n")
    busy = _Phases(project)
    index_project(project, embedder=onnx, progress=busy)
    names = [name for name, _ in busy.seen]
    assert names[0] == "check" and "walk" in names
    assert busy.seen[0][1] == "ready"
    assert all(
        status == "indexing" for name, status in busy.seen if name in ("walk", "parse", "embed", "write")
    )
