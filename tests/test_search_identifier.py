"""An exact name finds its definition first, ahead of the many chunks that mention its parts."""

from __future__ import annotations

from pathlib import Path

import pytest
from local_memory_search.tools import call_tool
from search_support import env, index, write_project

MENTIONS = {
    f"tools/mention_{i}.py": f'''
def helper_{i}(project):
    """Index the project {i}: project index, project files, index project state."""
    index = project.index
    project_index = index.project
    return index_project(project_index)
'''
    for i in range(6)
}
FILES = {
    "core/pipeline.py": '''
def index_project(path):
    """Walk a folder and store its chunks."""
    return len(str(path))
''',
    **MENTIONS,
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("ident")
    proj = write_project(root / "proj", FILES, git=False)
    index(proj, root / "data")
    return proj, root / "data"


@pytest.mark.parametrize("tool", ["search_keyword", "search_hybrid"])
def test_exact_identifier_ranks_its_definition_first(project: tuple[Path, Path], tool: str) -> None:
    proj, data = project
    with env(LOCAL_VECTOR_SEARCH_DATA_ROOT=str(data)):
        answer = call_tool(
            tool,
            {"project_path": str(proj), "query": "index_project", "cache_bust": True, "gap_threshold": 0},
        )
    assert answer["ok"], answer
    top = answer["results"][0]
    assert (top["file_path"], top["symbol_name"]) == ("core/pipeline.py", "index_project")
    # the mentions are still found, just below the definition
    assert any(r["file_path"].startswith("tools/") for r in answer["results"][1:])
