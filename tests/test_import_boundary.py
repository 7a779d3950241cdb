"""The searcher never imports the indexer: checked in the source and in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import local_memory_search

SEARCH_SRC = Path(local_memory_search.__file__).resolve().parent


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_no_search_module_imports_the_indexer_in_its_source():
    sources = sorted(SEARCH_SRC.rglob("*.py"))
    assert len(sources) >= 5
    offenders = {
        str(p.relative_to(SEARCH_SRC)): sorted(
            m for m in _imported_modules(p) if m.split(".")[0] == "local_memory_indexer"
        )
        for p in sources
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_importing_every_search_module_loads_no_indexer_module():
    modules = sorted(
        "local_memory_search." + ".".join(p.relative_to(SEARCH_SRC).with_suffix("").parts)
        for p in SEARCH_SRC.rglob("*.py")
        if p.name != "__init__.py" and p.stem != "__main__"
    )
    code = (
        "import importlib, sys\n"
        "import local_memory_search\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] == 'local_memory_indexer')\n"
        "print(len(bad)); print(bad)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "0", out.stdout


def test_the_ast_check_would_catch_an_indexer_import(tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text("from local_memory_indexer.pipeline import index_project\nimport local_memory_indexer\n")
    assert {"local_memory_indexer.pipeline", "local_memory_indexer"} <= _imported_modules(bad)
