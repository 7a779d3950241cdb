"""The indexer lowers its CPU priority at start, for every thread, and never raises it (shared.priority)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")

#: Starts a busy helper thread, then ``{call}``, then prints every thread's niceness (from /proc).
PROBE = textwrap.dedent(
    """
    import json, os, sys, threading
    started = threading.Event()
    stop = threading.Event()
    def worker():
        started.set()
        stop.wait()
    threading.Thread(target=worker, daemon=True).start()
    started.wait()
    {call}
    nices = {}
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        nices[tid] = int(fields[16])   # field 19 of stat(5): nice
    stop.set()
    print(json.dumps(sorted(nices.values())))
    """
)


def _probe(call: str, *, env: dict[str, str] | None = None, prefix: list[str] | None = None) -> list[int]:
    code = PROBE.replace("{call}", call)
    out = subprocess.run(
        [*(prefix or []), sys.executable, "-c", code],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


#: The niceness this test process runs at (a child starts with it; the suite may run under ``nice``).
BASE = os.getpriority(os.PRIO_PROCESS, 0)


def test_every_thread_alive_is_lowered_not_only_the_caller():
    nices = _probe("from local_memory_shared.priority import lower_cpu_priority; lower_cpu_priority(12)")
    assert len(nices) >= 2
    assert nices == [max(BASE, 12)] * len(nices)


def test_a_process_already_nicer_keeps_its_niceness():
    nices = _probe(
        "from local_memory_shared.priority import lower_cpu_priority; lower_cpu_priority(BASE)".replace(
            "BASE", str(min(19, BASE + 1))
        ),
        prefix=["nice", "-n", "18"],
    )
    assert nices == [min(19, BASE + 18)] * len(nices)


@pytest.mark.parametrize(("setting", "expected"), [(None, 10), ("4", 4), ("0", 0)])
def test_the_indexer_server_start_takes_the_setting(setting, expected, tmp_path):
    env = {"LOCAL_VECTOR_SEARCH_DATA_ROOT": str(tmp_path)}
    if setting is not None:
        env["LOCAL_MEMORY_INDEX_NICE"] = setting
    elif "LOCAL_MEMORY_INDEX_NICE" in os.environ:
        env["LOCAL_MEMORY_INDEX_NICE"] = "10"
    nices = _probe(
        "from local_memory_shared.priority import lower_indexer_priority; lower_indexer_priority()", env=env
    )
    assert nices == [max(BASE, expected)] * len(nices)


def _index_run(tmp_path, env: dict[str, str] | None = None) -> dict:
    """A whole ``index`` run of a one-file project in a child process: its exit code, the niceness
    and scheduling class it ran at, and its JSON summary."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text("def greet(name):\n    return f'hello {name}'\n")
    code = (
        "import contextlib, io, json, os, sys\n"
        "from local_memory_indexer.cli import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf): rc = main(['index', sys.argv[1], '--json'])\n"
        "print(json.dumps({'rc': rc, 'nice': os.getpriority(os.PRIO_PROCESS, 0), "
        "'cls': os.sched_getscheduler(0), 'out': json.loads(buf.getvalue())}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(project)],
        env={**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(tmp_path / "data"), **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_an_index_run_works_at_the_lower_priority(tmp_path):
    """The ``index`` command runs (and its parse workers start) at niceness 10; the summary is intact."""
    result = _index_run(tmp_path)
    assert result["rc"] == 0
    assert result["out"]["ok"] is True
    assert result["out"]["data"]["files_parsed"] == 1
    assert result["out"]["data"]["chunks_total"] >= 1
    assert result["nice"] == max(BASE, 10)


@pytest.mark.parametrize("bad", ["25", "idel"])
def test_a_bad_setting_is_an_error_naming_the_variable(bad, tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "local_memory_indexer.cli", "index", str(tmp_path), "--json"],
        env={
            **os.environ,
            "LOCAL_MEMORY_INDEX_NICE": bad,
            "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(tmp_path / "data"),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode != 0
    envelope = json.loads(out.stdout)
    assert envelope["ok"] is False
    assert "LOCAL_MEMORY_INDEX_NICE" in json.dumps(envelope["error"])


#: Like PROBE, but prints each thread's scheduling class, including a thread started after the call.
CLASS_PROBE = textwrap.dedent(
    """
    import json, os, threading
    started = threading.Event()
    stop = threading.Event()
    def worker():
        started.set()
        stop.wait()
    threading.Thread(target=worker, daemon=True).start()
    started.wait()
    {call}
    later = threading.Event()
    threading.Thread(target=lambda: (later.set(), stop.wait()), daemon=True).start()
    later.wait()
    classes = sorted(os.sched_getscheduler(int(tid)) for tid in os.listdir("/proc/self/task"))
    stop.set()
    print(json.dumps({"classes": classes, "idle": os.SCHED_IDLE, "nice": os.getpriority(os.PRIO_PROCESS, 0)}))
    """
)


def _classes(setting: str | None, tmp_path) -> dict:
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_DATA_ROOT": str(tmp_path)}
    env.pop("LOCAL_MEMORY_INDEX_NICE", None)
    if setting is not None:
        env["LOCAL_MEMORY_INDEX_NICE"] = setting
    code = CLASS_PROBE.replace(
        "{call}", "from local_memory_shared.priority import lower_indexer_priority; lower_indexer_priority()"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_idle_puts_every_thread_in_the_idle_class_and_new_threads_inherit_it(tmp_path):
    got = _classes("idle", tmp_path)
    assert len(got["classes"]) >= 3  # main, the thread alive before, the one started after
    assert got["classes"] == [got["idle"]] * len(got["classes"])
    assert got["nice"] == 19  # the fallback where there is no SCHED_IDLE, set here too


@pytest.mark.parametrize("setting", [None, "10", "0"])
def test_a_niceness_leaves_the_normal_class(setting, tmp_path):
    got = _classes(setting, tmp_path)
    assert got["idle"] not in got["classes"]
    assert set(got["classes"]) == {os.SCHED_OTHER}


def test_an_index_run_in_the_idle_class_completes(tmp_path):
    """A whole ``index`` run (its parse workers and store children inherit the class) gives its summary."""
    result = _index_run(tmp_path, {"LOCAL_MEMORY_INDEX_NICE": "idle"})
    assert result["rc"] == 0
    assert result["out"]["data"]["files_parsed"] == 1
    assert result["cls"] == os.SCHED_IDLE
