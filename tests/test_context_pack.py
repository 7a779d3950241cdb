"""retrieve_context_pack on a real index (real pipeline, ONNX model, LanceDB, SQLite, the Ollama fake)."""

from __future__ import annotations

import json
import math
import re
import socket
import textwrap
from pathlib import Path
from typing import Any

import pytest
from fakes import Fault
from fakes.ollama_server import FakeOllama, last_user_text
from local_memory_indexer.pipeline import index_project
from local_memory_search.hybrid import RankRequest, rank
from local_memory_search.store import open_index
from local_memory_search.tools import call_tool
from local_memory_shared.embedding import create_embedder

LONG_BODY = "\n".join(
    f"    total += step_{i}(records)  # stage {i} of the invoice reconciliation" for i in range(60)
)

FILES = {
    "billing/client.py": '''
        """HTTP client for the billing service."""
        import json

        from billing.retry import with_retry


        class BillingClient:
            """Talks to the billing API and uploads invoices."""

            def __init__(self, base_url):
                self.base_url = base_url

            def upload_invoice(self, invoice):
                """Upload one invoice, retrying failed uploads."""
                body = json.dumps(invoice)
                return with_retry(lambda: self._post("/invoices", body))

            def _post(self, path, body):
                return {"status": 200, "path": path, "body": body}
        ''',
    "billing/retry.py": '''
        import time


        def with_retry(fn, attempts=3, delay=0.1):
            """Call fn until it succeeds, with exponential backoff between failed invoice uploads."""
            for attempt in range(attempts):
                try:
                    return fn()
                except ConnectionError:
                    time.sleep(delay * 2 ** attempt)
            raise RuntimeError("gave up uploading")


        def jitter(delay):
            """Random jitter for backoff delays."""
            return delay * 1.1
        ''',
    "billing/reconcile.py": "def reconcile_invoices(records):\n"
    '    """Reconcile every invoice record against the ledger, stage by stage."""\n    total = 0\n'
    + LONG_BODY
    + "\n    return total\n",
    "web/upload.ts": """
        export async function uploadInvoice(invoice: Invoice): Promise<Response> {
          const body = JSON.stringify(invoice);
          return retryUpload(() => fetch("/invoices", { method: "POST", body }));
        }

        export function retryUpload(fn: () => Promise<Response>, attempts = 3): Promise<Response> {
          return fn().catch((err) => (attempts > 1 ? retryUpload(fn, attempts - 1) : Promise.reject(err)));
        }
        """,
    "docs/billing.md": """
        # Billing

        Invoices are uploaded by the billing client.

        ## Retries

        Failed invoice uploads are retried with exponential backoff.
        """,
}

QUERY = "retry failed invoice uploads with backoff"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("pack")
    project = root / "proj"
    for rel, content in FILES.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip("\n"))
    mp = pytest.MonkeyPatch()
    mp.setenv("LOCAL_VECTOR_SEARCH_DATA_ROOT", str(root / "data"))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        mp.setenv("OLLAMA_BASE_URL", f"http://127.0.0.1:{sock.getsockname()[1]}")
    index_project(project, embedder=create_embedder("onnx"))
    yield {"project": project}
    mp.undo()


def pack(env: dict[str, Any], **args: Any) -> dict[str, Any]:
    out = call_tool("retrieve_context_pack", {"query": QUERY, "project_path": str(env["project"]), **args})
    assert out["ok"] is True, out
    return out


def disk_lines(env: dict[str, Any], rel: str) -> list[str]:
    return (env["project"] / rel).read_text().split("\n")


