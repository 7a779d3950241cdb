"""Agent-memory retrieval benchmark (issue 12): a deterministic coding vault + labelled queries.

    nice -n 10 .venv/bin/python -m bench.memory_bench [--records 2000] [--seed 7] [--json OUT]

The generator writes ~2,000 Markdown records over 5 projects straight into a vault (the way an
operator's hand edits arrive), then the real writer rebuilds the index (ONNX MiniLM vectors,
LanceDB FTS). It plants: supersession chains, expired scratch notes, near-duplicates,
contradictions, identifiers in text, path-scoped traps (same words, other path) and hand-edited
files (date-only times, no tags). Queries are labelled by type: identifier, paraphrase,
path-scoped, as-of, successor-expected, filter-only. Reported: recall@5, MRR@10, nDCG@10 for
fulltext / semantic / hybrid beside seed 000's plain FTS5 search (sqlite3, prefix terms, implicit
AND), how often a superseded record outranks its successor, duplicates in the top 10, filter
exactness, and p50/p95 latency of hybrid search with the 1-minute load average after each timing
(the machine is shared: a figure means little without it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECTS = ("acme", "billing", "atlas", "pixel", "harbor")
TECH = [
    ("redis", "cache", "sessions expire after one hour in the redis cluster"),
    ("stripe", "webhook", "stripe retries webhooks for three days so dedupe on the event id"),
    ("celery", "queue", "celery re-runs tasks after a worker dies so tasks must be idempotent"),
    ("postgres", "migration", "postgres locks the table during an index build unless concurrently"),
    ("kafka", "consumer", "kafka consumers rebalance when a poll takes longer than max poll interval"),
    ("nginx", "proxy", "nginx buffers large uploads to disk unless request buffering is off"),
    ("s3", "storage", "s3 listing is eventually consistent for overwritten keys in old regions"),
    ("jwt", "auth", "jwt tokens are validated with the rotating signing key from the jwks endpoint"),
    ("docker", "build", "docker layer cache breaks when the lockfile is copied after the sources"),
    ("graphql", "api", "graphql resolvers batch database reads with a dataloader per request"),
    ("sentry", "errors", "sentry drops events above the rate limit during incidents"),
    ("terraform", "infra", "terraform state must be locked in dynamodb before apply"),
    ("pytest", "tests", "pytest fixtures with session scope leak state between parallel workers"),
    ("webpack", "frontend", "webpack splits vendor chunks but the runtime chunk must load first"),
    ("oauth", "login", "oauth callback urls must match exactly including the trailing slash"),
    ("cron", "scheduler", "cron jobs run in utc on the servers not in local time"),
    ("grpc", "rpc", "grpc deadlines propagate to downstream calls and cancel them"),
    ("elastic", "search", "elasticsearch refresh interval delays visibility of new documents"),
    ("feature", "flags", "feature flags are evaluated once per request and cached"),
    ("ci", "pipeline", "ci caches node modules keyed by the lockfile hash"),
]
PARAPHRASE = {
    "redis": "how long do user logins stay valid in the in-memory store",
    "stripe": "payment provider sends the same notification several times",
    "celery": "background jobs run twice when a machine crashes",
    "postgres": "adding an index blocks writes on the database",
    "kafka": "message readers keep reshuffling partitions when processing is slow",
    "jwt": "checking access tokens with keys that change over time",
    "docker": "container image rebuilds everything after a dependency file change",
    "oauth": "sign in redirect address mismatch because of a slash",
    "cron": "scheduled tasks fire at the wrong hour because of time zones",
    "grpc": "timeouts flow through to the services we call",
}
KINDS = ("trap", "decision", "spec", "plan", "note")
BASE = 1_700_000_000  # 2023-11-14


def ts(offset_s: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(BASE + offset_s))


@dataclass
class Vault:
    """Generated records (dicts in MemoryRecord shape) and labelled queries."""

    records: list[dict[str, Any]] = field(default_factory=list)
    queries: list[dict[str, Any]] = field(default_factory=list)
    dup_groups: list[set[str]] = field(default_factory=list)
    successor_of: dict[str, str] = field(default_factory=dict)


def generate(n: int, seed: int) -> Vault:
    """A deterministic coding vault of about ``n`` records and its labelled queries."""
    from local_memory_shared.memory.uid import new_uid

    rng = random.Random(seed)
    v = Vault()
    clock = [0]

    def add(**rec: Any) -> dict[str, Any]:
        clock[0] += rng.randint(60, 3600)
        rec.setdefault("created", ts(clock[0]))
        rec["id"] = new_uid(now_ms=(BASE + clock[0]) * 1000)
        rec.setdefault("updated", rec["created"])
        v.records.append(rec)
        return rec

    per_project = max(1, n // len(PROJECTS))
    for p_i, project in enumerate(PROJECTS):
        for t_i, (tech, area, fact) in enumerate(TECH):
            ident = f"ERR_{tech.upper()}_{p_i}{t_i:02d}"
            target = add(project=project, kind="trap", title=f"{tech} {area}: {fact.split(' so ')[0][:60]}",
                         content=f"{fact}. Seen as {ident} in {project} logs. Fix in src/{area}/{tech}.py.",
                         tags=[tech, area], domain=f"/{project}/{area}", paths=[f"src/{area}/**"],
                         severity=rng.choice(["high", "medium", "critical"]))  # fmt: skip
            v.queries.append({"type": "identifier", "project": project, "q": ident, "expect": target["id"]})
            if tech in PARAPHRASE:
                v.queries.append(
                    {"type": "paraphrase", "project": project, "q": PARAPHRASE[tech], "expect": target["id"]}
                )
            # A path-scoped trap: same words, another path; the query names this path.
            scoped = add(project=project, kind="trap", title=f"{tech} {area} in the worker service",
                         content=f"{fact}. This applies only to workers/{tech}_worker.py.", tags=[tech],
                         domain=f"/{project}/workers", paths=[f"workers/{tech}_worker.py"])  # fmt: skip
            v.queries.append({"type": "path-scoped", "project": project, "q": f"{tech} {area}",
                              "path": f"workers/{tech}_worker.py", "expect": scoped["id"]})  # fmt: skip
        for d in range(8):  # near-duplicates: the same memory written twice with small changes
            tech, area, fact = TECH[(d * 3 + p_i) % len(TECH)]
            a = add(
                project=project,
                kind="note",
                title=f"Note on {tech} behaviour",
                content=f"Remember: {fact}.",
                tags=[tech],
            )
            b = add(
                project=project,
                kind="note",
                title=f"Note on {tech} behaviour.",
                content=f"Remember: {fact}!",
                tags=[tech],
            )
            v.dup_groups.append({a["id"], b["id"]})
        for c in range(6):  # supersession: old wording -> successor; as-of before the change -> old
            tech, area, _ = TECH[(c * 5 + p_i) % len(TECH)]
            old = add(project=project, kind="decision", title=f"Use {tech} legacy driver v{c} for {area}",
                      content=f"We pin the legacy {tech} driver v{c} with blocking io for {area}.", tags=[tech, "legacy"],
                      domain=f"/{project}/decisions")  # fmt: skip
            new = add(project=project, kind="decision", title=f"Async {tech} client replaces the old driver for {area}",
                      content=f"Moved {area} to the async {tech} client; the blocking driver is gone.", tags=[tech, "async"],
                      domain=f"/{project}/decisions", supersedes=[old["id"]])  # fmt: skip
            old["status"], old["succeeded_by"] = "superseded", new["id"]
            v.successor_of[old["id"]] = new["id"]
            v.queries.append({"type": "successor-expected", "project": project,
                              "q": f"legacy {tech} driver v{c} blocking io {area}", "expect": new["id"]})  # fmt: skip
            v.queries.append({"type": "as-of", "project": project, "q": f"legacy {tech} driver v{c} blocking io {area}",
                              "asOf": ts(clock[0] - 30), "expect": old["id"]})  # fmt: skip
        for c in range(4):  # contradictions
            tech, area, fact = TECH[(c * 7 + p_i) % len(TECH)]
            right = add(
                project=project,
                kind="trap",
                title=f"{tech} limits in {area} (measured)",
                content=f"Measured: {fact}.",
                tags=[tech],
            )
            add(project=project, kind="trap", title=f"{tech} limits in {area}", content=f"Claimed: {fact}.", tags=[tech],
                contradicted_by=[right["id"]])  # fmt: skip
        for s in range(15):  # expired scratch notes
            tech = TECH[s % len(TECH)][0]
            add(project=project, kind="scratch", title=f"scratch {tech} idea {s}", content=f"try {tech} thing {s}",
                expires=ts(clock[0] + 10))  # fmt: skip
        while sum(1 for r in v.records if r["project"] == project) < per_project:  # filler
            tech, area, fact = rng.choice(TECH)
            words = fact.split()
            rng.shuffle(words)
            add(project=project, kind=rng.choice(KINDS), title=f"{area} {rng.choice(words)} {rng.randint(1, 999)}",
                content=" ".join(words[: rng.randint(4, len(words))]) + f" ({tech})", tags=[area],
                domain=f"/{project}/{area}/{rng.choice(['api', 'v2', 'draft', 'core'])}",
                meta={"priority": rng.randint(1, 5), "team": rng.choice(["core", "web", "data"])})  # fmt: skip
    for p in PROJECTS[:2]:
        v.queries.append(
            {"type": "filter-only", "project": p, "tree": f"/{p}/cache/*", "metaPredicate": "$.priority >= 4"}
        )
        v.queries.append({"type": "filter-only", "project": p, "tree": "api & v2", "kinds": ["note", "plan"]})
    return v


def write_vault(v: Vault, vault_dir: Path) -> None:
    """Records as Markdown files; every 25th as a hand edit (date-only times, no tags)."""
    from local_memory_shared.memory import build_record, serialise_record

    for i, raw in enumerate(v.records):
        rec = build_record(raw)
        text = serialise_record(rec)
        if i % 25 == 0:
            text = text.replace(f"created: '{rec.created}'", f"created: {rec.created[:10]}")
        path = vault_dir / rec.rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def fts5_baseline(v: Vault) -> sqlite3.Connection:
    """Seed 000's records_fts (porter ascii)."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE records_fts USING fts5(id UNINDEXED, projectId UNINDEXED, kind UNINDEXED, "
               "status UNINDEXED, title, tags, pathPatterns, body, tokenize='porter ascii')")  # fmt: skip
    db.executemany(
        "INSERT INTO records_fts VALUES (?,?,?,?,?,?,?,?)",
        [(r["id"], r["project"], r["kind"], r.get("status", "active"), r["title"], " ".join(r.get("tags", [])),
          " ".join(r.get("paths", [])), r["content"]) for r in v.records],
    )  # fmt: skip
    return db


