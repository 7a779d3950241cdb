"""The pure memory query languages: full text, tree, meta, metaPredicate, temporal, globs, select.

The tree patterns are also run through a real LanceDB table, so the SQL and the Python matcher
are held to the same answers.
"""

from __future__ import annotations

import json

import lancedb
import pyarrow as pa
import pytest
from local_memory_shared.errors import InvalidArgument
from local_memory_shared.memory.query import (
    apply_selection,
    compile_tree,
    fts5_seed000,
    matches_any_pattern,
    meta_contains,
    parse_fulltext,
    parse_meta_predicate,
    parse_select,
    parse_temporal,
    render,
    utf16_len,
    utf16_slice,
)

DOMAINS = [
    "/work",
    "/work/projects",
    "/work/projects/api",
    "/work/projects/api/v2",
    "/work/draft/notes",
    "/work/projects/draft",
    "/share/api/v2",
    "/share/design",
    "/acme/cache",
    None,
]
TREE_CASES = {
    "/work/projects": {
        "/work/projects",
        "/work/projects/api",
        "/work/projects/api/v2",
        "/work/projects/draft",
    },
    "/work/projects/*": {
        "/work/projects",
        "/work/projects/api",
        "/work/projects/api/v2",
        "/work/projects/draft",
    },
    "/work/*{1}": {"/work", "/work/projects", "/work/draft"} & set(DOMAINS) | {"/work"},
    "/work/*{2}": {
        "/work",
        "/work/projects",
        "/work/projects/api",
        "/work/draft/notes",
        "/work/projects/draft",
    },
    "*/!draft/*": {d for d in DOMAINS if d and "draft" not in d.split("/")},
    "*/api/*": {"/work/projects/api", "/work/projects/api/v2", "/share/api/v2"},
    "api & v2": {"/work/projects/api/v2", "/share/api/v2"},
    "api & !v2": {"/work/projects/api"},
    "design | cache": {"/share/design", "/acme/cache"},
    "/work/!projects": {"/work/draft/notes"} - {"/work/draft/notes"},
    "/work/!projects/*": {"/work/draft/notes"},
}


@pytest.fixture(scope="module")
def tree_table(tmp_path_factory: pytest.TempPathFactory):
    db = lancedb.connect(str(tmp_path_factory.mktemp("tree")))
    labels = [[p for p in (d or "").split("/") if p] for d in DOMAINS]
    return db.create_table(
        "t",
        pa.table(
            {"domain": pa.array(DOMAINS, pa.string()), "tree_labels": pa.array(labels, pa.list_(pa.string()))}
        ),
    )


@pytest.mark.parametrize("pattern", sorted(TREE_CASES))
def test_tree_sql_and_python_agree_with_expected(pattern: str, tree_table) -> None:
    tf = compile_tree(pattern)
    expected = TREE_CASES[pattern]
    assert {d for d in DOMAINS if tf.matches(d)} == expected
    rows = tree_table.search().where(tf.where).select(["domain"]).to_list()
    assert {r["domain"] for r in rows} == expected


@pytest.mark.parametrize("bad", ["", "/a/*{", "api & ", "(api", "/a/b c/*{3,1}"])
def test_tree_errors_name_the_field(bad: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        compile_tree(bad)
    assert info.value.field == "tree"


def test_fulltext_or_semantics_phrases_and_operators() -> None:
    q = parse_fulltext("how do I stop Stripe retrying webhooks?")
    assert q.is_plain and q.words() == ["how", "do", "i", "stop", "stripe", "retrying", "webhooks"]
    assert parse_fulltext('"event id  dedupe"').terms[0].phrase
    q = parse_fulltext('stripe AND webhook NOT cache "charge succeeded" (x*) ^y')
    occ = {(t.text, t.occur, t.phrase) for t in q.terms}
    assert ("stripe", "must", False) in occ and ("webhook", "must", False) in occ
    assert ("cache", "must_not", False) in occ and ("charge succeeded", "should", True) in occ
    assert ("x", "should", False) in occ and ("y", "should", False) in occ
    assert parse_fulltext('*** "" ^').is_empty
    assert fts5_seed000("stripe webhook-retry") == '"stripe"* "webhookretry"*'


def test_meta_containment_is_jsonb_contains() -> None:
    meta = {"type": "decision", "tags": ["a", "b"], "n": 1, "nested": {"x": 1, "y": 2}, "flag": True}
    assert meta_contains(meta, {"type": "decision", "tags": ["b"], "nested": {"x": 1}})
    assert not meta_contains(meta, {"tags": ["c"]})
    assert not meta_contains(meta, {"n": True}) and not meta_contains(meta, {"flag": 1})
    assert meta_contains(meta, {"n": 1.0}) and not meta_contains(meta, {"missing": None})


SEED_META = {"priority": 3, "status": "active", "grants": [{"user": "tom", "level": 2}], "name": "Alpha"}


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("$.priority >= 3", True),
        ("$.priority > 3", False),
        ('$.status == "active" || $.status == "pending"', True),
        ("!exists($.archivedAt)", True),
        ("exists($.archivedAt)", False),
        ('exists($.grants[*] ? (@.user == "tom" && @.level >= 2))', True),
        ('exists($.grants[*] ? (@.user == "tom" && @.level >= 3))', False),
        ('$.priority == "3"', False),  # string vs number: unknown, never true
        ('!($.priority == "3")', False),  # !unknown stays unknown
        ('($.priority == "3") is unknown', True),
        ('$.name like_regex "^al" flag "i"', True),
        ('$.name starts with "Al"', True),
        ("$.grants.level == 2", True),  # lax: member access unwraps the array
        ('$.grants[0].user == "tom"', True),
        ("$.missing == 1", False),
        ("3 <= $.priority", True),
    ],
)
def test_meta_predicate_semantics(expr: str, expected: bool) -> None:
    assert parse_meta_predicate(expr).matches(SEED_META) is expected