def assert_faithful(env: dict[str, Any], data: dict[str, Any]) -> None:
    """Every excerpt is exactly the file's lines, excerpts of a file never touch, and the budget holds."""
    assert len(data["text"]) == data["chars"] <= data["max_chars"]
    assert data["excerpt_chars"] <= data["max_chars"]
    assert data["est_tokens"] == math.ceil(data["chars"] / 4)
    assert len({f["file_path"] for f in data["files"]}) == len(data["files"])
    for f in data["files"]:
        lines = disk_lines(env, f["file_path"])
        previous_end = -1
        for e in f["excerpts"]:
            assert e["start_line"] > previous_end + 1, (f["file_path"], e["start_line"], previous_end)
            assert e["text"] == "\n".join(lines[e["start_line"] - 1 : e["end_line"]])
            previous_end = e["end_line"]
            assert f"### {f['file_path']} (lines {e['start_line']}-{e['end_line']})" in data["text"]


def test_default_pack_is_grouped_by_file_in_rank_order(env: dict[str, Any]) -> None:
    data = pack(env)["data"]
    assert_faithful(env, data)
    assert data["max_chars"] == 12000 and data["neighbor_hops"] == 1 and data["truncate_strategy"] == "middle"
    assert data["rerank"] == {"requested": False, "applied": False}
    with open_index(str(env["project"])) as reader:
        ranking = rank(reader, RankRequest(query=QUERY, mode="hybrid", depth=40))
        rows = reader.fetch_chunks(s.chunk_id for s in ranking.ranked[: ranking.kept])
    expected = list(dict.fromkeys(rows[s.chunk_id]["file_path"] for s in ranking.ranked[: ranking.kept]))[:8]
    assert [f["file_path"] for f in data["files"]] == expected
    assert [f["rank"] for f in data["files"]] == list(range(1, len(expected) + 1))
    best = [f["best_hit_rank"] for f in data["files"]]
    assert best == sorted(best)
    assert {"billing/retry.py", "billing/client.py"} <= {f["file_path"] for f in data["files"]}
    retry = next(f for f in data["files"] if f["file_path"] == "billing/retry.py")
    assert retry["source"] == "disk" and retry["language"] == "python"
    assert any(e["hit"] and e["symbol"] == "with_retry" for e in retry["excerpts"])
    fences = {"python": "```python\n", "markdown": "```markdown\n", "typescript": "```typescript\n"}
    for f in data["files"]:
        first = f["excerpts"][0]
        assert f"### {f['file_path']} (lines {first['start_line']}-{first['end_line']})" in data["text"]
        assert fences[f["language"]] in data["text"]


def test_the_text_block_pairs_each_header_with_a_fenced_excerpt(env: dict[str, Any]) -> None:
    data = pack(env)["data"]
    blocks = data["text"].split("\n\n### ")
    assert len(blocks) == sum(len(f["excerpts"]) for f in data["files"])
    header = re.compile(r"^(### )?(\S+) \(lines (\d+)-(\d+)\)( — [^\n]+)?\n(`{3,})(\w*)\n")
    for block in blocks:
        m = header.match(block)
        assert m, block[:120]
        assert block.endswith("\n" + m.group(6))
    symbol_headers = [e for f in data["files"] for e in f["excerpts"] if e["symbol"]]
    assert symbol_headers and all(f"— {e['symbol']}" in data["text"] for e in symbol_headers)


def test_class_skeletons_never_leak_their_elision_markers(env: dict[str, Any]) -> None:
    data = pack(env, query="BillingClient upload_invoice class", include_neighbors=True, neighbor_hops=3)[
        "data"
    ]
    assert_faithful(env, data)
    client = next(f for f in data["files"] if f["file_path"] == "billing/client.py")
    text = "\n".join(e["text"] for e in client["excerpts"])
    assert "class BillingClient:" in text and "def upload_invoice" in text
    assert "(lines " not in text  # the skeleton's "... upload_invoice (lines a-b)" line is synthetic


