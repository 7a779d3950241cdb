"""The pack never exceeds max_chars and never repeats a line: property-style, over many budgets,
on synthetic files (the pure packer) and on a real index (the whole tool)."""

from __future__ import annotations

import math
import random
import textwrap
from pathlib import Path
from typing import Any

import pytest
from local_memory_indexer.chunking import chunk_file
from local_memory_indexer.pipeline import index_project
from local_memory_search.context import (
    SEPARATOR,
    ContextPackParams,
    Packer,
    PackFileInput,
    align_chunk,
    retrieve_context_pack,
    split_lines,
)
from local_memory_shared.embedding import create_embedder

# -- the pure packer ---------------------------------------------------------------------------


def synthetic_file(rng: random.Random, name: str, rank: int) -> PackFileInput:
    """A file of random lines cut into overlapping chunks, some of them hits."""
    n = rng.randint(5, 120)
    lines = {
        i: ("" if rng.random() < 0.15 else "x" * rng.randint(1, 90) + f" {name}:{i}") for i in range(1, n + 1)
    }
    chunks: list[dict[str, Any]] = []
    start = 1
    while start <= n:
        end = min(n, start + rng.randint(0, 30))
        text = "\n".join(lines[i] for i in range(start, end + 1))
        chunks.append(
            {
                "chunk_id": f"{name}#{len(chunks)}",
                "file_path": name,
                "symbol_name": f"s{len(chunks)}",
                "start_line": start,
                "end_line": end,
                "text": text,
            }
        )
        # Split definitions overlap by a few lines; sometimes chunks leave a gap.
        start = end + 1 - rng.randint(0, 3) + rng.choice([0, 0, 0, 2])
        start = max(start, chunks[-1]["start_line"] + 1)
    hits = rng.sample([c["chunk_id"] for c in chunks], k=rng.randint(1, min(4, len(chunks))))
    spec = PackFileInput(name, "python", rank, 1.0 / rank, "disk", lines, chunks, hits)
    spec.hit_ranks.update({cid: rank * 10 + i for i, cid in enumerate(hits)})
    return spec


def check_pack(pack: Any, files: list[PackFileInput], budget: int) -> None:
    assert len(pack.text) <= budget
    assert pack.excerpt_chars <= budget
    assert pack.est_tokens == math.ceil(len(pack.text) / 4)
    by_name = {f.file_path: f for f in files}
    blocks = 0
    for f in pack.files:
        known = by_name[f.file_path].known
        seen: set[int] = set()
        previous_end = -1
        for e in f.excerpts:
            lines = range(e.start_line, e.end_line + 1)
            assert not seen.intersection(lines), "a line appears twice"
            seen.update(lines)
            assert e.start_line > previous_end + 1, "touching excerpts were not merged"
            previous_end = e.end_line
            assert e.text == "\n".join(known[i] for i in lines)
            assert e.text in pack.text
            blocks += 1
    assert pack.text.count(SEPARATOR + "### ") == max(0, blocks - 1) or blocks == 0


@pytest.mark.parametrize("seed", range(24))
def test_synthetic_packs_respect_every_budget(seed: int) -> None:
    rng = random.Random(seed)
    files = [synthetic_file(rng, f"f{i}.py", i + 1) for i in range(rng.randint(1, 6))]
    full = Packer(files, max_chars=10**7, strategy="middle", neighbor_hops=3).build()
    assert full.truncated is False and full.omitted == {"hits": 0, "neighbors": 0}
    budgets = sorted(
        {0, 1, 40, 80, 120, 200, len(full.text) - 1, len(full.text), len(full.text) + 50}
        | {rng.randint(1, len(full.text) + 100) for _ in range(25)}
    )
    for budget in budgets:
        for strategy in ("middle", "tail", "head"):
            hops = rng.randint(0, 3)
            pack = Packer(files, max_chars=max(budget, 0), strategy=strategy, neighbor_hops=hops).build()
            check_pack(pack, files, budget)
    # With room for everything, the whole pack comes back unchanged.
    again = Packer(files, max_chars=len(full.text), strategy="tail", neighbor_hops=3).build()
    assert again.text == full.text


