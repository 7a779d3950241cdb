"""Ranking factors applied on top of the fused score (pure arithmetic over paths and the query).

Each factor is a multiplier on a candidate's fused score, recorded by name in ``Scored.factors``
so ``explain_match`` shows it:

- ``path_prior``: test files and folders, examples, compat/legacy shims, vendored copies rank
  below the code they describe (unless the query itself asks about tests or examples);
  ``reexport_prior`` does the same for re-export files (``__init__.py``, ``index.ts``, ...).
- ``doc_prior``: prose, data and configuration files (Markdown, reST, JSON, YAML, TOML, ...)
  rank below code unless the query asks for docs, a readme or configuration.
- ``name_match``: query words found in the file's name (``1 + file_name_boost * share``, 3.0) and in
  its folder names (``folder_name_boost``); ``share`` is the fraction of the query's content
  words found there; with ``name_prefix`` a word also meets a name it shares a start of at
  least that many letters with (``resolved`` ~ ``resolve``). With ``module_file_folder`` a
  module file (``extract/mod.rs``, ``view/init.lua``, ``store/index.ts``, ``pkg/__init__.py``) is
  named by its folder: that is the module's name. A question (:attr:`QueryShape.question`: ``how
  are routes registered``, ``where is the session signed``, not ``how to ...``) asks which file
  does something, so its file-name weight is ``question_name_boost`` (6.0) instead; with
  ``name_stem`` (measured, 0: off) words that share their first ``name_stem`` letters meet too
  (``distilled`` ~ ``distillation``); a question uses ``question_name_stem`` (5) instead (``how
  are handlers registered`` meets ``registry.py``): it names what a file does in its own word form.
  For a question, a test file's name match is scaled by ``test_name_share`` (0) unless it asks
  about tests: a test is named after the code it tests, and ``how does X work`` asks for X's code.
  Other queries keep it whole (a docstring-like query may describe a test).
- ``name_precision``: how much of the file's name the query accounts for: the file-name share
  is scaled by ``(matched name words / name words) ** name_precision``, so ``HttpCache.kt`` ranks
  above ``HttpCacheLegacy.kt`` for a query about the HTTP cache; shown as its own multiplier
  (``name_match`` with the scaling / without it).
- ``parent_name``: query words found in the name of the file's own folder
  (``Writers/CommonMark.hs`` for ``how pandoc writes CommonMark``): ``1 + parent_name_boost *
  share`` (1.0), for a query of two or more content words that is not a name; only that folder,
  not the ones above it (``src``, the project's name), which ``folder_name_boost`` weighs
  (measured, 0).
- ``file_bonus``: a file holding several strong candidates is more likely the answer:
  ``1 + file_bonus * min(1, sum of the file's other candidates' scores / top score)``.
- ``diversity``: the n-th further chunk of a file already ranked is multiplied by
  ``diversity ** n``, so ten results are not ten pieces of one file; a prose query
  (:attr:`QueryShape.prose`) uses ``prose_diversity`` instead when set (measured, 0: it helps the
  semble benchmark and costs the docstring set, whose answer is often a file's second chunk); a
  question (:attr:`QueryShape.question`) uses ``question_diversity`` (0.2): it asks where
  something happens, which one file answers.

More levers live in the legs and the fusion: the ``definition`` contribution (the symbol
table's defining chunk for an identifier query, see :func:`legs.definition_leg`), the legs'
``confidence_exponent`` (``question_confidence_exponent``, 1.25, for a question: a leg's weaker
hits keep more weight, so what both legs found wins), ``symbol_alpha_shift`` (a symbol-like query leans on the keyword leg;
measured, 0) and ``prose_alpha_shift`` (a prose query leans on the semantic leg, or on BM25 when
negative; measured both ways, 0). The figures that chose each value
are in the README's fusion section (``python -m bench.semble --ablation``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .query_text import QUERY_STOPWORDS, is_symbol_query, query_words, spells_a_name, split_identifier

#: The search tools' fusion parameters' defaults. One owner: the tool parameter models
#: (``params``), ``fusion.RankRequest``, ``api.search`` and the context pack read them here, and
#: ``server.manifest.json`` publishes them (changing one is a contract version bump).
DEFAULT_ALPHA = 0.65
DEFAULT_RRF_K = 60
DEFAULT_RECENCY_WEIGHT = 0.1
#: Hits scoring below this fraction of the top hit are dropped. 0.15 since contract 1.2 (0.25
#: before): on the semble benchmark, search_hybrid nDCG@10 tuning 0.8599 -> 0.8613, reporting
#: 0.8460 -> 0.8498 (0.1 and 0.05 score the same as 0.15 on tuning), CoSQA 0.6039 unchanged; a
#: lower cut only appends hits below the kept ones, so no ranking set can lose by it. Cost: 9.34
#: -> 9.84 results a query (limit 10; 88% -> 97% of the lists full; bench README, session 12).
DEFAULT_GAP_THRESHOLD = 0.15


@dataclass(frozen=True)
class RankingKnobs:
    """Weights of the ranking factors (1.0 multipliers / 0.0 weights switch a factor off)."""

    path_prior: float = 0.7
    reexport_prior: float = 0.8
    file_name_boost: float = 3.0
    folder_name_boost: float = 0.0
    file_bonus: float = 1.0
    diversity: float = 0.6
    definition_weight: float = 0.5
    symbol_alpha_shift: float = 0.0
    name_prefix: float = 4.0
    doc_prior: float = 0.3
    prose_alpha_shift: float = 0.0
    confidence_exponent: float = 2.0
    name_precision: float = 1.0
    module_file_folder: float = 1.0
    prose_diversity: float = 0.0
    question_name_boost: float = 6.0
    name_stem: float = 0.0
    question_confidence_exponent: float = 1.25
    question_name_stem: float = 5.0
    plain_name_words: float = 1.0
    test_name_share: float = 0.0
    question_diversity: float = 0.2
    parent_name_boost: float = 1.0


#: The knobs every ranking uses (benchmarks swap this to measure one factor at a time).
KNOBS = RankingKnobs()
OFF = RankingKnobs(
    path_prior=1.0,
    reexport_prior=1.0,
    file_name_boost=0.0,
    folder_name_boost=0.0,
    file_bonus=0.0,
    diversity=1.0,
    definition_weight=0.0,
    symbol_alpha_shift=0.0,
    name_prefix=0.0,
    doc_prior=1.0,
    prose_alpha_shift=0.0,
    confidence_exponent=4.0,
    name_precision=0.0,
    module_file_folder=0.0,
    prose_diversity=0.0,
    question_name_boost=0.0,
    name_stem=0.0,
    question_confidence_exponent=0.0,
    question_name_stem=0.0,
    plain_name_words=2.0,
    test_name_share=1.0,
    question_diversity=0.0,
    parent_name_boost=0.0,
)

_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "testdata", "fixtures"})
_EXAMPLE_DIRS = frozenset(
    {"example", "examples", "demo", "demos", "sample", "samples", "benchmarks", "bench"}
)
_SHIM_DIRS = frozenset({"compat", "legacy", "deprecated", "vendor", "vendored", "third_party", "thirdparty"})
_TEST_FILE = re.compile(
    r"(^test_|_test$|_tests$|^tests?$|\.test$|\.spec$|_spec$|Tests?$|Spec$|^conftest$)", re.IGNORECASE
)
#: Prose, data and configuration files: a code question is answered by code before them.
_DOC_SUFFIXES = frozenset(
    ".md .markdown .rst .txt .adoc .org .json .yaml .yml .toml .zon .xml .html .htm .ini .cfg .lock .csv".split()
)
_REEXPORT_FILES = frozenset({"__init__.py", "index.ts", "index.js", "index.tsx", "index.mjs", "mod.ts"})
#: Query words that ask about tests or examples themselves (a path prior would then hide the answer).
_ASKS_FOR = {"test": _TEST_DIRS, "example": _EXAMPLE_DIRS}


def _norm(word: str) -> str:
    """Crude singular: ``sessions`` and ``session`` meet (enough for names, not a stemmer)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


