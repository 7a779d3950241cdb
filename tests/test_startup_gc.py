"""Issue 14 (first answer): a fresh search server imports with the cyclic collector off, then freezes
what it imported and turns the collector back on before it serves.

Each check runs in a fresh interpreter: the collector's state is process-wide, the thing under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def run(code: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_server_builds_without_collections_and_serves_with_the_imports_frozen() -> None:
    got = run(
        """
        import gc, json, threading
        from local_memory_search import cli, server

        def collections():
            return sum(s["collections"] for s in gc.get_stats())

        seen = {}
        real_settle = server.settle_gc
        def settle():  # the end of start-up (LanceDB's import may follow on its own thread)
            seen["during"] = collections() - before
            return real_settle()
        def serve(built, **_transport):  # stands in for the transport only: records the collector's state
            seen.update(enabled=gc.isenabled(), frozen=gc.get_freeze_count(),
                        tools=len(built.name) > 0 and "local_memory_search.tools" in __import__("sys").modules)
            for thread in threading.enumerate():  # exit only once the start-up threads are done
                if thread.name in ("encoder-prewarm", "lancedb-warm"):
                    thread.join(120)
        server.settle_gc = settle
        server.run_server = serve
        before = collections()
        assert "local_memory_search.tools" not in __import__("sys").modules  # imported by build_server
        cli.main([])
        print(json.dumps(seen))
        """
    )
    # build_server imported the tool layer (the search API, pyarrow, every params model) with no collection
    assert got["tools"] is True
    assert got["during"] == 0
    # and the server then serves with the collector on and the start-up objects out of its way
    assert got["enabled"] is True
    assert got["frozen"] > 10_000


def test_settle_is_a_no_op_unless_start_up_paused_the_collector() -> None:
    got = run(
        """
        import gc, json
        from local_memory_shared.heap import pause_gc, settle_gc
        untouched = settle_gc()
        state = [gc.isenabled(), gc.get_freeze_count()]
        gc.disable()
        not_ours = pause_gc()  # already off (someone else's choice): not paused by us
        gc.enable()
        paused = pause_gc()
        off = gc.isenabled()
        settled = settle_gc()
        again = settle_gc()
        print(json.dumps({"untouched": untouched, "state": state, "not_ours": not_ours, "paused": paused,
                          "off": off, "settled": settled, "again": again, "on": gc.isenabled(),
                          "frozen": gc.get_freeze_count() > 0}))
        """
    )
    assert got == {
        "untouched": False,
        "state": [True, 0],
        "not_ours": False,
        "paused": True,
        "off": False,
        "settled": True,
        "again": False,
        "on": True,
        "frozen": True,
    }


def test_a_full_collections_survivors_are_frozen_and_the_idle_sweep_collects_frozen_cycles() -> None:
    """Long-lived memo entries would make every full collection walk them (40-54 ms at 112k
    objects in a search server); after a call in which a full pass ran they are frozen, and the
    idle sweep still collects cyclic garbage that was frozen."""
    got = run(
        """
        import gc, json, time, weakref
        from local_memory_shared.heap import FullCollectionFreeze

        class Node:
            pass

        keeper = FullCollectionFreeze(sweep_after=50_000)
        keeper.after_call()  # the first call: no full pass since, nothing frozen
        nothing = [keeper.freezes, gc.get_freeze_count()]
        memo = {i: frozenset({str(i), str(-i)}) for i in range(100_000)}  # long-lived, tracked
        cycle = Node(); cycle.me = cycle
        dead = weakref.ref(cycle)
        gc.collect()  # a full pass, as one that runs inside a call
        keeper.after_call()
        frozen = gc.get_freeze_count()
        started = time.perf_counter(); gc.collect(); walk_ms = (time.perf_counter() - started) * 1000
        tracked = len(gc.get_objects())
        del cycle  # now cyclic garbage inside the permanent generation: no pass sees it
        gc.collect()
        kept = dead() is not None
        swept = keeper.idle_sweep()
        print(json.dumps({"nothing": nothing, "freezes": keeper.freezes, "frozen": frozen, "tracked": tracked,
                          "kept": kept, "swept": swept, "collected": dead() is None,
                          "again": keeper.idle_sweep(), "memo": len(memo), "walk_ms": walk_ms}))
        """
    )
    assert got["nothing"] == [0, 0]
    assert got["freezes"] == 1 and got["frozen"] >= 100_000
    assert got["tracked"] < 20_000  # a full pass no longer walks the memo
    assert got["kept"] is True  # frozen cyclic garbage outlives ordinary passes ...
    assert got["swept"] is True and got["collected"] is True  # ... until the idle sweep
    assert got["again"] is False  # nothing new frozen since the sweep