def test_overlapping_and_adjacent_chunks_merge_into_one_excerpt() -> None:
    known = {i: f"line {i}" for i in range(1, 31)}
    chunks = [
        {"chunk_id": "a", "symbol_name": "part1", "start_line": 1, "end_line": 12},
        {"chunk_id": "b", "symbol_name": "part2", "start_line": 9, "end_line": 20},  # overlaps a by 4 lines
        {"chunk_id": "c", "symbol_name": "after", "start_line": 21, "end_line": 30},  # adjacent to b
    ]
    for c in chunks:
        c["text"] = "\n".join(known[i] for i in range(c["start_line"], c["end_line"] + 1))
    spec = PackFileInput(
        "m.py", "python", 1, 1.0, "disk", known, chunks, ["a", "b", "c"], {"a": 1, "b": 2, "c": 3}
    )
    pack = Packer([spec], max_chars=10_000, strategy="middle", neighbor_hops=0).build()
    ((excerpt,),) = [f.excerpts for f in pack.files]
    assert (excerpt.start_line, excerpt.end_line) == (1, 30)
    assert excerpt.symbols == ("part1", "part2", "after") and excerpt.symbol == "part1"
    assert excerpt.text.count("line 9\n") == 1
    assert pack.text.startswith("### m.py (lines 1-30) — part1, part2, after\n```python\nline 1\n")


def test_small_blank_gaps_are_bridged_and_larger_gaps_are_not() -> None:
    known = {
        1: "def a():",
        2: "    pass",
        3: "",
        4: "",
        5: "def b():",
        6: "    pass",
        7: "",
        8: "",
        9: "",
        10: "x = 1",
    }
    rows = [(1, 2, "a"), (5, 6, "b"), (10, 10, "x")]
    chunks = [
        {
            "chunk_id": s,
            "symbol_name": s,
            "start_line": a,
            "end_line": b,
            "text": "\n".join(known[i] for i in range(a, b + 1)),
        }
        for a, b, s in rows
    ]
    spec = PackFileInput(
        "g.py", "python", 1, 1.0, "disk", known, chunks, ["a", "b", "x"], {"a": 1, "b": 2, "x": 3}
    )
    pack = Packer([spec], max_chars=10_000, strategy="middle", neighbor_hops=0).build()
    assert [(e.start_line, e.end_line) for e in pack.files[0].excerpts] == [(1, 6), (10, 10)]


def test_a_budget_too_small_for_any_header_gives_an_empty_pack() -> None:
    known = {1: "print('hello')"}
    chunk = {"chunk_id": "a", "symbol_name": "", "start_line": 1, "end_line": 1, "text": known[1]}
    spec = PackFileInput("t.py", "python", 1, 1.0, "disk", known, [chunk], ["a"], {"a": 1})
    pack = Packer([spec], max_chars=20, strategy="middle", neighbor_hops=1).build()
    assert pack.text == "" and pack.files == () and pack.omitted["hits"] == 1 and pack.truncated


# -- line alignment of what the chunker really produces -------------------------------------------------

SKELETON_SOURCE = textwrap.dedent(
    '''
    class Store:
        """Keeps rows."""

        def __init__(self):
            self.rows = []
            self.index = {}
            self.dirty = False

        def add(self, row):
            """Add a row and index it."""
            self.rows.append(row)
            self.index[row.id] = row
            self.dirty = True
            return row
    '''
).lstrip("\n")


JS_SKELETON_SOURCE = textwrap.dedent(
    """
    class Pool {
      constructor(url) {
        this.url = url;
        this.size = 4;
        this.open = 0;
      }

      query(sql) {
        const started = Date.now();
        const rows = fetchRows(this.url, sql);
        return rows;
      }
    }
    """
).lstrip("\n")