#: A query of at least this many content words, none of them spelt like a name, is prose.
PROSE_MIN_WORDS = 3
#: A query opening with one of these words asks where or how something is done (``how are routes
#: registered``, ``where is the session signed``): it wants the file that does it. Not "when": a
#: docstring's "When called with ..." states a condition.
_QUESTION = re.compile(r"\s*(how|what|where|which|why)\b", re.IGNORECASE)
#: ... unless it asks for a recipe (``how to read a file``, CoSQA's phrasing): that wants a function.
_TASK = re.compile(r"\s*how\s+(to|do\s+i|can\s+i)\b", re.IGNORECASE)


#: Query words (plurals folded) that ask about tests, examples or docs themselves, so the path
#: prior that ranks such files lower is off. Whole words where a start would catch other words:
#: ``spec`` not ``specific``, ``demo`` not ``demonstrate``, ``sample`` not ``sampling``, ``doc``
#: not ``document`` or ``docker``.
_TEST_WORDS = frozenset({"spec", "fixture"})
_EXAMPLE_WORDS = frozenset({"example", "demo", "sample"})
_DOC_WORDS = frozenset({"doc", "documentation"})
_LETTERS = re.compile(r"[a-z]+")
_DOC_STARTS = ("readme", "changelog", "config", "setting", "manifest", "yaml", "json", "toml")


