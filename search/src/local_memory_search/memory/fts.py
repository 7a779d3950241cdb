"""The full-text leg on SQLite FTS5: index.db's ``memory_fts`` (see
``local_memory_shared.memory.schema``), ranked by ``bm25()`` with seed 001's column weights.

Consistency: the writer changes the FTS5 rows in the SQLite transaction that publishes each LanceDB
version and stamps ``fts_version`` there; ``reader.open_reader`` reads ``published_version``,
``fts_version`` and (later, in this leg) the FTS5 rows inside one read transaction, so the rows
this leg ranks are exactly those of the version the reader pinned, whatever a writer commits
meanwhile. When ``fts_version`` is not the pinned version (an index written by a writer that
predates the FTS5 table) or the table cannot be read, :func:`fts5_leg` returns None with the
reason and the caller answers from LanceDB's full-text index with a warning.

Filters stay before ranking: a project filter is the project's docid range (FTS5 seeks to it);
the ``TOP_FACTOR * depth`` best (docid, bm25) come back from SQLite, each docid maps to its row of
the version's in-memory matrix (``vectors``, built once per version; the docid map too) and only
rows passing the same filter mask as the vector leg's compete for the ``depth`` places; when fewer
than ``depth`` of them pass, every match is read and masked, so a filter that excludes most
top-BM25 hits never makes a page short. Where there is no matrix (above ``vectors.EXACT_MAX_ROWS`` records, or a reader without a
pinned handle) the matches come in BM25 order, ``SQL_PAGE`` at a time, and each page keeps the
ids LanceDB finds under the SQL ``where``, until ``depth`` passed or the matches ran out. Both
order ties by docid.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

import numpy as np
from local_memory_shared.memory.query import FullTextQuery, fts5_match
from local_memory_shared.memory.schema import (
    FTS5_IDS_TABLE,
    FTS5_PROJECTS_TABLE,
    FTS5_TABLE,
    FTS5_VERSION_KEY,
    FTS_BOOSTS,
    FTS_COLUMNS,
    project_docids,
)

from . import vectors
from .reader import sql_in
from .vectors import VectorIndex, VectorMatrix

if TYPE_CHECKING:
    from .filters import VectorFilter
    from .reader import MemoryReader

#: ``bm25()`` takes one weight per column in the table's column order (= ``FTS_BOOSTS`` order).
_WEIGHTS = ", ".join(repr(float(w)) for w in FTS_BOOSTS.values())
_MATCH_SQL = (
    f"SELECT rowid, bm25({FTS5_TABLE}, {_WEIGHTS}) FROM {FTS5_TABLE}"
    f" WHERE {FTS5_TABLE} MATCH ? AND rowid BETWEEN ? AND ?"
)
#: The best ``TOP_FACTOR * depth`` matches first (best BM25, then docid: the leg's own order):
#: SQLite sorts them, Python receives only those; when fewer than ``depth`` of them pass the
#: filters, every match is read.
_TOP_SQL = _MATCH_SQL + " ORDER BY 2, 1 LIMIT ?"
TOP_FACTOR = 4
_PAGE_SQL = (
    f"SELECT i.id, -bm25({FTS5_TABLE}, {_WEIGHTS}) AS score FROM {FTS5_TABLE}"
    f" JOIN {FTS5_IDS_TABLE} AS i ON i.docid = {FTS5_TABLE}.rowid"
    f" WHERE {FTS5_TABLE} MATCH ? AND {FTS5_TABLE}.rowid BETWEEN ? AND ?"
    " ORDER BY score DESC, i.docid LIMIT ? OFFSET ?"
)
#: Every docid (no project filter).
_ALL_DOCIDS = (0, (1 << 62) - 1)
#: A plain query's words found in more than this share of the records are left out when it has
#: rarer words (:func:`without_common_words`).
COMMON_SHARE = 0.25
#: ... in versions of at least this many records (below, every word is scored: it is cheap).
COMMON_MIN_ROWS = 10_000
#: The (match, phrase) pairs above which a plain query goes to LanceDB's FTS (:func:`too_wide`):
#: ~40 ms of FTS5 on the loaded 2-core machine (0.4 us a pair at load 16); the bench's worst
#: query, its 15 most frequent words over every project, is ~1.8 million (846 ms; LanceDB 114 ms).
MAX_FTS5_WORK = 100_000
#: Matches per page of the path without a matrix (``depth`` * 4 at least).
SQL_PAGE = 200


def unavailable(reader: MemoryReader) -> str | None:
    """Why the FTS5 table cannot answer for this reader's version (None: it can)."""
    mirrored, published = reader.meta.get(FTS5_VERSION_KEY), reader.meta.get("published_version")
    if mirrored != published:
        return f"its rows mirror version {mirrored or 'none'}, not the published version {published}"
    return None


