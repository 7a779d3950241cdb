"""``bench/common.py``: the report printer and the ``git archive`` export the A/B benches share."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bench.common import REPO, emit, export_ref


def test_emit_prints_and_writes_the_same_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    emit({"p95_ms": 12.5, "runs": [1, 2]}, out)
    printed = capsys.readouterr().out
    assert json.loads(printed) == json.loads(out.read_text()) == {"p95_ms": 12.5, "runs": [1, 2]}


def test_export_ref_unpacks_only_the_named_paths_of_that_commit_and_reuses_them(tmp_path: Path) -> None:
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    target = tmp_path / "old"
    target.mkdir()  # an empty folder, as mkdtemp makes, is filled
    got = export_ref(head.stdout.strip(), target, ["bench/common.py"])
    assert got == target
    assert [p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()] == ["bench/common.py"]
    assert (target / "bench/common.py").read_bytes() == subprocess.run(
        ["git", "-C", str(REPO), "show", "HEAD:bench/common.py"], capture_output=True
    ).stdout
    (target / "marker").write_text("kept")
    export_ref("HEAD", target)  # already there: reused, not re-exported
    assert (target / "marker").read_text() == "kept"
    assert not list(tmp_path.glob(".*.tmp"))


def test_an_unknown_ref_fails_and_leaves_no_tree(tmp_path: Path) -> None:
    with pytest.raises(subprocess.CalledProcessError):
        export_ref("no-such-ref-anywhere", tmp_path / "old")
    assert not (tmp_path / "old").exists() and not list(tmp_path.iterdir())