def test_neighbours_add_adjacent_chunks_and_can_be_turned_off(env: dict[str, Any]) -> None:
    def lines(data: dict[str, Any]) -> int:
        return sum(e["end_line"] - e["start_line"] + 1 for f in data["files"] for e in f["excerpts"])

    # The filter leaves one hit; its neighbours are context, so the filter does not apply to them.
    only = {"function_name": "upload_invoice"}
    off = pack(env, include_neighbors=False, filters=only)["data"]
    zero = pack(env, neighbor_hops=0, filters=only)["data"]
    one = pack(env, neighbor_hops=1, filters=only)["data"]
    three = pack(env, neighbor_hops=3, filters=only)["data"]
    assert off["neighbor_hops"] == 0 and off["files"] == zero["files"]
    ((hit,),) = [f["excerpts"] for f in off["files"]]
    assert hit["hit"] and hit["symbol"] == "BillingClient.upload_invoice"
    assert lines(off) < lines(one) < lines(three)
    (client,) = one["files"]
    symbols = {s for e in client["excerpts"] for s in e["symbols"]}
    assert {"BillingClient.upload_invoice", "BillingClient.__init__", "BillingClient._post"} <= symbols
    for data in (off, one, three):
        assert_faithful(env, data)


def test_max_files_limits_distinct_files(env: dict[str, Any]) -> None:
    full = pack(env, max_files=8)["data"]
    assert len(full["files"]) >= 2 and full["omitted"]["files"] == 0
    data = pack(env, max_files=1)["data"]
    assert [f["file_path"] for f in data["files"]] == [full["files"][0]["file_path"]]
    assert data["omitted"]["files"] == len(full["files"]) - 1
    assert_faithful(env, data)


@pytest.mark.parametrize("strategy", ["middle", "tail", "head"])
def test_truncate_strategy_names_the_part_that_is_cut(env: dict[str, Any], strategy: str) -> None:
    data = pack(
        env,
        query="reconcile_invoices",
        max_files=1,
        max_chars=900,
        include_neighbors=False,
        truncate_strategy=strategy,
        filters={"path_prefix": "billing/reconcile"},
    )["data"]
    assert_faithful(env, data)
    (f,) = data["files"]
    excerpts = f["excerpts"]
    assert data["truncated"] is True and all(e["truncated"] for e in excerpts)
    assert "(truncated)" in data["text"]
    lines = disk_lines(env, "billing/reconcile.py")
    first = next(i for i, t in enumerate(lines, 1) if t.startswith("def reconcile_invoices"))
    last = next(i for i, t in enumerate(lines, 1) if t.strip() == "return total")
    if strategy == "middle":  # head and tail kept, the middle cut
        assert len(excerpts) == 2 and excerpts[0]["start_line"] == first and excerpts[-1]["end_line"] == last
    elif strategy == "tail":  # the tail is cut: the excerpt starts at the definition
        assert len(excerpts) == 1 and excerpts[0]["start_line"] == first and excerpts[0]["end_line"] < last
    else:  # the head is cut: the excerpt ends at the function's last line
        assert len(excerpts) == 1 and excerpts[0]["end_line"] == last and excerpts[0]["start_line"] > first


def test_a_file_edited_after_indexing_is_packed_as_indexed(env: dict[str, Any]) -> None:
    path = env["project"] / "web/upload.ts"
    original = path.read_text()
    try:
        path.write_text("// rewritten after indexing\n" + original)
        data = pack(env, filters={"language": "typescript"})["data"]
        (f,) = data["files"]
        assert f["source"] == "index"
        indexed_lines = original.split("\n")  # what was indexed, not what is on disk now
        for e in f["excerpts"]:
            assert e["text"] == "\n".join(indexed_lines[e["start_line"] - 1 : e["end_line"]])
    finally:
        path.write_text(original)


def test_filters_and_alpha_reach_the_ranking(env: dict[str, Any]) -> None:
    data = pack(env, filters={"file_extensions": ["md"]}, alpha=0.0)["data"]
    assert [f["file_path"] for f in data["files"]] == ["docs/billing.md"]
    assert data["search"]["alpha_effective"] == 0.0


