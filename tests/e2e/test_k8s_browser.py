"""Kubernetes scenarios in the web UI, in a real browser (issue 15, item 7): start a run of a K8s pack with a
built-in agent from the UI, watch it finish, open a result and find the domain's evidence views (pods, events,
deployments, nodes, the pod log, Datadog logs and monitors); the environment page lists the K8s tasks under
opaque ids, and an episode of one inspects the pods.

The pack is the test fixture in the upstream EKS layout (`tests/fixtures/k8s_env`), given to the server as a
folder. Chromium from the `browser` fixture of `conftest.py` (skips loudly without it, unless
`SREDRILL_REQUIRE_BROWSER=1`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sredrill.env import RcaTask
from sredrill.scenarios import load_pack
from sredrill.server import ServerThread, create_app

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "k8s_env"
PACK = load_pack(FIXTURE)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    db = tmp_path_factory.mktemp("k8s-ui") / "runs.db"
    with ServerThread(create_app(packs=[str(FIXTURE)], db=db)) as running:
        yield running


@pytest.fixture
def page(browser: Any, server: ServerThread) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(60_000)
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(f"{server.url}/?token={server.app.state.options.runs_token}")
    try:
        yield tab
    finally:
        context.close()
    assert errors == [], f"script errors in the page: {errors}"


def test_run_a_k8s_pack_from_the_ui_and_read_a_result_s_evidence(page: Any, server: ServerThread) -> None:
    page.goto(f"{server.url}/ui")
    page.select_option("#start-run select[name=pack]", str(FIXTURE))
    page.fill("#start-run input[name=agent]", "reference")
    page.check("#start-run input[name=axis2]")
    page.click("#start-run button[type=submit]")
    page.wait_for_url("**/ui/runs/*")
    page.wait_for_function(
        "document.querySelector('#run-status').textContent === 'finished' "
        "&& document.querySelector('#progress').dataset.live === 'false'"
    )
    assert page.locator("#tests tbody tr").count() == 2 * len(PACK.scenarios)
    assert page.locator("#tests tbody tr.errored").count() == 0

    scenario = PACK.scenario("001-cart-memory-limit")
    page.locator("#tests tbody tr a", has_text=f"k8s_env/{scenario.folder}#2").click()
    page.wait_for_url("**/tests/**")
    evidence = page.locator("#evidence")
    headings = evidence.locator("h3").all_text_contents()
    for title in ("Pods", "Kubernetes events", "Deployments", "Nodes", "Datadog logs", "Datadog monitors"):
        assert title in headings, headings
    assert any(h.startswith("Pod log") for h in headings), headings
    pods = evidence.locator("table.evidence").first.text_content()
    assert all(p.name in pods for p in scenario.pods) and "OOMKilled" in pods
    assert evidence.locator("svg.timeline-svg circle.dot").count() == len(scenario.k8s_events)
    assert "Memory cgroup out of memory" in evidence.locator("pre").first.text_content()
    assert page.locator("#trajectory li.tool_call").count() > 0


def test_the_environment_lists_k8s_tasks_and_an_episode_inspects_the_pods(page: Any, server: ServerThread) -> None:
    ids = {RcaTask.of(PACK, s).task_id: s for s in PACK.scenarios}
    page.goto(f"{server.url}/ui/env")
    listed = page.locator("#tasks tbody tr")
    rows = [listed.nth(i).text_content() for i in range(listed.count())]
    mine = [r for r in rows if any(task_id in r for task_id in ids)]
    assert len(mine) == len(ids)
    # Each task's description ends with the pack's published vocabulary (every mode): one text for every task,
    # shown once above the table (the env page says a description its tasks share once), and no row names a
    # scenario.
    cells = [listed.nth(i).locator("td").nth(4).text_content() for i in range(listed.count())]
    own = {c for r, c in zip(rows, cells, strict=True) if r in mine}
    shared = page.locator('#descriptions .shared-description[data-kind="rca"]')
    descriptions = {shared.text_content().removeprefix("rca: ") if c == "as above" else c for c in own}
    assert len(descriptions) == 1
    text = next(iter(descriptions))
    assert "Kubernetes" in text and all(mode in text for mode in PACK.vocabulary.modes)
    assert not [folder for r in mine for folder in (s.folder for s in PACK.scenarios) if folder in r]

    task_id, scenario = next(iter(ids.items()))
    page.locator(f'#tasks .start-episode[data-task="{task_id}"]').click()
    page.wait_for_url("**/ui/env/sessions/*")
    page.wait_for_function("document.querySelector('#session-state').textContent.includes('step')")
    page.fill("#step-form input[name=action]", json.dumps({"action_type": "inspect_logs", "target": "pods"}))
    page.click("#step-form button[type=submit]")
    page.wait_for_function("document.querySelector('#observation').textContent.includes('\"pods\"')")
    assert page.text_content("#step-error") == ""
    shown = json.loads(page.text_content("#observation"))
    assert [p["name"] for p in shown["observation"]["inspection"]["evidence"]["pods"]] == [
        p.name for p in scenario.pods
    ]