@dataclass(frozen=True)
class QueryShape:
    """What the path factors read from the query: its normalised content words, what it asks about,
    whether it is ``prose``: at least ``PROSE_MIN_WORDS`` content words and no token spelt like
    an identifier (``how are cookies persisted``, not ``how does CookieJar persist``), and whether
    it is a ``question``: it opens with how / what / where / which / why (names allowed:
    ``how does tRPC merge routers``), has at least two content words, and is not a recipe
    (``how to ...``, ``how do I ...``), and whether it is a ``symbol`` query: one or two names
    and nothing else (``Rails::Engine``, ``LruCache get``: :func:`query_text.is_symbol_query`)."""

    words: frozenset[str]
    asks_tests: bool
    asks_examples: bool
    asks_docs: bool = False
    prose: bool = False
    question: bool = False
    symbol: bool = False

    @classmethod
    def of(cls, query: str) -> QueryShape:
        """Analyse ``query`` once per ranking."""
        words = frozenset(_norm(w) for w in query_words(query) if w not in QUERY_STOPWORDS and len(w) > 1)
        # whole words as written (``DocBook`` is no ``doc``; ``test_client`` still says ``test``)
        asked = frozenset(_norm(w) for w in _LETTERS.findall(query.lower()))
        asks_tests = any(w.startswith("test") or w in _TEST_WORDS for w in asked)
        asks_examples = not asked.isdisjoint(_EXAMPLE_WORDS)
        asks_docs = any(w.startswith(_DOC_STARTS) or w in _DOC_WORDS for w in asked)
        prose = len(words) >= PROSE_MIN_WORDS and not spells_a_name(query)
        question = len(words) >= 2 and bool(_QUESTION.match(query)) and not _TASK.match(query)
        return cls(words, asks_tests, asks_examples, asks_docs, prose, question, is_symbol_query(query))


def name_boost(shape: QueryShape, knobs: RankingKnobs) -> float:
    """The file-name weight for ``shape``'s query: ``question_name_boost`` for a question (0 = unset),
    else ``file_name_boost``."""
    return (
        knobs.question_name_boost if shape.question and knobs.question_name_boost else knobs.file_name_boost
    )


def name_stem_for(shape: QueryShape, knobs: RankingKnobs) -> int:
    """The shared start that lets a query word meet a name word for ``shape``'s query:
    ``question_name_stem`` for a question (0 = unset), else ``name_stem`` (0 = off)."""
    return int(knobs.question_name_stem if shape.question and knobs.question_name_stem else knobs.name_stem)


