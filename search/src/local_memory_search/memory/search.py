"""``memory_search`` as a library function: filters first, then the legs, fusion, multipliers,
supersession, near-duplicate collapse, paging.

Order of work (each step sees only records that pass every filter, see ``filters``):
1. uid paste: a uid in the query names its record (``match_source: uid``) and then the records
   whose body mentions it;
2. the full-text leg (SQLite FTS5 BM25 with seed 001's column weights, OR semantics, see ``fts``;
   LanceDB's FTS where index.db has no FTS5 rows for the version) and the vector leg (cosine,
   ``semanticThreshold``), each ``candidate_limit`` deep;
3. weighted RRF (hybrid), seed 000's multipliers, contradicted records last;
4. a superseded record gives its place to its successor (``replaces``) unless
   ``include_superseded``; the hidden ones are listed in ``superseded`` with ``succeeded_by``;
5. near-duplicates (cosine >= ``DUPLICATE_SIMILARITY`` within a project) fold into the best one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from lancedb.query import BooleanQuery, FullTextOperator, MultiMatchQuery, Occur, PhraseQuery
from local_memory_shared.contract import FTS_PHRASE_UNSUPPORTED, FTS_UNAVAILABLE
from local_memory_shared.envelope import warning
from local_memory_shared.errors import LocalMemoryError
from local_memory_shared.memory.query import FullTextQuery, matches_any_pattern, parse_fulltext
from local_memory_shared.memory.query.fulltext import MUST, MUST_NOT
from local_memory_shared.memory.schema import FTS_BOOSTS
from local_memory_shared.memory.uid import is_uid

from .. import degradation as W
from . import ranking
from .filters import MemoryFilters, VectorFilter, compile_filters
from .fts import fts5_leg
from .reader import ROW_COLUMNS, MemoryReader
from .vectors import built_matrix, exact_scope, exact_top

log = logging.getLogger(__name__)

#: Two hits whose vectors are at least this similar (same project) are one memory said twice.
DUPLICATE_SIMILARITY = 0.95
DEFAULT_CANDIDATES = 30
#: Warning code: phrases degraded to all-words because the FTS index lacks token positions.
PHRASE_FALLBACK = FTS_PHRASE_UNSUPPORTED
MAX_CANDIDATES = 1000
MAX_SUCCESSOR_HOPS = 20
#: ANN search (tables of ``ANN_MIN_ROWS``+ rows): partitions probed and the exact re-ranking depth
#: factor. On the bench's 50,000 rows (bench/memory_latency_ab.py --data) the top 30 shares 99.6 %
#: of the flat scan's ids (196 of 210 lists identical); 20 probes: 99.35 % for ~2 ms less.
ANN_NPROBES = 40
ANN_REFINE_FACTOR = 5

Encode = Callable[[str], np.ndarray]
#: Runs the full-text leg beside the vector leg (threads: LanceDB releases the GIL).
_LEGS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memory-leg")


@dataclass(frozen=True)
class SearchRequest:
    """A validated memory search (the tool layer builds it from pydantic params)."""

    filters: MemoryFilters
    fulltext: str | None = None
    semantic: str | None = None
    weights: tuple[float, float] = (1.0, 1.0)
    candidate_limit: int = DEFAULT_CANDIDATES
    semantic_threshold: float | None = None
    limit: int = 10
    offset: int = 0
    order_by: str = "desc"

    @property
    def mode(self) -> str:
        if self.fulltext and self.semantic:
            return "hybrid"
        return "fulltext" if self.fulltext else "semantic" if self.semantic else "filter"


@dataclass
class SearchAnswer:
    """Ranked candidates (all of them; the tool pages) plus what was hidden and why."""

    hits: list[ranking.Candidate]
    mode: str
    total: int
    superseded: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)


def search(reader: MemoryReader, req: SearchRequest, encode: Encode | None) -> SearchAnswer:
    """Run one memory search; ``encode`` is None when no embedder is available."""
    f = req.filters
    where, vector_filter = compile_filters(reader, f)
    warnings: list[dict[str, str]] = []
    mode = req.mode
    if mode in ("semantic", "hybrid") and encode is None:
        warnings.append(W.warn(W.EMBEDDING_UNAVAILABLE, "Memory search fell back to full-text only."))
        mode = "fulltext" if req.fulltext or req.semantic else "filter"
        req = SearchRequest(**{**req.__dict__, "fulltext": req.fulltext or req.semantic, "semantic": None})
    if mode == "filter" or f.sort != "relevance":
        return _finish(reader, req, where, _browse(reader, req, where), mode, warnings, rank=False)
    depth = min(MAX_CANDIDATES, max(req.candidate_limit, (req.offset + req.limit) * 2))
    cands: dict[str, ranking.Candidate] = {}
    # The full-text leg runs in a worker thread while this one encodes the query and runs the
    # vector leg (LanceDB releases the GIL); each leg then loads the rows it found that the
    # other has not claimed yet, so the first one done loads while the other still searches.
    loader = _RowLoader(reader)
    fts = None
    if req.fulltext:
        fts = _LEGS.submit(
            _fts_and_rows, reader, parse_fulltext(req.fulltext), (where, vector_filter), depth, loader
        )
    vector_rows: list[dict[str, Any]] | None = None
    loaded: dict[str, dict[str, Any]] = {}
    if req.semantic and encode is not None:
        try:
            vec = encode(req.semantic)
        except LocalMemoryError as exc:
            warnings.append(W.warn(W.EMBEDDING_UNAVAILABLE, f"({exc.message}) Full-text only."))
            if not req.fulltext:
                fts = _LEGS.submit(
                    _fts_and_rows, reader, parse_fulltext(req.semantic), (where, vector_filter), depth, loader
                )
                mode = "fulltext"
        else:
            vector_rows = _above(
                _run_vector(reader, vec, where, depth, vector_filter), req.semantic_threshold
            )
            loaded.update(loader.load(vector_rows))
    if fts is not None:
        fts_rows, fts_warnings, fts_loaded = fts.result()
        warnings.extend(fts_warnings)
        loaded.update(fts_loaded)
        _add_fts(fts_rows, cands)
    if vector_rows is not None:
        _add_vector(vector_rows, cands)
    loader.finish(loaded)
    for cid in list(cands):
        if cid in loaded:
            cands[cid].row = loaded[cid]
        else:  # cannot happen on one pinned version; never rank a row we cannot show
            del cands[cid]
    ranking.fuse(cands, mode, req.weights)
    from_legs = set(cands)
    uid_first = _uid_paste(reader, req.fulltext or req.semantic or "", where, cands)
    # Every candidate passed ``where`` except a pasted uid's own record ("any filter aside").
    passed = {i for i, c in cands.items() if i in from_legs or c.match_source != "uid"}
    out = _finish(
        reader, req, where, list(cands.values()), mode, warnings, rank=True, passed=passed, vf=vector_filter
    )
    if uid_first:
        firsts = [c for i in uid_first for c in out.hits if c.id == i]
        out.hits = firsts + [c for c in out.hits if c.id not in set(uid_first)]
    return out


def _fts_query(q: FullTextQuery, phrases: bool = True) -> Any:
    cols, boosts = list(FTS_BOOSTS), list(FTS_BOOSTS.values())
    if q.is_plain:
        return MultiMatchQuery(" ".join(q.words()), cols, boosts=boosts, operator=FullTextOperator.OR)
    clauses = []
    for t in q.terms:
        occur = Occur.MUST if t.occur == MUST else Occur.MUST_NOT if t.occur == MUST_NOT else Occur.SHOULD
        if t.phrase and phrases:
            sub: Any = BooleanQuery(
                [
                    (Occur.SHOULD, PhraseQuery(t.text, c, slop=0, document_granularity=None))
                    for c in ("title", "content")
                ]
            )
        elif t.phrase:  # an index without positions: every word of the phrase, in any order
            sub = MultiMatchQuery(t.text, cols, boosts=boosts, operator=FullTextOperator.AND)
        else:
            sub = MultiMatchQuery(t.text, cols, boosts=boosts, operator=FullTextOperator.OR)
        clauses.append((occur, sub))
    return BooleanQuery(clauses)


def _fts_leg(
    reader: MemoryReader, q: FullTextQuery, where: tuple[str, VectorFilter], depth: int
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The full-text leg's rows (id, score, row id) and its warnings: SQLite FTS5 (``fts``), or
    LanceDB's FTS over ``where[0]`` with a warning when the FTS5 rows cannot answer."""
    if q.is_empty:
        return [], []
    rows, reason = fts5_leg(reader, q, where, depth)
    if rows is not None:
        return rows, []
    if reason is None:  # too wide a query for FTS5: LanceDB's FTS ranks it sooner
        return _lance_fts_leg(reader, q, where[0], depth)
    log.info("memory FTS5 table unusable (%s); LanceDB full-text search answers", reason)
    stale = warning(FTS_UNAVAILABLE, f"The memory full-text table (SQLite FTS5 in index.db) cannot answer: {reason}; "
                    "LanceDB's full-text index answered instead (slower, BM25 scored per column). The memory writer "
                    "rebuilds the table when it next opens the index (`local-memory-indexer memory sync`).")  # fmt: skip
    lance_rows, warnings = _lance_fts_leg(reader, q, where[0], depth)
    return lance_rows, [stale, *warnings]


