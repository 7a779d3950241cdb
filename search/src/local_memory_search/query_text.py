"""Query-text analysis: words, identifier parts, names a query asks for, and the BM25 query text.

Pure functions of the query string (and the index's language tags); no I/O.
"""

from __future__ import annotations

import re

from local_memory_shared.schema import definition_terms

_IDENT = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*")
_WORD = re.compile(r"\w+", re.UNICODE)
_CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

#: Queries of at most this many words are taken as names even when a word looks like prose
#: (``LruCache get``: ``get`` beside a name is a name too).
SHORT_QUERY_WORDS = 2
#: ... but when no word is spelt like a name, only a query of at most this many words is one
#: (``connect`` names a function; ``session management`` is a topic, not two symbols). The
#: ranking passes ``RankingKnobs.plain_name_words``, the owner of the value in force.
PLAIN_NAME_WORDS = 1

#: Function words dropped from natural-language keyword queries: BM25 gives them weight in code
#: (where they are rare), which lets "how to ... in ..." match noise. Code keywords such as
#: ``for``, ``if``, ``not``, ``return`` and ``in`` are deliberately absent.
QUERY_STOPWORDS = frozenset(
    "a an the how to of is are was were be been do does did i me my we you your what which who whom whose "
    "when where why can could should would will shall may might must this that these those it its "
    "there their then than so such very just also about on at by into onto from with without way ways "
    "using use want need something anything".split()
)
#: Language names that are also ordinary words; they stay in keyword queries.
_AMBIGUOUS_LANGUAGE_WORDS = frozenset({"go", "c", "text", "r", "d"})


def word_count(query: str) -> int:
    """Number of word tokens in ``query``."""
    return len(_WORD.findall(query))


def split_identifier(word: str) -> list[str]:
    """Lower-cased camelCase / snake_case parts of ``word`` (``parseHTTPConfig`` -> parse, http, config)."""
    return [p.lower() for piece in word.split("_") for p in _CAMEL_PARTS.findall(piece)]


def query_words(query: str) -> list[str]:
    """Lower-cased words of ``query`` plus the parts of camelCase / snake_case identifiers."""
    words: list[str] = []
    for word in _WORD.findall(query):
        words.append(word.lower())
        for piece in word.split("_"):
            parts = _CAMEL_PARTS.findall(piece)
            if len(parts) > 1 or (parts and parts[0].lower() != word.lower()):
                words.extend(p.lower() for p in parts)
    return list(dict.fromkeys(w for w in words if w))


def looks_like_identifier(token: str) -> bool:
    """True for tokens only code spells this way (snake_case, camelCase, digits, ``a.b``, ``a::b``)."""
    return (
        "_" in token
        or any(c.isdigit() for c in token)
        or any(c.isupper() for c in token[1:])
        or any(sep in token for sep in (".", "::", "#"))
    )


def spells_a_name(query: str) -> bool:
    """True when some token of ``query`` is spelt the way only code spells names (``CookieJar``)."""
    return any(looks_like_identifier(t) for t in _IDENT.findall(query))


def query_identifiers(query: str, plain_words: int = PLAIN_NAME_WORDS) -> set[str]:
    """Tokens of ``query`` that name a symbol (``parseConfig``, ``Client.send``, ``os::path``).

    In a prose question ("check file is readonly") plain words are words, not names: boosting a
    function called ``check`` there would bury the answer. They count as names only in short
    queries: up to ``SHORT_QUERY_WORDS`` words beside a token spelt like a name ("LruCache get"),
    up to ``plain_words`` words when none is ("connect"; not "session management").
    """
    tokens = _IDENT.findall(query)
    words = word_count(query)
    spelt = any(looks_like_identifier(t) for t in tokens)
    short = words <= (SHORT_QUERY_WORDS if spelt else plain_words)
    out: set[str] = set()
    for token in tokens:
        if not (short or looks_like_identifier(token)):
            continue
        out.add(token)
        for sep in ("::", "#"):
            token = token.replace(sep, ".")
        out.add(token)
        out.add(token.rsplit(".", 1)[-1])
    return {t for t in out if len(t) > 1}


def fts_query_text(
    query: str, languages: frozenset[str] = frozenset(), plain_words: int = PLAIN_NAME_WORDS
) -> str:
    """The BM25 query: the query's words plus identifier parts, minus the function words of prose.

    In prose-like queries (three or more words) function words are dropped, and so are names of
    languages the index holds ("... in python" over Python code scopes the question; as a BM25
    term it only matches stray mentions). Never all words: ``"to do"`` still searches.
    """
    words = query_words(query)
    if word_count(query) >= 3:
        drop = QUERY_STOPWORDS | (languages - _AMBIGUOUS_LANGUAGE_WORDS)
        kept = [w for w in words if w not in drop]
        if kept:
            words = kept
    # An exact name also asks for its definition (terms the indexer adds to defining chunks).
    names = query_identifiers(query, plain_words)
    defines = [term for ident in sorted(names) for term in definition_terms(ident)]
    return " ".join(dict.fromkeys(words + defines))


def semantic_query_text(query: str, languages: frozenset[str] = frozenset()) -> str:
    """The text the embedding model reads for ``query``: the query as written, minus a language
    name that scopes it, when the index holds that language and the query has three or more
    words: a name at its start (``python check file is readonly``) or at its end, after an
    optional ``in`` / ``with`` / ``using`` (``declaring empty numpy array in python``). Over
    Python code such a word says nothing, but the model reads it as part of the meaning (CoSQA,
    whose 500 queries all name Python: ``search_hybrid`` 0.6039 -> 0.6111). A name inside the
    sentence is content and stays (``Convert the Python object to a JSON type``).
    """
    drop = languages - _AMBIGUOUS_LANGUAGE_WORDS
    if not drop or word_count(query) < 3:
        return query
    words = query.split()

    def is_language(word: str) -> bool:
        found = _WORD.findall(word)
        return len(found) == 1 and found[0].lower() in drop

    kept = list(words)
    while len(kept) > 2 and is_language(kept[0]):
        kept = kept[1:]
    while len(kept) > 2 and is_language(kept[-1]):
        kept = kept[:-1]
        if len(kept) > 2 and kept[-1].lower() in _SCOPE_WORDS:
            kept = kept[:-1]
    return query if len(kept) == len(words) else " ".join(kept)


#: A language name after one of these at a query's end scopes it (``... in python``).
_SCOPE_WORDS = frozenset({"in", "with", "using", "for"})


def content_words(query: str) -> list[str]:
    """The query's words (identifier parts included) without prose function words, longer than 2 chars."""
    return [w for w in query_words(query) if w not in QUERY_STOPWORDS and len(w) > 2]


def is_symbol_query(query: str) -> bool:
    """True when the whole query is one or two names (``LruCache``, ``Client.send``), not prose."""
    tokens = _IDENT.findall(query)
    return 0 < word_count(query) <= SHORT_QUERY_WORDS and any(looks_like_identifier(t) for t in tokens)
