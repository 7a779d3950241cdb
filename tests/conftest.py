"""Fixtures shared by the test files: a private data root, the sample project, that project indexed once.

``sample_project`` is ``search_support.FILES`` written to a git repository; ``indexed_sample`` is it
indexed (real tree-sitter, the real ONNX model, real LanceDB/SQLite) into its own data root, once per
session. Tests that break an index copy ``indexed_sample.data_root`` first; the searcher never writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from search_support import index, write_project


@dataclass(frozen=True)
class IndexedProject:
    """A project and the data root it was indexed into."""

    project: Path
    data_root: Path


@pytest.fixture
def data_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``<tmp_path>/data``, exported as ``LOCAL_VECTOR_SEARCH_DATA_ROOT`` for this test."""
    root = tmp_path / "data"
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(root))
    return root


@pytest.fixture(scope="session")
def sample_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small multi-language sample project (``search_support.FILES``), a git repository."""
    return write_project(tmp_path_factory.mktemp("sample-project"))


@pytest.fixture(scope="session")
def indexed_sample(tmp_path_factory: pytest.TempPathFactory, sample_project: Path) -> IndexedProject:
    """``sample_project`` indexed into a data root of its own (read it, or copy it before breaking it)."""
    root = tmp_path_factory.mktemp("sample-data")
    summary = index(sample_project, root)
    assert summary.chunks_total >= 10 and not summary.errors
    return IndexedProject(sample_project, root)
