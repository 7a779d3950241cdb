"""Full-text query sanitising (seed 000's ``sanitizeFtsQuery``) with seed 001's OR semantics.

DESIGN.md "Memory": every word counts on its own and more matches rank higher (OR, ranked by
BM25), so a natural-language question never comes back empty because one word is missing. A fully
quoted query stays one phrase; quoted phrases inside a query stay phrases; ``AND``/``OR``/``NOT``
(upper case, as in FTS5) stay operators: ``a AND b`` makes both required, ``NOT c`` excludes ``c``.
FTS-special characters are neutralised: a term keeps only letters, digits and ``_``.

The parse is a flat list of clauses with an occurrence (``should``/``must``/``must_not``); the
searcher renders it as an SQLite FTS5 ``MATCH`` expression (:func:`fts5_match`) or, on an index
without the FTS5 table, as LanceDB ``MultiMatchQuery``/``PhraseQuery``/``BooleanQuery`` objects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SHOULD, MUST, MUST_NOT = "should", "must", "must_not"
_OPERATORS = {"AND", "OR", "NOT"}
_TOKEN_RE = re.compile(r'"([^"]*)"|(\S+)')
_WORD_RE = re.compile(r"\w+")


@dataclass(frozen=True)
class Term:
    """One clause: a word (or phrase of words) and whether it is optional, required or excluded."""

    text: str
    occur: str = SHOULD
    phrase: bool = False


@dataclass(frozen=True)
class FullTextQuery:
    """A sanitised query; ``terms`` is empty when nothing searchable was left."""

    terms: tuple[Term, ...]

    @property
    def is_empty(self) -> bool:
        return not any(t.occur != MUST_NOT for t in self.terms)

    @property
    def is_plain(self) -> bool:
        """Only optional single words: one OR match over all columns answers it."""
        return all(t.occur == SHOULD and not t.phrase for t in self.terms)

    def words(self) -> list[str]:
        """Every searchable word (for highlighting and for the plain OR query)."""
        return [w for t in self.terms if t.occur != MUST_NOT for w in t.text.split()]


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(text)]


def parse_fulltext(text: str) -> FullTextQuery:
    """Sanitise ``text`` into clauses (see module docstring)."""
    stripped = text.strip()
    if len(stripped) >= 2 and stripped[0] == stripped[-1] == '"' and stripped.count('"') == 2:
        words = _words(stripped[1:-1])
        return FullTextQuery((Term(" ".join(words), SHOULD, phrase=len(words) > 1),) if words else ())
    raw: list[tuple[str, bool]] = []  # (token, quoted)
    for quoted, bare in _TOKEN_RE.findall(stripped):
        raw.append((quoted, True) if bare == "" else (bare, False))
    terms: list[Term] = []
    pending_not = False
    and_next = False
    for token, quoted in raw:
        if not quoted and token in _OPERATORS:
            if token == "NOT":
                pending_not = True
            elif token == "AND" and terms:
                and_next = True
                last = terms[-1]
                if last.occur == SHOULD:
                    terms[-1] = Term(last.text, MUST, last.phrase)
            continue
        words = _words(token)
        if not words:
            continue
        occur = MUST_NOT if pending_not else (MUST if and_next else SHOULD)
        if quoted:
            terms.append(Term(" ".join(words), occur, phrase=len(words) > 1))
        else:
            terms.extend(Term(w, occur) for w in words)
        pending_not = and_next = False
    return FullTextQuery(tuple(terms))


#: A phrase matches in these columns only (as the LanceDB leg's ``PhraseQuery`` does).
PHRASE_COLUMNS: tuple[str, ...] = ("title", "content")


def _fts5_clause(t: Term, columns: tuple[str, ...]) -> str:
    """One clause as two FTS5 phrases: in the first column (the title) and in the others
    (``({title} : "w" OR {content tags domain also} : "w")``). Each phrase gets its own BM25 idf,
    so a word rare among titles ranks a title match the way LanceDB's per-column BM25 did (one
    all-column phrase: recall@5 / MRR hybrid 0.939 / 0.917 on the bench's 2,000 records, these
    two: 0.965 / 0.936; a phrase per column scores the same at 2.5x the cost). A quoted phrase
    matches in ``PHRASE_COLUMNS`` only. Words are ``\\w+`` only (no quotes), so a quoted string is
    one FTS5 phrase, never an operator."""
    quoted = '"' + t.text + '"'
    rest = [c for c in columns[1:] if c in PHRASE_COLUMNS] if t.phrase else list(columns[1:])
    return f"({{{columns[0]}}} : {quoted} OR {{{' '.join(rest)}}} : {quoted})"


def fts5_match(q: FullTextQuery, columns: tuple[str, ...]) -> str:
    """``q`` as an FTS5 ``MATCH`` expression over ``columns`` (the table's columns) with the same
    semantics ("" when ``q.is_empty``).

    Optional clauses are ORed; required ones ANDed, and then the optional ones only rank
    (``(M) OR ((M) AND (S))`` — FTS5 has no "optional" operator; ``bm25()`` counts every phrase
    of the expression, so each required clause weighs twice beside the optional ones);
    excluded ones follow ``NOT`` (FTS5's ``NOT`` is binary: ``positive NOT (n1 OR n2)``), in any
    column.
    """
    if q.is_empty:
        return ""
    must = [_fts5_clause(t, columns) for t in q.terms if t.occur == MUST]
    should = [_fts5_clause(t, columns) for t in q.terms if t.occur == SHOULD]
    must_not = [
        f'{{{" ".join(PHRASE_COLUMNS)}}} : "{t.text}"' if t.phrase else f'"{t.text}"'
        for t in q.terms
        if t.occur == MUST_NOT
    ]
    if must:
        required = "(" + " AND ".join(must) + ")"
        positive = f"{required} OR ({required} AND ({' OR '.join(should)}))" if should else required
    else:
        positive = " OR ".join(should)
    return f"({positive}) NOT ({' OR '.join(must_not)})" if must_not else positive


def fts5_seed000(text: str) -> str:
    """Seed 000's literal sanitiser for SQLite FTS5 (prefix terms, implicit AND): the bench baseline."""
    stripped = text.strip()
    if len(stripped) >= 2 and stripped[0] == stripped[-1] == '"' and stripped.count('"') == 2:
        inner = re.sub(r'["]', "", stripped[1:-1])
        return f'"{inner}"' if inner.strip() else ""
    out: list[str] = []
    for token in stripped.split():
        if token in _OPERATORS:
            out.append(token)
            continue
        clean = re.sub(r"[^\w]", "", token)
        if clean:
            out.append(f'"{clean}"*')
    while out and out[-1] in _OPERATORS:
        out.pop()
    while out and out[0] in _OPERATORS:
        out.pop(0)
    return " ".join(out)
