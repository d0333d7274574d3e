"""Tokens and cost end to end: an `openai:` agent on a local OpenAI-compatible server that reports usage, priced
by `--prices FILE` on the console, in the JSON report, in the store (`runs show --prices`)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from sredrill.server import ServerThread, create_app
from sredrill.store import Store
from tests.support.openai_server import OpenAIStub, StubReply, chat_completion, tool_call

from .conftest import Cli, Project

EVAL = """
from sredrill import test, expect

@test("spends tokens", prompt="Why is the database slow?")
async def _(agent):
    result = await agent.run(tools={"lookup": lookup})
    expect(result.output).to_contain("saturated")

async def lookup(metric_name):
    \"\"\"Look a metric up.\"\"\"
    return {"metric_name": metric_name, "values": [1, 2, 3]}
"""

PRICES = """
currency = "USD"

[models."stub-model"]
input = 2.0
output = 10.0
cached_input = 1.0
"""


def _with_cached(reply: StubReply, prompt: int, completion: int, cached: int) -> StubReply:
    """The reply with OpenAI's usage, `prompt_tokens_details.cached_tokens` included."""
    body: dict[str, Any] = dict(reply.body)  # type: ignore[arg-type]
    body["usage"] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    return StubReply(body=body)


def _replies() -> list[StubReply]:
    return [
        _with_cached(
            chat_completion(tool_calls=[tool_call("lookup", {"metric_name": "CPUUtilization"})]), 800, 20, 300
        ),
        chat_completion("CPU is saturated by a bad query.", usage=(400, 10)),
    ]


def _run(project: Project, *extra: str, model: str = "stub-model") -> tuple[Cli, int]:
    project.write("cost_eval.py", EVAL)
    with OpenAIStub(_replies()) as stub:
        cli = project.run(
            "test", "cost_eval.py", "--agent", f"openai:{model}", "--base-url", stub.base_url, *extra,
            env={"OPENAI_API_KEY": "sk-test"},
        )  # fmt: skip
        return cli, len(stub.requests)


# 800 + 400 in (300 of them cached), 20 + 10 out: (900 × 2.0 + 300 × 1.0 + 30 × 10.0) / 1e6
COST = (900 * 2.0 + 300 * 1.0 + 30 * 10.0) / 1_000_000


def test_a_priced_run_carries_each_results_tokens_and_cost_and_the_runs(project: Project) -> None:
    project.write("prices.toml", PRICES)
    cli, calls = _run(project, "--prices", "prices.toml", "--json")
    assert calls == 2 and cli.code == 0, cli.stderr
    usage = cli.result("spends tokens")["usage"]
    # Counted once: the two `chat` spans, not again the agent span's total nor the agent's reported usage.
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (1200, 30, 1230)
    assert usage["cached_input_tokens"] == 300
    assert usage["currency"] == "USD" and usage["cost"] == pytest.approx(COST)
    assert [m["model"] for m in usage["by_model"]] == ["stub-model"]
    assert usage["unpriced_tokens"] == 0 and usage["unpriced_models"] == []
    summary = cli.report()["summary"]
    assert summary["usage"]["total_tokens"] == 1230 and summary["usage"]["cost"] == pytest.approx(COST)
    assert summary["usage_results"] == 1
    assert "warning" not in cli.stderr

    # The store kept them: `runs show` prints the same, and the console's summary line says it.
    shown = project.run("runs", "show", "latest", "--json")
    assert shown.report()["summary"]["usage"]["cost"] == pytest.approx(COST)
    console = project.run("runs", "show", "latest")
    assert "tokens: 1,230 tokens (1,200 in, 300 of them cached; 30 out) · cost: 0.0024 USD" in console.stdout


def test_a_stored_run_is_priced_after_the_fact(project: Project) -> None:
    cli, _ = _run(project, "--json")
    assert cli.code == 0, cli.stderr
    unpriced = cli.result("spends tokens")["usage"]
    assert unpriced["total_tokens"] == 1230 and unpriced["cost"] is None and unpriced["currency"] is None
    project.write("prices.json", json.dumps({"currency": "EUR", "models": {"stub-model": {"input": 2, "output": 10}}}))
    shown = project.run("runs", "show", "latest", "--json", "--prices", "prices.json")
    assert shown.code == 0, shown.stderr
    report = shown.report()
    # No cached price: cached input tokens cost the input price.
    assert report["results"][0]["usage"]["cost"] == pytest.approx((1200 * 2 + 30 * 10) / 1_000_000)
    assert report["summary"]["usage"]["currency"] == "EUR"


