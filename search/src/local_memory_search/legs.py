"""The retrieval legs (I/O): the vector leg over LanceDB, the BM25 leg (LanceDB FTS, SQLite LIKE
fallback), and the per-version memos they and the fusion read (newest file, index languages).
"""

from __future__ import annotations

import logging
import math
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
from local_memory_shared.errors import DimensionMismatch, EmbeddingError
from local_memory_shared.schema import FTS_COLUMN, VECTOR_COLUMN

from . import degradation as W
from . import ranking
from .encoder import ENCODER, choose_encoder
from .filters import LanceWhere, SearchFilters, lance_where, sqlite_where
from .query_text import fts_query_text, query_words, semantic_query_text
from .runtime import register_cache
from .store import IndexReader

if TYPE_CHECKING:
    from .fusion import RankRequest

log = logging.getLogger(__name__)

#: ANN search settings per vector index kind: (nprobes, refine_factor). The index exists from
#: ``ANN_MIN_ROWS`` = 20,000 rows; a refine re-ranks ``depth × factor`` candidates by their exact
#: vectors, which costs a read of every one. Measured on the 104k-chunk project against the exact
#: scan (``python -m bench.ann_sweep``; recall of its top 10, p50; why this kind:
#: ``local_memory_indexer.store.VECTOR_INDEX_TYPE``):
#:
#: - ``IvfRq`` (what the indexer builds now, 4-bit RaBitQ codes): no refine, probes are cheap.
#:   40 / 60 / 80 / 100 probes: 0.84 / 0.89 / 0.90 / 0.91 at 5.3 / 5.5 / 5.6 / 5.9 ms; 60 probes
#:   refined ×2: 0.95 at 7.2 ms. 80 probes.
#: - ``IvfPq`` (indexes built before; retrained by the next index run): 30 probes, refine ×2 —
#:   0.86-0.87 at 8.9-10.5 ms; without the refine 0.67. Two segments (after a re-index, each delta
#:   is probed as often): 30/2 0.87, 60/2 0.94 at p95 ×1.35.
#: - ``IvfSq`` (8-bit codes, tried): 60 probes without refine 0.94 at 5.6 ms.
#:
#: Any other kind gets the refine, which keeps a coarser quantizer honest.
ANN_SETTINGS: dict[str, tuple[int, int | None]] = {"IvfRq": (80, None), "IvfSq": (60, None), "IvfPq": (30, 2)}
ANN_DEFAULT_SETTING: tuple[int, int | None] = (30, 2)
#: What the fusion reads of each candidate: enough to fuse and boost; text is fetched for the page only.
LEG_COLUMNS = ["chunk_id", "file_path", "symbol_name", "function_name", "class_name", "updated_at"]
#: What the vector and BM25 legs read from LanceDB: the id (with the distance or score). The rest
#: of ``LEG_COLUMNS`` comes afterwards from the SQLite mirror, published in the same commit as the
#: version, in one look-up per leg (:func:`with_meta`; in a hybrid search the BM25 leg's runs
#: while the vector leg does). At 104k chunks, reading the five more columns for a leg's 100 hits
#: cost the BM25 leg 1.6 ms and the vector leg 2.2 ms of their ~4.5 and ~7 ms; the mirror
#: look-up of 100 ids takes ~0.6 ms.
HIT_COLUMNS = ["chunk_id"]


def finite(x: float) -> float:
    """JSON-safe float."""
    return x if math.isfinite(x) else 0.0


@dataclass(frozen=True)
class LegHit:
    """One chunk as one leg ranked it."""

    chunk_id: str
    rank: int
    score: float


@dataclass(frozen=True)
class LegResult:
    """What one leg returned, and from where (``lance_ann``, ``lance_flat``, ``lance_fts``, ``sqlite_like``)."""

    name: str
    source: str
    hits: tuple[LegHit, ...]
    seconds: float
    meta: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)
    encode_seconds: float = 0.0


class LegFailed(Exception):
    """A leg could not run; ``warning`` says why (internal, never leaves the search package)."""

    def __init__(self, warning: dict[str, str]):
        super().__init__(warning["message"])
        self.warning = warning


K = TypeVar("K")
V = TypeVar("V")