def test_no_match_answers_an_empty_pack_with_a_warning(env: dict[str, Any]) -> None:
    out = pack(env, query="zzqxv", alpha=0.0)
    assert out["data"]["files"] == [] and out["data"]["text"] == "" and out["data"]["est_tokens"] == 0
    assert [w["code"] for w in out["warnings"]] == ["no_matches"]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"max_files": 0}, "max_files"),
        ({"neighbor_hops": 4}, "neighbor_hops"),
        ({"truncate_strategy": "end"}, "truncate_strategy"),
        ({"max_chars": "12000"}, "max_chars"),
        ({"alpha": 1.5}, "alpha"),
        ({"filters": {"file_path": "x.py"}}, "filters.file_path"),
        ({"query": "   "}, "query"),
        ({"limit": 3}, "limit"),
    ],
)
def test_bad_arguments_name_the_field(env: dict[str, Any], args: dict[str, Any], field: str) -> None:
    out = call_tool("retrieve_context_pack", {"query": QUERY, "project_path": str(env["project"]), **args})
    assert (
        out["ok"] is False and out["error"]["code"] == "INVALID_ARGUMENT" and out["error"]["field"] == field
    )


def test_an_unindexed_project_is_not_indexed(tmp_path: Path, env: dict[str, Any]) -> None:
    out = call_tool("retrieve_context_pack", {"query": QUERY, "project_path": str(tmp_path)})
    assert out["ok"] is False and out["error"]["code"] == "NOT_INDEXED"


# -- re-ranking through the pack ----------------------------------------------------------------------


def _reverse(body: dict[str, Any]) -> str:
    ids = [int(n) for n in re.findall(r"^\[(\d+)\] ", last_user_text(body), flags=re.M)]
    return json.dumps({"ranking": sorted(ids, reverse=True)})


def test_rerank_reorders_the_files(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    plain = pack(env, max_chars=4000)["data"]
    with FakeOllama(reply=_reverse) as fake:
        monkeypatch.setenv("OLLAMA_BASE_URL", fake.url)
        monkeypatch.setenv("RERANK_MODEL", "granite4.1:3b")
        out = pack(env, max_chars=4000, rerank=True)
        (request,) = fake.requests_to("/api/chat")
        assert request.body["model"] == "granite4.1:3b"
        prompt = last_user_text(request.body)
    shown = re.findall(r"^\[\d+\] (\S+)", prompt, flags=re.M)
    data = out["data"]
    assert out["warnings"] == []
    assert data["rerank"]["applied"] is True and data["rerank"]["model"] == "granite4.1:3b"
    order = [f["file_path"] for f in data["files"]]
    assert order != [f["file_path"] for f in plain["files"]]
    # The model put the last candidate it was shown first, so its file leads the pack.
    assert order[0] == shown[-1]
    assert shown[0] == plain["files"][0]["file_path"]
    assert_faithful(env, data)


@pytest.mark.parametrize("fault", ["unreachable", "timeout", "garbage", "prose"])
def test_rerank_failures_keep_retrieval_order_with_a_warning(
    env: dict[str, Any], monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    plain = pack(env)["data"]
    with FakeOllama(reply=lambda body: "I would rank the second first.") as fake:
        if fault != "unreachable":
            monkeypatch.setenv("OLLAMA_BASE_URL", fake.url)
        if fault == "timeout":
            monkeypatch.setenv("RERANK_TIMEOUT", "0.5")
            fake.always("/api/chat", Fault.slow(3.0))
        elif fault == "garbage":
            fake.always("/api/chat", Fault.garbage())
        out = pack(env, rerank=True)
    assert [w["code"] for w in out["warnings"]] == ["rerank_unavailable"]
    data = out["data"]
    assert data["rerank"]["requested"] is True and data["rerank"]["applied"] is False
    assert data["files"] == plain["files"] and data["text"] == plain["text"]
