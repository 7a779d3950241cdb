"""doctor_index: each inconsistency is made for real with the writers' own APIs, found, and fixed
by running exactly the command the finding names."""

from __future__ import annotations

import hashlib
import shlex
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

import lancedb
import pyarrow as pa
import pytest
from index_damage import delete_fts_files, poison_vectors
from local_memory_indexer.pipeline import index_project
from local_memory_indexer.state_db import open_state_rw
from local_memory_search.diagnostics import doctor_index
from local_memory_search.tools import call_tool
from local_memory_shared.config import load_settings
from local_memory_shared.embedding import create_embedder
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.paths import ProjectPaths, project_paths

FILES = {
    "app/client.py": '''
        """HTTP client."""
        from app.retry import with_retry

        class Client:
            """Talks to the billing API."""

            def send(self, payload):
                """Send one payload."""
                return with_retry(lambda: self._post(payload))

            def _post(self, body):
                return {"status": 200, "body": body}
        ''',
    "app/retry.py": '''
        def with_retry(fn, attempts=3):
            """Call fn until it succeeds."""
            for _ in range(attempts):
                try:
                    return fn()
                except ConnectionError:
                    pass
        ''',
    "web/connect.ts": """
        export function initializeDatabase(url: string) {
          return createPool(url);
        }
        """,
    "docs/guide.md": "# Guide\n\nThe client retries failed uploads.\n",
}


@dataclass(frozen=True)
class Indexed:
    project: Path
    paths: ProjectPaths


@pytest.fixture(scope="module")
def onnx() -> Embedder:
    return create_embedder("onnx")


@pytest.fixture
def ix(tmp_path: Path, data_root: Path, onnx: Embedder) -> Indexed:
    project = tmp_path / "proj"
    for rel, content in FILES.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip("\n"))
    index_project(project, embedder=onnx)
    return Indexed(project, project_paths(load_settings().data_root, project))


def sql(ix: Indexed, statement: str, *args: object) -> None:
    conn = open_state_rw(ix.paths.state_db)
    try:
        conn.execute(statement, args)
    finally:
        conn.close()


def table(ix: Indexed):  # noqa: ANN201 - a lancedb Table
    return lancedb.connect(str(ix.paths.lance_dir)).open_table("chunks")


def publish(ix: Indexed, version: int) -> None:
    """As the indexer does after each batch: the searcher reads exactly this LanceDB version."""
    sql(ix, "UPDATE projects SET published_version = ?", version)


def doctor(ix: Indexed, **kwargs: object) -> dict:
    return doctor_index(str(ix.project), **kwargs)["data"]


def codes(report: dict) -> dict[str, dict]:
    return {f["code"]: f for f in report["findings"]}


def run_fix(ix: Indexed, command: str, onnx: Embedder) -> None:
    """Run a finding's command through the indexer library (same flags as the CLI)."""
    argv = shlex.split(command)
    assert argv[:3] == ["local-memory-indexer", "index", str(ix.project)], command
    flags = set(argv[3:])
    assert flags <= {"--full", "--rebuild"}, command
    index_project(ix.project, embedder=onnx, full="--full" in flags, rebuild="--rebuild" in flags)


def assert_fixed_by(ix: Indexed, report: dict, onnx: Embedder) -> None:
    command = report["suggested_command"]
    assert command, report
    run_fix(ix, command, onnx)
    after = doctor(ix)
    assert after["healthy"], after["findings"]


# -- healthy -------------------------------------------------------------------------------------


def test_a_fresh_index_has_no_findings(ix: Indexed) -> None:
    report = doctor(ix)
    assert report["healthy"] is True and report["findings"] == [], report["findings"]
    assert report["counts"] == {"error": 0, "warning": 0, "info": 0}
    assert report["suggested_command"] is None
    assert set(report["checked"]) >= {"sqlite_vs_lancedb", "fts", "provenance", "graph", "files_vs_chunks"}
    stats = report["stats"]
    assert stats["mirror_rows"] == stats["lance_rows"] > 0
    assert stats["fts"]["unindexed_rows"] == 0 and stats["graph"]["symbols"] > 0


# -- SQLite vs LanceDB -------------------------------------------------------------------------------


def test_rows_deleted_from_lancedb(ix: Indexed, onnx: Embedder) -> None:
    t = table(ix)
    t.delete("file_path = 'app/retry.py'")
    publish(ix, t.version)
    report = doctor(ix)
    found = codes(report)
    assert found["row_count_mismatch"]["severity"] == "error"
    assert found["row_count_mismatch"]["details"]["examples"]["app/retry.py"]["lancedb"] == 0
    orphans = found["orphan_mirror_rows"]
    assert orphans["details"]["files"] == ["app/retry.py"]
    assert orphans["fix"] == f"local-memory-indexer index {ix.project} --full"
    assert_fixed_by(ix, report, onnx)


