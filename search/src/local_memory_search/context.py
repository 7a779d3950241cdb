"""``retrieve_context_pack``: a character-budgeted, ready-to-paste context pack for an LLM prompt.

Candidates come from the same ranking as ``search_hybrid`` (:func:`hybrid.rank`): the hits that
pass its relevance gap. With ``rerank`` the Ollama LLM orders the top 20 of the ranking instead
(gap or not: lifting what the first stage underrated is its job); if it cannot answer, the pack
keeps the retrieval order with a ``rerank_unavailable`` warning. The pack then:

1. groups hits by file, files in the order of their best hit, at most ``max_files`` files;
2. spends the budget first on the best hit of every file, in rank order (one may take at most
   half the budget while others wait), lets those grow back if they were cut, then adds the
   other hits and the neighbour chunks (``chunk_index`` ± 1 … ``neighbor_hops``) by effective
   rank: a neighbour ``d`` chunks away from the hit ranked ``r`` counts as rank ``r + 3d``;
3. works on line numbers, so overlapping chunks (split definitions overlap, class skeletons
   share their headers) and adjacent ranges merge into one excerpt and no line appears twice;
   gaps of up to two blank lines between excerpts are bridged;
4. measures the rendered text exactly: the ready-to-paste ``text`` (headers and fences
   included) is never longer than ``max_chars``, so neither are the excerpts.

Lines come from the file on disk when its sha256 still equals the indexed ``content_hash``
(``source: "disk"``), otherwise from the indexed chunk texts (``source: "index"``): either way
they are exactly what was indexed. A chunk that does not fit whole is cut by line according to
``truncate_strategy``, which names the part that is cut: ``middle`` keeps the head and the tail,
``tail`` keeps the head, ``head`` keeps the tail. Neighbours are cut on the side away from the
hit. ``est_tokens`` is ``ceil(chars / 4)``, the usual estimate for code and English.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from local_memory_shared.config import Settings, load_settings
from local_memory_shared.fs import read_regular_file
from local_memory_shared.tooling import ToolResult

from . import degradation as W
from .filters import SearchFilters
from .hybrid import CANDIDATE_DEPTH, RankRequest, rank
from .params import ContextPackParams
from .ranking import DEFAULT_ALPHA
from .rerank import OllamaReranker, RerankCandidate
from .store import IndexReader, open_index

log = logging.getLogger(__name__)

#: Characters per token for ``est_tokens``.
CHARS_PER_TOKEN = 4
#: Blank-line gaps up to this long between two excerpts of a file are filled in (one excerpt reads better).
BRIDGE_BLANK_LINES = 2
#: Share of the budget one hit may take while other hits still wait (it may grow back later).
FIRST_PASS_SHARE = 0.5
#: A neighbour ``d`` chunks from the hit ranked ``r`` competes for budget as if ranked ``r + 3d``.
NEIGHBOR_RANK_STEP = 3
TRUNCATED_MARK = " (truncated)"
#: Characters a merge can save (a header and fences no longer needed), for the cheap level bound.
BOUND_SLACK = 512
#: Below this many lines a cut secondary hit or neighbour is noise (a dangling signature): leave it out.
MIN_SECONDARY_LINES = 3

_ELISION = re.compile(r"\(lines (\d+)-(\d+)\)\s*$")
#: A line that only closes a block (``}``, ``end``, ``});``): what a skeleton keeps after an elided body.
_CLOSER = re.compile(r"^\s*(?:[})\]][})\];,]*|end)\s*$")


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackExcerpt:
    """One contiguous line range of a file in the pack."""

    start_line: int
    end_line: int
    symbol: str
    symbols: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    hit: bool
    truncated: bool
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol": self.symbol,
            "symbols": list(self.symbols),
            "chunk_ids": list(self.chunk_ids),
            "hit": self.hit,
            "truncated": self.truncated,
            "chars": len(self.text),
            "text": self.text,
        }


@dataclass(frozen=True)
class PackFile:
    """A file of the pack: its excerpts in line order."""

    file_path: str
    language: str
    rank: int
    best_hit_rank: int
    score: float
    source: str  # disk | index
    excerpts: tuple[PackExcerpt, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "file_path": self.file_path,
            "language": self.language,
            "rank": self.rank,
            "best_hit_rank": self.best_hit_rank,
            "score": self.score,
            "source": self.source,
            "excerpts": [e.to_dict() for e in self.excerpts],
        }


@dataclass(frozen=True)
class ContextPack:
    """The pack: structured files and the one ready-to-paste text block."""

    files: tuple[PackFile, ...]
    text: str
    max_chars: int
    truncated: bool
    omitted: dict[str, int]

    @property
    def est_tokens(self) -> int:
        return math.ceil(len(self.text) / CHARS_PER_TOKEN)

    @property
    def excerpt_chars(self) -> int:
        return sum(len(e.text) for f in self.files for e in f.excerpts)


# --------------------------------------------------------------------------------------------
# Line handling
# --------------------------------------------------------------------------------------------


def split_lines(text: str) -> list[str]:
    """Lines as the chunker numbers them: split on ``\\n``, ``\\r`` dropped, no empty tail."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def align_chunk(text: str, start: int, end: int, known: dict[int, str], complete: bool) -> dict[int, str]:
    """Line number → text for a chunk's lines.

    Contiguous chunks map one to one. Class skeletons replace member bodies with a synthetic
    ``… Name (lines a-b)`` line: such lines are dropped and the walk resumes after the member.
    ``known`` holds the file's lines (``complete``) or those other chunks revealed; unknown
    positions then trust the chunk text.
    """
    lines = split_lines(text)
    if len(lines) == end - start + 1 and (
        not complete or all(known.get(start + i) == t for i, t in enumerate(lines))
    ):
        return {start + i: t for i, t in enumerate(lines)}
    out: dict[int, str] = {}
    p = start
    closer_slot = False  # right after an elided member: its last line may be kept as a closer
    for line in lines:
        if p > end:
            break
        if closer_slot and p not in known:
            closer_slot = False
            if not _CLOSER.match(line):
                p += 1  # no closer kept: the member's last line is not in the chunk
        if p in known:
            if known[p] == line:
                out[p] = line
                p += 1
                continue
            q = next((q for q in range(p + 1, end + 1) if known.get(q) == line), None)
            if q is not None:
                out[q] = line
                p = q + 1
                continue
        elif not complete and not _ELISION.search(line):
            out[p] = line
            p += 1
            continue
        marker = _ELISION.search(line)
        if marker:  # skip the elided member; its closing line (if kept) is its last line
            p = max(p, int(marker.group(2)))
            closer_slot = True
    return out