def leg_confidence_exponent(shape: QueryShape | None, knobs: RankingKnobs) -> float:
    """The exponent of the legs' confidence for ``shape``'s query: ``question_confidence_exponent``
    for a question (0 = unset), else ``confidence_exponent`` (no shape: not a hybrid ranking)."""
    if shape is not None and shape.question and knobs.question_confidence_exponent:
        return knobs.question_confidence_exponent
    return knobs.confidence_exponent


def name_share_of_tests(shape: QueryShape, knobs: RankingKnobs) -> float:
    """What a test file's name match is scaled by for ``shape``'s query: ``test_name_share`` for a
    question that does not ask about tests, else 1 (the whole match)."""
    return knobs.test_name_share if shape.question and not shape.asks_tests else 1.0


def file_diversity(shape: QueryShape, knobs: RankingKnobs) -> float:
    """The per-file discount for ``shape``'s query: ``question_diversity`` for a question,
    ``prose_diversity`` for other prose (each 0 = unset), else ``diversity``."""
    if shape.question and knobs.question_diversity:
        return knobs.question_diversity
    return knobs.prose_diversity if shape.prose and knobs.prose_diversity else knobs.diversity


def plain_words(knobs: RankingKnobs) -> int:
    """How many words a query of plain words (none spelt like a name) may have and still be taken
    as names: ``plain_name_words`` (``connect`` is a name; ``session management`` a topic)."""
    return int(knobs.plain_name_words)


def shifted_alpha(query: str, alpha: float, knobs: RankingKnobs) -> float:
    """The semantic leg's fusion weight for ``query``: a name leans on the keyword leg
    (``symbol_alpha_shift``), prose on the semantic leg (``prose_alpha_shift``); within [0, 1]."""
    # A query is analysed only for a shift that is set (both are 0 by default: this runs per call).
    # A symbol query is never prose (prose has no name-like token), so the two tests commute.
    if knobs.symbol_alpha_shift and is_symbol_query(query):
        alpha -= knobs.symbol_alpha_shift
    elif knobs.prose_alpha_shift and QueryShape.of(query).prose:
        alpha += knobs.prose_alpha_shift
    return min(1.0, max(0.0, alpha))