def baseline_search(db: sqlite3.Connection, q: dict[str, Any]) -> list[str]:
    from local_memory_shared.memory.query import fts5_seed000, matches_any_pattern

    expr = fts5_seed000(q["q"])
    if not expr:
        return []
    rows = db.execute("SELECT id, pathPatterns FROM records_fts WHERE records_fts MATCH ? AND projectId = ? "
                      "AND kind != 'scratch' ORDER BY rank LIMIT 50", (expr, q["project"])).fetchall()  # fmt: skip
    if q.get("path"):
        rows = [r for r in rows if matches_any_pattern(q["path"], r[1].split())]
    return [r[0] for r in rows][:10]


def run_query(q: dict[str, Any], mode: str | None) -> tuple[list[dict[str, Any]], float]:
    from local_memory_search.tools import call_tool

    args: dict[str, Any] = {"projectId": q["project"], "limit": 10}
    for key in ("path", "asOf", "tree", "metaPredicate", "kinds"):
        if key in q:
            args[key] = q[key]
    if "q" in q:
        args.update(query=q["q"], mode=mode)
    else:
        args["limit"] = 1000
    t0 = time.perf_counter()
    env = call_tool("memory_search", args)
    ms = (time.perf_counter() - t0) * 1000
    assert env["ok"], env
    return env["results"], ms