@pytest.mark.parametrize(
    ("source", "path", "language"),
    [(SKELETON_SOURCE, "store.py", "python"), (JS_SKELETON_SOURCE, "pool.js", "javascript")],
)
def test_class_skeletons_align_to_their_true_lines(source: str, path: str, language: str) -> None:
    lines = split_lines(source)
    known = {i + 1: t for i, t in enumerate(lines)}
    drafts = chunk_file(path, source.encode(), language)
    skeleton = next(d for d in drafts if d.chunk_kind == "class")
    assert "(lines" in skeleton.text  # the chunker elided member bodies
    expected = None
    for complete in (True, False):  # against the file on disk, and from the chunk text alone
        mapped = align_chunk(
            skeleton.text, skeleton.start_line, skeleton.end_line, known if complete else {}, complete
        )
        assert all(known[n] == t for n, t in mapped.items()), mapped
        assert not any("(lines" in t for t in mapped.values())
        assert known[1] in mapped.values()  # the class header is kept
        assert expected is None or mapped == expected
        expected = mapped
    for d in drafts:  # contiguous chunks map one to one
        if d.chunk_kind != "class":
            mapped = align_chunk(d.text, d.start_line, d.end_line, known, True)
            assert list(mapped) == list(range(d.start_line, d.end_line + 1))


# -- the whole tool on a real index -------------------------------------------------------------------

FILES = {
    "svc/cache.py": "\n".join(
        [
            '"""A small LRU cache with expiry."""',
            "import time",
            "",
            "",
            "class Cache:",
            '    """LRU cache with per-entry expiry."""',
            "",
            "    def __init__(self, size):",
            "        self.size = size",
            "        self.items = {}",
            "",
            "    def get(self, key):",
            '        """Return a cached value unless it expired."""',
            "        value, expires = self.items.get(key, (None, 0))",
            "        return value if expires > time.time() else None",
            "",
            "    def put(self, key, value, ttl=60):",
            '        """Store a value for ttl seconds, evicting the oldest entry when full."""',
            "        if len(self.items) >= self.size:",
            "            self.items.pop(next(iter(self.items)))",
            "        self.items[key] = (value, time.time() + ttl)",
            "",
        ]
    )
    + "\n",
    "svc/loader.py": 'def load_rows(path):\n    """Read cached rows from disk."""\n'
    + "".join(f"    row_{i} = parse(path, {i})  # cache warmup step {i}\n" for i in range(40))
    + "    return rows\n",
    "svc/api.ts": "export function cachedFetch(url: string) {\n  return cache.get(url) ?? fetch(url);\n}\n",
    "README.md": "# Service\n\nThe cache expires entries after a ttl.\n\n## Loading\n\nRows are loaded and cached.\n",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("budget")
    mp = pytest.MonkeyPatch()
    mp.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(root / "data"))
    proj = root / "proj"
    for rel, content in FILES.items():
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(content)
    index_project(proj, embedder=create_embedder("onnx"))
    yield proj
    mp.undo()


def test_the_tool_never_exceeds_max_chars_over_many_budgets(project: Path) -> None:
    rng = random.Random(7)
    queries = ["cache expiry ttl", "load cached rows from disk", "cachedFetch", "evict oldest entry"]
    disk = {rel: (project / rel).read_text().split("\n") for rel in FILES}
    budgets = [1, 30, 90, 150, 250, 400, 600, 900, 1300, 2000, 3000, 4500, 7000, 12000, 30000]
    checked = 0
    for budget in budgets:
        for _ in range(4):
            params = ContextPackParams(
                query=rng.choice(queries),
                project_path=str(project),
                max_chars=budget,
                max_files=rng.randint(1, 8),
                include_neighbors=rng.random() < 0.8,
                neighbor_hops=rng.randint(0, 3),
                truncate_strategy=rng.choice(["middle", "tail", "head"]),
            )
            data = retrieve_context_pack(params).data
            assert data is not None
            assert len(data["text"]) == data["chars"] <= budget, params
            assert data["excerpt_chars"] <= budget
            assert len(data["files"]) <= params.max_files
            for f in data["files"]:
                previous_end = -1
                for e in f["excerpts"]:
                    assert e["start_line"] > previous_end + 1
                    assert e["text"] == "\n".join(disk[f["file_path"]][e["start_line"] - 1 : e["end_line"]])
                    previous_end = e["end_line"]
            checked += 1
    assert checked == len(budgets) * 4
    # A generous budget holds whole chunks: nothing is cut.
    roomy = retrieve_context_pack(
        ContextPackParams(query="cache", project_path=str(project), max_chars=100_000)
    ).data
    assert roomy is not None and roomy["truncated"] is False
