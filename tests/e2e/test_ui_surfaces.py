"""The UI's surfaces in a real browser (issue 20): the live header, charts in human units, the HTML report's
links, `/docs` offline, `GET /`, no 4xx/5xx on a page load (the favicon), the session timeline, the environment
page's descriptions, soft expects marked soft, and the failure reason in the console's words.

The `browser` fixture is tests/e2e/conftest.py's (Playwright + Debian's Chromium).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest

from sredrill.agents import Task
from sredrill.server import ServerThread, create_app
from tests.e2e.conftest import Project

SLOW_AGENT = "py:tests.e2e.test_ui_surfaces:slow_agent"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


async def slow_agent(task: Task) -> str:
    """Slow enough (0.6 s a scenario) that several results arrive while the run page is watched."""
    await asyncio.sleep(0.6)
    await task.call_tool("get_alert")
    return "slow agent: I read the alert and did not investigate further."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    db = tmp_path_factory.mktemp("ui-surfaces") / "runs.db"
    with ServerThread(create_app(packs=None, db=db, allow_agents=[SLOW_AGENT])) as running:
        yield running


def auth(server: ServerThread) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.app.state.options.runs_token}"}


class Tab:
    """A browser tab logged in to the UI, recording every response that was not 2xx/3xx and script errors."""

    def __init__(self, browser: Any, server: ServerThread) -> None:
        self.context = browser.new_context(viewport={"width": 1360, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.bad: list[str] = []
        self.errors: list[str] = []
        self.page.on("response", lambda r: self.bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.goto(f"{server.url}/?token={server.app.state.options.runs_token}")


@pytest.fixture
def tab(browser: Any, server: ServerThread) -> Iterator[Tab]:
    t = Tab(browser, server)
    try:
        yield t
    finally:
        t.context.close()
    assert t.errors == [], f"script errors in the page: {t.errors}"


def _start_slow_run(server: ServerThread) -> str:
    body = {"packs": ["rds_postgres"], "agent": SLOW_AGENT}
    started = httpx.post(f"{server.url}/api/runs", json=body, timeout=60, headers=auth(server))
    assert started.status_code == 201, started.text
    return str(started.json()["run_id"])


def _wait_finished(server: ServerThread, run_id: str) -> None:
    with httpx.stream("GET", f"{server.url}/api/runs/{run_id}/events", timeout=180, headers=auth(server)) as events:
        for _ in events.iter_lines():
            pass


def test_the_live_header_and_charts_follow_each_result(tab: Tab, server: ServerThread) -> None:
    page = tab.page
    run_id = _start_slow_run(server)
    page.goto(f"{server.url}/ui/runs/{run_id}")
    # While the run still runs: the totals line counts results and the RCA card's bars have been drawn.
    page.wait_for_function(
        "(() => { const t = document.querySelector('#totals');"
        " return document.querySelector('#run-status').textContent === 'running'"
        " && Number(t.dataset.passed) + Number(t.dataset.failed) > 0"
        " && document.querySelector('#sections svg.bars') !== null; })()"
    )
    words = page.text_content("#totals-words") or ""
    counted = re.match(r"(\d+) results? · (\d+) passed · (\d+) failed · (\d+) errored", words)
    assert counted is not None, words
    assert int(counted[1]) > 0 and int(counted[2]) + int(counted[3]) > 0
    assert page.text_content("#pass-rate") != "n/a"
    _wait_finished(server, run_id)
    assert tab.bad == []


def test_charts_are_in_human_units_with_ticks_and_a_baseline(tab: Tab, server: ServerThread) -> None:
    page = tab.page
    run_id = _start_slow_run(server)
    _wait_finished(server, run_id)
    page.goto(f"{server.url}/ui/runs/{run_id}")
    page.locator("#tests tbody tr a").first.click()
    page.wait_for_url("**/tests/**")
    charts = page.locator("#evidence figure.chart")
    assert charts.count() > 3
    units = page.locator("#evidence figcaption .unit").all_text_contents()
    assert "GB" in units and "Bytes" not in units and "%" in units, units
    for i in range(charts.count()):
        chart = charts.nth(i)
        assert chart.locator("text.y-tick").count() >= 3
        assert chart.locator("text.x-tick").count() >= 3
        assert chart.locator("text.y-label").text_content() == chart.locator(".unit").text_content()
        assert chart.locator("line.baseline").count() == 1
    # Every tick label is whole: inside its chart's drawing, not cut at the left edge.
    cut = page.evaluate(
        "Array.from(document.querySelectorAll('#evidence svg.series text.tick'))"
        ".filter((t) => t.getBBox().x < 0 || t.getBBox().x + t.getBBox().width > 640.5).map((t) => t.textContent)"
    )
    assert cut == []
    assert tab.bad == []


def test_docs_work_offline(tab: Tab, server: ServerThread) -> None:
    page = tab.page
    outside: list[str] = []

    def only_loopback(route: Any) -> None:
        if urlparse(route.request.url).hostname in LOOPBACK:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_loopback)
    page.goto(f"{server.url}/docs")
    page.wait_for_selector(".opblock")
    assert page.locator(".opblock-summary-path", has_text="/reset").count() >= 1
    assert outside == []
    assert tab.bad == []


def test_root_sends_a_browser_to_the_ui_and_an_api_client_the_routes(tab: Tab, server: ServerThread) -> None:
    tab.page.goto(f"{server.url}/")
    assert tab.page.url == f"{server.url}/ui"
    answer = httpx.get(f"{server.url}/", timeout=10)
    assert answer.status_code == 200 and "GET /docs" in answer.json()["routes"]


def test_no_page_load_gets_an_error_and_the_favicon_is_served(tab: Tab, server: ServerThread) -> None:
    icons: list[int] = []
    tab.page.on("response", lambda r: icons.append(r.status) if "favicon" in r.url else None)
    for path in ("/ui", "/ui/env", "/ui/runs/nosuchrun-x"):
        tab.page.goto(f"{server.url}{path}")
    assert tab.bad == [f"404 {server.url}/ui/runs/nosuchrun-x"]  # only the page asked for a missing run
    assert tab.page.locator('link[rel="icon"]').get_attribute("href") == "/favicon.svg"
    assert httpx.get(f"{server.url}/favicon.ico", timeout=10).headers["content-type"] == "image/svg+xml"
    assert icons == [] or set(icons) == {200}


def test_the_session_page_shows_the_episode_as_a_timeline(tab: Tab, server: ServerThread) -> None:
    page = tab.page
    page.goto(f"{server.url}/ui/env")
    page.locator("#tasks .start-episode").first.click()
    page.wait_for_url("**/ui/env/sessions/*")
    page.wait_for_function("document.querySelector('#episode-summary').textContent.includes('step 0 /')")
    page.click("#step-form button[type=submit]")
    page.wait_for_selector("#episode li.episode-step")
    step = page.locator("#episode li.episode-step").first
    assert step.get_attribute("data-step") == "1"
    assert "wait" in (step.locator(".action").text_content() or "")
    assert re.fullmatch(r"-?\d+\.\d\d", step.locator(".reward").text_content() or "")
    assert "waited one step" in (step.locator(".obs").text_content() or "")
    assert not page.locator("#session-state").is_visible()  # the raw JSON is folded away
    page.wait_for_function("document.querySelector('#episode-summary').textContent.includes('step 1 /')")
    assert page.locator("#episode li.episode-step").count() == 1  # the polled state adds no twin


def test_the_environment_page_shows_a_shared_description_once(tab: Tab, server: ServerThread) -> None:
    tasks = httpx.get(f"{server.url}/tasks", timeout=10).json()["tasks"]
    incident = [t for t in tasks if t["kind"] == "incident"]
    shared = incident[0]["description"]
    assert sum(t["description"] == shared for t in incident) > 1
    tab.page.goto(f"{server.url}/ui/env")
    assert (tab.page.text_content("main") or "").count(shared) == 1
    assert tab.page.locator('#descriptions [data-kind="incident"]').count() == 1


SOFT_EVAL = """
from sredrill import test, expect