def _select(lines: Sequence[int], k: int, strategy: str) -> list[int]:
    """``k`` of ``lines`` kept by ``strategy`` (the part named is the part cut)."""
    n = len(lines)
    if k >= n:
        return list(lines)
    if k <= 0:
        return []
    if strategy == "tail":
        return list(lines[:k])
    if strategy == "head":
        return list(lines[n - k :])
    head = (k + 1) // 2
    return list(lines[:head]) + list(lines[n - (k - head) :])


_FENCE_LANG = {"unknown": "", "text": "", "": ""}


def _fence(content: str) -> str:
    if "```" not in content:
        return "```"
    longest = max((len(m.group(0)) for m in re.finditer(r"`{3,}", content)), default=0)
    return "`" * max(3, longest + 1)


# --------------------------------------------------------------------------------------------
# The packer (pure: no I/O, so budgets can be tested exhaustively)
# --------------------------------------------------------------------------------------------


@dataclass
class _Unit:
    chunk_id: str
    symbol: str
    lines: list[int]  # aligned line numbers of the chunk, ascending
    strategy: str
    hit: bool
    hit_rank: int  # rank of the hit (or of the hit it neighbours)
    level: int = 0  # how many of ``lines`` are selected

    @property
    def truncated(self) -> bool:
        return 0 < self.level < len(self.lines)


