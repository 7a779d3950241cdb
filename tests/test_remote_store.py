"""An index whose LanceDB data lives on a real S3 server (``weed mini`` on 127.0.0.1).

Real components throughout: the real pipeline, ONNX model, LanceDB's own S3 client, SQLite and the
search tools. The state DB (provenance, mirror, graph, the published version) stays in the data
root; only the LanceDB databases move to ``s3://bucket/prefix/projects/<key>/<name>``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from local_memory_indexer.pipeline import index_project
from local_memory_indexer.remote import check_conditional_writes
from local_memory_search.store import clear_caches
from local_memory_search.tools import call_tool
from local_memory_shared.config import load_settings
from local_memory_shared.errors import InvalidArgument, StoreError
from local_memory_shared.lance_location import lance_location
from local_memory_shared.paths import project_paths
from search_support import env, index

from bench.s3_server import S3Server, ignoring_conditional_writes, s3_server

#: The tools that read LanceDB, with arguments; ``{chunk}`` / ``{file}`` are filled from a first search.
TOOL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search_hybrid", {"query": "connection pool retry"}),
    ("search_hybrid", {"query": "tokenize", "filters": {"language": "python"}}),
    ("search_semantic", {"query": "open a socket to a server"}),
    ("search_keyword", {"query": "ConnectionPool"}),
    ("retrieve_context_pack", {"query": "how are database connections retried"}),
    ("get_chunk", {"chunk_id": "{chunk}"}),
    ("read_chunk_neighbors", {"chunk_id": "{chunk}"}),
    ("search_similar", {"file_path": "{file}"}),
    ("explain_match", {"query": "connection pool", "result_id": "{chunk}"}),
    ("find_callers", {"symbol_name": "open_socket"}),
]

#: Envelope keys that differ between two runs of one answer (timings, cache flags).
VOLATILE = {"timings_ms", "took_ms", "elapsed_ms", "cached"}


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with s3_server(tmp_path_factory.mktemp("s3")) as server:
        yield server


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _answers(project: Path, data_root: Path, extra_env: dict[str, str]) -> list[dict[str, Any]]:
    clear_caches()
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data_root), **extra_env):
        first = call_tool("search_keyword", {"query": "ConnectionPool", "project_path": str(project)})
        top = first["results"][0]
        fill = {"{chunk}": top["chunk_id"], "{file}": top["file_path"]}
        out = []
        for name, args in TOOL_CALLS:
            filled = {k: fill.get(v, v) if isinstance(v, str) else v for k, v in args.items()}
            out.append(_strip(call_tool(name, {**filled, "project_path": str(project)})))
        return out


def test_an_index_on_s3_answers_every_search_tool_exactly_as_a_local_index(
    s3: S3Server, sample_project: Path, indexed_sample: Any, tmp_path: Path
) -> None:
    remote_root = tmp_path / "data"
    with env(**s3.env("same-answers")):
        summary = index(sample_project, remote_root)
    assert summary.chunks_total >= 10 and not summary.errors
    # Nothing of LanceDB is under the data root: only the state DB and the empty marker folder.
    paths = project_paths(remote_root, sample_project)
    assert paths.lance_dir.is_dir() and not any(paths.lance_dir.iterdir())

    local = _answers(sample_project, indexed_sample.data_root, {"LOCAL_MEMORY_LANCE_URI": ""})
    remote = _answers(sample_project, remote_root, s3.env("same-answers"))
    for (name, _), a, b in zip(TOOL_CALLS, local, remote, strict=True):
        assert b.get("ok") is True, (name, b)
        assert a == b, name
    # The remote index really is read from S3: with the store unreachable, LanceDB is unavailable.
    clear_caches()
    with env(
        LOCAL_VECTOR_SEARCH_DATA_ROOT=str(remote_root),
        **{**s3.env("same-answers"), "AWS_ENDPOINT_URL": "http://127.0.0.1:9"},
    ):
        down = call_tool("search_hybrid", {"query": "connection pool", "project_path": str(sample_project)})
    clear_caches()
    assert "lance_unavailable" in {w["code"] for w in down["warnings"]}


def _write_files(root: Path, tag: str, n: int = 30) -> Path:
    for i in range(n):
        (root / "pkg").mkdir(parents=True, exist_ok=True)
        (root / f"pkg/mod_{i:03d}.py").write_text(
            f'def task_{i}(job):\n    """Run the {tag} job of module {i}."""\n    return job.get("{tag}") + {i}\n'
        )
    return root


#: ``python -c``: SIGKILL this process after its first batch is written to S3, before SQLite
#: records and publishes it (``write_batch`` is that one transaction).
KILL_BEFORE_RECORDING = textwrap.dedent(
    """
    import os, signal, sys
    from local_memory_indexer.state_writer import StateWriter
    def write_batch(self, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)
    StateWriter.write_batch = write_batch
    from local_memory_indexer.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


