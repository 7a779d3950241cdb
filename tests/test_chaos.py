"""Chaos suite (issue 15): SIGKILL at random points of every run kind, and damage to every file kind.

Kills: a real ``local-memory-indexer`` subprocess SIGKILLs itself on the Nth call of a method of
the publication protocol, picked by a seeded random generator (``CHAOS_SEED``), for each run kind
(first index, re-index, ``--full``, ``--rebuild``) in turn. The next plain ``index`` must leave an
index identical to a clean one of the same files (the same chunk ids and content hashes in the
published LanceDB version and in the SQLite mirror), no leftovers, and searches that answer.

Corruptions: a ``.lance`` data file, the FTS index files and ``state.db`` are damaged on disk;
``doctor_index`` and ``health_check`` must name the damage.

``make test`` runs the short form (``CHAOS_KILLS`` defaults to 4, one per run kind);
``make test-chaos`` runs the full form (``CHAOS_KILLS=26``).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
from pathlib import Path
from typing import Any

import lancedb
import pytest
from index_damage import delete_fts_files, poison_vectors
from indexing_support import run_cli, summary_of
from local_memory_search.store import clear_caches
from local_memory_search.tools import call_tool
from local_memory_shared.paths import ProjectPaths, project_paths
from search_support import env, index
from test_crash_recovery import write_project

pytestmark = pytest.mark.chaos

KILLS = int(os.environ.get("CHAOS_KILLS", "4"))
SEED = int(os.environ.get("CHAOS_SEED", "15"))
FILES = 20  # two batches (16 + 4) per run
KINDS = ("first", "reindex", "full", "rebuild")
#: (method, highest N that every run kind reaches): a kill lands on that call of the method.
KILL_POINTS = (
    ("local_memory_indexer.state_writer:StateWriter.txn", 5),  # every SQLite commit, the swap too
    ("local_memory_indexer.store:ChunkStore.replace_files", 2),  # LanceDB deletes + adds
    ("local_memory_indexer.store:ChunkStore.refresh_indices", 1),  # FTS build, optimize
    ("local_memory_indexer.store:ChunkStore.prune", 1),  # after the final publish
    ("local_memory_indexer.embed_cache:EmbedCache.put", 1),  # vectors computed, not yet stored
)


def plan(n: int, seed: int) -> list[tuple[str, str, int]]:
    """``n`` kills: (run kind, method, N), run kinds in turn, points drawn from ``seed``."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        target, top = rng.choice(KILL_POINTS)
        out.append((KINDS[i % len(KINDS)], target, rng.randint(1, top)))
    return out


def published_keys(paths: ProjectPaths) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    """(file, chunk id, content hash) of the published LanceDB version, and of the mirror."""
    conn = sqlite3.connect(f"file:{paths.state_db}?mode=ro", uri=True)
    try:
        folder, version = conn.execute("SELECT lance_dir, published_version FROM projects").fetchone()
        mirror = {tuple(r) for r in conn.execute("SELECT file_path, chunk_id, content_hash FROM chunks")}
    finally:
        conn.close()
    table = lancedb.connect(str(paths.dir / folder)).open_table("chunks")
    table.checkout(version)
    rows = table.to_arrow().select(["file_path", "chunk_id", "content_hash"]).to_pylist()
    lance = [(r["file_path"], r["chunk_id"], r["content_hash"]) for r in rows]
    assert len(lance) == len(set(lance)), "duplicate rows in the published version"
    return set(lance), mirror