@dataclass
class PackFileInput:
    """One file's material for the packer: its known lines and its chunks in file order."""

    file_path: str
    language: str
    best_hit_rank: int
    score: float
    source: str
    known: dict[int, str]
    chunks: list[dict[str, Any]]  # chunk rows of the file (chunk_index order)
    hit_ids: list[str]  # hits of this file, in rank order
    hit_ranks: dict[str, int] = field(default_factory=dict)


class _FileState:
    def __init__(self, spec: PackFileInput, rank_in_pack: int, complete: bool):
        self.spec = spec
        self.rank = rank_in_pack
        self.complete = complete
        self.units: dict[str, _Unit] = {}
        self.blocks: list[str] = []
        self.size = 0  # sum of block lengths

    @staticmethod
    def _level(unit: _Unit, override: tuple[str, int] | None) -> int:
        return override[1] if override is not None and override[0] == unit.chunk_id else unit.level

    def selected(self, override: tuple[str, int] | None = None) -> dict[int, list[_Unit]]:
        """Selected line → the units that hold it (``override`` tries one unit at another level)."""
        out: dict[int, list[_Unit]] = {}
        for unit in self.units.values():
            for line in _select(unit.lines, self._level(unit, override), unit.strategy):
                out.setdefault(line, []).append(unit)
        return out

    def runs(self, lines: dict[int, list[_Unit]]) -> list[list[int]]:
        """Contiguous line runs; gaps of a few blank lines are bridged."""
        runs: list[list[int]] = []
        for n in sorted(lines):
            if runs:
                last = runs[-1][-1]
                if n == last + 1:
                    runs[-1].append(n)
                    continue
                gap = range(last + 1, n)
                if len(gap) <= BRIDGE_BLANK_LINES and all(
                    not self.spec.known.get(g, "x").strip() for g in gap
                ):
                    runs[-1].extend(gap)
                    runs[-1].append(n)
                    continue
            runs.append([n])
        return runs

    def render(self, override: tuple[str, int] | None = None) -> tuple[list[str], list[PackExcerpt]]:
        """The file's excerpt blocks (as they appear in the text) and their records."""
        by_line = self.selected(override)
        blocks: list[str] = []
        excerpts: list[PackExcerpt] = []
        language = _FENCE_LANG.get(self.spec.language or "", self.spec.language or "")
        for run in self.runs(by_line):
            found: dict[str, _Unit] = {}
            for n in run:
                for unit in by_line.get(n, ()):
                    found.setdefault(unit.chunk_id, unit)
            # The hit names the excerpt; then whatever comes first in the file.
            owners = sorted(found.values(), key=lambda u: (not u.hit, u.hit_rank if u.hit else 0, u.lines[0]))
            symbols = tuple(dict.fromkeys(u.symbol for u in owners if u.symbol))
            truncated = any(self._level(u, override) < len(u.lines) for u in owners)
            content = "\n".join(self.spec.known[n] for n in run)
            header = f"### {self.spec.file_path} (lines {run[0]}-{run[-1]})"
            if symbols:
                header += " — " + ", ".join(symbols[:3])
            if truncated:
                header += TRUNCATED_MARK
            fence = _fence(content)
            blocks.append(f"{header}\n{fence}{language}\n{content}\n{fence}")
            excerpts.append(
                PackExcerpt(
                    start_line=run[0],
                    end_line=run[-1],
                    symbol=symbols[0] if symbols else "",
                    symbols=symbols,
                    chunk_ids=tuple(u.chunk_id for u in owners),
                    hit=any(u.hit for u in owners),
                    truncated=truncated,
                    text=content,
                )
            )
        return blocks, excerpts


SEPARATOR = "\n\n"


@dataclass(frozen=True)
class _Candidate:
    """A chunk waiting for budget: a hit at its rank, or a neighbour at an effective rank."""

    effective_rank: int
    seq: int
    state: _FileState
    row: dict[str, Any]
    strategy: str
    hit: bool
    hit_rank: int


