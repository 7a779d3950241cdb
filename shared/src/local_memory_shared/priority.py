"""CPU priority of the writer (issue 14 item 5: search latency while the same project is re-indexed).

An indexer runs for minutes beside the search server, the IDE and the compiler, on the same cores.
Parsing and embedding are throughput work; a search is a person (or an agent) waiting. So the
indexer lowers its own CPU priority when it starts (``LOCAL_MEMORY_INDEX_NICE``, default
:data:`DEFAULT_INDEX_NICE`): on an idle machine that costs nothing (niceness only matters when
runnable threads compete for a core), and on a busy one the kernel gives a search thread about
ten times the indexer threads' share (CFS weights 1024 vs 110 at niceness 10).

On Linux niceness belongs to each thread, and a new thread inherits its creator's. So
:func:`lower_cpu_priority` sets every thread alive now (``/proc/self/task``) and is called before the
indexer starts its pools; the parse processes it spawns inherit it too. It only ever *raises*
niceness (an unprivileged process may not lower it again), so a user who starts the indexer under
``nice -n 19`` keeps 19.

``LOCAL_MEMORY_INDEX_NICE=idle`` goes further on Linux: every thread also takes the ``SCHED_IDLE``
class (weight 3 against a normal thread's 1024, and a waking search thread preempts it at once),
so the indexer runs on CPU time nothing else wants. The price: on a machine kept busy by other
work (a long compile) the index waits until the cores are free. Threads and processes started
afterwards inherit the class, like niceness.

Not handled: with the kernel's autogroup scheduling (``/proc/sys/kernel/sched_autogroup_enabled``,
on for many desktops), processes of different terminal sessions are weighed per session first, so
niceness only ranks threads within one session. Servers started by the same MCP client share its
session, which is the common case; a re-index started from another terminal competes as a session.
"""

from __future__ import annotations

import logging
import os

from .config import DEFAULT_INDEX_NICE, load_settings

log = logging.getLogger(__name__)
#: The lowest CPU priority POSIX niceness can express.
MAX_NICE = 19


def thread_ids() -> list[int]:
    """Kernel thread ids of this process (Linux ``/proc/self/task``; elsewhere ``[0]``, the caller)."""
    try:
        return sorted(int(name) for name in os.listdir("/proc/self/task"))
    except OSError:
        return [0]


def lower_cpu_priority(niceness: int, *, idle: bool = False) -> int:
    """Raise the niceness of every thread of this process to at least ``niceness``; with ``idle``,
    also put every thread in the ``SCHED_IDLE`` class where the platform has it.

    Answers the niceness of the calling thread afterwards. A thread that ends meanwhile, or a
    platform without ``setpriority`` / ``SCHED_IDLE``, is skipped; never raises.
    """
    if not hasattr(os, "setpriority"):
        return 0
    target = max(0, min(MAX_NICE, niceness))
    sched_idle = getattr(os, "SCHED_IDLE", None) if idle else None
    for tid in thread_ids():
        try:
            if os.getpriority(os.PRIO_PROCESS, tid) < target:
                os.setpriority(os.PRIO_PROCESS, tid, target)
            if sched_idle is not None and os.sched_getscheduler(tid) != sched_idle:
                os.sched_setscheduler(tid, sched_idle, os.sched_param(0))
        except OSError:  # the thread ended, or the platform refuses per-thread priority
            continue
    return os.getpriority(os.PRIO_PROCESS, 0)


def lower_indexer_priority() -> int:
    """:func:`lower_cpu_priority` with ``LOCAL_MEMORY_INDEX_NICE``; an indexing process calls it at start.

    A bad setting is left for the command itself to report (with its field), so this never raises.
    """
    try:
        settings = load_settings()
        niceness, idle = settings.index_nice, settings.index_idle
    except Exception:
        niceness, idle = DEFAULT_INDEX_NICE, False
    if niceness <= 0:
        return os.getpriority(os.PRIO_PROCESS, 0) if hasattr(os, "getpriority") else 0
    now = lower_cpu_priority(niceness, idle=idle)
    log.debug("indexer CPU niceness %d%s", now, " (SCHED_IDLE)" if idle else "")
    return now