def score(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "recall@5": round(sum(1 for r in ranks if r and r <= 5) / n, 3),
        "mrr@10": round(sum(1 / r for r in ranks if r and r <= 10) / n, 3),
        "ndcg@10": round(sum(1 / math.log2(r + 1) for r in ranks if r and r <= 10) / n, 3),
    }


def evaluate(v: Vault) -> dict[str, Any]:
    """Quality per mode and query type, plus the structural checks and latency."""
    from local_memory_shared.memory.query import compile_tree, parse_meta_predicate

    ranked = [q for q in v.queries if "q" in q]
    out: dict[str, Any] = {
        "queries": {
            t: sum(1 for q in v.queries if q["type"] == t) for t in sorted({q["type"] for q in v.queries})
        }
    }
    base_db = fts5_baseline(v)
    modes: dict[str, dict[str, list[int | None]]] = {}
    latencies: dict[str, list[float]] = {}
    outranks = dups = checked = 0
    for mode in ("fulltext", "semantic", "hybrid", "fts5-baseline"):
        for q in ranked:
            if mode == "fts5-baseline":
                ids = baseline_search(base_db, q)
            else:
                hits, ms = run_query(q, mode)
                latencies.setdefault(mode, []).append(ms)
                ids = [h["id"] for h in hits]
                pos = {i: n for n, i in enumerate(ids)}
                for old, new in v.successor_of.items():
                    checked += old in pos or new in pos
                    outranks += old in pos and (new not in pos or pos[old] < pos[new]) and "asOf" not in q
                dups += sum(1 for g in v.dup_groups if len(g & set(ids)) > 1)
            rank = next((n for n, i in enumerate(ids, 1) if i == q["expect"]), None)
            modes.setdefault(mode, {}).setdefault(q["type"], []).append(rank)
    out["quality"] = {m: {t: score(r) for t, r in by.items()} | {"all": score([x for r in by.values() for x in r])}
                      for m, by in modes.items()}  # fmt: skip
    out["superseded_outranks_successor"] = outranks
    out["duplicate_pairs_in_top10"] = dups
    exact = []
    for q in (q for q in v.queries if q["type"] == "filter-only"):
        hits, _ = run_query(q, None)
        tree = compile_tree(q["tree"])
        pred = parse_meta_predicate(q["metaPredicate"]) if "metaPredicate" in q else None
        want = {r["id"] for r in v.records if r["project"] == q["project"] and tree.matches(r.get("domain"))
                and (pred is None or pred.matches(r.get("meta") or {})) and r.get("kind") != "scratch"
                and r.get("status", "active") not in ("superseded", "archived")
                and (not q.get("kinds") or r["kind"] in q["kinds"])}  # fmt: skip
        exact.append({h["id"] for h in hits} == want)
    out["filter_exactness"] = sum(exact) / len(exact)
    out["latency_ms"] = {m: {"p50": round(statistics.median(x), 1),
                             "p95": round(sorted(x)[int(0.95 * (len(x) - 1))], 1)} for m, x in latencies.items()}  # fmt: skip
    return out