class Packer:
    """Fills a character budget with hit and neighbour chunks; the rendered text never exceeds it."""

    def __init__(self, files: Sequence[PackFileInput], *, max_chars: int, strategy: str, neighbor_hops: int):
        self.max_chars = max_chars
        self.strategy = strategy
        self.hops = neighbor_hops
        self.files = [_FileState(spec, i + 1, spec.source == "disk") for i, spec in enumerate(files)]
        self.total_size = 0
        self.total_blocks = 0
        self.omitted = {"hits": 0, "neighbors": 0}
        self._state_of: dict[str, _FileState] = {}

    def _cost(self, size: int, blocks: int) -> int:
        return size + len(SEPARATOR) * max(0, blocks - 1)

    @property
    def cost(self) -> int:
        """Length of the rendered pack text right now."""
        return self._cost(self.total_size, self.total_blocks)

    def _try(self, state: _FileState, unit: _Unit, level: int, ceiling: int) -> bool:
        """Set ``unit`` to ``level`` if the pack stays within ``ceiling``: the exact, rendered check."""
        blocks, _ = state.render((unit.chunk_id, level))
        size = self.total_size - state.size + sum(len(b) for b in blocks)
        count = self.total_blocks - len(state.blocks) + len(blocks)
        if self._cost(size, count) > ceiling:
            return False
        unit.level = level
        self.total_size, self.total_blocks = size, count
        state.blocks, state.size = blocks, sum(len(b) for b in blocks)
        return True

    def _grow(self, state: _FileState, unit: _Unit, cap: int | None, min_level: int = 1) -> bool:
        """Raise ``unit`` to the highest level that fits (at least ``min_level``); True if any of it is in.

        ``cap`` bounds what this unit may add to the pack, on top of the global budget.
        """
        n = len(unit.lines)
        if unit.level >= n:
            return True
        ceiling = self.max_chars if cap is None else min(self.max_chars, self.cost + cap)
        lo = max(unit.level + 1, min(min_level, n))
        # Exact costs need a render; a cheap bound on the new characters first narrows the levels
        # worth rendering (a render per probe is what makes packing big files slow).
        hi = self._level_bound(state, unit, ceiling)
        if hi < lo:
            return unit.level > 0
        if self._try(state, unit, hi, ceiling):
            return True
        hi -= 1
        while lo <= hi:  # binary search the largest level that fits; each success is committed
            mid = (lo + hi) // 2
            if self._try(state, unit, mid, ceiling):
                lo = mid + 1
            else:
                hi = mid - 1
        return unit.level > 0

    def _level_bound(self, state: _FileState, unit: _Unit, ceiling: int) -> int:
        """Largest level whose new lines alone could still fit (merging saves at most BOUND_SLACK)."""
        room = ceiling - self.cost
        # Adding lines costs at least the lines, minus what they save: a " (truncated)" mark that
        # goes away, or a header and fences when they join two runs of this file.
        room += len(TRUNCATED_MARK) * len(state.blocks) + (BOUND_SLACK if len(state.blocks) > 1 else 0)
        present = state.selected()
        costs = [0 if line in present else len(state.spec.known[line]) + 1 for line in unit.lines]
        n = len(costs)
        forward = [0]
        for c in costs:
            forward.append(forward[-1] + c)
        backward = [0]
        for c in reversed(costs):
            backward.append(backward[-1] + c)

        def new_chars(k: int) -> int:
            if unit.strategy == "tail":
                return forward[k]
            if unit.strategy == "head":
                return backward[k]
            return forward[(k + 1) // 2] + backward[k - (k + 1) // 2]

        best = unit.level
        for k in range(unit.level + 1, n + 1):  # new_chars grows with k
            if new_chars(k) > room:
                break
            best = k
        return best

    def _unit(
        self, state: _FileState, row: dict[str, Any], strategy: str, hit: bool, hit_rank: int
    ) -> _Unit | None:
        lines = sorted(
            n
            for n in align_chunk(
                row["text"] or "",
                int(row["start_line"]),
                int(row["end_line"]),
                state.spec.known,
                state.complete,
            )
            if n in state.spec.known
        )
        if not lines:
            return None
        unit = _Unit(row["chunk_id"], row.get("symbol_name") or "", lines, strategy, hit, hit_rank)
        state.units[unit.chunk_id] = unit
        return unit

    def build(self) -> ContextPack:
        """Place the best hit of every file, let it grow back, then the rest by effective rank."""
        best: list[_Candidate] = []
        rest: list[_Candidate] = []
        seq = itertools.count()
        for state in self.files:
            rows = {c["chunk_id"]: c for c in state.spec.chunks}
            position = {c["chunk_id"]: i for i, c in enumerate(state.spec.chunks)}
            hit_ids = [cid for cid in state.spec.hit_ids if cid in rows]
            for n, cid in enumerate(hit_ids):
                hit_rank = state.spec.hit_ranks.get(cid, 0)
                entry = _Candidate(hit_rank, next(seq), state, rows[cid], self.strategy, True, hit_rank)
                (best if n == 0 else rest).append(entry)
                if cid not in position:
                    continue
                i = position[cid]
                for distance in range(1, self.hops + 1):
                    # Cut on the side away from the hit: what is next to it is what matters.
                    for j, strategy in ((i - distance, "head"), (i + distance, "tail")):
                        if (
                            0 <= j < len(state.spec.chunks)
                            and state.spec.chunks[j]["chunk_id"] not in hit_ids
                        ):
                            effective = hit_rank + NEIGHBOR_RANK_STEP * distance
                            rest.append(
                                _Candidate(
                                    effective,
                                    next(seq),
                                    state,
                                    state.spec.chunks[j],
                                    strategy,
                                    False,
                                    hit_rank,
                                )
                            )
        best.sort(key=lambda c: (c.effective_rank, c.seq))
        rest.sort(key=lambda c: (c.effective_rank, c.seq))
        # Pass 1: every file's best hit; one may not take more than its share while others wait.
        share = int(self.max_chars * FIRST_PASS_SHARE) if len(best) + len(rest) > 1 else None
        placed = [unit for c in best if (unit := self._place(c, share)) is not None]
        # Pass 2: truncated best hits grow back into what is left.
        for unit in placed:
            if unit.truncated:
                self._grow(self._state_of[unit.chunk_id], unit, None)
        # Pass 3: other hits and neighbours by effective rank (a neighbour d hops from the hit
        # ranked r counts as rank r + NEIGHBOR_RANK_STEP * d).
        for c in rest:
            if c.row["chunk_id"] not in c.state.units:
                self._place(c, None, MIN_SECONDARY_LINES)
        return self._finish()

    def _place(self, c: _Candidate, cap: int | None, min_level: int = 1) -> _Unit | None:
        unit = self._unit(c.state, c.row, c.strategy, c.hit, c.hit_rank)
        if unit is None:
            return None
        if self._grow(c.state, unit, cap, min_level):
            self._state_of[unit.chunk_id] = c.state
            return unit
        del c.state.units[unit.chunk_id]
        self.omitted["hits" if c.hit else "neighbors"] += 1
        return None

    def _finish(self) -> ContextPack:
        files: list[PackFile] = []
        blocks: list[str] = []
        truncated = False
        for state in self.files:
            file_blocks, excerpts = state.render()
            if not excerpts:
                continue
            blocks.extend(file_blocks)
            truncated = truncated or any(e.truncated for e in excerpts)
            files.append(
                PackFile(
                    file_path=state.spec.file_path,
                    language=state.spec.language,
                    rank=len(files) + 1,
                    best_hit_rank=state.spec.best_hit_rank,
                    score=state.spec.score,
                    source=state.spec.source,
                    excerpts=tuple(excerpts),
                )
            )
        text = SEPARATOR.join(blocks)
        assert len(text) <= self.max_chars, "packer exceeded its budget"
        truncated = truncated or self.omitted["hits"] > 0
        return ContextPack(tuple(files), text, self.max_chars, truncated, dict(self.omitted))


# --------------------------------------------------------------------------------------------
# From the index to packer input
# --------------------------------------------------------------------------------------------


def _file_lines(reader: IndexReader, path: str, chunks: list[dict[str, Any]]) -> tuple[dict[int, str], str]:
    """The file's lines: from disk if unchanged since indexing, else what the chunks reveal."""
    row = reader.conn.execute("SELECT content_hash FROM files WHERE path = ?", (path,)).fetchone()
    root = reader.paths.project_path
    candidate = (root / path).resolve()
    if row is not None and (candidate == root or root in candidate.parents):
        try:
            data = read_regular_file(candidate, reader.settings.max_file_bytes)  # no FIFO, no /dev/zero
        except OSError:
            data = None
        if data is not None and hashlib.sha256(data).hexdigest() == row["content_hash"]:
            lines = split_lines(data.decode("utf-8", errors="replace"))
            return {i + 1: t for i, t in enumerate(lines)}, "disk"
    known: dict[int, str] = {}
    for c in chunks:  # contiguous chunks first: they pin lines exactly
        lines = split_lines(c["text"] or "")
        if len(lines) == int(c["end_line"]) - int(c["start_line"]) + 1:
            for i, t in enumerate(lines):
                known.setdefault(int(c["start_line"]) + i, t)
    for c in chunks:  # then skeletons fill what only they hold
        for n, t in align_chunk(
            c["text"] or "", int(c["start_line"]), int(c["end_line"]), known, False
        ).items():
            known.setdefault(n, t)
    return known, "index"


def gather_files(
    reader: IndexReader,
    ordered_hits: Sequence[tuple[str, float]],
    rows: dict[str, dict[str, Any]],
    max_files: int,
) -> tuple[list[PackFileInput], int]:
    """Group hits (chunk_id, score) in rank order into at most ``max_files`` files; also returns files dropped."""
    by_file: dict[str, PackFileInput] = {}
    dropped: set[str] = set()
    for position, (cid, score) in enumerate(ordered_hits, start=1):
        row = rows.get(cid)
        if row is None:
            continue
        path = row["file_path"]
        spec = by_file.get(path)
        if spec is None:
            if len(by_file) >= max_files:
                dropped.add(path)
                continue
            chunks = reader.file_chunks(path) or [row]
            known, source = _file_lines(reader, path, chunks)
            spec = PackFileInput(path, row.get("language") or "", position, score, source, known, chunks, [])
            by_file[path] = spec
        if cid not in spec.hit_ids:
            spec.hit_ids.append(cid)
            spec.hit_ranks[cid] = position
        if not any(c["chunk_id"] == cid for c in spec.chunks):
            spec.chunks.append(row)  # a hit the mirror lacks: still packed, without neighbours
    return list(by_file.values()), len(dropped)


def _timings_ms(**spans: tuple[float, float]) -> dict[str, float]:
    """Milliseconds of each named (start, end) span."""
    return {name: round((end - start) * 1000, 2) for name, (start, end) in spans.items()}


def _rerank(
    reranker: OllamaReranker,
    query: str,
    pool: list[Any],
    rows: dict[str, dict[str, Any]],
    ordered: list[tuple[str, float]],
    warnings: list[dict[str, str]],
) -> tuple[list[tuple[str, float]], dict[str, Any]]:
    """Ask the LLM re-ranker to order ``pool``; on failure keep ``ordered`` (a warning says why)."""
    candidates_of = [(s.chunk_id, s.score) for s in pool if s.chunk_id in rows]
    outcome = reranker.rerank(
        query,
        [
            RerankCandidate(rows[c]["file_path"], rows[c].get("symbol_name") or "", rows[c]["text"] or "")
            for c, _ in candidates_of
        ],
    )
    if outcome.reranked:
        ordered = [candidates_of[i] for i in outcome.order]
    warnings.extend(outcome.warnings)
    info = {
        "requested": True,
        "applied": outcome.reranked,
        "model": outcome.model,
        "candidates": min(len(candidates_of), reranker.max_candidates),
        "latency_ms": round(outcome.latency_ms, 1),
    }
    return ordered, info


@dataclass(frozen=True)
class PackRequest:
    """What to pack (the library's own record; the tool's pydantic arguments convert to it)."""

    query: str
    max_files: int = 8
    max_chars: int = 12000
    include_neighbors: bool = True
    neighbor_hops: int = 1
    rerank: bool = False
    truncate_strategy: str = "middle"
    filters: SearchFilters | None = None
    alpha: float = DEFAULT_ALPHA


def pack_context(reader: IndexReader, req: PackRequest, settings: Settings) -> ToolResult:
    """Hybrid retrieval → optional LLM re-rank → grouped, merged, budgeted excerpts plus one text block."""
    started = time.perf_counter()
    depth = min(CANDIDATE_DEPTH, max(40, req.max_files * 5))
    rank_req = RankRequest(
        query=req.query,
        mode="hybrid",
        alpha=req.alpha,
        filters=req.filters,
        depth=depth,
    )
    ranking = rank(reader, rank_req)
    t_rank = time.perf_counter()
    warnings = [*reader.warnings, *ranking.warnings]
    kept = list(ranking.ranked[: ranking.kept])
    reranker = OllamaReranker.from_settings(settings) if req.rerank else None
    # The LLM judges the head of the whole ranking, not only what survived the relevance
    # gap: lifting what the first stage underrated is what a re-ranker is for.
    pool = list(ranking.ranked[: max(ranking.kept, reranker.max_candidates)]) if reranker else kept
    rows = reader.fetch_chunks(s.chunk_id for s in pool)
    ordered = [(s.chunk_id, s.score) for s in kept if s.chunk_id in rows]
    rerank_info: dict[str, Any] = {"requested": req.rerank, "applied": False}
    if reranker is not None:
        ordered, rerank_info = _rerank(reranker, req.query, pool, rows, ordered, warnings)
    t_rerank = time.perf_counter()
    files, dropped_files = gather_files(reader, ordered, rows, req.max_files)
    hops = req.neighbor_hops if req.include_neighbors else 0
    pack = Packer(files, max_chars=req.max_chars, strategy=req.truncate_strategy, neighbor_hops=hops).build()
    if not kept and reader.version is not None:
        warnings.append(W.warn(W.NO_MATCHES, f"(nothing matched {req.query[:80]!r})."))
    done = time.perf_counter()
    timings = _timings_ms(rank=(started, t_rank), rerank=(t_rank, t_rerank), pack=(t_rerank, done))
    timings["total"] = round((done - started) * 1000, 2)
    data = {
        "query": req.query,
        "files": [f.to_dict() for f in pack.files],
        "text": pack.text,
        "chars": len(pack.text),
        "excerpt_chars": pack.excerpt_chars,
        "max_chars": req.max_chars,
        "est_tokens": pack.est_tokens,
        "truncated": pack.truncated,
        "omitted": {**pack.omitted, "files": dropped_files},
        "candidates": len(kept),
        "truncate_strategy": req.truncate_strategy,
        "neighbor_hops": hops,
        "rerank": rerank_info,
        "search": {
            "mode": ranking.mode,
            "alpha_effective": ranking.alpha_effective,
            "legs": ranking.legs,
            "published_version": reader.version,
        },
        "timings_ms": timings,
    }
    return ToolResult(data=data, warnings=warnings)


def retrieve_context_pack(params: ContextPackParams, settings: Settings | None = None) -> ToolResult:
    """The ``retrieve_context_pack`` tool: its arguments as a :class:`PackRequest`, over the opened index."""
    settings = settings or load_settings()
    req = PackRequest(
        query=params.query,
        max_files=params.max_files,
        max_chars=params.max_chars,
        include_neighbors=params.include_neighbors,
        neighbor_hops=params.neighbor_hops,
        rerank=params.rerank,
        truncate_strategy=params.truncate_strategy,
        filters=SearchFilters.of(params.filters),
        alpha=params.alpha,
    )
    with open_index(params.project_path, settings) as reader:
        return pack_context(reader, req, settings)
