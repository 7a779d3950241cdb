"""Render a results document as a plain-text table (stdout) or Markdown (BENCHMARKS.md).

``python -m bench.report bench/results/latest-full.json [--markdown]`` re-renders a stored run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

QUALITY_COLS = ("ndcg@10", "mrr@10", "recall@1", "recall@5", "recall@10", "recall@100")
TOOLS = ("search_keyword", "search_semantic", "search_hybrid")


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.{digits}f}"
    return str(value)


def _table(headers: list[str], rows: list[list[Any]], markdown: bool) -> list[str]:
    cells = [[_fmt(c) for c in row] for row in rows]
    if markdown:
        out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in cells]
        return out
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "-" * len(line)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return out


def _quality_rows(res: dict[str, Any]) -> list[list[Any]]:
    rows = []
    methods = res.get("methods", {})
    for name in (*TOOLS, "grep", "bm25_files"):
        if name not in methods:
            continue
        for level in ("span", "file"):
            scores = methods[name].get(level)
            if scores:
                rows.append([name, level, *(scores.get(c) for c in QUALITY_COLS)])
    return rows


def _quality_sets(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    out = []
    secs = doc.get("sections", {})
    for name, res in (secs.get("cosqa") or {}).items():
        if isinstance(res, dict) and "methods" in res:
            label = f"{name} ({res['queries']} queries, {res.get('functions')} functions{', subset' if res.get('subset') else ''})"
            out.append(("cosqa", label, res))
    for name, res in (secs.get("docq") or {}).items():
        if isinstance(res, dict) and "overall" in res:
            corpora = ", ".join(res["corpora"])
            out.append(
                ("docq", f"{name} ({res['overall']['queries']} queries over {corpora})", res["overall"])
            )
    q = secs.get("questions")
    if q and "overall" in q:
        out.append(
            (
                "questions",
                f"hand-written questions ({q['overall']['queries']} over {', '.join(q['corpora'])})",
                q["overall"],
            )
        )
    return out


def _per_corpus(doc: dict[str, Any], section: str, label: str) -> tuple[list[str], list[list[Any]]] | None:
    secs = doc.get("sections", {})
    if section == "questions":
        corpora = (secs.get("questions") or {}).get("corpora")
    elif section == "docq":
        variant = label.split(" ", 1)[0]
        corpora = ((secs.get("docq") or {}).get(variant) or {}).get("corpora")
    else:
        return None
    if not corpora or len(corpora) < 2:
        return None
    methods = (*TOOLS, "grep", "bm25_files")
    rows = []
    for name, res in corpora.items():
        cells: list[Any] = [name, res["queries"]]
        for m in methods:
            cells.append(res["methods"].get(m, {}).get("file", {}).get("ndcg@10"))
        rows.append(cells)
    return ["corpus", "queries", *methods], rows


def render(doc: dict[str, Any], markdown: bool) -> str:
    """The whole results document as text or Markdown."""
    h = (lambda s: f"\n### {s}\n") if markdown else (lambda s: f"\n== {s}")
    cmd = (
        (lambda s: f"\nCommand: `{doc['commands'].get(s, '')}`\n")
        if markdown
        else (lambda s: f"   command: {doc['commands'].get(s, '')}")
    )
    m = doc["machine"]
    lines = [
        f"{'## ' if markdown else ''}Local Memory benchmarks — {doc['mode']} run of {doc['started_at']} ({doc.get('seconds')} s)",
        "",
        f"Machine: {m['cpu_model']}, {m['cpu_count_logical']} logical CPUs, {m['ram_gib']} GiB RAM, {m['os']}, "
        f"Python {m['python']}; commit {m['git_commit'][:12]}{' (dirty tree)' if m['git_dirty'] else ''}; "
        f"load average at start {m['load_average']} / end {m.get('load_average_end')}; "
        f"lancedb {m['packages'].get('lancedb')}, onnxruntime {m['packages'].get('onnxruntime')}; {m.get('ripgrep')}.",
    ]
    secs = doc.get("sections", {})
    for section, label, res in _quality_sets(doc):
        lines.append(h(f"Quality — {label}"))
        lines.append(cmd(section))
        lines += _table(["method", "level", *QUALITY_COLS], _quality_rows(res), markdown)
        per_corpus = _per_corpus(doc, section, label)
        if per_corpus:
            lines.append(
                ""
                if markdown
                else "   nDCG@10 per corpus, file level for every method (comparable with the baselines):"
            )
            if markdown:
                lines.append(
                    "nDCG@10 per corpus, file level for every method (comparable with the baselines):\n"
                )
            lines += _table(per_corpus[0], per_corpus[1], markdown)
    lat = secs.get("latency")
    if lat:
        lines.append(h("Latency (ms, in-process timing inside a separate search process)"))
        lines.append(cmd("latency"))
        rows = []
        for tier, t in lat["tiers"].items():
            for tool in TOOLS:
                r = t["tools"].get(tool, {})
                st = r.get("stages_ms", {})
                rows.append(
                    [
                        f"{tier} chunks",
                        tool,
                        r.get("cold", {}).get("p50"),
                        r.get("warm", {}).get("p50"),
                        r.get("warm", {}).get("p95"),
                        r.get("warm", {}).get("p99"),
                        *(st.get(s, {}).get("p50") for s in ("encode", "semantic", "keyword", "fuse")),
                        t.get("rss_mb"),
                    ]
                )
        lines += _table(
            [
                "corpus",
                "tool",
                "cold p50",
                "warm p50",
                "warm p95",
                "warm p99",
                "encode p50",
                "vector leg p50",
                "bm25 leg p50",
                "fuse p50",
                "RSS MB",
            ],
            rows,
            markdown,
        )
        if markdown:
            lines.append("")  # a list right after a table needs a blank line in Markdown
        for tier, t in lat["tiers"].items():
            lines.append(
                f"{'- ' if markdown else '   '}{tier} chunks: {t['vectors']}; warm n={t['queries']}, "
                f"cold samples per tool={t['cold_samples']}, search process spawn p50 "
                f"{t.get('process_spawn_ms', {}).get('p50')} ms"
            )
    idx = secs.get("indexing")
    if idx:
        lines.append(
            h(f"Indexing — {idx['project']} (model load {idx['model_load_seconds']} s, not included)")
        )
        lines.append(cmd("indexing"))
        rows = []
        for run in ("full", "no_change", "one_file_change"):
            r = idx.get(run)
            if not r:
                continue
            ph = r["phases"]
            rows.append(
                [
                    run,
                    r["wall_seconds"],
                    r["files_parsed"],
                    r["chunks_written"],
                    r["chunks_embedded"],
                    r.get("chunks_reused"),
                    r["files_per_s"],
                    r["chunks_per_s"],
                    *(_phase(ph, p) for p in ("walk", "parse", "graph", "embed", "write", "index")),
                ]
            )
        lines += _table(
            [
                "run",
                "wall s",
                "files parsed",
                "chunks written",
                "chunks embedded",
                "chunks reused",
                "files/s",
                "chunks/s",
                "walk",
                "parse",
                "graph",
                "embed",
                "write",
                "index",
            ],
            rows,
            markdown,
        )
        if markdown:
            lines.append("")
        lines.append(
            f"{'- ' if markdown else '   '}phase cells: seconds (files/s; chunks/s); the embed cell's chunks/s counts "
            "only chunks really embedded (not cache hits)"
        )
    iso = secs.get("isolation")
    if iso:
        lines.append(
            h(
                f"Read-only isolation — search_hybrid on {iso.get('project_chunks')} chunks while the writer works"
            )
        )
        lines.append(cmd("isolation"))
        rows = []
        for phase in (
            "idle",
            "other_project_full_index",
            "same_project_reindex",
            "same_project_edits_reindex",
        ):
            r = iso.get(phase)
            if r:
                rows.append(
                    [
                        phase,
                        r.get("n"),
                        r.get("p50"),
                        r.get("p95"),
                        r.get("p99"),
                        r.get("p95_ratio_to_idle"),
                        r.get("failures"),
                        r.get("empty_answers"),
                        r.get("indexer_seconds"),
                    ]
                )
        lines += _table(
            [
                "phase",
                "queries",
                "p50 ms",
                "p95 ms",
                "p99 ms",
                "p95 / idle",
                "failures",
                "empty",
                "indexer s",
            ],
            rows,
            markdown,
        )
    if doc.get("errors"):
        lines.append(h("Errors"))
        lines += [f"- {k}: {v}" for k, v in doc["errors"].items()]
    return "\n".join(lines) + "\n"


def _phase(phases: dict[str, Any], name: str) -> str:
    p = phases.get(name)
    if not p:
        return "–"
    chunks_rate = p.get("embedded_chunks_per_s", p.get("chunks_per_s"))
    rate = f" ({_fmt(p.get('files_per_s'), 0)}; {_fmt(chunks_rate, 0)})" if p["seconds"] >= 0.05 else ""
    return f"{p['seconds']:.2f}{rate}"


def render_text(doc: dict[str, Any]) -> str:
    """Plain-text tables for the terminal."""
    return render(doc, markdown=False)


def render_markdown(doc: dict[str, Any]) -> str:
    """Markdown tables for BENCHMARKS.md."""
    return render(doc, markdown=True)


def main() -> None:
    """``python -m bench.report RESULTS.json [MORE.json ...] [--markdown]``.

    With several runs, each is rendered in turn; a section that failed in one run but was
    measured in another is shown once, from the run that measured it.
    """
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    docs = [json.loads(Path(a).read_text()) for a in args]
    measured = {name for d in docs for name in d.get("sections", {})}
    for doc in docs:
        doc["errors"] = {k: v for k, v in doc.get("errors", {}).items() if k not in measured}
        doc["commands"] = {k: v for k, v in doc.get("commands", {}).items() if k in doc.get("sections", {})}
        sys.stdout.write(render(doc, markdown="--markdown" in sys.argv) + "\n")


if __name__ == "__main__":
    main()
