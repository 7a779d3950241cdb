"""The fusion against a straightforward reference: same order, same scores (exactly), same factors.

``fuse`` scores candidates on plain values and builds each ``Scored`` once (it is the searcher's
hot path). The reference below is the formula written the plain way, one ``Scored`` per step,
as the module docstrings of ``fusion`` and ``ranking`` state it; on varied inputs (modes, knobs,
paths, names, timestamps, ties, a definition leg, gap thresholds) both must agree to the bit.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import fields, replace
from datetime import UTC, datetime
from typing import Any

import pytest
from local_memory_search import ranking
from local_memory_search.fusion import (
    IDENTIFIER_BOOST,
    RECENCY_HALF_LIFE_DAYS,
    RankRequest,
    Scored,
    confidence,
    fuse,
)
from local_memory_search.legs import LegHit, LegResult
from local_memory_search.query_text import query_identifiers


def _ts(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _ident(idents: set[str], row: dict[str, Any]) -> str | None:
    if not idents:
        return None
    symbol = row.get("symbol_name") or ""
    function = row.get("function_name") or ""
    names = {symbol, symbol.rsplit(".", 1)[-1], function}
    if not function:
        names.add(row.get("class_name") or "")
    names.discard("")
    for token in sorted(idents, key=lambda t: (-len(t), t)):
        if token in names:
            return token
    return None


def _one(req, alpha, best_sem, best_kw, idents, newest, knobs, shape, cid, s, k, d, row) -> Scored:
    question = req.mode == "hybrid" and shape.question and knobs.question_confidence_exponent
    p = knobs.question_confidence_exponent if question else knobs.confidence_exponent
    s_conf = confidence(s.score, best_sem, p) if s else 0.0
    k_conf = confidence(k.score, best_kw, p) if k else 0.0
    if req.mode == "hybrid":
        s_rrf = alpha * s_conf / (req.rrf_k + s.rank) if s else 0.0
        k_rrf = (1.0 - alpha) * k_conf / (req.rrf_k + k.rank) if k else 0.0
        d_rrf = knobs.definition_weight / (req.rrf_k + d.rank) if d else 0.0
        base = s_rrf + k_rrf + d_rrf
    else:
        s_rrf = k_rrf = d_rrf = 0.0
        hit = s if s is not None else k if k is not None else d
        base = max(0.0, hit.score)
    match = _ident(idents, row)
    ident_mult = 1.0 + IDENTIFIER_BOOST if match else 1.0
    updated = row.get("updated_at")
    age, recency = None, 0.0
    ts = _ts(updated)
    if ts is not None and newest is not None:
        age = max(0.0, (newest - ts).total_seconds() / 86400.0)
        recency = 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)
    rec_mult = 1.0 + req.recency_weight * recency
    path = row.get("file_path") or ""
    factors: tuple[tuple[str, float], ...] = ()
    if req.mode == "hybrid":
        name_match, name_precision = ranking.name_factors(path, shape, knobs)
        factors = (
            ("path_prior", ranking.path_factor(path, shape, knobs)),
            ("doc_prior", ranking.doc_factor(path, shape, knobs)),
            ("name_match", name_match),
            ("name_precision", name_precision),
            ("parent_name", ranking.parent_name_factor(path, shape, knobs)),
        )
    score = base * ident_mult * rec_mult * math.prod(v for _, v in factors)
    return Scored(
        cid, s, k, s_conf, k_conf, s_rrf, k_rrf, base, match, ident_mult,
        updated, age, recency, rec_mult, score, d, d_rrf, path or None, factors,
    )  # fmt: skip


def _key(x: Scored) -> tuple[float, float, int, str]:
    best = min(h.rank for h in (x.semantic, x.keyword, x.definition) if h is not None)
    return (-x.score, -x.base, best, x.chunk_id)


def _with(s: Scored, name: str, value: float) -> Scored:
    if value == 1.0:
        return s
    return replace(s, score=s.score * value, factors=(*s.factors, (name, value)))


def _files(ranked: list[Scored], knobs: ranking.RankingKnobs, shape: ranking.QueryShape) -> list[Scored]:
    if not ranked:
        return ranked
    out = ranked
    if knobs.file_bonus:
        top = ranked[0].score or 1.0
        mass: dict[str, float] = defaultdict(float)
        for s in ranked:
            if s.file_path:
                mass[s.file_path] += s.score / top
        out = [
            _with(s, "file_bonus", 1.0 + knobs.file_bonus * min(1.0, mass[s.file_path] - s.score / top))
            if s.file_path
            else s
            for s in ranked
        ]
        out.sort(key=_key)
    if shape.question and knobs.question_diversity:
        diversity = knobs.question_diversity
    else:
        diversity = knobs.prose_diversity if shape.prose and knobs.prose_diversity else knobs.diversity
    if diversity != 1.0:
        seen: dict[str, int] = defaultdict(int)
        final = []
        for s in out:
            if s.file_path:
                final.append(_with(s, "diversity", diversity ** seen[s.file_path]))
                seen[s.file_path] += 1
            else:
                final.append(s)
        final.sort(key=_key)
        out = final
    return out


def reference_fuse(
    req, alpha, semantic, keyword, newest, definition=None, knobs=None
) -> tuple[tuple[Scored, ...], int]:
    """The fusion as the docstrings state it, one plain step at a time."""
    knobs = knobs or ranking.KNOBS
    legs = [leg for leg in (semantic, keyword, definition) if leg is not None]
    sem = {h.chunk_id: h for h in semantic.hits} if semantic else {}
    kw = {h.chunk_id: h for h in keyword.hits} if keyword else {}
    dfn = {h.chunk_id: h for h in definition.hits} if definition and req.mode == "hybrid" else {}
    meta: dict[str, dict[str, Any]] = {}
    for leg in reversed(legs):
        meta.update(leg.meta)
    best_sem = max((h.score for h in sem.values()), default=0.0)
    best_kw = max((h.score for h in kw.values()), default=0.0)
    idents = query_identifiers(req.query, int(knobs.plain_name_words))
    shape = ranking.QueryShape.of(req.query)
    out = [
        _one(req, alpha, best_sem, best_kw, idents, _ts(newest), knobs, shape, c,
             sem.get(c), kw.get(c), dfn.get(c), meta.get(c, {}))
        for c in dict.fromkeys([*sem, *kw, *dfn])
    ]  # fmt: skip
    out.sort(key=_key)
    if req.mode == "hybrid":
        out = _files(out, knobs, shape)
    if not out or req.gap_threshold <= 0:
        return tuple(out), len(out)
    relevance = [x.score / dict(x.factors).get("diversity", 1.0) for x in out]
    floor = max(relevance) * req.gap_threshold
    return tuple(out), max(i + 1 for i, r in enumerate(relevance) if r >= floor)


PATHS = [
    "src/http/cache.py", "src/http/HttpCacheLegacy.kt", "src/http/HttpCache.kt", "tests/test_cache.py",
    "examples/demo_session.py", "vendor/lib/session.js", "pkg/__init__.py", "src/extract/mod.rs",
    "docs/guide.md", "README.md", "config/app.yaml", "lua/lazy/view/init.lua", "src/session_store.ts",
    "src/resolver/resolve.ts", "LICENSE", "", "src/parse_args.zig", "lib/requests/sessions.py",
]  # fmt: skip
NAMES = ["", "send_request", "Session", "HttpCache", "parse", "resolve", "Cache.get", "render_table"]
QUERIES = [
    "how does the http cache expire entries", "send_request", "Session", "parse the arguments",
    "session tests and fixtures", "readme install steps", "HttpCache get", "resolve dependencies",
    "example demo of sessions", "render_table Console", "x", "the",
    "Session send_request", "HttpCache parse resolve",
]  # fmt: skip
STAMPS = [None, "", "not a date", "2026-06-01T00:00:00Z", "2026-05-01T12:00:00+00:00", "2026-01-15T00:00:00",
          "2026-06-02T00:00:00+00:00", "2025-06-01T00:00:00+02:00"]  # fmt: skip


def _row(rng: random.Random, cid: str) -> dict[str, Any]:
    fn, other = rng.choice(NAMES), rng.choice(NAMES)
    row: dict[str, Any] = {
        "chunk_id": cid,
        "symbol_name": rng.choice([fn, f"Cls.{fn}", f"{other}.{fn}", ""]),
        "function_name": rng.choice([fn, other, ""]),
        "class_name": rng.choice(["", "Session", "HttpCache"]),
        "updated_at": rng.choice(STAMPS),
        "file_path": rng.choice(PATHS),
    }
    if rng.random() < 0.05:
        row.pop("file_path")
    return row


def _leg(
    rng: random.Random, name: str, pool: list[str], rows: dict[str, dict[str, Any]], top: float
) -> LegResult:
    picked = rng.sample(pool, rng.randint(0, len(pool)))
    scores = sorted((round(rng.uniform(-0.1, 1.0) * top, rng.choice([1, 6])) for _ in picked), reverse=True)
    if picked and rng.random() < 0.3:
        picked.append(picked[0])  # a leg may repeat a chunk: the last hit wins, as in the dicts
        scores.append(scores[-1])
    hits = tuple(LegHit(c, i + 1, s) for i, (c, s) in enumerate(zip(picked, scores, strict=True)))
    return LegResult(name, "test", hits, 0.0, {c: rows[c] for c in picked if rng.random() < 0.95})


def _knobs(rng: random.Random) -> ranking.RankingKnobs:
    base = rng.choice([ranking.KNOBS, ranking.OFF])
    changes = {}
    for f in fields(ranking.RankingKnobs):
        if rng.random() < 0.2:
            # a diversity of 0 would make a repeated file's relevance undefined (x / 0): not a setting
            changes[f.name] = rng.choice(
                [0.3, 0.6, 1.0]
                if f.name in ("diversity", "prose_diversity", "question_diversity")
                else [0.0, 0.5, 1.0, 2.0, 4.0]
            )
    return replace(base, **changes)


def _case(seed: int) -> tuple[Any, ...]:
    rng = random.Random(seed)
    pool = [f"c{i}" for i in range(rng.choice([1, 5, 30, 120]))]
    rows = {c: _row(rng, c) for c in pool}
    mode = rng.choice(["hybrid", "hybrid", "semantic", "keyword"])
    req = RankRequest(
        query=rng.choice(QUERIES),
        mode=mode,
        alpha=0.65,
        rrf_k=rng.choice([1, 60]),
        recency_weight=rng.choice([0.0, 0.1, 0.5]),
        gap_threshold=rng.choice([0.0, 0.25, 0.9]),
    )
    alpha = rng.choice([0.0, 0.35, 0.65, 1.0])
    sem = _leg(rng, "semantic", pool, rows, 1.0) if rng.random() < 0.9 else None
    kw = _leg(rng, "keyword", pool, rows, 20.0) if rng.random() < 0.9 else None
    dfn = _leg(rng, "definition", pool[:3], rows, 1.0) if rng.random() < 0.4 else None
    if sem is None and kw is None and dfn is None:
        sem = _leg(rng, "semantic", pool, rows, 1.0)
    newest = rng.choice(["2026-06-01T00:00:00Z", None, "2026-06-03T00:00:00+00:00"])
    knobs = rng.choice([None, _knobs(rng)])
    return req, alpha, sem, kw, newest, dfn, knobs


@pytest.mark.parametrize("seed", range(400))
def test_fuse_equals_the_reference_exactly(seed: int) -> None:
    req, alpha, sem, kw, newest, dfn, knobs = _case(seed)
    got = fuse(req, alpha, sem, kw, newest, dfn, knobs=knobs)
    want = reference_fuse(req, alpha, sem, kw, newest, dfn, knobs=knobs)
    assert [s.chunk_id for s in got[0]] == [s.chunk_id for s in want[0]]
    assert got == want  # every field of every Scored, floats compared exactly, and ``kept``


def test_the_cases_cover_what_the_fusion_branches_on() -> None:
    """The generated inputs reach every factor, both gap outcomes and all three modes."""
    factor_names: set[str] = set()
    modes, cut, idents, ages = set(), False, set(), False
    for seed in range(400):
        req, alpha, sem, kw, newest, dfn, knobs = _case(seed)
        ranked, kept = reference_fuse(req, alpha, sem, kw, newest, dfn, knobs=knobs)
        modes.add(req.mode)
        cut |= kept < len(ranked)
        for s in ranked:
            factor_names.update(n for n, v in s.factors if v != 1.0)
            if s.identifier_match and len(query_identifiers(req.query)) > 1:
                idents.add(s.identifier_match)
            ages |= s.age_days is not None
    assert modes == {"hybrid", "semantic", "keyword"} and cut and ages
    assert len(idents) > 2  # names matched out of queries naming several
    assert factor_names == {*ranking.PATH_FACTORS, "file_bonus", "diversity"}