@test("soft", prompt="p")
async def _(agent):
    result = await agent.run()
    expect.soft(result.output).to_contain("missing word")
    expect(result.output).not_.to_contain("banana")

@test("fine", prompt="p")
async def _(agent):
    expect((await agent.run()).output).to_contain("echo")
"""


def test_soft_expects_are_marked_and_the_reason_is_the_consoles(browser: Any, project: Project) -> None:
    project.write("agents.py", "async def echo(task):\n    return f'echo: {task.prompt}'\n")
    project.write("soft_eval.py", SOFT_EVAL)
    report = project.root / "report.html"
    cli = project.run("test", "soft_eval.py", "--agent", "py:agents:echo", "--reporter", f"html={report}")
    assert cli.code == 1, cli.stderr
    console = project.run("runs", "show", "latest")
    gate = next(line.strip()[2:] for line in console.stdout.splitlines() if line.strip().startswith("- expect"))
    assert gate.startswith("expect to_contain (soft): ")

    with ServerThread(create_app(packs=(), db=project.db)) as server:
        t = Tab(browser, server)
        try:
            run_id = httpx.get(f"{server.url}/api/runs", timeout=10, headers=auth(server)).json()["runs"][0]["run_id"]
            t.page.goto(f"{server.url}/ui/runs/{run_id}")
            row = t.page.locator("#tests tbody tr.failed")
            assert row.locator("td.reason").text_content() == gate
            row.locator("a").click()
            t.page.wait_for_url("**/tests/**")
            assert gate in (t.page.text_content("#failure") or "")
            soft = t.page.locator('#signals tr.signal.failed[data-signal="to_contain"]')
            assert soft.locator(".badge.soft").text_content() == "soft"
            assert t.page.locator("#signals .badge.soft").count() == 1  # the hard expects are not
            assert t.errors == []
        finally:
            t.context.close()

    # The HTML report: each test that did not pass is linked from its row to its section in the file.
    page = browser.new_page()
    try:
        page.goto(report.as_uri())
        link = page.locator("#tests tbody tr.failed a")
        target = link.get_attribute("href")
        assert target is not None and target.startswith("#test-")
        link.click()
        assert page.url.endswith(target)
        section = page.locator(f"section.failure-detail[id='{target[1:]}']")
        assert "soft" in (section.text_content() or "") and gate in (section.text_content() or "")
        assert page.locator('link[rel="icon"]').get_attribute("href", timeout=5000).startswith("data:image/svg+xml")
    finally:
        page.close()


def test_the_report_file_needs_no_network(project: Project) -> None:
    """The reporter's file names no server path and no remote asset (it is opened from disk)."""
    project.write("agents.py", "async def echo(task):\n    return 'echo'\n")
    project.write("soft_eval.py", SOFT_EVAL)
    report = project.root / "report.html"
    project.run("test", "soft_eval.py", "--agent", "py:agents:echo", "--reporter", f"html={report}")
    text = Path(report).read_text()
    assert "http://" not in text and "https://" not in text and 'href="/' not in text
