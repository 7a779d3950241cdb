"""Issue 14 (search memory): a search server hands back the library pages only its start-up touched.

The first check loads a private copy of a real shared library (so no other process maps its pages,
which the kernel would leave alone), faults every page of its read-only mappings in and measures
them in ``/proc/self/smaps`` before and after :func:`release_library_pages`. The others run the real
MCP server in process and check the one release after its first call, and the setting.
"""

from __future__ import annotations

import ctypes
import shutil
import time
from pathlib import Path

import pytest
from local_memory_shared.config import load_settings
from local_memory_shared.heap import LibraryPageout, library_mappings, release_library_pages

PAGE = 4096


def _library() -> Path:
    """A real shared library with no dependencies beyond libc (SQLite's)."""
    for candidate in (
        "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0",
        "/usr/lib/aarch64-linux-gnu/libsqlite3.so.0",
    ):
        if Path(candidate).is_file():
            return Path(candidate)
    import _sqlite3  # the interpreter's own module links it

    return Path(_sqlite3.__file__)


def _resident_kb(path: str, starts: set[int] | None = None) -> dict[str, int]:
    """Rss and Anonymous kB of the mappings of ``path`` (those starting at ``starts``; all if None)."""
    out = {"Rss": 0, "Anonymous": 0}
    inside = False
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):
                start = int(head[0].split("-")[0], 16)
                inside = len(head) > 5 and head[5] == path and (starts is None or start in starts)
            elif inside and head[0][:-1] in out:
                out[head[0][:-1]] += int(head[1])
    return out


def test_release_library_pages_hands_back_the_clean_pages_of_a_library(tmp_path):
    copy = tmp_path / "libprivate-copy.so"
    shutil.copyfile(_library(), copy)
    ctypes.CDLL(str(copy))  # the dynamic linker maps it and relocates its data (those pages are private)
    path = str(copy)
    clean = [(start, end) for start, end, mapped in library_mappings() if mapped == path]
    assert clean, "the copy's read-only mappings are listed"
    for start, end in clean:  # fault in every page, as start-up code and data would
        for address in range(start, end, PAGE):
            ctypes.string_at(address, 1)
    starts = {start for start, _end in clean}
    before, before_all = _resident_kb(path, starts), _resident_kb(path)
    assert before["Anonymous"] == 0
    assert before["Rss"] >= sum(end - start for start, end in clean) // 1024 * 0.9

    assert release_library_pages() >= len(clean)

    after, after_all = _resident_kb(path, starts), _resident_kb(path)
    # (a large page-cache folio that straddles a mapping left alone may stay: a few dozen pages)
    assert after["Rss"] < before["Rss"] * 0.25, (before, after)
    assert after_all["Anonymous"] == before_all["Anonymous"]  # relocated (copied) pages are never advised
    for start, _end in clean:  # and what is touched again reads back the same bytes
        assert ctypes.string_at(start, 4)


def test_library_mappings_lists_only_read_only_file_pages_without_private_copies():
    mappings = library_mappings()
    assert mappings, "a Python process maps shared libraries"
    with open("/proc/self/maps", encoding="utf-8") as maps:
        perms = {int(line.split("-")[0], 16): line.split()[1] for line in maps}
    for start, _end, path in mappings:
        assert path.startswith("/") and ".so" in path
        assert "w" not in perms[start]


def test_the_search_server_releases_library_pages_once_after_its_first_call(tmp_path, monkeypatch):
    from local_memory_search import server
    from mcp_harness import memory_session

    monkeypatch.setenv("LOCAL_MEMORY_RELEASE_LIBRARY_PAGES", "1")
    pageout = LibraryPageout()
    monkeypatch.setattr(server, "LIBRARY_PAGEOUT", pageout)
    with memory_session(server.build_server()) as session:
        envelope = session.call("search_keyword", {"project_path": str(tmp_path), "query": "x"})
        assert envelope["error"]["code"] == "NOT_INDEXED"  # any answer counts as a call
        pageout.wait(timeout=30)
        assert pageout.advised is not None and pageout.advised > 0
        first_thread = pageout._thread
        session.call("search_keyword", {"project_path": str(tmp_path), "query": "y"})
    assert pageout.calls == 2 and pageout._thread is first_thread  # once per process


@pytest.mark.parametrize(("value", "enabled"), [(None, True), ("0", False), ("off", False), ("1", True)])
def test_release_library_pages_setting(value, enabled, monkeypatch):
    """On by default since session 11 (100k chunks, idle: RSS after 1,000 calls 325 -> 261 MB at
    unchanged p95: README "Memory of a search process"); ``0`` keeps the pages."""
    if value is None:
        monkeypatch.delenv("LOCAL_MEMORY_RELEASE_LIBRARY_PAGES", raising=False)
    else:
        monkeypatch.setenv("LOCAL_MEMORY_RELEASE_LIBRARY_PAGES", value)
    assert load_settings().release_library_pages is enabled
    pageout = LibraryPageout()
    pageout.touch()
    pageout.wait(timeout=30)
    assert (pageout.advised is not None) is enabled
    assert pageout._thread is None or enabled
    time.sleep(0)  # nothing else runs: the setting was read at the first touch
    assert pageout.enabled is enabled