def _positions(reader: MemoryReader, matrix: VectorMatrix) -> tuple[np.ndarray, np.ndarray]:
    """Sorted docids and their matrix positions (-1: not in the matrix), one read of ``memory_fts_ids``."""
    rows = reader.conn.execute(f"SELECT docid, id FROM {FTS5_IDS_TABLE} ORDER BY docid").fetchall()
    docids = np.asarray([int(r[0]) for r in rows], dtype=np.int64)
    found = matrix.positions_of_ids([str(r[1]) for r in rows])
    return docids, np.asarray([-1 if p is None else p for p in found], dtype=np.int64)


def _docid_range(reader: MemoryReader, project: str | None) -> tuple[int, int] | None:
    """The docids of ``project`` (every docid for None; None: the project has no records)."""
    if project is None:
        return _ALL_DOCIDS
    sql = f"SELECT slot FROM {FTS5_PROJECTS_TABLE} WHERE project = ?"
    found = reader.conn.execute(sql, (project,)).fetchone()
    return None if found is None else project_docids(int(found[0]))


def fts5_leg(
    reader: MemoryReader, q: FullTextQuery, where: tuple[str, VectorFilter], depth: int
) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The ``depth`` best BM25 rows (id, ``_score`` higher = better, ``_rowid``) passing the
    filters (``where``: the SQL and the same filters for the matrix), ``(None, reason)`` when
    the FTS5 table cannot answer for this version, ``(None, None)`` when the query is
    :func:`too_wide` for it (LanceDB's FTS answers; nothing is degraded)."""
    reason = unavailable(reader)
    if reason is not None:
        return None, reason
    if q.is_empty or depth <= 0:
        return [], None
    try:
        docids = _docid_range(reader, where[1].project)
        if docids is None:
            return [], None
        rare = without_common_words(reader, q)
        if too_wide(reader, rare, docids):
            return None, None
        rows = _ranked(reader, fts5_match(rare, FTS_COLUMNS), docids, where, depth)
        if not rows and rare is not q:  # the rarer words match nothing that passes the filters
            rows = _ranked(reader, fts5_match(q, FTS_COLUMNS), docids, where, depth)
        return rows, None
    except sqlite3.Error as exc:  # no such table (an index.db the writer has not upgraded), corrupt
        return None, f"it cannot be read ({exc})"


def _ranked(
    reader: MemoryReader, expr: str, docids: tuple[int, int], where: tuple[str, VectorFilter], depth: int
) -> list[dict[str, Any]]:
    if reader.opened is None or reader.row_count() > vectors.EXACT_MAX_ROWS:
        return _by_sql(reader, expr, docids, where[0], depth)
    return _by_matrix(reader, reader.opened.memo("vector_index", VectorIndex), expr, docids, where[1], depth)


def _doc_freq(reader: MemoryReader, q: FullTextQuery) -> dict[str, int]:
    """Records containing each word of ``q`` (counted once per version and word)."""
    freq: dict[str, int] = reader.opened.memo("fts_doc_freq", dict) if reader.opened else {}
    for t in q.terms:
        if t.text not in freq:
            sql = f"SELECT count(*) FROM {FTS5_TABLE} WHERE {FTS5_TABLE} MATCH ?"
            freq[t.text] = int(reader.conn.execute(sql, (f'"{t.text}"',)).fetchone()[0])  # \\w+ only
    return freq


def too_wide(reader: MemoryReader, q: FullTextQuery, docids: tuple[int, int]) -> bool:
    """Would FTS5 score so many (match, phrase) pairs for plain ``q`` that LanceDB's FTS (which
    skips records that cannot reach the top) answers sooner? Estimated as the words' matches in
    the docid range (document frequency x the range's share of the records) x the expression's
    phrases (two a word); from ``COMMON_MIN_ROWS`` records only."""
    rows = reader.row_count()
    if not q.is_plain or rows < COMMON_MIN_ROWS:
        return False
    share = 1.0
    if docids != _ALL_DOCIDS:  # records in the range, counted once per version and range
        sizes: dict[tuple[int, int], int] = (
            reader.opened.memo("fts_range_rows", dict) if reader.opened else {}
        )
        if docids not in sizes:
            sql = f"SELECT count(*) FROM {FTS5_IDS_TABLE} WHERE docid BETWEEN ? AND ?"
            sizes[docids] = int(reader.conn.execute(sql, docids).fetchone()[0])
        share = sizes[docids] / rows
    matches = share * sum(_doc_freq(reader, q)[t.text] for t in q.terms)
    return matches * 2 * len(q.terms) > MAX_FTS5_WORK


def without_common_words(reader: MemoryReader, q: FullTextQuery) -> FullTextQuery:
    """``q`` without the words more than ``COMMON_SHARE`` of the version's records contain, when
    it is a plain OR of words and some of its words are rarer (else ``q`` itself).

    Such a word ("the", "in") barely ranks (BM25 idf < ln 3; FTS5 sets it to 1e-6 above half of
    the records) but ``bm25()`` runs on every record it matches: 40 % of 50,000 records cost
    ~50 ms. Without it, the records matching only such words drop out of the leg (the records
    matching a rarer word keep their order up to the dropped words' small share of the score).
    Document frequencies are counted once per version and word (``COUNT`` over the FTS5 match).
    """
    if not q.is_plain or len(q.terms) < 2 or reader.row_count() < COMMON_MIN_ROWS:
        return q
    freq = _doc_freq(reader, q)
    limit = COMMON_SHARE * max(reader.row_count(), 1)
    rare = tuple(t for t in q.terms if freq[t.text] <= limit)
    return FullTextQuery(rare) if rare and len(rare) < len(q.terms) else q


def _by_sql(
    reader: MemoryReader, expr: str, docids: tuple[int, int], where: str, depth: int
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    page, offset = max(SQL_PAGE, depth * 4), 0
    while len(out) < depth:
        found = reader.conn.execute(_PAGE_SQL, (expr, *docids, page, offset)).fetchall()
        if not found:
            break
        offset += len(found)
        ids = [str(r[0]) for r in found]
        scan = (
            reader.table.search().where(f"{sql_in('id', ids)} AND ({where})").select(["id"]).with_row_id(True)
        )
        passing = {str(r["id"]): int(r["_rowid"]) for r in scan.limit(len(ids)).to_list()}
        out += [{"id": i, "_score": float(s), "_rowid": passing[i]} for i, s in found if i in passing]
    return out[:depth]


def _by_matrix(
    reader: MemoryReader,
    index: VectorIndex,
    expr: str,
    docids_in: tuple[int, int],
    vf: VectorFilter,
    depth: int,
) -> list[dict[str, Any]]:
    matrix = index.matrix(reader)
    if reader.opened is None:
        return []
    known, known_pos = reader.opened.memo("fts_positions", lambda: _positions(reader, matrix))
    allowed = matrix.allowed(index.passing(reader, vf.where), vf)

    def passing(found: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pairs = np.asarray(found, dtype=np.float64).reshape(-1, 2)
        docids = pairs[:, 0].astype(np.int64)
        scores = -pairs[:, 1]  # bm25() is lower-is-better
        at = np.minimum(np.searchsorted(known, docids), max(len(known) - 1, 0))
        pos = np.where(known[at] == docids, known_pos[at], -1) if len(known) else np.full(len(docids), -1)
        keep = pos >= 0
        keep[keep] = allowed[pos[keep]]
        return pos[keep], scores[keep], docids[keep]

    first = reader.conn.execute(_TOP_SQL, (expr, *docids_in, depth * TOP_FACTOR)).fetchall()
    pos, scores, docids = passing(first)
    if len(pos) < depth and len(first) == depth * TOP_FACTOR:  # the filters pass too few of them
        pos, scores, docids = passing(reader.conn.execute(_MATCH_SQL, (expr, *docids_in)).fetchall())
    if len(pos) > depth:  # the depth best and every tie of the last one (ties go by docid)
        kth = -np.partition(-scores, depth - 1)[depth - 1]
        top = np.flatnonzero(scores >= kth)
        pos, scores, docids = pos[top], scores[top], docids[top]
    order = np.lexsort((docids, -scores))[:depth]
    ids = [i.decode() for i in matrix.ids[pos[order]].tolist()]
    rids = matrix.row_ids[pos[order]].tolist()
    return [
        {"id": i, "_score": float(s), "_rowid": int(r)}
        for i, s, r in zip(ids, scores[order].tolist(), rids, strict=True)
    ]
