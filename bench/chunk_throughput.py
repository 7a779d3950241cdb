"""Measure chunking throughput (files/s, lines/s) over installed packages of the venv.

Usage: python bench/chunk_throughput.py [ROOT ...] [--repeat N]
Default roots: the lancedb and rich packages in this interpreter's site-packages.
"""

from __future__ import annotations

import argparse
import json
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

from local_memory_indexer.chunking import ChunkDraft, chunk_file
from local_memory_indexer.treesitter import get_language, language_for_path


def default_roots() -> list[Path]:
    """lancedb and rich as installed next to this interpreter."""
    site = Path(sysconfig.get_paths()["purelib"])
    return [site / "lancedb", site / "rich"]


def collect(roots: list[Path]) -> list[tuple[str, bytes, str]]:
    """(relative path, bytes, language) for every file with a known language under the roots."""
    files = []
    for root in roots:
        for path in sorted(root.rglob("*")):
            language = language_for_path(path.name)
            if path.is_file() and language != "text":
                files.append(
                    (f"{root.name}/{path.relative_to(root).as_posix()}", path.read_bytes(), language)
                )
    return files


def _uncovered(source: bytes, drafts: list[ChunkDraft]) -> int:
    """Non-blank lines of ``source`` outside every chunk's line range (dropped closing braces count)."""
    covered: set[int] = set()
    for draft in drafts:
        covered.update(range(draft.start_line, draft.end_line + 1))
    lines = source.decode("utf-8", errors="replace").split("\n")
    return sum(1 for number, line in enumerate(lines, start=1) if line.strip() and number not in covered)


def main(argv: list[str] | None = None) -> int:
    """Chunk every file ``repeat`` times and report the best run as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("roots", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    files = collect(args.roots or default_roots())
    for language in {language for _, _, language in files} - {"markdown"}:
        get_language(language)  # grammar loading is a one-off cost, not throughput
    lines = sum(source.count(b"\n") + (not source.endswith(b"\n") and bool(source)) for _, source, _ in files)
    best = float("inf")
    results: list[list[ChunkDraft]] = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        results = [chunk_file(path, source, language) for path, source, language in files]
        best = min(best, time.perf_counter() - started)
    kinds = Counter(d.chunk_kind for drafts in results for d in drafts)
    uncovered = sum(_uncovered(source, drafts) for (_, source, _), drafts in zip(files, results, strict=True))
    report = {
        "files": len(files),
        "lines": lines,
        "megabytes": round(sum(len(s) for _, s, _ in files) / 1e6, 2),
        "chunks": sum(kinds.values()),
        "chunks_by_kind": dict(kinds.most_common()),
        "seconds_best_of": args.repeat,
        "seconds": round(best, 3),
        "files_per_s": round(len(files) / best, 1),
        "lines_per_s": round(lines / best),
        "nonblank_lines_outside_every_chunk": uncovered,
    }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
