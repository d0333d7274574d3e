"""Axis 2's `data_budget` gate and the cost of waiting in the efficiency score (issue 18, points 3 and 4).

Real runs of the built-in pack's scenario through the toolset: a run served every series fails the gate on
Axis 2 with a reason naming the budget and what it used; one that chose passes; Axis 1 has no such gate.
"""

from __future__ import annotations

import pytest

from sredrill.diagnosis import Diagnosis
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.evidence.budget import DataBudget
from sredrill.grading import CheckId, Grade, grade_diagnosis, score_trajectory
from sredrill.grading.trajectory_score import WAIT_COST, WAIT_HORIZON_MIN
from sredrill.scenarios import Pack, load_pack
from tests.grading.agent_output import trajectory


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack("rds_postgres")


async def _served(pack: Pack, mode: BackendMode, queries: list[str]) -> RcaToolset:
    tools = RcaToolset(pack.scenario("003-storage-full"), mode, vocabulary=pack.vocabulary)
    for name in queries:
        await tools.call("query_metrics", {"metric_name": name})
    return tools


def _grade(pack: Pack, tools: RcaToolset, axis: int, budget: DataBudget | None = None) -> Grade:
    return grade_diagnosis(
        pack.scenario("003-storage-full"),
        Diagnosis(root_cause="storage is full", failure_modes=["storage_full"]),
        trajectory("query_metrics"),
        axis=axis,
        returned_metrics=tools.returned_metrics(),
        vocabulary=pack.vocabulary,
        served=tools.served_items(),
        budget=budget,
    )


async def test_served_everything_fails_axis_2_naming_the_budget(pack: Pack) -> None:
    listed = await RcaToolset(pack.scenario("003-storage-full"), "selective").call("list_metrics", {})
    tools = await _served(pack, BackendMode.SELECTIVE, [m["metric_name"] for m in listed["metrics"]])
    used, budget = tools.points_served(), tools.data_budget
    assert budget.points < used <= budget.total  # every metric point (Performance Insights' load not read)
    check = _grade(pack, tools, axis=2).checks[CheckId.DATA_BUDGET]
    assert check.is_gate and not check.passed
    assert f"over the data budget: served {used} distinct series points; budget {budget.points}" in check.detail
    # the check sits with the other Axis 2 gates, before the observed trajectory checks
    order = list(_grade(pack, tools, axis=2).checks)
    assert order.index(CheckId.DATA_BUDGET) < order.index(CheckId.TRAJECTORY_CALIBRATION)


async def test_a_run_that_chose_passes_and_axis_1_has_no_budget_gate(pack: Pack) -> None:
    tools = await _served(pack, BackendMode.SELECTIVE, ["FreeStorageSpace", "WriteIOPS"])
    check = _grade(pack, tools, axis=2).checks[CheckId.DATA_BUDGET]
    assert check.passed and f"served {tools.points_served()} distinct series points" in check.detail
    full = await _served(pack, BackendMode.FULL, ["FreeStorageSpace"])
    assert CheckId.DATA_BUDGET not in _grade(pack, full, axis=1).checks


async def test_the_budget_given_is_the_one_held_to(pack: Pack) -> None:
    tools = await _served(pack, BackendMode.SELECTIVE, ["FreeStorageSpace"])
    used = tools.points_served()
    tight = DataBudget(points=used - 1, total=tools.data_budget.total, origin="answer key")
    assert not _grade(pack, tools, axis=2, budget=tight).checks[CheckId.DATA_BUDGET].passed
    exact = DataBudget(points=used, total=tools.data_budget.total, origin="answer key")
    assert _grade(pack, tools, axis=2, budget=exact).checks[CheckId.DATA_BUDGET].passed


@pytest.mark.parametrize(
    ("minutes", "factor"), [(0, 1.0), (10, 1 - WAIT_COST * 10 / WAIT_HORIZON_MIN), (600, 1 - WAIT_COST)]
)
def test_waiting_costs_in_the_efficiency_score(minutes: int, factor: float) -> None:
    calls = [("wait", {"minutes": minutes})] if minutes else []
    score = score_trajectory(trajectory("get_alert", *calls), optimal=(), max_loops=3)
    assert score.waited_minutes == minutes
    assert score.efficiency_score == pytest.approx(factor)


def test_only_served_waits_cost() -> None:
    reported = score_trajectory(trajectory(("wait", {"minutes": 30}), reported=True), optimal=(), max_loops=3)
    assert reported.waited_minutes == 0 and reported.efficiency_score == 1.0