def leftovers(paths: ProjectPaths) -> list[str]:
    """Files a finished run must not leave: a side DB, LanceDB folders neither served nor retired."""
    conn = sqlite3.connect(f"file:{paths.state_db}?mode=ro", uri=True)
    try:
        keep = {conn.execute("SELECT lance_dir FROM projects").fetchone()[0]}
        keep |= {r[0] for r in conn.execute("SELECT name FROM retired_stores")}
    finally:
        conn.close()
    return sorted(
        p.name
        for p in paths.dir.iterdir()
        if p.name.startswith("state.next") or (p.name.startswith("lance") and p.name not in keep)
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One project: an index of its v1 files (the start of every kill) and a clean index of v2."""
    root = tmp_path_factory.mktemp("chaos")
    project = write_project(root / "proj", "v1", FILES)
    index(project, root / "base")
    write_project(project, "v22", FILES)  # what every run kind then indexes
    index(project, root / "clean")
    return {
        "root": root,
        "project": project,
        "clean": published_keys(project_paths(root / "clean", project))[0],
    }


@pytest.mark.parametrize(("kind", "target", "nth"), plan(KILLS, SEED))
def test_a_kill_at_a_random_point_ends_identical_to_a_clean_index(
    world: dict[str, Any], tmp_path: Path, kind: str, target: str, nth: int
) -> None:
    project, data = world["project"], tmp_path / "data"
    if kind != "first":
        shutil.copytree(world["root"] / "base", data)
    env_ = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data)}
    flags = {"first": [], "reindex": [], "full": ["--full"], "rebuild": ["--rebuild"]}[kind]
    killed = run_cli(env_, "index", str(project), *flags, "--json", kill_at=(target, nth))
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr[-2000:])
    if kind != "first":  # the killed run never takes the published index away (a rebuild too)
        clear_caches()
        with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data)):
            got = call_tool("search_keyword", {"query": "task_3_1", "project_path": str(project)})
        assert got["ok"] and got["results"][0]["symbol_name"] == "task_3_1", got

    summary_of(run_cli(env_, "index", str(project), "--json"))
    paths = project_paths(data, project)
    lance, mirror = published_keys(paths)
    assert lance == mirror == world["clean"]
    assert leftovers(paths) == []
    clear_caches()
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data)):
        for tool in ("search_hybrid", "search_keyword", "search_semantic"):
            got = call_tool(tool, {"query": "task_3_1 run job kind 1", "project_path": str(project)})
            assert got["ok"] and got["results"], got
            assert not got["warnings"], got["warnings"]
        health = call_tool("health_check", {"project_path": str(project)})
    assert health["data"]["status"] == "ready", health["data"]


def _damage_state_db(paths: ProjectPaths) -> None:
    raw = bytearray(paths.state_db.read_bytes())
    raw[4096:8192] = b"\xff" * 4096  # page 2 onwards: the schema's tables become unreadable
    paths.state_db.write_bytes(bytes(raw))


#: kind of file → (damage, doctor_index finding code, health_check status and failing check)
CORRUPTIONS = {
    "lance_data_file": (lambda p: poison_vectors(p.lance_dir), "vectors_corrupt", ("degraded", "vectors")),
    "fts_index_files": (lambda p: delete_fts_files(p.lance_dir), "fts_unreadable", ("degraded", "fts")),
    "state_db": (_damage_state_db, "state_unreadable", ("not_ready", "sqlite")),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_damage_to_each_file_kind_is_diagnosed(world: dict[str, Any], tmp_path: Path, kind: str) -> None:
    damage, finding, (status, check) = CORRUPTIONS[kind]
    data = tmp_path / "data"
    shutil.copytree(world["root"] / "clean", data)
    paths = project_paths(data, world["project"])
    args = {"project_path": str(world["project"])}
    clear_caches()
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data)):
        before = call_tool("doctor_index", args)["data"]
        assert before["healthy"], before["findings"]
        damage(paths)
        clear_caches()
        report = call_tool("doctor_index", args)["data"]
        health = call_tool("health_check", args)["data"]
    found = {f["code"]: f for f in report["findings"]}
    assert finding in found and found[finding]["severity"] == "error", report["findings"]
    assert report["healthy"] is False
    assert health["status"] == status, health
    assert health["checks"][check]["status"] != "ok", health["checks"][check]