class VersionMemo(Generic[K, V]):
    """A small thread-safe memo keyed by the published version (``reader.cache_token``); ``clear()`` resets it."""

    def __init__(self, limit: int = 256) -> None:
        self._values: dict[K, V] = {}
        self._lock = threading.Lock()
        self._limit = limit

    def get(self, key: K, compute: Callable[[], V]) -> V:
        """The memoised value for ``key``, computing (outside the lock) on a miss."""
        with self._lock:
            if key in self._values:
                return self._values[key]
        value = compute()
        with self._lock:
            if len(self._values) >= self._limit:
                self._values.clear()
            self._values[key] = value
        return value

    def clear(self) -> None:
        """Forget every value."""
        with self._lock:
            self._values.clear()

    def __len__(self) -> int:
        return len(self._values)


_NEWEST: VersionMemo[Any, str | None] = register_cache("newest_updated_at", VersionMemo())
_LANGUAGES: VersionMemo[Any, frozenset[str]] = register_cache("index_languages", VersionMemo())


def newest_updated_at(reader: IndexReader) -> str | None:
    """The recency boost's reference point: the newest indexed file's mtime, cached per version.

    Read from ``files`` (one row per file) rather than ``MAX(chunks.updated_at)``, a full scan of
    the mirror that costs ~70 ms at 55k chunks; a chunk's updated_at is never newer than its file.
    """

    def compute() -> str | None:
        try:
            newest = reader.conn.execute("SELECT MAX(mtime) FROM files").fetchone()[0]
            if newest is not None:
                return datetime.fromtimestamp(float(newest), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            value = reader.conn.execute("SELECT MAX(updated_at) FROM chunks").fetchone()[0]
            return str(value) if value is not None else None
        except sqlite3.Error:
            return None

    return _NEWEST.get(reader.cache_token, compute)


def index_languages(reader: IndexReader) -> frozenset[str]:
    """Language tags present in the index (lower-case), cached per published version."""

    def compute() -> frozenset[str]:
        try:
            rows = reader.conn.execute("SELECT DISTINCT language FROM files").fetchall()
            return frozenset(str(r[0]).lower() for r in rows if r[0])
        except sqlite3.Error:
            return frozenset()

    return _LANGUAGES.get(reader.cache_token, compute)


_SCOPE_COVERS_TABLE: VersionMemo[Any, bool] = register_cache("scope_covers_table", VersionMemo())


def leg_where(reader: IndexReader, filters: SearchFilters | None) -> LanceWhere:
    """The legs' LanceDB predicate: ``lance_where``, minus the scope clauses when they hold for every row.

    Without user filters the predicate is the scope alone (project, schema version), which every
    row of a healthy per-project table matches; evaluated after the search it still reads those
    columns for every candidate (about 1.5 ms a query). Whether every row of the published version
    matches is counted once per version; only then is the predicate dropped, so results never change.
    """
    where = lance_where(reader.project, filters)
    if where.prefilter or reader.table is None:
        return where
    table = reader.table

    def covers() -> bool:
        try:
            return int(table.count_rows(where.sql)) == int(table.count_rows())
        except Exception as exc:  # unreadable: keep the predicate
            log.debug("scope count failed: %s", exc)
            return False

    return (
        LanceWhere("", prefilter=False)
        if _SCOPE_COVERS_TABLE.get((reader.cache_token, where.sql), covers)
        else where
    )


def _rows_to_leg(
    name: str,
    source: str,
    rows: list[dict[str, Any]],
    score_of: Callable[[dict[str, Any]], float],
    started: float,
    encode_seconds: float = 0.0,
) -> LegResult:
    """A leg's rows as ranked hits; each row's ``LEG_COLUMNS`` become the leg's meta when it read
    them (the vector and BM25 legs read ids only: :func:`with_meta` adds theirs)."""
    hits: list[LegHit] = []
    seen: set[str] = set()
    meta: dict[str, dict[str, Any]] = {}
    with_columns = bool(rows) and "file_path" in rows[0]
    for row in rows:
        cid = row["chunk_id"]
        if cid in seen:
            continue
        seen.add(cid)
        if with_columns:
            meta[cid] = {k: row.get(k) for k in LEG_COLUMNS}
        hits.append(LegHit(cid, len(hits) + 1, finite(float(score_of(row)))))
    return LegResult(name, source, tuple(hits), time.perf_counter() - started, meta, encode_seconds)


def with_meta(reader: IndexReader, leg: LegResult, started: float) -> LegResult:
    """``leg`` with the ``LEG_COLUMNS`` of its hits (``IndexReader.rows_by_id``: the mirror, then
    LanceDB); a hit found in neither keeps no meta (the fusion then sees no path or names). The
    vector leg runs this in its pool thread while the BM25 leg runs it in the caller's (the
    connection is serialized); the leg's ``seconds`` then count from ``started`` to its end."""
    missing = [h.chunk_id for h in leg.hits if h.chunk_id not in leg.meta]
    if not missing:
        return leg
    found = reader.rows_by_id(missing, LEG_COLUMNS)
    return replace(leg, meta={**leg.meta, **found}, seconds=time.perf_counter() - started)


def ann_setting(index_kind: str) -> tuple[int, int | None]:
    """(nprobes, refine_factor) the vector leg asks an index of ``index_kind`` with."""
    return ANN_SETTINGS.get(index_kind, ANN_DEFAULT_SETTING)


def vector_search(
    reader: IndexReader,
    vector: np.ndarray,
    where: LanceWhere,
    depth: int,
    warnings: list[dict[str, str]],
    columns: list[str] = LEG_COLUMNS,
) -> tuple[list[dict[str, Any]], str]:
    """Nearest chunks to ``vector`` (cosine), with ``columns``; falls back to an exact scan when the
    ANN index fails."""
    table = reader.table
    assert table is not None
    columns = [*columns, "_distance"]

    def run(**ann: Any) -> list[dict[str, Any]]:
        rows = table.vector_arrow(
            vector,
            column=VECTOR_COLUMN,
            distance_type="cosine",
            columns=columns,
            limit=depth,
            where=where.sql or None,
            postfilter=not where.prefilter,
            **ann,
        )
        return list(rows.to_pylist())

    if reader.vector_index is not None:
        nprobes, refine = ann_setting(reader.vector_index)
        try:
            return run(nprobes=nprobes, refine_factor=refine), "lance_ann"
        except Exception as exc:  # a corrupt or unreadable index must only cost speed
            log.warning("ANN search failed, falling back to a flat scan: %s", exc)
            warnings.append(W.warn(W.ANN_INDEX_UNUSABLE, f"({type(exc).__name__}: {str(exc)[:200]})"))
    try:
        return run(exact=True), "lance_flat"
    except Exception as exc:
        raise LegFailed(
            W.warn(W.VECTOR_LEG_UNAVAILABLE, f"({type(exc).__name__}: {str(exc)[:200]})")
        ) from exc


def semantic_leg(reader: IndexReader, req: RankRequest, warnings: list[dict[str, str]]) -> LegResult:
    """The vector leg: encode the query, nearest chunks by cosine."""
    started = time.perf_counter()
    if reader.table is None:
        raise LegFailed(W.warn(W.VECTOR_LEG_UNAVAILABLE, "(no LanceDB table to search)."))
    choice, notes = choose_encoder(reader.meta, reader.vector_dim)
    warnings.extend(notes)
    if choice is None:
        raise LegFailed(notes[-1])
    enc_start = time.perf_counter()
    try:
        text = semantic_query_text(req.query, index_languages(reader))
        vector = ENCODER.encode(choice, text, reader.vector_dim, reader.settings)
    except DimensionMismatch as exc:
        raise LegFailed(W.warn(W.QUERY_DIMENSION_MISMATCH, exc.message)) from exc
    except EmbeddingError as exc:
        raise LegFailed(W.warn(W.EMBEDDING_UNAVAILABLE, exc.message)) from exc
    encode_seconds = time.perf_counter() - enc_start
    where = leg_where(reader, req.filters)
    rows, source = vector_search(reader, vector, where, req.depth, warnings, HIT_COLUMNS)
    leg = _rows_to_leg(
        "semantic", source, rows, lambda r: 1.0 - float(r["_distance"]), started, encode_seconds
    )
    return with_meta(reader, leg, started)


def keyword_leg(reader: IndexReader, req: RankRequest, warnings: list[dict[str, str]]) -> LegResult:
    """The BM25 leg: LanceDB FTS, or the SQLite LIKE fallback when FTS is missing or fails."""
    started = time.perf_counter()
    text = fts_query_text(req.query, index_languages(reader), ranking.plain_words(ranking.KNOBS))
    if not text:
        return LegResult("keyword", "none", (), 0.0)
    if reader.table is not None:
        if not reader.has_fts_index:
            warnings.append(W.warn(W.FTS_UNAVAILABLE, "(no FTS index on the published version)."))
        else:
            where = leg_where(reader, req.filters)
            try:
                rows = reader.table.fts_arrow(
                    text,
                    column=FTS_COLUMN,
                    columns=[*HIT_COLUMNS, "_score"],
                    limit=req.depth,
                    where=where.sql or None,
                    postfilter=not where.prefilter,
                ).to_pylist()
                leg = _rows_to_leg("keyword", "lance_fts", rows, lambda r: float(r["_score"]), started)
                return with_meta(reader, leg, started)
            except Exception as exc:
                log.warning("FTS query failed, falling back to SQLite LIKE: %s", exc)
                warnings.append(W.warn(W.FTS_UNAVAILABLE, f"({type(exc).__name__}: {str(exc)[:200]})"))
    rows = like_search(reader, query_words(req.query), req.filters, req.depth)
    return _rows_to_leg("keyword", "sqlite_like", rows, lambda r: float(r["_score"]), started)


#: Weight of a word found in each mirror column, for the SQLite LIKE fallback's crude relevance.
LIKE_WEIGHTS = (("symbol_name", 3), ("summary", 2), ("file_path", 1), ("text", 1))
_MAX_LIKE_WORDS = 16


def like_search(
    reader: IndexReader, words: list[str], filters: SearchFilters | None, depth: int
) -> list[dict[str, Any]]:
    """Keyword fallback over the SQLite mirror: weighted count of words found per column."""
    words = [w for w in words if len(w) > 1][:_MAX_LIKE_WORDS]
    if not words:
        return []
    terms: list[str] = []
    args: list[Any] = []
    for word in words:
        pattern = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        for column, weight in LIKE_WEIGHTS:
            terms.append(f"(CASE WHEN c.{column} LIKE ? ESCAPE '\\' THEN {weight} ELSE 0 END)")
            args.append(pattern)
    where, where_args = sqlite_where(filters, alias="c")
    sql = (
        f"SELECT * FROM (SELECT c.chunk_id, c.symbol_name, c.function_name, c.class_name, c.updated_at, "  # noqa: S608
        f"c.file_path, c.chunk_index, ({' + '.join(terms)}) AS _score FROM chunks c WHERE {where}) "
        "WHERE _score > 0 ORDER BY _score DESC, file_path, chunk_index LIMIT ?"
    )
    return [dict(r) for r in reader.conn.execute(sql, [*args, *where_args, depth])]


#: Most defining chunks the symbol table contributes for one query.
DEFINITION_DEPTH = 10
#: Kinds that define a type: a name query usually means the type, so they come first.
_TYPE_KINDS = ("class", "interface", "struct", "enum", "trait", "type", "module")


def definition_leg(reader: IndexReader, req: RankRequest, names: set[str]) -> LegResult:
    """Defining chunks of the names ``req.query`` spells, from the graph's ``symbols`` table.

    Finds a definition even when neither retrieval leg returned it. Exact short or qualified
    names only; type definitions first, aliases (C++ ``using``, Rust ``pub use`` re-exports)
    after the rest, then by path depth (shallower first).
    """
    started = time.perf_counter()
    if not names:
        return LegResult("definition", "symbols", (), 0.0)
    marks = ",".join("?" * len(names))
    where, args = sqlite_where(req.filters, alias="c")
    kinds = ",".join("?" * len(_TYPE_KINDS))
    sql = (
        "SELECT c.chunk_id, c.file_path, c.symbol_name, c.function_name, c.class_name, c.updated_at "  # noqa: S608
        f"FROM symbols s JOIN chunks c ON c.chunk_id = s.chunk_id "
        f"WHERE (s.name IN ({marks}) OR s.qualified_name IN ({marks})) AND {where} "
        f"ORDER BY (s.kind IN ({kinds})) DESC, s.kind = 'alias', "
        "length(c.file_path) - length(replace(c.file_path, '/', '')), "
        "c.file_path, s.start_line LIMIT ?"
    )
    ordered = sorted(names)
    try:
        rows = [
            dict(r)
            for r in reader.conn.execute(sql, [*ordered, *ordered, *args, *_TYPE_KINDS, DEFINITION_DEPTH])
        ]
    except sqlite3.Error as exc:  # an index without a graph simply has no definitions to add
        log.debug("definition lookup failed: %s", exc)
        rows = []
    return _rows_to_leg("definition", "symbols", rows, lambda r: 1.0, started)
