"""The memory writer against the real thing: vault files, git, LanceDB, SQLite and the ONNX model."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from local_memory_indexer.memory.hits import flush_hits, record_hits
from local_memory_indexer.memory.sync import rebuild, sync_vault
from local_memory_indexer.memory.writer import MemoryWriter
from local_memory_shared.config import load_memory_settings, load_settings
from local_memory_shared.embedding import embedder_from_settings
from local_memory_shared.errors import InvalidArgument, MalformedRecord, NotFound, VersionConflict
from local_memory_shared.memory import parse_record, published_version


class CountingEmbedder:
    """The real ONNX embedder, counting how many texts it embeds (to prove hits never re-embed)."""

    def __init__(self, inner):
        self.inner = inner
        self.texts = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed_documents(self, texts, progress=None):
        self.texts += len(texts)
        return self.inner.embed_documents(texts, progress)


@pytest.fixture(scope="module")
def onnx():
    return embedder_from_settings(load_settings())


@pytest.fixture
def root(monkeypatch):
    path = Path(tempfile.mkdtemp(prefix="lmw", dir="/tmp"))  # short: the hit socket lives here
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(path))
    monkeypatch.delenv("LOCAL_MEMORY_VAULT", raising=False)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def writer(root, onnx):
    w = MemoryWriter(load_memory_settings(), embedder=CountingEmbedder(onnx), commit_delay=3600)
    yield w
    w.close()


def trap(title="Stripe retries webhooks", **kw):
    return {
        "project": "acme",
        "kind": "trap",
        "title": title,
        "content": kw.pop("content", "Dedupe on event id."),
        "tags": kw.pop("tags", ["stripe", "webhook"]),
        **kw,
    }


def rows(w):
    w.index.refresh()
    return {r["id"]: r for r in w.index.table.search().limit(100_000).to_list()}


def commits(w):
    return int(w.vault.git("rev-list", "--count", "HEAD").strip())


def test_write_creates_file_row_view_and_one_commit(writer):
    res = writer.write(trap(severity="high", domain="/acme/pay", meta={"p": 3}, paths=["src/pay/**"]))
    r = res.record
    assert res.created and res.to_dict()["tags_indexed"] == 2
    assert res.path == f"projects/acme/trap/{r.id}-stripe-retries-webhooks.md"
    on_disk = parse_record((writer.vault.root / res.path).read_text(), res.path)
    assert on_disk == r
    row = rows(writer)[r.id]
    assert (
        row["title"] == r.title
        and row["tree_labels"] == ["acme", "pay"]
        and json.loads(row["meta"]) == {"p": 3}
    )
    assert row["file_path"] == res.path and len(row["vector"]) == writer.embedder.dimension
    view = (writer.vault.root / "projects/acme/trap.md").read_text()
    assert r.id in view and "Stripe retries webhooks" in view
    assert published_version(writer.index.conn) == writer.index.table.version
    writer.git.flush()
    assert commits(writer) == 1
    assert not writer.vault.git("status", "--porcelain").strip()


def test_burst_of_writes_is_one_commit(writer):
    for i in range(5):
        writer.write({"project": "acme", "kind": "note", "title": f"note {i}", "content": f"body {i}"})
    assert writer.git.flush() is True
    assert commits(writer) == 1
    assert "5 change" in writer.vault.git("log", "-1", "--format=%s")


def test_similar_records_are_reported_never_blocking(writer):
    first = writer.write(
        {
            "project": "acme",
            "kind": "decision",
            "title": "Use Postgres for billing",
            "content": "Billing data lives in Postgres 16.",
        }
    )
    second = writer.write(
        {
            "project": "acme",
            "kind": "decision",
            "title": "Billing uses Postgres",
            "content": "We keep billing in Postgres.",
        }
    )
    assert second.created and second.record.id != first.record.id
    assert second.similar[0]["id"] == first.record.id and second.similar[0]["similarity"] > 0.5


def test_trap_recurrence_bumps_occurrences_instead_of_duplicating(writer):
    first = writer.write(trap())
    again = writer.write(trap(title="Stripe retries webhooks!", tags=["retry"]))
    assert again.recurred and not again.created and again.record.id == first.record.id
    assert again.record.occurrences == 2 and again.record.tags == ("stripe", "webhook", "retry")
    assert len(rows(writer)) == 1
    note = writer.write({"project": "acme", "kind": "note", "title": "Stripe retries webhooks"})
    assert note.created and len(rows(writer)) == 2


def test_edit_append_section_fields_and_expected_version(writer):
    r = writer.write(trap(content="Intro.\n\n## Fix\nold fix\n\n## Notes\nkeep me\n")).record
    e = writer.edit(
        r.id,
        replace_section=("Fix", "new fix"),
        append="Seen again.",
        expected_version=1,
        set_fields={"severity": "critical", "tags": ["stripe"]},
    )
    assert e.record.version == 2 and e.record.severity == "critical" and e.record.tags == ("stripe",)
    assert e.record.content == "Intro.\n\n## Fix\nnew fix\n\n## Notes\nkeep me\n\nSeen again.\n"
    with pytest.raises(VersionConflict) as err:
        writer.edit(r.id, append="late", expected_version=1)
    assert err.value.field == "expected_version" and err.value.details["current_version"] == 2
    assert "late" not in writer.get(r.id).content
    with pytest.raises(InvalidArgument) as err:
        writer.edit(r.id, set_fields={"hits": 5})
    assert err.value.field == "set_fields.hits"


def test_supersede_keeps_both_and_links_them(writer):
    old = writer.write({"project": "acme", "kind": "decision", "title": "Use MySQL", "content": "x"}).record
    new = writer.supersede(old.id, {"title": "Use Postgres", "content": "y"}).record
    got_old = writer.get(old.id)
    assert got_old.status == "superseded" and got_old.succeeded_by == new.id and got_old.version == 2
    assert new.supersedes == (old.id,) and new.kind == "decision"
    links = writer.index.conn.execute("SELECT source_id, target_id, link_type FROM memory_links").fetchall()
    assert (new.id, old.id, "supersedes") in [tuple(x) for x in links]
    assert rows(writer)[old.id]["succeeded_by"] == new.id
    with pytest.raises(InvalidArgument):
        writer.supersede(old.id, {"title": "again"})


def test_status_and_archive(writer):
    r = writer.write(trap()).record
    assert writer.set_status(r.id, "resolved").record.status == "resolved"
    a = writer.archive(r.id)
    assert a.record.status == "archived" and (writer.vault.root / a.path).is_file()
    with pytest.raises(InvalidArgument) as err:
        writer.set_status(r.id, "gone")
    assert err.value.field == "status"
    with pytest.raises(NotFound):
        writer.archive("01ARZ3NDEKTSV4RRFFQ69G5FAV")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"severity": "huge"}, "severity"),
        ({"kind": "poem"}, "kind"),
        ({"title": ""}, "title"),
        ({"confidence": 2}, "confidence"),
        ({"meta": [1]}, "meta"),
        ({"valid_from": "yesterday"}, "valid_from"),
        ({"tags": ["two words"]}, "tags"),
        ({"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "id"),
    ],
)
def test_invalid_fields_name_the_field_and_write_nothing(writer, change, field):
    with pytest.raises(InvalidArgument) as err:
        writer.write({**trap(), **change})
    assert err.value.field == field
    assert writer.vault.record_files() == []
    assert not list(writer.vault.root.rglob("*.tmp"))
    assert rows(writer) == {}


def test_scratch_expires_after_configured_days(root, onnx, monkeypatch):
    monkeypatch.setenv("LOCAL_MEMORY_SCRATCH_TTL_DAYS", "2")
    w = MemoryWriter(load_memory_settings(), embedder=onnx, commit_delay=3600)
    try:
        s = w.write({"project": "acme", "kind": "scratch", "title": "tmp"}).record
        n = w.write({"project": "acme", "kind": "note", "title": "kept"}).record
        assert s.expires is not None and s.expires[:10] > s.created[:10] and n.expires is None
        from datetime import datetime

        days = datetime.fromisoformat(s.expires[:-1]) - datetime.fromisoformat(s.created[:-1])
        assert days.days == 2
    finally:
        w.close()


def test_hand_edit_is_picked_up_and_malformed_file_reported_by_line(writer):
    r = writer.write(trap()).record
    path = writer.vault.root / r.rel_path
    path.write_text(path.read_text().replace("Dedupe on event id.", "Dedupe on the event id, always."))
    report = sync_vault(writer)
    assert report["indexed"] == 1 and report["malformed"] == []
    row = rows(writer)[r.id]
    assert "always" in row["content"] and row["version"] == 2
    assert "version: 2" in path.read_text()
    broken = path.read_text().replace("severity", "x").replace("status: active", "status: [active")
    path.write_text(broken)
    report = sync_vault(writer)
    assert [(m["path"], m["line"]) for m in report["malformed"]] == [(r.rel_path, 5)]
    assert path.read_text() == broken  # content kept on disk
    assert r.id not in rows(writer)
    with pytest.raises(MalformedRecord) as err:
        writer.edit(r.id, append="x")
    assert err.value.details == {"path": r.rel_path, "line": 5}
    path.write_text(broken.replace("status: [active", "status: active"))
    assert sync_vault(writer)["malformed"] == []
    assert r.id in rows(writer)


def test_editor_saving_between_read_and_write_is_never_overwritten(writer):
    r = writer.write(trap(content="line 0\n")).record
    path = writer.vault.root / r.rel_path
    saves = []

    def change(rec):
        if not saves:  # an editor saves while the writer is mid-operation (after its read)
            path.write_text(path.read_text().replace("line 0", "line 0\neditor line"))
            saves.append(1)
        return rec.with_changes(content=rec.content + "writer line\n")

    result = writer._update(r.id, change, expected_version=None)
    text = path.read_text()
    assert "editor line" in text and "writer line" in text
    assert result.record.content == "line 0\neditor line\nwriter line\n"


def test_hits_count_eligible_once_per_session_and_never_reembed(writer):
    t = writer.write(trap()).record
    n = writer.write({"project": "acme", "kind": "note", "title": "a note"}).record
    before = writer.embedder.texts
    vec_before = np.array(rows(writer)[t.id]["vector"])
    out = record_hits(writer, [t.id, n.id, "nope", "01ARZ3NDEKTSV4RRFFQ69G5FAV"], "s1")
    assert out["recorded"] == [t.id]
    assert record_hits(writer, [t.id], "s1")["recorded"] == []
    assert record_hits(writer, [t.id], "s2")["recorded"] == [t.id]
    assert record_hits(writer, [t.id], None)["recorded"] == [t.id]
    live = writer.index.conn.execute("SELECT hits FROM memory_hits WHERE id = ?", (t.id,)).fetchone()[0]
    assert live == 3 and writer.get(t.id).hits == 0  # frontmatter waits for the batch
    assert flush_hits(writer) == 1
    on_disk = writer.get(t.id)
    assert on_disk.hits == 3 and on_disk.last_hit and on_disk.version == 1
    row = rows(writer)[t.id]
    assert row["hits"] == 3 and np.array_equal(np.array(row["vector"]), vec_before)
    assert writer.embedder.texts == before
    assert sync_vault(writer)["indexed"] == 0  # our own counter write is not a hand edit
    with pytest.raises(InvalidArgument) as err:
        record_hits(writer, "x", None)
    assert err.value.field == "ids"


def test_rebuild_from_the_vault_reproduces_every_row(root, onnx, writer):
    a = writer.write(trap(domain="/acme/pay", also=["/acme/api"], meta={"n": 1})).record
    b = writer.write(
        {"project": "beta", "kind": "decision", "title": "Use Postgres", "content": f"see {a.id}"}
    ).record
    writer.supersede(b.id, {"title": "Use Postgres 16"})
    writer.write({"project": "beta", "kind": "scratch", "title": "scratch pad", "content": "tmp"})
    record_hits(writer, [a.id], "s")
    writer.flush()
    before = rows(writer)
    tables = ("memory_files", "memory_links")
    sql_before = {t: sorted(map(tuple, writer.index.conn.execute(f"SELECT * FROM {t}"))) for t in tables}
    writer.close()
    shutil.rmtree(root / "memory")  # the whole index: LanceDB, index.db, embedding cache
    w2 = MemoryWriter(load_memory_settings(), embedder=onnx, commit_delay=3600)
    try:
        report = rebuild(w2)
        assert report["indexed"] == len(before) == 4 and report["malformed"] == []
        after = rows(w2)
        assert sorted(after) == sorted(before)
        for rid, row in before.items():
            other = after[rid]
            assert {k: v for k, v in row.items() if k != "vector"} == {
                k: v for k, v in other.items() if k != "vector"
            }
            assert np.allclose(row["vector"], other["vector"], atol=1e-5)
        for t in tables:
            got = sorted(map(tuple, w2.index.conn.execute(f"SELECT * FROM {t}")))
            assert _strip(t, got) == _strip(t, sql_before[t])
        assert published_version(w2.index.conn) == w2.index.table.version
    finally:
        w2.close()


def test_two_processes_never_lose_an_update(writer, root):
    r = writer.write(trap(content="start\n")).record
    writer.close()
    script = (
        "import sys; from local_memory_indexer.memory.writer import MemoryWriter\n"
        "w = MemoryWriter(commit_delay=0.2)\n"
        "for i in range(8): w.edit(sys.argv[1], append=f'{sys.argv[2]}-{i}')\n"
        "w.close()\n"
    )
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", script, r.id, name]) for name in ("alpha", "beta")]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    w = MemoryWriter(load_memory_settings(), commit_delay=3600)
    try:
        final = w.get(r.id)
        for name in ("alpha", "beta"):
            for i in range(8):
                assert f"{name}-{i}" in final.content
        assert final.version == 17
        assert rows(w)[r.id]["version"] == 17
        conn = sqlite3.connect(root / "memory" / "index.db")
        assert conn.execute("SELECT version FROM memory_files WHERE id = ?", (r.id,)).fetchone()[0] == 17
    finally:
        w.close()


def _strip(table, rows_):
    """memory_files.indexed_at (column 8) says when, not what: leave it out of the comparison."""
    return [tuple(x for i, x in enumerate(r) if i != 8) for r in rows_] if table == "memory_files" else rows_


def test_malformed_file_is_reported_by_health_check_and_doctor_with_its_path(writer, root):
    """Issue 11.5: a malformed hand-edited record is named (path and line) by both diagnostics."""
    from local_memory_search.tools import call_tool
    from search_support import index, write_project

    project = write_project(root / "proj", {"a.py": "def f():\n    return 1\n"}, git=False)
    index(project, root)
    r = writer.write(trap()).record
    path = writer.vault.root / r.rel_path
    assert call_tool("health_check", {"project_path": str(project)})["data"]["status"] == "ready"
    broken = path.read_text().replace("status: active", "status: [active")
    path.write_text(broken)
    sync_vault(writer)
    health = call_tool("health_check", {"project_path": str(project)})["data"]
    assert health["status"] == "degraded"
    assert f"{path}:5" in health["checks"]["memory"]["detail"]
    doctor = call_tool("doctor_index", {"project_path": str(project)})["data"]
    (finding,) = [f for f in doctor["findings"] if f["code"] == "memory_malformed_record"]
    assert finding["details"]["path"] == str(path) and f"{path}:5" in finding["message"]
    assert "memory sync" in finding["fix"]
    assert path.read_text() == broken  # reported, never rewritten


def test_doctor_rebuild_recreates_a_deleted_memory_index_from_the_vault(writer, root):
    """Seed 000's ``memo doctor --rebuild``: the CLI rebuilds the index from the Markdown files."""
    import json
    import os
    import subprocess
    import sys

    texts = [
        "Stripe retries webhooks for three days",
        "Postgres vacuum blocks on long transactions",
        "Use UTC in logs",
    ]
    ids = {writer.write(trap(title=t, content=t + ".", tags=[t.split()[0].lower()])).record.id for t in texts}
    assert len(ids) == 3
    writer.close()
    shutil.rmtree(writer.paths.dir / "lance")
    exe = str(Path(sys.executable).with_name("local-memory-indexer"))
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(root)}
    out = subprocess.run(
        [exe, "doctor", "--rebuild", "--json"], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["data"]["indexed"] == len(ids)
    check = subprocess.run([exe, "doctor", "--json"], env=env, capture_output=True, text=True, timeout=600)
    assert check.returncode == 0 and json.loads(check.stdout)["data"]["malformed"] == []
    from local_memory_indexer.memory.writer import MemoryWriter

    again = MemoryWriter(load_memory_settings(), commit_delay=3600)
    try:
        assert set(rows(again)) == ids
    finally:
        again.close()