def test_rows_deleted_from_the_sqlite_mirror(ix: Indexed, onnx: Embedder) -> None:
    sql(ix, "DELETE FROM chunks WHERE file_path = 'app/client.py'")
    report = doctor(ix)
    found = codes(report)
    assert found["orphan_lance_rows"]["details"]["files"] == ["app/client.py"]
    assert found["orphan_lance_rows"]["fix"].endswith("--full")
    assert found["file_chunk_count_mismatch"]["severity"] == "warning"
    assert "row_count_mismatch" in found
    assert_fixed_by(ix, report, onnx)


def test_lancedb_rows_of_a_file_sqlite_never_knew(ix: Indexed, onnx: Embedder) -> None:
    t = table(ix)
    ghost = t.search().where("file_path = 'app/retry.py'").limit(1).to_arrow().to_pylist()[0]
    ghost.update(chunk_id="ghost-1", file_path="gone/ghost.py")
    t.add(pa.Table.from_pylist([ghost], schema=t.schema))
    publish(ix, t.version)
    report = doctor(ix)
    found = codes(report)
    assert found["orphan_lance_rows"]["details"]["chunk_ids"] == ["ghost-1"]
    # A file the files table does not know is never visited by --full: only a rebuild drops it.
    assert found["orphan_lance_rows"]["fix"].endswith("--rebuild")
    assert report["suggested_command"].endswith("--rebuild")
    assert_fixed_by(ix, report, onnx)


def test_file_chunk_count_disagreeing_with_the_rows(ix: Indexed) -> None:
    sql(ix, "UPDATE files SET chunk_count = chunk_count + 2 WHERE path = 'docs/guide.md'")
    found = codes(doctor(ix))
    assert set(found) == {"file_chunk_count_mismatch"}
    assert found["file_chunk_count_mismatch"]["details"]["examples"]["docs/guide.md"]["rows"] >= 1


# -- FTS -------------------------------------------------------------------------------------------


def test_dropped_fts_index(ix: Indexed, onnx: Embedder) -> None:
    t = table(ix)
    (name,) = [i.name for i in t.list_indices() if i.index_type == "FTS"]
    t.drop_index(name)
    publish(ix, t.version)
    report = doctor(ix)
    found = codes(report)
    assert found["fts_missing"]["severity"] == "error"
    # The plain incremental run recreates a missing FTS index: no --full needed.
    assert found["fts_missing"]["fix"] == f"local-memory-indexer index {ix.project}"
    assert_fixed_by(ix, report, onnx)


def test_rows_written_after_the_fts_index(ix: Indexed, onnx: Embedder) -> None:
    t = table(ix)
    t.update(where="file_path = 'app/client.py'", values={"summary": "rewritten"})
    publish(ix, t.version)
    report = doctor(ix)
    found = codes(report)
    assert set(found) == {"fts_unindexed_rows"}
    assert found["fts_unindexed_rows"]["severity"] == "warning"
    assert found["fts_unindexed_rows"]["details"]["unindexed"] >= 1
    assert_fixed_by(ix, report, onnx)


# -- provenance and schema -------------------------------------------------------------------------


def test_provenance_with_the_wrong_dimension(ix: Indexed, onnx: Embedder) -> None:
    sql(ix, "UPDATE index_meta SET dimension = 1024")
    report = doctor(ix)
    found = codes(report)
    mismatch = found["vector_dimension_mismatch"]
    assert mismatch["severity"] == "error"
    assert mismatch["details"] == {"provenance": 1024, "stored": 384}
    assert mismatch["fix"] == f"local-memory-indexer index {ix.project} --rebuild"
    assert_fixed_by(ix, report, onnx)


def test_missing_provenance(ix: Indexed, onnx: Embedder) -> None:
    sql(ix, "DELETE FROM index_meta")
    report = doctor(ix)
    assert set(codes(report)) == {"provenance_missing"}
    assert_fixed_by(ix, report, onnx)


def test_schema_version_mismatches(ix: Indexed, onnx: Embedder) -> None:
    sql(ix, "UPDATE index_meta SET schema_version = 0")
    sql(ix, "UPDATE chunks SET schema_version = 0 WHERE file_path = 'docs/guide.md'")
    t = table(ix)
    t.update(where="file_path = 'web/connect.ts'", values={"schema_version": 0})
    publish(ix, t.version)
    report = doctor(ix)
    found = codes(report)
    assert {
        "schema_version_mismatch",
        "mirror_schema_version_mismatch",
        "lance_schema_version_mismatch",
    } <= set(found)
    assert all(found[c]["fix"].endswith("--rebuild") for c in found if "schema_version" in c)
    assert_fixed_by(ix, report, onnx)