def scale_index(src: Path, dest: Path, target: int, seed: int) -> int:
    """Copy the built index, replicated to ``target`` rows (fresh ids, jittered vectors) — latency only."""
    import lancedb
    import numpy as np
    import pyarrow as pa
    from lancedb.index import FTS
    from local_memory_indexer.memory.index import build_fulltext, ensure_search_indices, publish
    from local_memory_shared.memory.schema import FTS_COLUMNS, MEMORIES_TABLE, MEMORY_DDL
    from local_memory_shared.memory.uid import new_uid

    base = lancedb.connect(str(src / "memory" / "lance")).open_table(MEMORIES_TABLE).to_arrow()
    rng = np.random.default_rng(seed)
    parts = [base]
    while sum(p.num_rows for p in parts) < target:
        copy = base.set_column(
            base.schema.get_field_index("id"), "id", pa.array([new_uid() for _ in range(base.num_rows)])
        )
        vec = np.stack(copy.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)
        vec += rng.normal(0, 0.05, vec.shape).astype(np.float32)
        vec /= np.linalg.norm(vec, axis=1, keepdims=True)
        field = base.schema.field("vector")
        flat = pa.FixedSizeListArray.from_arrays(pa.array(vec.reshape(-1)), vec.shape[1])
        parts.append(copy.set_column(base.schema.get_field_index("vector"), field, flat).cast(base.schema))
    table = pa.concat_tables(parts).slice(0, target)
    (dest / "memory" / "lance").mkdir(parents=True)
    t = lancedb.connect(str(dest / "memory" / "lance")).create_table(MEMORIES_TABLE, table)
    for column in FTS_COLUMNS:
        t.create_index(
            column,
            config=FTS(base_tokenizer="simple", stem=True, remove_stop_words=False, max_token_length=64),
        )
    ensure_search_indices(t)  # what the writer builds at this size: BTREE on id, ANN on vector
    meta = dict(
        sqlite3.connect(src / "memory" / "index.db").execute("SELECT key, value FROM memory_meta").fetchall()
    )
    db = sqlite3.connect(dest / "memory" / "index.db", isolation_level=None)
    db.executescript(MEMORY_DDL)
    db.execute("BEGIN")
    db.executemany("INSERT OR REPLACE INTO memory_meta VALUES (?, ?)", meta.items())
    build_fulltext(db, t)  # the FTS5 rows of the searcher's full-text leg, as the writer keeps them
    publish(db, t.version)
    db.execute("COMMIT")
    db.close()
    return t.count_rows()


