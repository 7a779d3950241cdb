"""index_status on a real index: counts, model, and freshness after real edits on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from local_memory_indexer.pipeline import index_project
from local_memory_search.diagnostics import index_status
from local_memory_search.tools import call_tool
from local_memory_shared.config import load_settings
from local_memory_shared.embedding import create_embedder
from local_memory_shared.embedding.base import Embedder
from local_memory_shared.paths import project_paths
from local_memory_shared.state import open_state_ro

FILES = {
    ".gitignore": "ignored/\n*.log\n",
    "app/client.py": '''
        class Client:
            def send(self, payload):
                """Send one payload."""
                return payload
        ''',
    "app/retry.py": '''
        def with_retry(fn):
            """Call fn until it succeeds."""
            return fn()
        ''',
    "app/util.py": "def helper():\n    return 1\n",
    "web/connect.ts": "export function connect(url: string) {\n  return url;\n}\n",
    "docs/guide.md": "# Guide\n\nRetries happen.\n",
}


@pytest.fixture(scope="module")
def onnx() -> Embedder:
    return create_embedder("onnx")


def write(root: Path, files: dict[str, str]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip("\n"))


@pytest.fixture
def project(tmp_path: Path, data_root: Path, onnx: Embedder) -> Path:
    root = tmp_path / "proj"
    write(root, FILES)
    index_project(root, embedder=onnx)
    return root


def status(project: Path) -> dict:
    return index_status(str(project))["data"]


def test_counts_languages_model_and_time(project: Path) -> None:
    out = status(project)
    conn = open_state_ro(project_paths(load_settings().data_root, project).state_db)
    try:
        mirror_chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        per_language = dict(
            conn.execute("SELECT language, COUNT(*) FROM chunks GROUP BY language").fetchall()
        )
    finally:
        conn.close()
    assert out["indexed_files"] == 5  # .gitignore is not indexed
    assert out["indexed_chunks"] == mirror_chunks == out["lance_rows"] > 0
    assert out["chunks_by_language"] == per_language
    assert set(out["chunks_by_language"]) == {"python", "typescript", "markdown"}
    assert out["files_by_language"] == {"python": 3, "typescript": 1, "markdown": 1}
    assert out["model"] == {
        "backend": "onnx",
        "model": "all-MiniLM-L6-v2",
        "dimension": 384,
        "provenance": "recorded",
    }
    assert out["schema_version"] == 1 and out["status"] == "ready" and out["lance_state"] == "ok"
    assert out["last_indexed_at"].endswith("Z") and out["published_version"] >= 1
    fresh = out["freshness"]
    assert fresh["fresh"] is True and out["stale_ratio"] == 0.0
    assert (fresh["changed"], fresh["new"], fresh["deleted"], fresh["unchanged"]) == (0, 0, 0, 5)


def test_freshness_sees_changed_new_and_deleted_files(project: Path) -> None:
    (project / "app/client.py").write_text("class Client:\n    pass\n")  # changed content
    util = project / "app/util.py"
    os.utime(util, (time.time() + 5, time.time() + 5))  # touched, same content: not stale
    (project / "web/connect.ts").unlink()  # deleted
    write(project, {"app/new_feature.py": "def feature():\n    return 2\n"})  # new
    # Not new: ignored by .gitignore, vendored, empty, binary.
    write(project, {"ignored/skip.py": "x = 1\n", "debug.log": "noise\n", "node_modules/pkg/index.js": "x\n"})
    (project / "app/empty.py").write_text("")
    (project / "app/blob.dat").write_bytes(b"\x00\x01binary")
    out = status(project)
    fresh = out["freshness"]
    assert fresh["examples"] == {
        "changed": ["app/client.py"],
        "new": ["app/new_feature.py"],
        "deleted": ["web/connect.ts"],
    }
    assert (fresh["changed"], fresh["new"], fresh["deleted"], fresh["touched"]) == (1, 1, 1, 1)
    assert fresh["unchanged"] == 2 and fresh["stale_files"] == 3 and fresh["fresh"] is False
    assert out["stale_ratio"] == fresh["stale_ratio"] == round(3 / 6, 4)  # 5 indexed + 1 new


def test_re_indexing_makes_it_fresh_again(project: Path, onnx: Embedder) -> None:
    (project / "app/retry.py").write_text("def with_retry(fn):\n    return fn() or fn()\n")
    write(project, {"app/extra.py": "def extra():\n    return 3\n"})
    assert status(project)["freshness"]["stale_files"] == 2
    index_project(project, embedder=onnx)
    assert status(project)["freshness"]["stale_files"] == 0


def test_files_skipped_on_purpose_before_the_index_are_not_new(
    tmp_path: Path, data_root: Path, onnx: Embedder
) -> None:
    root = tmp_path / "proj"
    write(root, FILES)
    # The indexer skips these (secrets, lock files); the status walk does not repeat those rules,
    # it relies on their predating the last index.
    write(root, {".env": "TOKEN=x\n", "package-lock.json": "{}\n"})
    time.sleep(1.1)  # last_indexed_at has second precision
    index_project(root, embedder=onnx)
    fresh = status(root)["freshness"]
    assert fresh["new"] == 0, fresh["examples"]
    write(root, {"later.py": "def later():\n    return 4\n"})
    assert status(root)["freshness"]["examples"]["new"] == ["later.py"]


def test_nested_gitignore_and_negation_are_honoured(project: Path) -> None:
    write(project, {"pkg/.gitignore": "*.py\n!keep.py\n", "pkg/drop.py": "a = 1\n", "pkg/keep.py": "b = 2\n"})
    assert status(project)["freshness"]["examples"]["new"] == ["pkg/keep.py"]


def test_the_tool_envelope_and_an_unindexed_project(project: Path, tmp_path: Path) -> None:
    out = call_tool("index_status", {"project_path": str(project)})
    assert out["ok"] is True and out["data"]["indexed_files"] == 5
    other = tmp_path / "other"
    other.mkdir()
    missing = call_tool("index_status", {"project_path": str(other)})
    assert missing["ok"] is False and missing["error"]["code"] == "NOT_INDEXED"
    assert "local-memory-indexer index" in missing["error"]["message"]
    bad = call_tool("index_status", {"project_path": str(project), "verbose": True})
    assert bad["ok"] is False and bad["error"]["code"] == "INVALID_ARGUMENT"


# -- issue 10.4: the status walk applies the indexer's own rules --------------------------------------


def test_files_the_indexer_would_skip_are_never_new(project: Path) -> None:
    # Written after the index: the old private walk (without these rules) reported every one as new.
    write(
        project,
        {
            "jspm_packages/lib/a.js": "export const a = 1;\n",
            ".svelte-kit/output/b.js": "export const b = 2;\n",
            ".env.local": "TOKEN=x\n",
            "package-lock.json": "{}\n",
            "app/keys.py": "KEY = '" + "AKIA" + "IOSFODNN7EXAMPLE'\n",
            "app/real_new.py": "def real():\n    return 1\n",
        },
    )
    fresh = status(project)["freshness"]
    assert fresh["examples"]["new"] == ["app/real_new.py"], fresh
    assert fresh["skipped"]["secret"] >= 1 and fresh["skipped"]["secret_content"] == 1


# -- issue 15.7: an indexed file replaced by a FIFO or a /dev/zero link never hangs the status ------------


def test_fifo_and_dev_zero_in_place_of_indexed_files_do_not_hang(project: Path) -> None:
    (project / "app/client.py").unlink()
    os.mkfifo(project / "app/client.py")
    (project / "app/util.py").unlink()
    os.symlink("/dev/zero", project / "app/util.py")
    code = (
        "import json, sys\n"
        "from local_memory_search.diagnostics import index_status\n"
        "print(json.dumps(index_status(sys.argv[1])['data']['freshness']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(project)], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    fresh = json.loads(out.stdout)
    assert sorted(fresh["examples"]["deleted"]) == ["app/client.py", "app/util.py"]


def test_a_context_pack_over_a_file_replaced_by_a_fifo_answers(project: Path) -> None:
    (project / "app/client.py").unlink()
    os.mkfifo(project / "app/client.py")  # inside the project: the old reader blocked in open()
    code = (
        "import json, sys\n"
        "from local_memory_search.tools import call_tool\n"
        "out = call_tool('retrieve_context_pack', {'query': 'Client send payload', 'project_path': sys.argv[1]})\n"
        "print(json.dumps({'ok': out['ok'], 'n': len(out.get('results') or out.get('data') or [])}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(project)], capture_output=True, text=True, timeout=90, check=False
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1])["ok"] is True
