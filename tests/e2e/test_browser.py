"""The web UI in a real browser: Playwright's Python package driving Debian's Chromium (DESIGN §10).

Start a run from the UI and watch its live progress reach the end; open a failed test and find its failed
check, trajectory and evidence chart; compare two runs; start an episode and watch its session.

The `browser` fixture is tests/e2e/conftest.py's: without Chromium (or Playwright) these tests skip loudly,
unless `SREDRILL_REQUIRE_BROWSER=1` (`.ci/run` sets it), which makes a missing browser a failure.
`SREDRILL_SCREENSHOTS=docs` writes the pages' screenshots into `docs/` (how `docs/ui-*.png` are made); otherwise
they go to a temporary folder.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sredrill.agents import Task
from sredrill.server import ServerThread, create_app

SLOW_AGENT = "py:tests.e2e.test_browser:slow_agent"
ROOT = Path(__file__).resolve().parents[2]


async def slow_agent(task: Task) -> str:
    """Reads the alert, then gives up: slow enough (a quarter second) for the progress to be watched live."""
    await asyncio.sleep(0.25)
    await task.call_tool("get_alert")
    return "slow agent: I read the alert and did not investigate further."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    db = tmp_path_factory.mktemp("ui") / "runs.db"
    # The slow agent is a `py:` spec: the runs API starts it only because the server allows it.
    with ServerThread(create_app(packs=None, db=db, allow_agents=[SLOW_AGENT])) as running:
        yield running


def auth(server: ServerThread) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.app.state.options.runs_token}"}


@pytest.fixture
def page(browser: Any, server: ServerThread) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(60_000)
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    # What a user does first: open the link `sredrill serve` printed, which keeps the token in a cookie.
    tab.goto(f"{server.url}/?token={server.app.state.options.runs_token}")
    assert tab.url == f"{server.url}/ui"
    try:
        yield tab
    finally:
        context.close()
    assert errors == [], f"script errors in the page: {errors}"


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = os.environ.get("SREDRILL_SCREENSHOTS")
    return ROOT / target if target else tmp_path_factory.mktemp("screenshots")


def test_start_a_run_watch_it_live_and_open_a_failed_test(page: Any, server: ServerThread, shots: Path) -> None:
    page.goto(f"{server.url}/ui")
    page.select_option("#start-run select[name=pack]", "rds_postgres")
    page.fill("#start-run input[name=agent]", SLOW_AGENT)
    page.check("#start-run input[name=axis2]")
    page.fill("#start-run input[name=jobs]", "2")
    page.click("#start-run button[type=submit]")
    page.wait_for_url("**/ui/runs/*")

    # Live: the progress counts up over the Server-Sent Events, before the run ends.
    page.wait_for_function("document.querySelector('#progress-text').textContent.includes(' / 36 results')")
    assert page.text_content("#run-status") in ("running", "starting")
    page.wait_for_function("document.querySelectorAll('#tests tbody tr').length > 0")
    # The end: the page reloads in its final form (bars, gap, every row).
    page.wait_for_function(
        "document.querySelector('#run-status').textContent === 'finished' "
        "&& document.querySelector('#progress').dataset.live === 'false'"
    )
    assert page.locator("#tests tbody tr").count() == 36
    assert page.locator("svg.bars rect.a2").count() > 0
    assert "gap" in page.text_content(".summary")
    # Each difficulty's label (and its gap, on a line below) stays clear of its neighbours'.
    overlaps = page.evaluate(
        "(() => { const b = Array.from(document.querySelectorAll('svg.bars text.x-tick')).map((t) => t.getBBox());"
        " return b.slice(1).filter((box, i) => box.x < b[i].x + b[i].width).length; })()"
    )
    assert page.locator("svg.bars text.x-tick").count() == 4 and overlaps == 0

    row = page.locator("#tests tbody tr.failed").first
    reason = row.locator("td.reason .check").get_attribute("data-check")
    assert reason is not None
    row.locator("a").click()
    page.wait_for_url("**/tests/**")
    assert reason in page.text_content("#failure")
    failed = page.locator(f'#signals tr.signal.failed[data-signal="{reason}"]')
    assert failed.count() == 1
    assert page.locator("#trajectory li.tool_call").first.text_content().count("get_alert") == 1
    assert page.locator("#trajectory li.response").count() == 1
    assert page.locator("#evidence svg.series").count() > 0
    assert page.locator("#evidence svg line.alert").count() > 0
    assert page.locator("#metrics").is_visible()
    page.screenshot(path=str(shots / "ui-test.png"), full_page=True)


def test_compare_two_runs(page: Any, server: ServerThread, shots: Path) -> None:
    ids = []
    for agent in ("reference", "keyword"):
        body = {"packs": ["rds_postgres"], "agent": agent, "axis2": True}
        started = httpx.post(f"{server.url}/api/runs", json=body, timeout=60, headers=auth(server))
        assert started.status_code == 201, started.text
        ids.append(started.json()["run_id"])
        with httpx.stream(
            "GET", f"{server.url}/api/runs/{ids[-1]}/events", timeout=120, headers=auth(server)
        ) as events:
            for _ in events.iter_lines():
                pass
    page.goto(f"{server.url}/ui")
    page.check(f'tr[data-run-id="{ids[0]}"] input[name=a]')
    page.check(f'tr[data-run-id="{ids[1]}"] input[name=b]')
    page.screenshot(path=str(shots / "ui-runs.png"), full_page=False)
    page.click("#compare-button")
    page.wait_for_url("**/ui/compare?*")
    assert page.locator("#compare-table tr.changed").count() > 0
    assert "regressed" in page.text_content("#directions")
    assert "McNemar" in page.text_content("#paired") and "95% CI" in page.text_content("main")
    # Regressions come first, and each row links to the test's page in both runs.
    first = page.locator("#compare-table tbody tr").first
    assert first.get_attribute("data-direction") == "regressed"
    test_id = first.get_attribute("data-test-id")
    first.locator("a", has_text="B").click()
    page.wait_for_url(f"**/ui/runs/{ids[1]}/tests/**")
    assert test_id is not None and test_id in page.text_content("main")
    page.go_back()
    page.locator("#compare-table tbody tr").first.locator("a", has_text="A").click()
    page.wait_for_url(f"**/ui/runs/{ids[0]}/tests/**")
    page.goto(f"{server.url}/ui/runs/{ids[0]}")
    assert page.text_content("#run-status") == "finished"
    assert page.text_content("#pass-rate-ci").startswith("(95% CI ")
    page.screenshot(path=str(shots / "ui-run.png"), full_page=False)


def test_watch_a_session_of_the_environment(page: Any, server: ServerThread) -> None:
    page.goto(f"{server.url}/ui/env")
    page.locator("#tasks .start-episode").first.click()
    page.wait_for_url("**/ui/env/sessions/*")
    page.wait_for_function("document.querySelector('#session-state').textContent.includes('step')")
    page.click("#step-form button[type=submit]")
    page.wait_for_function("document.querySelector('#observation').textContent.includes('observation')")
    assert page.text_content("#step-error") == ""
