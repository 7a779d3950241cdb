"""The status monitor page in a real headless Chromium (Debian's package), driven by Playwright.

Each tab is loaded against a real indexed fixture project; a screenshot of each is saved under
the test's temp dir (its path is printed, so a run shows where to look).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from monitor_support import TOKEN, Monitor, build_project, start_monitor, stop_monitor

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def monitor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Monitor]:
    project, data_root = build_project(tmp_path_factory.mktemp("monitor-browser"))
    mon = start_monitor(project, data_root)
    try:
        yield mon
    finally:
        stop_monitor(mon)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "chromium is installed by `make install` (Debian package)"
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("monitor-screenshots")
    print(f"\nmonitor screenshots: {folder}")
    return folder


@pytest.fixture()
def page(browser: object, monitor: Monitor) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})  # type: ignore[attr-defined]
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.goto(monitor.url + "/")
    pg.fill("#token", TOKEN)
    pg.click("#auth-form button")
    pg.wait_for_selector("#projects-table tbody tr")
    yield pg
    context.close()
    assert not errors, errors


def test_a_wrong_token_is_refused_and_the_right_one_unlocks(browser: object, monitor: Monitor) -> None:
    context = browser.new_context()  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.goto(monitor.url + "/")
    pg.wait_for_selector("#auth:not(.hidden)")
    pg.fill("#token", "wrong")
    pg.click("#auth-form button")
    pg.wait_for_function("document.querySelector('#auth-error').textContent.includes('refused')")
    assert pg.is_hidden("main")
    pg.fill("#token", TOKEN)
    pg.click("#auth-form button")
    pg.wait_for_selector("#projects-table tbody tr")
    assert pg.is_hidden("#auth")
    context.close()


def test_overview_lists_the_project_with_its_health(page: object, monitor: Monitor, shots: Path) -> None:
    row = page.inner_text("#projects-table tbody tr")  # type: ignore[attr-defined]
    assert monitor.project in row and "ready" in row and "fresh" in row
    page.screenshot(path=str(shots / "overview.png"), full_page=True)  # type: ignore[attr-defined]


def test_search_shows_the_expected_file_with_explain_bars(page: object, shots: Path) -> None:
    page.click("nav button[data-tab=search]")  # type: ignore[attr-defined]
    page.fill("#q", "retry connection with exponential backoff")  # type: ignore[attr-defined]
    page.click("#search-form button")  # type: ignore[attr-defined]
    page.wait_for_selector("#search-results li")  # type: ignore[attr-defined]
    first = page.locator("#search-results li").first  # type: ignore[attr-defined]
    assert first.get_attribute("data-file") == "src/db.py"
    assert first.locator(".bars .bar").count() >= 3
    assert "final score" in first.inner_text()
    page.screenshot(path=str(shots / "search.png"), full_page=True)  # type: ignore[attr-defined]


def test_graph_draws_the_callers_and_opens_code_on_click(page: object, shots: Path) -> None:
    page.click("nav button[data-tab=graph]")  # type: ignore[attr-defined]
    page.fill("#gq", "dial")  # type: ignore[attr-defined]
    page.select_option("#gdepth", "2")  # type: ignore[attr-defined]
    page.click("#graph-form button")  # type: ignore[attr-defined]
    page.wait_for_function("window.__graphNodes && window.__graphNodes.includes('initialize')")  # type: ignore[attr-defined]
    labels = page.evaluate("window.__graphNodes")  # type: ignore[attr-defined]
    assert {"dial", "initialize", "main"} <= set(labels)
    assert page.locator("#graph-canvas canvas").count() >= 1  # type: ignore[attr-defined]
    page.evaluate("state.graph.nodes().filter(n => n.data('label') === 'initialize').emit('tap')")  # type: ignore[attr-defined]
    page.wait_for_function("document.querySelector('#graph-code').textContent.includes('def initialize')")  # type: ignore[attr-defined]
    page.screenshot(path=str(shots / "graph.png"), full_page=True)  # type: ignore[attr-defined]


def test_health_tab_shows_the_doctor(page: object, shots: Path) -> None:
    page.click("nav button[data-tab=health]")  # type: ignore[attr-defined]
    page.wait_for_selector("#doctor .badge")  # type: ignore[attr-defined]
    page.wait_for_selector("#untagged li")  # type: ignore[attr-defined]
    assert "Untagged note about caching" in page.inner_text("#untagged")  # type: ignore[attr-defined]
    page.screenshot(path=str(shots / "health.png"), full_page=True)  # type: ignore[attr-defined]


def test_memory_tab_lists_records_and_opens_the_supersession_chain(page: object, shots: Path) -> None:
    from monitor_support import MEMORY

    page.click("nav button[data-tab=memory]")  # type: ignore[attr-defined]
    page.wait_for_selector(f"#memory-results li[data-id='{MEMORY['trap']}']")  # type: ignore[attr-defined]
    page.click(f"#memory-results li[data-id='{MEMORY['new']}']")  # type: ignore[attr-defined]
    page.wait_for_function("document.querySelector('#memory-record').textContent.includes('Supersession')")  # type: ignore[attr-defined]
    text = page.inner_text("#memory-record")  # type: ignore[attr-defined]
    assert "Cache sessions in Redis" in text and "Cache sessions in memcached" in text
    assert "null" not in text  # absent parts are left out, not printed
    page.screenshot(path=str(shots / "memory.png"), full_page=True)  # type: ignore[attr-defined]
