"""The whole of Local Memory as one distribution (``pip install .`` / ``pipx install .``).

Nothing is declared twice: packages, package data, console scripts and dependencies are read from
``shared/``, ``indexer/`` and ``search/``'s own ``pyproject.toml`` (which ``make install`` installs
one by one, editable); only the dependencies on each other are dropped, since this one
distribution carries all three packages.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent
PARTS = ("shared", "indexer", "search")
OWN = {"local-memory-shared", "local-memory-indexer", "local-memory-search"}


def _project_name(requirement: str) -> str:
    for stop in "<>=!~;[ ":
        requirement = requirement.split(stop, 1)[0]
    return requirement.strip().lower()


packages: list[str] = []
package_dir: dict[str, str] = {}
package_data: dict[str, list[str]] = {}
scripts: list[str] = []
dependencies: list[str] = []
for part in PARTS:
    config = tomllib.loads((ROOT / part / "pyproject.toml").read_text(encoding="utf-8"))
    found = find_packages(where=f"{part}/src")
    packages += found
    package_dir.update({name: f"{part}/src/{name.replace('.', '/')}" for name in found})
    for key, patterns in config["tool"]["setuptools"].get("package-data", {}).items():
        # "*" (every package of that part) spelled out: setup() does not glob package names.
        for name in found if key == "*" else [key]:
            merged = package_data.setdefault(name, [])
            merged += [p for p in patterns if p not in merged]
    scripts += [f"{name} = {target}" for name, target in config["project"].get("scripts", {}).items()]
    dependencies += [
        d for d in config["project"]["dependencies"] if _project_name(d) not in OWN and d not in dependencies
    ]

setup(
    packages=packages,
    package_dir=package_dir,
    package_data=package_data,
    include_package_data=False,
    entry_points={"console_scripts": scripts},
    install_requires=dependencies,
)