def test_a_model_without_a_price_has_an_unknown_cost_and_a_warning(project: Project) -> None:
    project.write("prices.toml", PRICES)
    cli, _ = _run(project, "--prices", "prices.toml", model="other-model")
    assert cli.code == 0, cli.stderr
    assert "warning: no price for model 'other-model' (1230 token(s))" in cli.stderr
    assert 'add [models."other-model"]' in cli.stderr and "prices.toml" in cli.stderr
    assert "cost: unknown for 1,230 tokens (other-model: no price)" in cli.stdout
    usage = json.loads(project.run("runs", "show", "latest", "--json").stdout)["summary"]["usage"]
    assert usage["cost"] is None and usage["unpriced_models"] == ["other-model"] and usage["unpriced_tokens"] == 1230


@pytest.mark.parametrize(
    ("text", "name", "said"),
    [
        ('currency = "USD"\n[models."m"]\ninput = -1\noutput = 1\n', "prices.toml", 'models."m".input'),
        ('currency = "USD"\n[models."m"]\ninput = 1\n', "prices.toml", 'models."m".output is missing'),
        ('currency = "USD"\n[models."m"]\ninput = 1\noutput = 1\ncache = 1\n', "prices.toml", "is not a known key"),
        ('[models."m"]\ninput = 1\noutput = 1\n', "prices.toml", "currency is missing"),
        ("currency = [", "prices.toml", "not valid TOML"),
        ('{"currency": "USD",', "prices.json", "not valid JSON"),
    ],
)
def test_a_malformed_prices_file_is_a_usage_error_before_the_run(
    project: Project, text: str, name: str, said: str
) -> None:
    project.write(name, text)
    cli, calls = _run(project, "--prices", name)
    assert cli.code == 2, cli.stdout + cli.stderr
    assert cli.stderr.startswith(f"error: {name}") and said in cli.stderr, cli.stderr
    assert "Traceback" not in cli.stderr
    assert calls == 0  # nothing ran, and no run was stored
    assert Store(str(project.db)).list_runs(10) == []


def test_a_missing_prices_file_is_a_usage_error(project: Project) -> None:
    cli = project.run("runs", "show", "latest", "--prices", "nowhere.toml")
    assert cli.code == 2 and "error: nowhere.toml: cannot read the prices file" in cli.stderr, cli.stderr


def test_prices_from_the_config_file(project: Project) -> None:
    project.write("prices.toml", PRICES)
    project.write("sredrill.toml", 'prices = "prices.toml"\n')
    cli, _ = _run(project, "--json")
    assert cli.code == 0, cli.stderr
    assert cli.report()["summary"]["usage"]["cost"] == pytest.approx(COST)


def test_the_run_page_and_the_test_page_show_the_tokens_and_the_cost(project: Project, browser: Any) -> None:
    project.write("prices.toml", PRICES)
    cli, _ = _run(project, "--prices", "prices.toml", "--json")
    assert cli.code == 0, cli.stderr
    run_id = cli.report()["run_id"]
    with ServerThread(create_app(packs=None, db=project.db)) as server:
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(60_000)
        try:
            page.goto(f"{server.url}/?token={server.app.state.options.runs_token}")
            page.goto(f"{server.url}/ui/runs/{run_id}")
            line = page.locator("#usage")
            assert line.get_attribute("data-total-tokens") == "1230"
            assert float(line.get_attribute("data-cost") or "nan") == pytest.approx(COST)
            assert "cost: 0.0024 USD" in line.text_content()
            page.click("#tests a:text('spends tokens')")
            page.wait_for_selector("#usage-card")
            card = page.text_content("#usage-card") or ""
            assert "1,230 tokens (1,200 in, 300 of them cached; 30 out)" in card
            rows = page.locator("#usage-card tbody tr")
            assert rows.count() == 1
            assert rows.first.locator("td").all_text_contents() == [
                "stub-model",
                "1,200",
                "300",
                "30",
                "1,230",
                "0.0024 USD",
            ]
        finally:
            context.close()


