"""The shape of a project's published LanceDB table: what a search has to read (issue 14).

Fragments and their rows, deletion files, and per index its segments, the fragments it covers
(and any it names that the version no longer has), indexed / unindexed rows and, for the vector
index, the partition count. Used to compare a freshly built index with one that incremental
re-indexes left slower (bench README, real 100k project)::

    python -m bench.index_state --project bench/cache/real100k/project --data-root bench/cache/real100k/data
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")


def published_table(project: Path, data_root: Path) -> tuple[Path, int]:
    """The project's LanceDB folder (``…/chunks.lance``) and the version its searchers read."""
    from local_memory_shared.paths import project_paths
    from local_memory_shared.state_reader import open_state_ro, read_project_row

    paths = project_paths(data_root.resolve(), project.resolve())
    conn = open_state_ro(paths.state_db)
    try:
        row = read_project_row(conn, str(paths.project_path))
    finally:
        conn.close()
    if row is None or row.published_version is None:
        raise SystemExit(f"{project} has no published index under {data_root}")
    return paths.dir / row.lance_dir / "chunks.lance", row.published_version


def fts_partition_count(table_dir: Path, index_uuid: str) -> int:
    """Posting-list partitions of a full-text index (its ``part_N_*`` files): a query reads each."""
    folder = table_dir / "_indices" / index_uuid
    return len({name.split("_")[1] for name in os.listdir(folder) if name.startswith("part_")})


def index_state(project: Path, data_root: Path) -> dict[str, Any]:
    """The published version's fragments, deletions and index segments."""
    import lance

    table_dir, version = published_table(project, data_root)
    ds = lance.dataset(str(table_dir), version=version)
    fragments = ds.get_fragments()
    ids = {f.fragment_id for f in fragments}
    rows = [f.count_rows() for f in fragments]
    out: dict[str, Any] = {
        "version": version,
        "rows": sum(rows),
        "fragments": len(fragments),
        "rows_per_fragment": sorted(rows, reverse=True)[:12],
        "deletion_files": sum(1 for f in fragments if f.metadata.deletion_file is not None),
        "data_files": sum(len(f.data_files()) for f in fragments),
        "indices": {},
    }
    for idx in ds.list_indices():
        stats = ds.stats.index_stats(idx["name"])
        segments = stats.get("indices") or stats.get("segments") or []
        named = set(idx["fragment_ids"])
        out["indices"][idx["name"]] = {
            "type": idx["type"],
            "segments": stats.get("num_indices"),
            "indexed_rows": stats.get("num_indexed_rows"),
            "unindexed_rows": stats.get("num_unindexed_rows"),
            "fragments_named": len(named),
            "fragments_named_but_gone": sorted(named - ids),
            "partitions": [s.get("num_partitions") for s in segments if "num_partitions" in s],
            "rows_per_delta": stats.get("num_indexed_rows_per_delta"),
            "fts_partitions": fts_partition_count(table_dir, idx["uuid"]) if idx["type"] == "Inverted" else 0,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--project", type=Path, required=True)
    ap.add_argument("--data-root", type=Path, required=True)
    ns = ap.parse_args(argv)
    print(json.dumps(index_state(ns.project, ns.data_root), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