def scaled_latency(v: Vault, root: Path, target: int, seed: int) -> dict[str, Any]:
    """p50/p95 of hybrid memory_search over an index of ``target`` rows."""
    dest = Path(tempfile.mkdtemp(prefix="gmembench-scale", dir="/tmp"))
    try:
        rows = scale_index(root, dest, target, seed)
        os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(dest)
        ms = [run_query(q, "hybrid")[1] for q in v.queries if "q" in q]
        ms = ms[5:]  # the first queries warm the encoder and the table handles
    finally:
        os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(root)
        shutil.rmtree(dest, ignore_errors=True)
    return {
        "rows": rows,
        "p50": round(statistics.median(ms), 1),
        "p95": round(sorted(ms)[int(0.95 * (len(ms) - 1))], 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--scale", type=int, default=50_000, help="also time hybrid search at this many rows (0 = skip)"
    )
    a = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="gmembench", dir="/tmp"))
    os.environ["LOCAL_VECTOR_SEARCH_DATA_ROOT"] = str(root)
    os.environ.pop("LOCAL_MEMORY_VAULT", None)
    try:
        from local_memory_indexer.memory.sync import rebuild
        from local_memory_indexer.memory.writer import MemoryWriter

        v = generate(a.records, a.seed)
        write_vault(v, root / "vault" / "")
        w = MemoryWriter(commit_delay=3600)
        t0 = time.perf_counter()
        rebuild(w)
        build_s = time.perf_counter() - t0
        w.close()
        result = {"records": len(v.records), "build_s": round(build_s, 1), **evaluate(v)}
        result["load_avg_1m"] = {"after_2000": round(os.getloadavg()[0], 2)}
        if a.scale:
            result["latency_ms"][f"hybrid@{a.scale}"] = scaled_latency(v, root, a.scale, a.seed)
            result["load_avg_1m"][f"after_{a.scale}"] = round(os.getloadavg()[0], 2)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    text = json.dumps(result, indent=2)
    print(text)  # noqa: T201 - a bench script's report goes to stdout
    if a.json:
        a.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