def _cli(env_: dict[str, str], *args: str, killer: bool = False) -> subprocess.CompletedProcess[str]:
    cmd = (
        [sys.executable, "-c", KILL_BEFORE_RECORDING]
        if killer
        else [sys.executable, "-m", "local_memory_indexer.cli"]
    )
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env_, timeout=600)


@pytest.mark.slow
def test_a_writer_killed_mid_run_on_s3_leaves_the_last_published_version_readable(
    s3: S3Server, tmp_path: Path
) -> None:
    project = _write_files(tmp_path / "proj", "alpha")
    data = tmp_path / "data"
    env_ = {**os.environ, **s3.env("killed"), "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(data)}
    first = _cli(env_, "index", str(project), "--json")
    assert first.returncode == 0, first.stderr[-3000:]
    published = json.loads(first.stdout)["data"]["published_version"]

    _write_files(project, "omega")  # every file changes: the killed run rewrites all its rows
    killed = _cli(env_, "index", str(project), "--json", killer=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]

    clear_caches()
    with env(**{k: v for k, v in env_.items() if k.startswith(("AWS_", "LOCAL_"))}):
        answer = call_tool("search_keyword", {"query": "alpha job", "project_path": str(project)})
        omega = call_tool("search_keyword", {"query": "omega", "project_path": str(project)})
        status = call_tool("index_status", {"project_path": str(project)})
        location = lance_location(project_paths(data, project).dir, "lance", load_settings().lance_uri)
        table = location.connect().open_table("chunks")
    assert answer["ok"] and len(answer["results"]) >= 5
    assert all("alpha" in r["text"] for r in answer["results"]), [r["text"] for r in answer["results"]]
    assert omega["results"] == []  # the killed run's rows are written on S3 but never published
    assert json.dumps(status).count(str(published)) >= 1
    assert table.version > published  # the killed run did write to S3…
    table.checkout(published)  # …and the published version is intact beside it
    assert table.count_rows() == 30

    # The next run repairs and publishes the new text.
    again = _cli(env_, "index", str(project), "--json")
    assert again.returncode == 0, again.stderr[-3000:]
    clear_caches()
    with env(**{k: v for k, v in env_.items() if k.startswith(("AWS_", "LOCAL_"))}):
        omega = call_tool("search_keyword", {"query": "omega", "project_path": str(project)})
    clear_caches()
    assert len(omega["results"]) >= 5


#: ``python -c``: append BATCHES single-row commits to one S3 table, starting at a shared instant.
COMMITTER = textwrap.dedent(
    """
    import sys, time
    import pyarrow as pa
    from pathlib import Path
    from local_memory_shared.lance_location import lance_location
    from local_memory_shared.config import load_settings
    who, start, batches = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    table = lance_location(Path(sys.argv[4]), "lance", load_settings().lance_uri).connect().open_table("race")
    while time.time() < start:
        time.sleep(0.005)
    for i in range(batches):
        table.add(pa.table({"who": [who], "n": [i]}))
    """
)


def test_two_committers_racing_on_one_s3_table_lose_nothing(s3: S3Server, tmp_path: Path) -> None:
    import pyarrow as pa

    env_ = {**os.environ, **s3.env("race")}
    with env(**s3.env("race")):
        location = lance_location(tmp_path / "p", "lance", load_settings().lance_uri)
        location.connect().create_table("race", schema=pa.schema([("who", pa.string()), ("n", pa.int64())]))
    batches = 12
    start = time.time() + 4  # both interpreters import lancedb first
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", COMMITTER, who, str(start), str(batches), str(tmp_path / "p")],
            env=env_,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
    with env(**s3.env("race")):
        rows = location.connect().open_table("race").to_arrow().to_pylist()
    assert sorted((r["who"], r["n"]) for r in rows) == [(w, i) for w in ("a", "b") for i in range(batches)]


def test_a_store_ignoring_conditional_writes_is_refused_with_the_fix(tmp_path: Path) -> None:
    with s3_server(tmp_path / "open-s3", auth=False) as open_s3:
        with env(**open_s3.env("honours")):
            check_conditional_writes(lance_location(tmp_path, "lance", load_settings().lance_uri))
        with ignoring_conditional_writes(open_s3.endpoint) as proxy:
            with env(**{**open_s3.env("ignores"), "AWS_ENDPOINT_URL": proxy}):
                location = lance_location(tmp_path, "lance", load_settings().lance_uri)
                with pytest.raises(StoreError) as caught:
                    check_conditional_writes(location)
                # The indexer refuses before it writes anything.
                with pytest.raises(StoreError):
                    index(_write_files(tmp_path / "proj", "x", 2), tmp_path / "data")
    assert "s3+ddb://" in caught.value.message and "If-None-Match" in caught.value.message
    assert caught.value.details["fix"].startswith("LOCAL_MEMORY_LANCE_URI=s3+ddb://")


def test_a_malformed_lance_uri_is_an_invalid_argument_naming_the_variable() -> None:
    with env(LOCAL_MEMORY_LANCE_URI="ftp://bucket/x"), pytest.raises(InvalidArgument) as caught:
        load_settings()
    assert caught.value.field == "LOCAL_MEMORY_LANCE_URI"
    with env(LOCAL_MEMORY_LANCE_STORAGE_OPTIONS="[1]", LOCAL_MEMORY_LANCE_URI="s3://b/p"):
        with pytest.raises(InvalidArgument) as options:
            lance_location(Path("/tmp/x"), "lance", load_settings().lance_uri)
    assert options.value.field == "LOCAL_MEMORY_LANCE_STORAGE_OPTIONS"
    with env(LOCAL_MEMORY_LANCE_URI="s3+ddb://bucket/org/?ddbTableName=commits"):
        uri = lance_location(Path("/d/projects/k-1"), "lance.2", load_settings().lance_uri).uri
    assert uri == "s3+ddb://bucket/org/projects/k-1/lance.2?ddbTableName=commits"


def test_rebuild_beside_and_delete_work_on_the_store(s3: S3Server, tmp_path: Path) -> None:
    from local_memory_indexer.projects import delete_project_index

    project = _write_files(tmp_path / "proj", "gamma", 4)
    data = tmp_path / "data"
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data), **s3.env("rebuild")):
        settings = load_settings()
        index_project(project, settings=settings)
        summary = index_project(project, settings=settings, rebuild=True)
        clear_caches()
        answer = call_tool("search_keyword", {"query": "gamma", "project_path": str(project)})
        clear_caches()
        pdir = project_paths(data, project).dir
        rebuilt = lance_location(pdir, "lance.1", settings.lance_uri)
        assert summary.chunks_total == 4 and answer["results"] and not answer["warnings"]
        assert "chunks" in rebuilt.connect().list_tables().tables  # built beside, on the store
        prefix = f"rebuild/projects/{pdir.name}/"
        assert {k.split("/")[3] for k in _objects(s3, prefix)} == {"lance", "lance.1"}
        delete_project_index(settings, project)
    # Every object is gone (weed still lists the emptied "folders" as prefixes; S3 has none).
    assert _objects(s3, prefix) == [] and not pdir.exists()


def _objects(s3: S3Server, prefix: str) -> list[str]:
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=s3.endpoint,
        aws_access_key_id=s3.env("")["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=s3.env("")["AWS_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
    )
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=s3.bucket, Prefix=prefix)
    return [o["Key"] for page in pages for o in page.get("Contents", [])]
