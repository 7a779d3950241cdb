"""Module sizes and the style limits: the five largest modules, functions over 60 lines, classes over 250.

python scripts/code_sizes.py [ROOT]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

FUNCTION_LIMIT = 60
CLASS_LIMIT = 250


def main(root: Path) -> int:
    """Print the figures for ``root`` (the checkout); exit 0."""
    files = [p for d in ("shared", "indexer", "search") for p in (root / d / "src").rglob("*.py")]
    long_functions, long_classes, sizes = [], [], []
    for path in files:
        source = path.read_text(encoding="utf-8")
        rel = path.relative_to(root).as_posix()
        sizes.append((len(source.splitlines()), rel))
        for node in ast.walk(ast.parse(source)):
            lines = (node.end_lineno or 0) - node.lineno + 1 if hasattr(node, "lineno") else 0
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and lines > FUNCTION_LIMIT:
                long_functions.append((lines, f"{rel}:{node.name}"))
            if isinstance(node, ast.ClassDef) and lines > CLASS_LIMIT:
                long_classes.append((lines, f"{rel}:{node.name}"))
    print("five largest modules:", sorted(sizes, reverse=True)[:5])
    print(
        f"functions over {FUNCTION_LIMIT} lines:", len(long_functions), sorted(long_functions, reverse=True)
    )
    print(f"classes over {CLASS_LIMIT} lines:", len(long_classes), sorted(long_classes, reverse=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]))