def test_missing_lancedb_folder(ix: Indexed, onnx: Embedder) -> None:
    shutil.rmtree(ix.paths.lance_dir)
    report = doctor(ix)
    assert codes(report)["lance_missing"]["fix"].endswith("--rebuild")
    assert_fixed_by(ix, report, onnx)


def test_a_published_version_lancedb_does_not_have(ix: Indexed, onnx: Embedder) -> None:
    publish(ix, 999)  # e.g. a state DB restored next to an older LanceDB folder
    report = doctor(ix)
    assert codes(report)["lance_unavailable"]["fix"].endswith("--rebuild")
    assert "999" in codes(report)["lance_unavailable"]["message"]
    assert_fixed_by(ix, report, onnx)


# -- graph -------------------------------------------------------------------------------------------


def test_missing_graph_rows(ix: Indexed, onnx: Embedder) -> None:
    sql(ix, "DELETE FROM symbols WHERE file_path = 'app/retry.py'")
    sql(ix, "DELETE FROM call_edges WHERE file_path = 'app/retry.py'")
    report = doctor(ix)
    missing = codes(report)["graph_missing"]
    assert missing["details"]["examples"] == ["app/retry.py"]
    assert missing["fix"].endswith("--full")
    assert_fixed_by(ix, report, onnx)


def test_stale_graph_rows(ix: Indexed, onnx: Embedder) -> None:
    sql(
        ix,
        "INSERT INTO symbols(file_path, name, qualified_name, kind, language, start_line, end_line, chunk_id) "
        "VALUES ('gone.py', 'old', 'old', 'function', 'python', 1, 2, 'no-such-chunk')",
    )
    sql(
        ix,
        "INSERT INTO call_edges(file_path, caller_qualified, callee_name, line) VALUES ('gone.py', 'old', 'x', 1)",
    )
    sql(ix, "UPDATE import_edges SET resolved_path = 'gone.py'")
    report = doctor(ix)
    found = codes(report)
    assert found["graph_stale"]["details"] == {"symbols": 1, "call_edges": 1}
    assert found["graph_stale"]["fix"].endswith("--rebuild")
    assert found["graph_dangling_chunks"]["details"] == {"symbols": 1}
    assert found["import_targets_stale"]["severity"] == "info"
    assert_fixed_by(ix, report, onnx)


# -- contract ----------------------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file()
    }


def test_auto_fix_is_accepted_and_changes_nothing(ix: Indexed) -> None:
    sql(ix, "DELETE FROM chunks WHERE file_path = 'app/client.py'")
    before = snapshot(ix.paths.dir)
    out = call_tool("doctor_index", {"project_path": str(ix.project), "auto_fix": True})
    assert out["ok"] is True
    assert out["data"]["auto_fix"]["requested"] is True and out["data"]["auto_fix"]["applied"] is False
    assert "read-only" in out["data"]["auto_fix"]["note"]
    assert snapshot(ix.paths.dir) == before
    assert not out["data"]["healthy"]  # nothing was repaired
    # Findings are ordered by severity.
    severities = [f["severity"] for f in out["data"]["findings"]]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)


def test_an_unindexed_project_is_a_finding_not_an_error(tmp_path: Path, data_root: Path) -> None:
    (tmp_path / "p").mkdir()
    out = call_tool("doctor_index", {"project_path": str(tmp_path / "p")})
    assert out["ok"] is True
    (finding,) = out["data"]["findings"]
    assert (
        finding["code"] == "not_indexed"
        and finding["fix"] == f"local-memory-indexer index {(tmp_path / 'p').resolve()}"
    )


# -- issue 15.4: damage on disk -------------------------------------------------------------------


def test_deleted_fts_index_files(ix: Indexed, onnx: Embedder) -> None:
    assert delete_fts_files(ix.paths.lance_dir) > 0
    report = doctor(ix)
    found = codes(report)
    assert found["fts_unreadable"]["severity"] == "error", report["findings"]
    assert found["fts_unreadable"]["fix"] == f"local-memory-indexer index {ix.project} --full"
    assert report["healthy"] is False
    assert_fixed_by(ix, report, onnx)


def test_vectors_poisoned_on_disk(ix: Indexed, onnx: Embedder) -> None:
    covered = poison_vectors(ix.paths.lance_dir)
    report = doctor(ix)
    found = codes(report)
    assert found["vectors_corrupt"]["severity"] == "error", report["findings"]
    details = found["vectors_corrupt"]["details"]
    assert 1 <= details["non_finite"] <= covered + 1
    assert details["rows_checked"] == report["stats"]["lance_rows"]  # a small table is read whole
    assert report["suggested_command"] == f"local-memory-indexer index {ix.project} --rebuild"
    assert_fixed_by(ix, report, onnx)
