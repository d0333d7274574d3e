"""Nothing a tool returns carries the answer: not the folder name, a failure-mode identifier or the reference."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sredrill.evidence import BackendMode, RcaToolset
from sredrill.scenarios import Pack, builtin_pack_names, find_leaks, leak_needles, load_pack


async def every_result(tools: RcaToolset) -> list[Any]:
    """One call of every evidence tool, with and without arguments, and a query per listed metric."""
    results: list[Any] = [tools.alert, await tools.call("get_alert", {})]
    listed = await tools.call("list_metrics", {})
    results.append(listed)
    for name in [*sorted({m["metric_name"] for m in listed["metrics"]}), "a", "e", "DB"]:  # type: ignore[index]
        results.append(await tools.call("query_metrics", {"metric_name": name}))
    results.append(await tools.call("get_events", {}))
    results.append(await tools.call("get_performance_insights", {}))
    for dimension in ("db_load", "top_sql", "top_wait_events", "top_users", "top_hosts"):
        results.append(await tools.call("get_performance_insights", {"dimension": dimension}))
    return results


async def assert_no_leak(pack: Pack) -> int:
    checked = 0
    for scenario in pack.scenarios:
        needles = leak_needles(scenario, pack.vocabulary)
        for mode in BackendMode:
            tools = RcaToolset(scenario, mode, vocabulary=pack.vocabulary)
            text = json.dumps(await every_result(tools))
            assert find_leaks(text, needles) == [], f"{scenario.qualified_id} ({mode})"
            checked += 1
    return checked


async def test_no_tool_result_leaks_the_answer_of_the_tiny_pack(tiny_pack: Pack) -> None:
    assert await assert_no_leak(tiny_pack) == 3 * len(tiny_pack.scenarios)


async def test_without_blind_mode_the_raw_alert_does_carry_it(tiny_pack: Pack) -> None:
    scenario = tiny_pack.scenario("001-cpu-hot-query")
    tools = RcaToolset(scenario, "full", blind=False, vocabulary=tiny_pack.vocabulary)
    leaks = find_leaks(json.dumps(await tools.call("get_alert", {})), leak_needles(scenario, tiny_pack.vocabulary))
    assert "cpu_saturation" in leaks and "001-cpu-hot-query" in leaks


@pytest.mark.skipif(
    "rds_postgres" not in builtin_pack_names(),
    reason="the built-in pack rds_postgres is not in sredrill/scenarios/packs/ yet",
)
async def test_no_tool_result_leaks_the_answer_of_the_builtin_pack() -> None:
    pack = load_pack("rds_postgres")
    if not pack.scenarios:
        pytest.skip(f"no scenario of the built-in pack rds_postgres loads yet ({len(pack.broken)} broken)")
    assert await assert_no_leak(pack) == 3 * len(pack.scenarios)