def _path_words(parts: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for part in parts:
        for piece in re.split(r"[^A-Za-z0-9]+", part):
            if piece:
                out.add(_norm(piece.lower()))
                out.update(_norm(p) for p in split_identifier(piece))
    return frozenset(out)


@dataclass(frozen=True)
class PathInfo:
    """What the factors read from a path, computed once per path (paths repeat across queries)."""

    is_test: bool
    is_example: bool
    is_shim: bool
    is_reexport: bool
    is_doc: bool
    stem_words: frozenset[str]
    dir_words: frozenset[str]
    stem_parts: frozenset[str] = frozenset()
    module_words: frozenset[str] = frozenset()
    module_parts: frozenset[str] = frozenset()
    parent_words: frozenset[str] = frozenset()


@lru_cache(maxsize=65536)
def path_info(path: str) -> PathInfo:
    """Test/example/shim/re-export flags and the name words of ``path`` (memoised)."""
    folder, _, name = path.rpartition("/")
    dirs, folder_words = _folder_info(folder)
    dot = name.rfind(".")  # pathlib's suffix and stem: a leading or trailing dot is no suffix
    suffix, stem_ = (name[dot:], name[:dot]) if 0 < dot < len(name) - 1 else ("", name)
    stem = name.split(".", 1)[0]
    stem_words = _path_words((name.rsplit(".", 1)[0],))
    parent = folder.rpartition("/")[2]
    module = parent if parent and stem in _MODULE_STEMS else ""
    return PathInfo(
        is_test=bool(dirs & _TEST_DIRS) or bool(_TEST_FILE.search(stem_) or _TEST_FILE.search(stem)),
        is_example=bool(dirs & _EXAMPLE_DIRS) or stem.lower() in _EXAMPLE_DIRS,
        is_shim=bool(dirs & _SHIM_DIRS),
        is_reexport=name in _REEXPORT_FILES,
        is_doc=suffix.lower() in _DOC_SUFFIXES or (not suffix and name.isupper()),
        stem_words=stem_words,
        dir_words=folder_words - stem_words,
        stem_parts=_name_parts(name.rsplit(".", 1)[0]),
        module_words=_path_words((module,)) if module else frozenset(),
        module_parts=_name_parts(module),
        parent_words=_path_words((parent,)) - stem_words if parent and not module else frozenset(),
    )


@lru_cache(maxsize=16384)
def _folder_info(folder: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the lower-cased folder names, their name words) of ``folder``: computed once per folder,
    which many files share (a cold :func:`path_info` was most of a first query's fusion)."""
    parts = tuple(p for p in folder.split("/") if p)
    return frozenset(d.lower() for d in parts), _path_words(parts)


#: Stems of files that are their folder's module: ``extract/mod.rs`` is the module ``extract``.
_MODULE_STEMS = frozenset({"mod", "init", "index", "__init__"})


def _name_parts(name: str) -> frozenset[str]:
    """The words a name is made of (``HttpCacheLegacy`` -> http, cache, legacy), plurals folded;
    a test file's marker is not one of them (``test_custom_classes`` is named "custom classes")."""
    parts = frozenset(_norm(w) for piece in re.split(r"[^A-Za-z0-9]+", name) for w in split_identifier(piece))
    return parts - _TEST_MARKERS if parts - _TEST_MARKERS else parts


#: Words that mark a test file's name (``test_x``, ``x_test``, ``XTests``, ``x_spec``), not name it.
_TEST_MARKERS = frozenset({"test", "spec"})


#: The per-chunk factors :func:`path_factors` returns, in the order they multiply the score.
PATH_FACTORS = ("path_prior", "doc_prior", "name_match", "name_precision", "parent_name")


def path_factors(path: str, shape: QueryShape, knobs: RankingKnobs) -> tuple[tuple[str, float], ...]:
    """The named per-chunk factors of a candidate from ``path`` (``PATH_FACTORS``, in that order);
    they depend on the path and the query only, so the fusion computes them once per file."""
    name_match, name_precision = name_factors(path, shape, knobs)
    return (
        ("path_prior", path_factor(path, shape, knobs)),
        ("doc_prior", doc_factor(path, shape, knobs)),
        ("name_match", name_match),
        ("name_precision", name_precision),
        ("parent_name", parent_name_factor(path, shape, knobs)),
    )


def parent_name_factor(path: str, shape: QueryShape, knobs: RankingKnobs) -> float:
    """``1 + parent_name_boost * share``: ``share`` is the fraction of the query's content words
    found in the name of the file's own folder (``Writers/CommonMark.hs`` for ``how pandoc writes
    CommonMark``, ``Readers/RST.hs`` for ``how pandoc reads RST``); words matched as for the file
    name (``name_prefix``, the query's ``name_stem``). Only for a query of two or more content words that is not a name
    (:attr:`QueryShape.symbol`: ``Rails::Engine``, ``JsonConvert SerializeObject``): a name is
    asked for its definition, not for a folder. A module file (``extract/mod.rs``) is named by that
    folder already (``module_file_folder``), so it gets none."""
    n = len(shape.words)
    if not knobs.parent_name_boost or n < 2 or shape.symbol:
        return 1.0
    words = path_info(path).parent_words
    if not words:
        return 1.0
    found = _matched(shape.words, words, int(knobs.name_prefix), name_stem_for(shape, knobs))
    return 1.0 + knobs.parent_name_boost * found / n


def path_factor(path: str, shape: QueryShape, knobs: RankingKnobs) -> float:
    """The path prior for ``path``: < 1 for tests, examples, shims, vendored copies, re-export files."""
    info = path_info(path)
    factor = 1.0
    if info.is_test and not shape.asks_tests:
        factor *= knobs.path_prior
    elif info.is_example and not shape.asks_examples:
        factor *= knobs.path_prior
    elif info.is_shim:
        factor *= knobs.path_prior
    if info.is_reexport:
        factor *= knobs.reexport_prior
    return factor


def doc_factor(path: str, shape: QueryShape, knobs: RankingKnobs) -> float:
    """``doc_prior`` for prose, data and configuration files (unless the query asks for docs or config)."""
    return knobs.doc_prior if path_info(path).is_doc and not shape.asks_docs else 1.0


def name_factor(path: str, shape: QueryShape, knobs: RankingKnobs) -> float:
    """``1 + file_name_boost * share_in_file_name + folder_name_boost * share_in_folders``
    (``name_match`` x ``name_precision``: see :func:`name_factors`)."""
    match, precision = name_factors(path, shape, knobs)
    return match * precision


def name_factors(path: str, shape: QueryShape, knobs: RankingKnobs) -> tuple[float, float]:
    """(``name_match``, ``name_precision``): the name multiplier without the precision scaling, and
    the ratio the scaling applies to it (1.0 when off or nothing matched)."""
    boost = name_boost(shape, knobs)
    if not shape.words or (boost == 0 and knobs.folder_name_boost == 0):
        return 1.0, 1.0
    info = path_info(path)
    if info.is_test:
        boost *= name_share_of_tests(shape, knobs)
    stem_words, stem_parts = info.stem_words, info.stem_parts
    if knobs.module_file_folder and info.module_words:
        stem_words, stem_parts = info.module_words, info.module_parts
    n = len(shape.words)
    prefix, stem = int(knobs.name_prefix), name_stem_for(shape, knobs)
    in_stem = _matched(shape.words, stem_words, prefix, stem) / n if boost else 0.0
    in_dirs = _matched(shape.words, info.dir_words, prefix, stem) / n if knobs.folder_name_boost else 0.0
    match = 1.0 + boost * in_stem + knobs.folder_name_boost * in_dirs
    if not (in_stem and knobs.name_precision and stem_parts):
        return match, 1.0
    share = (_matched(stem_parts, shape.words, prefix, stem) / len(stem_parts)) ** knobs.name_precision
    return match, (match - boost * in_stem * (1.0 - share)) / match


def _matched(words: frozenset[str], names: frozenset[str], prefix: int, stem: int = 0) -> int:
    """How many of ``words`` name one of ``names``: equal, or (``prefix`` > 0) the shorter of the
    two, at least ``prefix`` characters long, starts the longer (``depend`` ~ ``dependencies``),
    or (``stem`` > 0) both are at least ``stem`` characters long and their first ``stem``
    characters agree (``distilled`` ~ ``distillation``, ``registered`` ~ ``registry``)."""
    exact = words & names
    if not (prefix or stem) or len(exact) == len(words):
        return len(exact)
    starts, stems = _name_index(names, prefix, stem)
    count = len(exact)
    for w in words - exact:
        if prefix and len(w) >= prefix and (w in starts or not names.isdisjoint(_word_starts(w, prefix))):
            count += 1  # w starts a name, or a name of at least ``prefix`` characters starts w
        elif stem and len(w) >= stem and w[:stem] in stems:
            count += 1
    return count


#: Memo entries of :func:`_name_index`. Its keys are name sets: a path's (they repeat across
#: queries) or, for ``name_precision``, the query's own words (they repeat within one ranking
#: only), so it is bounded: 65,536 entries of a per-word memo held ~10 MB of dead keys after
#: 1,000 distinct queries (bench/search_memory.py) while one ranking needs a few thousand.
PREFIX_MEMO = 4096


@lru_cache(maxsize=PREFIX_MEMO)
def _word_starts(word: str, prefix: int) -> frozenset[str]:
    """The starts of ``word`` shorter than it and at least ``prefix`` characters long."""
    return frozenset(word[:k] for k in range(prefix, len(word)))


@lru_cache(maxsize=PREFIX_MEMO)
def _name_index(names: frozenset[str], prefix: int, stem: int) -> tuple[frozenset[str], frozenset[str]]:
    """(every start of at least ``prefix`` characters of a name in ``names``, every name's first
    ``stem`` characters): :func:`_matched` then tests a word with set look-ups, not a loop over names."""
    starts = frozenset(n[:k] for n in names for k in range(prefix, len(n) + 1)) if prefix else frozenset()
    stems = frozenset(n[:stem] for n in names if len(n) >= stem) if stem else frozenset()
    return starts, stems