def _lance_fts_leg(
    reader: MemoryReader, q: FullTextQuery, where: str, depth: int
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The full-text leg on LanceDB's per-column FTS indices (the fallback)."""
    try:
        return _run_fts(reader, _fts_query(q), where, depth), []
    except Exception as exc:  # noqa: BLE001 - an FTS index built without positions refuses phrases
        log.info("memory phrase query failed (%s); phrases match as all-words", exc)
        w = warning(PHRASE_FALLBACK, f"The full-text index has no positions ({exc}); a quoted phrase matched "
                    "all of its words in any order. `local-memory-indexer memory rebuild` after an upgrade fixes it.")  # fmt: skip
        return _run_fts(reader, _fts_query(q, phrases=False), where, depth), [w]


def _fts_and_rows(
    reader: MemoryReader, q: FullTextQuery, where: tuple[str, VectorFilter], depth: int, loader: _RowLoader
) -> tuple[list[dict[str, Any]], list[dict[str, str]], dict[str, dict[str, Any]]]:
    """The full-text leg (worker thread), then the rows it found that the vector leg has not claimed."""
    rows, warnings = _fts_leg(reader, q, where, depth)
    return rows, warnings, loader.load(rows)


class _RowLoader:
    """Loads the legs' rows by row id, each row once: a leg claims the rows it found that the
    other leg has not claimed yet and takes them (one ``take`` per leg). The vectors for the
    near-duplicate collapse come from the in-memory matrix when a vector search built one."""

    def __init__(self, reader: MemoryReader):
        self.reader = reader
        self._claimed: set[int] = set()
        self._lock = threading.Lock()

    def load(self, leg_rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        with self._lock:
            mine = {int(r["_rowid"]): r["id"] for r in leg_rows if int(r["_rowid"]) not in self._claimed}
            self._claimed.update(mine)
        with_vectors = built_matrix(self.reader) is None
        columns = [*ROW_COLUMNS, "vector"] if with_vectors else list(ROW_COLUMNS)
        rows = {r["id"]: r for r in self.reader.take(mine, columns)}
        if not with_vectors:
            for rid, cid in mine.items():
                if cid in rows:
                    rows[cid]["_rowid"] = rid  # finish() looks the vector up in the matrix
        return rows

    def finish(self, rows: dict[str, dict[str, Any]]) -> None:
        """Attach the matrix vectors to the rows taken without theirs."""
        need = [r for r in rows.values() if "_rowid" in r]
        matrix = built_matrix(self.reader)
        if not need or matrix is None:
            return
        for r, vec in zip(need, matrix.vectors_of([r.pop("_rowid") for r in need]), strict=True):
            r["vector"] = vec


def _add_fts(rows: list[dict[str, Any]], cands: dict[str, ranking.Candidate]) -> None:
    for rank, row in enumerate(rows, start=1):
        c = cands.setdefault(row["id"], ranking.Candidate({"id": row["id"]}))
        c.fts_score, c.fts_rank = float(row.get("_score") or 0.0), rank


def _run_fts(reader: MemoryReader, query: Any, where: str, depth: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = (
        reader.table.search(query, query_type="fts")
        .where(where, prefilter=True)
        .select(["id", "_score", "_rowid"])
        .limit(depth)
        .to_list()
    )
    return rows


def _above(rows: list[dict[str, Any]], threshold: float | None) -> list[dict[str, Any]]:
    """The vector leg's rows at or above ``semanticThreshold`` (cosine similarity)."""
    if threshold is None:
        return rows
    return [r for r in rows if 1.0 - float(r.get("_distance", 1.0)) >= threshold]


def _add_vector(rows: list[dict[str, Any]], cands: dict[str, ranking.Candidate]) -> None:
    for rank, row in enumerate(rows, start=1):
        c = cands.get(row["id"])
        if c is None:
            c = cands[row["id"]] = ranking.Candidate({"id": row["id"]}, match_source="vector")
        c.similarity, c.vector_rank = 1.0 - float(row.get("_distance", 1.0)), rank


def _run_vector(
    reader: MemoryReader, vec: np.ndarray, where: str, depth: int, exact: VectorFilter | None = None
) -> list[dict[str, Any]]:
    """The vector leg: the exact in-memory scan (``vectors``, given ``exact``, the same filters
    as ``where``) where the version fits in memory, else LanceDB."""
    if exact is not None:
        found = exact_top(reader, vec, exact, depth)
        if found is not None:
            return found

    def build() -> Any:
        return (
            reader.table.search(vec.tolist(), vector_column_name="vector")
            .distance_type("cosine")
            .where(where, prefilter=True)
            .select(["id", "_distance", "_rowid"])
            .limit(depth)
        )

    if reader.has_vector_index:
        try:
            rows: list[dict[str, Any]] = (
                build().nprobes(ANN_NPROBES).refine_factor(ANN_REFINE_FACTOR).to_list()
            )
            return rows
        except Exception as exc:  # noqa: BLE001 - an unreadable ANN index must only cost speed
            log.warning("memory ANN search failed, falling back to a flat scan: %s", exc)
    rows = build().bypass_vector_index().to_list()
    return rows


def _uid_paste(reader: MemoryReader, text: str, where: str, cands: dict[str, ranking.Candidate]) -> list[str]:
    """Records named by uids in ``text`` (any filter aside: the caller asked for them), then mentions."""
    uids = [t.upper() for t in text.replace(",", " ").split() if is_uid(t)]
    if not uids:
        return []
    named = reader.by_ids(uids)
    order: list[str] = []
    for uid in uids:
        if uid in named:
            cands[uid] = cands.get(uid) or ranking.Candidate(named[uid])
            cands[uid].match_source = "uid"
            order.append(uid)
    mention_ids = [m for uid in order for m in reader.mentions_of(uid)]
    for mid, row in reader.by_ids(mention_ids, where).items():
        cands.setdefault(mid, ranking.Candidate(row))
    order.extend(m for m in mention_ids if m in cands and m not in order)
    return order


def _browse(reader: MemoryReader, req: SearchRequest, where: str) -> list[ranking.Candidate]:
    return [ranking.Candidate(r, match_source="filter") for r in reader.rows(where, [*ROW_COLUMNS, "vector"])]


def _finish(
    reader: MemoryReader,
    req: SearchRequest,
    where: str,
    cands: list[ranking.Candidate],
    mode: str,
    warnings: list[dict[str, str]],
    *,
    rank: bool,
    passed: set[str] | None = None,
    vf: VectorFilter | None = None,
) -> SearchAnswer:
    f = req.filters
    live = reader.live_hits(c.id for c in cands)
    for c in cands:
        if c.id in live:
            c.row["hits"], c.row["last_hit"] = live[c.id]
    path_matched = {c.id for c in cands if f.path and matches_any_pattern(f.path, c.row.get("paths") or ())}
    ranking.score(cands, path_matched, req.weights if rank and mode == "hybrid" else None, f.as_of or f.now)
    sort = (
        f.sort
        if (rank or f.sort != "relevance")
        else ("updated" if req.order_by == "desc" and not _seed004(req) else f"created_{req.order_by}")
    )
    cands.sort(key=lambda c: ranking.order_key(c, sort))
    superseded: list[dict[str, str]] = []
    if not f.include_superseded and f.status != "superseded":
        known = {c.id for c in cands} if passed is None else passed
        cands = _fold_superseded(reader, f, (where, vf), cands, superseded, path_matched, known)
    cands = _collapse(cands)
    return SearchAnswer(cands, mode, len(cands), superseded, warnings)


def _seed004(req: SearchRequest) -> bool:
    f = req.filters
    return any(x is not None for x in (f.tree, f.meta, f.meta_predicate, f.temporal)) or req.order_by == "asc"


def _fold_superseded(
    reader: MemoryReader,
    f: MemoryFilters,
    where: tuple[str, VectorFilter | None],
    cands: list[ranking.Candidate],
    hidden: list[dict[str, str]],
    path_matched: set[str],
    passed: set[str],
) -> list[ranking.Candidate]:
    """Replace each superseded hit with its newest visible successor, at the better position.

    The supersession graph is memoised per index version (``reader.succession``); ``passed``
    holds the candidates known to pass ``where``; one query (none when every successor is such a
    candidate) tells which other successors pass it and brings their rows.
    """
    firsts = {c.id: c.row["succeeded_by"] for c in cands if c.row.get("succeeded_by")}
    if not firsts:
        return cands
    graph = reader.succession()
    present = {c.id: c for c in cands}
    successors, rows = _newest_successors(reader, graph.succeeded_by, firsts, where, passed)
    held = graph.created if f.as_of else {}
    out: list[ranking.Candidate] = []
    placed: dict[str, ranking.Candidate] = {}
    for c in cands:
        if c.id in placed:
            continue
        succ = successors[c.id] if c.id in successors else c.id
        if succ is None:
            if f.as_of and held.get(c.row["succeeded_by"], "\uffff") > f.as_of:
                out.append(placed.setdefault(c.id, c))
            else:
                hidden.append({"id": c.id, "succeeded_by": c.row["succeeded_by"]})
            continue
        if succ == c.id:
            out.append(placed.setdefault(c.id, c))
            continue
        hidden.append({"id": c.id, "succeeded_by": succ})
        s = placed.get(succ)
        if s is None:
            s = present.get(succ) or _candidate(rows[succ], c, path_matched, f.as_of or f.now)
            placed[succ] = s
            out.append(s)
        s.replaces.append(c.id)
    return out


def _newest_successors(
    reader: MemoryReader,
    graph: dict[str, str],
    firsts: dict[str, str],
    where: tuple[str, VectorFilter | None],
    passed: set[str],
) -> tuple[dict[str, str | None], dict[str, dict[str, Any]]]:
    """``id -> newest successor passing where`` (None: the first one does not) and the rows of the
    visible successors outside ``passed``: one query over the chain members outside it, if any,
    or, when the vector leg's matrix and mask of these filters are at hand, one take by row id of
    the members they pass (``where`` = the SQL and the same filters for the matrix)."""
    chains: dict[str, list[str]] = {}
    for cid, first in firsts.items():
        chain: list[str] = []
        current: str | None = first
        while current and len(chain) < MAX_SUCCESSOR_HOPS and current not in chain:
            chain.append(current)
            current = graph.get(current)
        chains[cid] = chain
    members = sorted({m for chain in chains.values() for m in chain} - passed)
    scope = None if where[1] is None or not members else exact_scope(reader, where[1])
    if scope is None:
        rows = reader.by_ids(members, where[0], [*ROW_COLUMNS, "vector"])
    else:
        matrix, allowed = scope
        pos = dict(zip(members, matrix.positions_of_ids(members), strict=True))
        rows = reader.by_ids([m for m, p in pos.items() if p is None], where[0], [*ROW_COLUMNS, "vector"])
        keep = {m: p for m, p in pos.items() if p is not None and allowed[p]}
        for row in reader.take([int(matrix.row_ids[p]) for p in keep.values()], ROW_COLUMNS):
            rows[row["id"]] = {**row, "vector": matrix.vectors[keep[row["id"]]]}
    out: dict[str, str | None] = {}
    for cid, chain in chains.items():
        best: str | None = None
        for m in chain:
            if m not in rows and m not in passed:
                break
            best = m
        out[cid] = best
    return out, rows


def _candidate(
    row: dict[str, Any], predecessor: ranking.Candidate, path_matched: set[str], now: str
) -> ranking.Candidate:
    """A successor that was not itself a candidate, at the place of the superseded hit it took
    over: it carries that hit's score (``score_from`` names it; its own multipliers stay in
    ``explain``), so the listing's scores keep descending."""
    c = ranking.Candidate(row, match_source="successor")
    ranking.score([c], path_matched, now=now)
    c.base, c.final, c.score_from = predecessor.base, predecessor.final, predecessor.id
    return c


def _collapse(cands: list[ranking.Candidate]) -> list[ranking.Candidate]:
    """Fold near-duplicates into the best-ranked one (``collapsed`` lists them): each hit, in
    order, joins the most similar kept hit of its project at >= ``DUPLICATE_SIMILARITY``."""
    raw = [c.row.pop("vector", None) for c in cands]
    with_vec = [i for i, v in enumerate(raw) if v is not None]
    if not with_vec:
        return list(cands)
    mat = np.stack([np.asarray(raw[i], dtype=np.float32) for i in with_vec])
    sims = mat @ mat.T  # one product for all pairs (at most a few hundred candidates)
    row_of = {i: n for n, i in enumerate(with_vec)}
    kept: list[ranking.Candidate] = []
    owners: list[int] = []  # rows of ``sims`` of the kept hits that have a vector
    for i, c in enumerate(cands):
        dup = None
        if i in row_of and owners:
            s = sims[owners, row_of[i]]
            for k in np.argsort(-s):
                if s[k] < DUPLICATE_SIMILARITY:
                    break
                if cands[with_vec[owners[k]]].row["project"] == c.row["project"]:
                    dup = cands[with_vec[owners[k]]]
                    break
        if dup is not None:
            dup.collapsed.append(c.id)
            continue
        kept.append(c)
        if i in row_of:
            owners.append(row_of[i])
    return kept