def test_compare_shows_the_tokens_and_cost_of_a_and_b_and_the_change(project: Project) -> None:
    first, _ = _run(project, "--json")
    second, _ = _run(project, "--json", model="stub-model-2")
    assert first.code == 0 and second.code == 0, first.stderr + second.stderr
    run_a, run_b = first.report()["run_id"], second.report()["run_id"]
    # Neither run was priced: the tokens compare, the cost is priced after the fact.
    project.write("prices.toml", PRICES + '\n[models."stub-model-2"]\ninput = 4.0\noutput = 20.0\n')
    cli = project.run("runs", "compare", run_a, run_b, "--json", "--prices", "prices.toml")
    assert cli.code == 0, cli.stderr
    usage = json.loads(cli.stdout)["usage"]
    assert usage["usage_a"]["total_tokens"] == usage["usage_b"]["total_tokens"] == 1230
    assert usage["total_tokens_change"] == 0
    cost_b = (1200 * 4.0 + 30 * 20.0) / 1_000_000  # no cached price: cached tokens cost the input price
    assert usage["usage_b"]["cost"] == pytest.approx(cost_b)
    assert usage["cost_change"] == pytest.approx(cost_b - COST)
    text = project.run("runs", "compare", run_a, run_b, "--prices", "prices.toml").stdout
    assert "tokens: 1,230 → 1,230 (+0) · cost: 0.0024 USD → 0.0054 USD (+0.003 USD)" in text, text
    # Without prices, the tokens alone; a model missing from the prices: B's cost is unknown, no change given.
    assert "tokens: 1,230 → 1,230 (+0)\n" in project.run("runs", "compare", run_a, run_b).stdout
    project.write("only_a.toml", PRICES)
    partial = project.run("runs", "compare", run_a, run_b, "--json", "--prices", "only_a.toml")
    assert json.loads(partial.stdout)["usage"]["cost_change"] is None
    assert "warning: no price for model 'stub-model-2'" in partial.stderr
    with ServerThread(create_app(packs=None, db=project.db)) as server:
        token = server.app.state.options.runs_token
        page = httpx.get(f"{server.url}/ui/compare", params={"a": run_a, "b": run_b},
                         headers={"Authorization": f"Bearer {token}"})  # fmt: skip
        assert page.status_code == 200, page.text[:500]
        assert 'id="usage-change" data-tokens-change="0"' in page.text and "tokens: 1,230 → 1,230 (+0)" in page.text


def test_a_server_with_prices_prices_every_run_it_shows(project: Project) -> None:
    """`serve --prices FILE` (create_app's `prices`): an unpriced stored run has its cost in the runs list, the
    run's report, one result, compare, and on the run, test and compare pages, as `runs show --prices` gives it."""
    first, _ = _run(project, "--json")
    second, _ = _run(project, "--json")
    assert first.code == 0 and second.code == 0, first.stderr + second.stderr
    run_a, run_b = first.report()["run_id"], second.report()["run_id"]
    project.write("prices.toml", PRICES)
    shown = project.run("runs", "show", run_a, "--json", "--prices", "prices.toml").report()
    with ServerThread(create_app(packs=None, db=project.db, prices=project.root / "prices.toml")) as server:
        token = server.app.state.options.runs_token
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}) as http:
            listed = {r["run_id"]: r for r in http.get("/api/runs").json()["runs"]}
            assert listed[run_a]["summary"]["usage"]["cost"] == pytest.approx(COST)
            report = http.get(f"/api/runs/{run_a}").json()["report"]
            assert report["summary"]["usage"] == shown["summary"]["usage"]
            assert report["results"][0]["usage"]["cost"] == pytest.approx(COST)
            test_id = report["results"][0]["id"]
            one = http.get(f"/api/runs/{run_a}/results/{test_id}").json()["result"]
            assert one["usage"]["cost"] == pytest.approx(COST) and one["usage"]["currency"] == "USD"
            compared = http.get("/api/compare", params={"a": run_a, "b": run_b}).json()["usage"]
            assert compared["usage_a"]["cost"] == pytest.approx(COST) and compared["cost_change"] == 0
            assert "cost: 0.0024 USD" in http.get(f"/ui/runs/{run_a}").text
            assert "0.0024 USD" in http.get(f"/ui/runs/{run_a}/tests/{test_id}").text
            cmp_page = http.get("/ui/compare", params={"a": run_a, "b": run_b}).text
            assert "cost: 0.0024 USD → 0.0024 USD" in cmp_page
    # Without prices the same server shows the stored (unknown) cost.
    with ServerThread(create_app(packs=None, db=project.db)) as server:
        token = server.app.state.options.runs_token
        report = httpx.get(f"{server.url}/api/runs/{run_a}", headers={"Authorization": f"Bearer {token}"}).json()
        assert report["report"]["summary"]["usage"]["cost"] is None


def test_serve_with_a_bad_prices_file_is_a_usage_error_before_it_listens(project: Project) -> None:
    project.write("prices.toml", 'currency = "USD"\n[models."m"]\ninput = 1\n')
    cli = project.run("serve", "--port", "0", "--prices", "prices.toml")
    assert cli.code == 2 and "error: prices.toml" in cli.stderr and 'models."m".output is missing' in cli.stderr
    assert "listening" not in cli.stderr and "Traceback" not in cli.stderr
    cli = project.run("serve", "--port", "0", "--prices", "nowhere.toml")
    assert cli.code == 2 and "error: nowhere.toml: cannot read the prices file" in cli.stderr, cli.stderr
