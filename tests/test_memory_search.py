"""memory_search and the reading tools over records written by the real writer (LanceDB, SQLite,
ONNX model, git vault), called through the searcher's real tool registry."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from local_memory_indexer.memory.writer import MemoryWriter
from local_memory_search.tools import call_tool
from local_memory_shared.config import load_memory_settings, load_settings
from local_memory_shared.embedding import embedder_from_settings
from memory_support import ids_of
from memory_support import memory_search as s

WRITERS: dict[str, MemoryWriter] = {}


@pytest.fixture(scope="module")
def vault():
    """One vault for the module: traps, a supersession, a contradiction, a duplicate, scratch."""
    root = Path(tempfile.mkdtemp(prefix="lms", dir="/tmp"))
    mp = pytest.MonkeyPatch()
    mp.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(root))
    mp.delenv("LOCAL_MEMORY_VAULT", raising=False)
    w = MemoryWriter(
        load_memory_settings(), embedder=embedder_from_settings(load_settings()), commit_delay=3600
    )
    ids = {}

    def put(key, **v):
        v.setdefault("project", "acme")
        ids[key] = w.write(v).record.id

    put(
        "stripe",
        kind="trap",
        title="Stripe retries webhooks",
        content="Dedupe on the event id; retries arrive for 3 days.",
        tags=["stripe", "webhook"],
        severity="high",
        paths=["src/billing/**"],
        domain="/acme/billing",
    )
    put(
        "cache",
        kind="decision",
        title="Redis cache for sessions",
        content="We keep sessions in Redis with a 1h TTL.",
        tags=["redis", "cache"],
        domain="/acme/api/v2",
        meta={"priority": 3, "owner": "tom"},
    )
    put(
        "old",
        kind="decision",
        title="Use Memcached for page fragments",
        content="Page fragments live in memcached with consistent hashing.",
        tags=["memcached"],
        domain="/acme/web",
    )
    put(
        "contra",
        kind="trap",
        title="Celery tasks must be idempotent",
        content="Celery retries tasks on worker loss.",
        tags=["celery"],
        domain="/acme/jobs",
        meta={"priority": 1},
    )
    put(
        "contra_by",
        kind="note",
        title="Celery acks late",
        content="Celery with acks_late re-runs tasks.",
        tags=["celery"],
    )
    put("scratch", kind="scratch", title="scratch: try celery chords", content="celery chord experiments")
    put(
        "other",
        kind="trap",
        title="Stripe webhooks in project beta",
        content="Beta dedupes webhooks too.",
        tags=["stripe"],
        project="beta",
    )
    put(
        "mention", kind="note", title="Follow-up", content=f"See {ids['stripe']} for the webhook dedupe rule."
    )
    put(
        "timed",
        kind="plan",
        title="Q1 migration window",
        content="Migration runs in January.",
        valid_from="2025-01-01",
        valid_to="2025-02-01",
    )
    ids["new"] = w.supersede(
        ids["old"],
        {
            "title": "Fragments moved to Redis",
            "content": "Page fragments now use the Redis cluster.",
            "tags": ["redis", "fragments"],
            "domain": "/acme/web",
        },
    ).record.id
    w.edit(ids["contra"], set_fields={"contradicted_by": [ids["contra_by"]]})
    w.flush()
    WRITERS["w"] = w
    yield ids
    w.close()
    mp.undo()
    shutil.rmtree(root, ignore_errors=True)


def test_natural_question_with_missing_words_still_finds_the_trap(vault):
    out = s(fulltext="how do stripe webhook retries get deduplicated zebra", explain=True)
    assert ids_of(out)[0] == vault["stripe"]
    hit = out["results"][0]
    assert hit["match_source"] == "fts" and hit["scores"]["fts_bm25"] > 0 and hit["est_tokens"] > 0
    assert hit["explain"]["severityMultiplier"] == 1.3 and "text" in out and out["format"] == "yaml"


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "fulltext"])
def test_three_modes_answer_and_respect_project(vault, mode):
    out = s(query="stripe webhook dedupe", mode=mode)
    assert vault["stripe"] in ids_of(out)[:2] and vault["other"] not in ids_of(out)
    assert out["mode"] == mode


def test_cross_project_carries_project_and_skips_scratch(vault):
    out = s(query="stripe webhooks", crossProject=True, projectId=None)
    projects = {r["project"] for r in out["results"]}
    assert {"acme", "beta"} <= projects and vault["scratch"] not in ids_of(out)


def test_superseded_gives_way_to_successor_with_pointer(vault):
    out = s(fulltext="memcached page fragments consistent hashing")
    assert vault["old"] not in ids_of(out) and ids_of(out)[0] == vault["new"]
    assert out["results"][0]["replaces"] == [vault["old"]]
    assert {"id": vault["old"], "succeeded_by": vault["new"]} in out["superseded"]
    shown = s(fulltext="memcached consistent hashing", includeSuperseded=True)
    assert shown["results"][0]["id"] == vault["old"] and shown["results"][0]["succeeded_by"] == vault["new"]


def test_successor_that_was_no_candidate_carries_the_replaced_score(vault):
    out = s(fulltext="memcached consistent hashing", explain=True)
    top = out["results"][0]
    assert (
        top["id"] == vault["new"] and top["replaces"] == [vault["old"]] and top["match_source"] == "successor"
    )
    old = s(fulltext="memcached consistent hashing", includeSuperseded=True)["results"][0]
    assert old["id"] == vault["old"] and top["score"] == old["score"] > 0
    assert top["explain"]["scoreFrom"] == vault["old"] and top["explain"]["finalScore"] == round(
        old["score"], 4
    )
    assert [r["score"] for r in out["results"]] == sorted((r["score"] for r in out["results"]), reverse=True)


def test_contradicted_sorts_behind_what_holds(vault):
    out = s(fulltext="celery tasks idempotent retries", explain=True)
    order = ids_of(out)
    assert order.index(vault["contra_by"]) < order.index(vault["contra"])
    assert out["results"][order.index(vault["contra"])]["explain"]["contradicted"] is True


def test_filters_apply_before_ranking(vault):
    assert ids_of(s(query="cache", tree="/acme/api")) == [vault["cache"]]  # hybrid: the tree keeps one record
    assert ids_of(s(fulltext="redis", tree="api & v2")) == [vault["cache"]]
    assert ids_of(s(meta={"owner": "tom"})) == [vault["cache"]]
    assert ids_of(s(metaPredicate="$.priority >= 3")) == [vault["cache"]]
    assert ids_of(s(fulltext="webhook", path="src/billing/stripe/hooks.py")) == [vault["stripe"]]
    assert ids_of(s(fulltext="celery", kinds=["note"])) == [vault["contra_by"]]
    assert ids_of(s(fulltext="redis", tags=["redis", "cache"])) == [vault["cache"]]
    assert vault["scratch"] in ids_of(s(fulltext="celery chord", includeScratch=True))
    assert vault["scratch"] not in ids_of(s(fulltext="celery chord"))
    assert ids_of(s(temporal={"contains": "2025-01-15"})) == [vault["timed"]]
    assert ids_of(s(temporal={"before": "2025-02-01"})) == [vault["timed"]]
    assert ids_of(s(grep="consistent hash", tree="/acme/web", includeSuperseded=True)) == [vault["old"]]
    for r in s(query="redis", limit=1)["results"]:
        assert r["project"] == "acme"


def test_uid_paste_returns_record_then_mentions(vault):
    out = s(query=vault["stripe"])
    assert ids_of(out)[:2] == [vault["stripe"], vault["mention"]]
    assert out["results"][0]["match_source"] == "uid"


def test_explain_never_changes_order(vault):
    for q in ("redis cache sessions", "stripe", "celery"):
        assert ids_of(s(query=q)) == ids_of(s(query=q, explain=True))


def test_select_and_formats(vault):
    out = s(fulltext="stripe", select=["id", "name", "meta.owner", "content:0:5"], format="compact")
    assert set(out["results"][0]) == {"id", "title", "meta.owner", "content", "contentLength"}
    assert out["results"][0]["content"] == "Dedup" and out["text"].startswith('{"results":')


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"query": "x", "semanticThreshold": 1.5}, "semanticThreshold"),
        ({"query": "x", "sort": "best"}, "sort"),
        ({"grep": "x"}, "grep"),
        ({"tree": "/a/*{"}, "tree"),
        ({"metaPredicate": "$.a.size() > 1"}, "metaPredicate"),
        ({"temporal": {"before": "nope"}}, "temporal.before"),
        ({"select": []}, "select"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_input_names_the_field(vault, args, field):
    out = call_tool("memory_search", {"projectId": "acme", **args})
    assert not out["ok"] and out["error"]["field"] == field


def test_sort_modes(vault):
    occ = s(sort="occurrences")
    assert {r["kind"] for r in occ["results"]} == {"trap"}
    assert all(r["status"] == "active" for r in s(sort="hits")["results"])


def test_get_memory_and_listings(vault):
    got = call_tool("get_memory", {"uid": vault["stripe"]})
    assert got["ok"] and got["data"]["title"] == "Stripe retries webhooks"
    assert any(w["code"] == "hits_not_recorded" for w in got["warnings"])  # no indexer listening
    listed = call_tool("list_by_domain", {"domain": "/acme", "projectId": "acme"})
    created = [r["created"] for r in listed["results"]]
    assert created == sorted(created, reverse=True) and vault["old"] not in [
        r["id"] for r in listed["results"]
    ]
    tl = call_tool("timeline", {"uid": vault["cache"]})
    assert any(r["anchor"] for r in tl["results"])
    assert (
        call_tool("must_read", {"domain": "/acme/api", "type": "decision", "projectId": "acme"})["results"][
            0
        ]["id"]
        == vault["cache"]
    )
    assert call_tool("pulse", {"projectId": "acme"})["ok"]


def test_no_memory_index_is_not_indexed_with_command(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(tmp_path))
    out = call_tool("memory_search", {"query": "x", "projectId": "acme"})
    assert out["error"]["code"] == "NOT_INDEXED" and "memory rebuild" in out["error"]["message"]


def test_cli_memory_search_and_get(vault):
    import json as _json
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "local_memory_search.cli", "memory", "search", "stripe", "webhook", "--project", "acme",
           "--kind", "trap", "--explain", "--json"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    env = _json.loads(out.stdout)
    assert env["results"][0]["id"] == vault["stripe"] and "explain" in env["results"][0]
    human = subprocess.run(cmd[:-1], capture_output=True, text=True, check=True).stdout
    assert vault["stripe"] in human and "severityMultiplier" in human
    got = subprocess.run([sys.executable, "-m", "local_memory_search.cli", "memory", "get", vault["stripe"], "--json"],
                         capture_output=True, text=True)  # fmt: skip
    assert _json.loads(got.stdout)["data"]["id"] == vault["stripe"]
    bad = subprocess.run(cmd[:6] + ["--sort", "best", "--json"], capture_output=True, text=True)
    assert bad.returncode == 1 and _json.loads(bad.stdout)["error"]["field"] == "sort"


def test_hit_ids_and_get_reach_the_writer_over_its_socket(vault):
    from local_memory_indexer.memory.channel import HitChannel
    from local_memory_indexer.memory.hits import record_hits

    w = WRITERS["w"]
    received: list[tuple[list[str], str | None]] = []

    def sink(ids, session):
        received.append((ids, session))
        return record_hits(w, ids, session)

    channel = HitChannel(w.paths.socket, sink)
    assert channel.start()
    try:
        hit_ids = [
            vault["stripe"],
            vault["mention"],
            "01ZZZZZZZZZZZZZZZZZZZZZZZZ",
        ]  # a note is not eligible; unknown id ignored
        out = s(fulltext="stripe webhook", hitIds=hit_ids, sessionId="sess-1")
        assert not any(x["code"] == "hits_not_recorded" for x in out["warnings"])
        s(fulltext="stripe webhook", hitIds=hit_ids, sessionId="sess-1")  # same session: counted once
        got = call_tool("get_memory", {"uid": vault["cache"]})
        assert not got["warnings"]
    finally:
        channel.close()
    assert received[0] == ([vault["stripe"]], "sess-1") and received[2] == ([vault["cache"]], None)
    hits = {r["id"]: r["hits"] for r in s(sort="hits", kinds=["trap", "decision"])["results"]}
    assert hits[vault["stripe"]] == 1 and hits[vault["cache"]] == 1
    bare = s(fulltext="stripe webhook")  # a bare search never counts
    assert {r["id"]: r["hits"] for r in bare["results"]}[vault["stripe"]] == 1


def test_quoted_phrase_and_operators(vault):
    phrase = s(fulltext='"event id"')
    assert ids_of(phrase)[0] == vault["stripe"]
    assert all("event" in r["content"].lower() for r in phrase["results"])
    both = s(fulltext="celery AND idempotent")
    assert ids_of(both) == [vault["contra"]]
    without = s(fulltext="celery NOT idempotent")
    assert vault["contra"] not in ids_of(without) and vault["contra_by"] in ids_of(without)


def test_memory_tools_over_mcp_stdio(vault, tmp_path):
    import os

    from mcp_harness import SEARCH_CMD, server_env, stdio_session

    env = server_env(Path(os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"]))
    with open(tmp_path / "search.stderr", "w") as errlog, stdio_session(SEARCH_CMD, env, errlog) as session:
        names = {t["name"]: t for t in session.list_tools()}
        assert {"memory_search", "get_memory", "list_by_domain", "must_read", "timeline", "pulse"} <= set(
            names
        )
        assert names["memory_search"]["annotations"]["readOnlyHint"] is True
        found = session.ok(
            "memory_search", {"query": "stripe webhook retries", "projectId": "acme", "explain": True}
        )
        assert found["results"][0]["id"] == vault["stripe"] and found["results"][0]["explain"]
        bad = session.call("memory_search", {"query": "x", "semanticThreshold": -0.1, "projectId": "acme"})
        assert bad["error"]["field"] == "semanticThreshold"
        assert session.ok("get_memory", {"uid": vault["cache"]})["data"]["id"] == vault["cache"]
        assert (
            session.ok("list_by_domain", {"domain": "/acme/api", "projectId": "acme"})["results"][0]["id"]
            == vault["cache"]
        )
        assert session.ok("must_read", {"domain": "/acme", "type": "trap", "projectId": "acme"})["results"]
        assert session.ok("timeline", {"uid": vault["stripe"]})["results"]
        assert session.ok("pulse", {"projectId": "acme"})["results"]


def _cand(uid, fts, sim, rank, severity):
    from local_memory_search.memory.ranking import Candidate

    return Candidate(
        {"id": uid, "severity": severity}, fts_score=fts, fts_rank=rank, similarity=sim, vector_rank=rank
    )


def test_hybrid_fuses_the_legs_after_their_multipliers():
    """What both single modes rank first, hybrid ranks first: a critical record well behind on both
    legs must not overtake it (multiplying the squeezed RRF score let ×1.4 beat any rank gap)."""
    from local_memory_search.memory import ranking

    def top(mode):
        cands = {c.id: c for c in (_cand("A", 10.0, 0.9, 1, "medium"), _cand("B", 5.0, 0.5, 2, "critical"))}
        ranking.fuse(cands, mode, (1.0, 1.0))
        ranked = list(cands.values())
        ranking.score(ranked, set(), (1.0, 1.0) if mode == "hybrid" else None)
        ranked.sort(key=lambda c: ranking.order_key(c, "relevance"))
        return [c.id for c in ranked], ranked

    assert top("fulltext")[0] == top("semantic")[0] == top("hybrid")[0] == ["A", "B"]
    _, ranked = top("hybrid")
    assert ranked[1].final == pytest.approx(2 / (ranking.RRF_K + 2))
    assert ranking.explain(ranked[1])["severityMultiplier"] == 1.4
    # Close enough on a leg, the multiplier does reorder that leg (as it would in that mode alone).
    cands = {c.id: c for c in (_cand("A", 10.0, 0.9, 1, "medium"), _cand("B", 9.0, 0.5, 2, "critical"))}
    ranking.fuse(cands, "hybrid", (1.0, 1.0))
    ranking.score(list(cands.values()), set(), (1.0, 1.0))
    assert cands["B"].boosted_ranks == (1, 2) and cands["A"].boosted_ranks == (2, 1)


def test_capture_ignored_area_answers_nothing(vault, monkeypatch):
    """Seed 000: a search whose path lies inside a capture-ignored product area returns []."""
    assert vault["stripe"] in ids_of(s(query="stripe webhook retries", path="src/billing/pay.py"))
    monkeypatch.setenv("LOCAL_MEMORY_IGNORED_AREAS", " vendor , src/billing ")
    out = s(query="stripe webhook retries", path="src/billing/pay.py")
    assert out["results"] == [] and out["total"] == 0 and out["ignored_area"] == "src/billing"
    monkeypatch.setenv("LOCAL_MEMORY_IGNORED_AREAS", "apps/*/generated")
    assert s(query="stripe", path="apps/web/generated/deep/x.ts")["ignored_area"] == "apps/*/generated"
    # Outside every area (and without a path) the search runs as usual.
    assert vault["stripe"] in ids_of(s(query="stripe webhook retries"))
    assert "ignored_area" not in s(query="stripe webhook retries", path="apps/web/src/x.ts")


def test_feedback_multiplier_is_salience():
    """Seed 000's feedbackMultiplier: the writer's confidence and how recently an agent used it."""
    from local_memory_search.memory.ranking import multipliers, salience

    now = "2025-06-01T00:00:00Z"
    assert salience({}, now) == 1.0
    assert salience({"confidence": 0.5}, now) == pytest.approx(1.0)
    assert salience({"confidence": 1.0}, now) == pytest.approx(1.2)
    assert salience({"confidence": 0.0}, now) == pytest.approx(0.8)
    assert salience({"last_hit": now}, now) == pytest.approx(1.1)
    assert salience({"last_hit": "2025-05-02T00:00:00Z"}, now) == pytest.approx(1.05)  # one half-life
    assert salience({"last_hit": "not a time", "confidence": float("nan")}, now) == 1.0
    row = {"confidence": 1.0, "last_hit": now, "severity": "high"}
    assert multipliers(row, False, now)["feedbackMultiplier"] == pytest.approx(1.32)


def test_feedback_multiplier_orders_and_explains(vault):
    """A confident record outranks an equal one; explain shows the factor (2 decimals)."""
    w = WRITERS["w"]
    a = w.write(
        {
            "project": "fb",
            "kind": "note",
            "title": "Gateway timeout budget",
            "content": "The gateway timeout budget is 30 seconds.",
            "confidence": 0.1,
        }
    ).record.id
    b = w.write(
        {
            "project": "fb",
            "kind": "note",
            "title": "Gateway timeout budget",
            "content": "The gateway timeout budget is 30 seconds!",
            "confidence": 0.9,
        }
    ).record.id
    w.flush()
    out = s(fulltext="gateway timeout budget", projectId="fb", explain=True)
    hits = {r["id"]: r for r in out["results"]}
    ranked = [i for i in ids_of(out) if i in (a, b)]
    assert ranked[0] == b  # the doubtful twin is behind it, or folded into it as a near-duplicate
    assert len(ranked) == 2 or a in hits[b]["collapsed"]
    assert hits[b]["explain"]["feedbackMultiplier"] == 1.16


def test_memory_table_handle_is_kept_per_version_and_cleared_by_the_runtime(vault):
    from local_memory_search.memory import reader as R
    from local_memory_search.runtime import RUNTIME

    assert ids_of(s(query="stripe webhook retries"))
    assert "memory_tables" in RUNTIME.names()
    with R.open_reader() as a, R.open_reader() as b:
        assert a.opened is not None and a.opened is b.opened  # one checkout, shared by calls
        assert (
            "src/billing/**" in a.path_patterns()
            and a.succession().succeeded_by[vault["old"]] == vault["new"]
        )
        first = a.opened
        assert "vector_index" in first._memo  # the exact vector leg's matrix, kept per version
    w = WRITERS["w"]
    uid = w.write(
        {"project": "fb2", "kind": "note", "title": "Kept handles", "content": "Zeppelin hangar."}
    ).record.id
    w.flush()
    with R.open_reader() as c:
        assert c.opened is not first  # a newly published version gets its own handle and memos
        assert all(o is not first for o in R._TABLES._items.values())  # the stale one is dropped
    assert ids_of(s(query="zeppelin hangar", projectId="fb2")) == [uid]
    RUNTIME.clear()
    assert not R._TABLES._items
    assert ids_of(s(query="zeppelin hangar", projectId="fb2")) == [uid]