@pytest.mark.parametrize(
    ("expr", "construct"),
    [
        ("$.grants.size() > 1", ".size()"),
        ("$.priority + 1 > 3", "'+'"),
        ("$.a[last] == 1", "last"),
        ("$.* == 1", ".*"),
        ("strict $.a == 1", "strict"),
        ("$.a == $x", "$x"),
        ('$.a like_regex "x" flag "g"', "'g'"),
    ],
)
def test_meta_predicate_unsupported_is_named_error(expr: str, construct: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        parse_meta_predicate(expr)
    assert info.value.field == "metaPredicate" and construct in info.value.message


def test_temporal_strictness_of_seed_004() -> None:
    t = parse_temporal({"before": "2025-01-10"})
    assert t is not None
    assert t.matches("2025-01-01T00:00:00Z", "2025-01-10T00:00:00Z")  # half-open range ending at the point
    assert not t.matches("2025-01-05T00:00:00Z", "2025-01-20T00:00:00Z")  # contains the point
    assert not t.matches("2025-01-10T00:00:00Z", None)  # begins at the point
    assert not t.matches(None, None)  # no range: excluded
    a = parse_temporal({"after": "2025-01-10T00:00:00Z"})
    assert (
        a is not None
        and not a.matches("2025-01-10T00:00:00Z", None)
        and a.matches("2025-01-11T00:00:00Z", None)
    )
    c = parse_temporal({"contains": "2025-01-10"})
    assert c is not None and c.matches("2025-01-01T00:00:00Z", "2025-01-11T00:00:00Z")
    assert not c.matches("2025-01-01T00:00:00Z", "2025-01-10T00:00:00Z")
    w = parse_temporal(
        {
            "within": {"start": "2025-01-01", "end": "2025-02-01"},
            "overlaps": {"start": "2025-01-05", "end": "2025-01-06"},
        }
    )
    assert w is not None and w.matches("2025-01-02T00:00:00Z", "2025-01-07T00:00:00Z")
    for bad, field in [
        ({"before": "soon"}, "temporal.before"),
        ({"during": "x"}, "temporal.during"),
        ({"within": {"start": "2025-02-01", "end": "2025-01-01"}}, "temporal.within.end"),
    ]:
        with pytest.raises(InvalidArgument) as info:
            parse_temporal(bad)
        assert info.value.field == field


def test_path_globs() -> None:
    assert matches_any_pattern("src/api/webhooks/stripe.py", ["src/**/stripe.py"])
    assert matches_any_pattern("src/api/x.py", ["src/api/*.py"]) and not matches_any_pattern(
        "src/api/v2/x.py", ["src/api/*.py"]
    )
    assert matches_any_pattern("src/a1.py", ["src/a?.py"]) and matches_any_pattern(
        "src/api/x.py", ["src/api"]
    )
    assert not matches_any_pattern("src/apix/x.py", ["src/api"])


def test_select_slices_count_utf16_units() -> None:
    text = "a😀b"  # the emoji is two UTF-16 code units
    assert utf16_len(text) == 4 and utf16_slice(text, 1, 3) == "😀" and utf16_slice(text, 3, None) == "b"
    sel = parse_select(
        ["id", "versionHash", "meta.$thread", "content:1:3"], ["id", "version_hash", "content"]
    )
    out = apply_selection({"id": "X", "version_hash": "h", "meta": {"$thread": "t"}}, text, sel)
    assert out == {"id": "X", "version_hash": "h", "meta.$thread": "t", "content": "😀", "contentLength": 4}
    for bad in ([], ["nope"], ["content:1", "content:2"], ["content:x"]):
        with pytest.raises(InvalidArgument) as info:
            parse_select(bad, ["id"])
        assert info.value.field.startswith("select")
    assert json.loads(render({"a": [1]}, "compact")) == {"a": [1]} and render({"a": 1}, "yaml") == "a: 1\n"
