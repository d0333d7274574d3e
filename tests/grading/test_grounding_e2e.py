"""Grounded grading end to end: the items a real `RcaToolset` serves (the RDS server's ids and points), graded;
temporal clipping; and `sredrill.run` with `py:` agents that cite what they were served, or something else."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import sredrill
from sredrill.evidence import RcaToolset
from sredrill.grading import grade_diagnosis
from sredrill.results import TestStatus
from sredrill.scenarios import Pack, Scenario
from tests.grading.agent_output import cite, trajectory
from tests.grading.served import CPU, DEFAULT, SQL
from tests.grading.test_checks import ANSWER, GOOD_TRAJECTORY, good
from tests.support.scenario_builder import (
    INSTANCE,
    N,
    PackWriter,
    answer,
    build_pack,
    metrics,
    only,
    scenario_yml,
    series,
)

EVERY_CALL: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get_alert", {}),
    ("list_metrics", {}),
    ("query_metrics", {"metric_name": "CPUUtilization"}),
    ("get_events", {}),
    ("get_performance_insights", {}),
)


def run_calls(scenario: Scenario, pack: Pack, mode: str, calls: Any = EVERY_CALL) -> RcaToolset:
    tools = RcaToolset(scenario, mode, vocabulary=pack.vocabulary)
    for name, args in calls:
        asyncio.run(tools.call(name, args))
    return tools


def test_the_test_items_are_the_ones_a_real_toolset_serves(write_pack: PackWriter) -> None:
    pack = write_pack(**ANSWER)
    real = run_calls(only(pack), pack, "full").served_items()
    for item_id, item in DEFAULT.items():
        assert item_id in real, (item.kind, dict(item.identity))
        assert real[item_id].points == item.points and real[item_id].source == item.source
        assert dict(real[item_id].identity) == dict(item.identity)


def test_a_diagnosis_citing_what_the_toolset_served_passes_and_one_that_did_not_fails(write_pack: PackWriter) -> None:
    pack = write_pack(**ANSWER)
    scenario = only(pack)

    def grade(tools: RcaToolset) -> Any:
        return grade_diagnosis(
            scenario, good(), trajectory(*GOOD_TRAJECTORY), axis=1, returned_metrics=(),
            vocabulary=pack.vocabulary, served=tools.served_items(),
        )  # fmt: skip

    g = grade(run_calls(scenario, pack, "full"))
    assert g.passed, g.failure_reason
    # a run that never fetched Performance Insights was never shown the statement it cites
    g = grade(run_calls(scenario, pack, "full", EVERY_CALL[:4]))
    assert f"{SQL.id} was never served in this run" in g.checks["citations"].detail


@pytest.fixture
def late_rise(tmp_path: Path) -> Pack:
    # CPU flat until 10:08, then climbing; the alert fires at the window's middle (10:07:30).
    values = [20.0] * 8 + [40.0, 60.0, 80.0, 90.0, 95.0, 97.0, 98.0]
    assert len(values) == N
    files = {"aws_cloudwatch_metrics.json": metrics(series("CPUUtilization", "Percent", values))}
    return build_pack(tmp_path / "late", {"001-late": files})


def test_a_fact_is_checked_on_the_points_served_by_then(late_rise: Pack) -> None:
    scenario = only(late_rise)
    rising = (("CPU climbs", (cite(CPU, "rising"),)),)
    first = run_calls(scenario, late_rise, "temporal", EVERY_CALL[2:3])
    full = run_calls(scenario, late_rise, "full", EVERY_CALL[2:3])
    served_then, served_all = first.served_items()[CPU.id], full.served_items()[CPU.id]
    assert len(served_then.points) < len(served_all.points)

    def citations(tools: RcaToolset) -> Any:
        d = good(claims=rising, ruled_out=())
        return grade_diagnosis(
            scenario, d, trajectory("query_metrics"), axis=1, returned_metrics=(), vocabulary=late_rise.vocabulary,
            served=tools.served_items(),
        ).checks["citations"]  # fmt: skip

    assert citations(full).passed
    early = citations(first)
    assert not early.passed and f"{CPU.id} is not rising" in early.detail
    # asked again once the clock has passed the climb, the run has been served it
    later = run_calls(scenario, late_rise, "temporal", [("wait", {"minutes": 8}), EVERY_CALL[2]])
    assert citations(later).passed


def _cpu_pack(root: Path) -> Path:
    values = [20.0, 21.0, 20.0, 22.0, 30.0, 45.0, 60.0, 75.0, 85.0, 90.0, 94.0, 96.0, 97.0, 98.0, 98.0]
    key = answer(
        root_cause_category="resource_exhaustion",
        required_keywords=["CPU"],
        failure_modes=["cpu_saturation"],
        required_evidence_sources=["aws_cloudwatch_metrics"],
        optimal_trajectory=["query_metrics"],
        location=[INSTANCE],
        decisive={"cpu_saturation": [{"metric": "CPUUtilization", "shows": ["rising"]}]},
    )
    files = {
        "scenario.yml": scenario_yml("001-cpu", failure_mode="cpu_saturation"),
        "aws_cloudwatch_metrics.json": metrics(series("CPUUtilization", "Percent", values)),
        "answer.yml": key,
    }
    build_pack(root, {"001-cpu": files})
    return root


@pytest.mark.parametrize(("agent", "status"), [("grounded", TestStatus.PASSED), ("made_up", TestStatus.FAILED)])
def test_sredrill_run_grades_citations_against_what_the_agent_was_served(
    tmp_path: Path, agent: str, status: TestStatus
) -> None:
    root = _cpu_pack(tmp_path / "cpu")
    report = sredrill.run([str(root)], agent=f"py:tests.grading.citing_agents:{agent}")
    (result,) = report.results
    assert result.status == status, result.failure_reason
    assert result.checks is not None
    if status == TestStatus.FAILED:
        assert result.failure_reason == (
            "citations: claims[0]: metric-0000000000 was never served in this run (cite ids from tool results)"
        )
    else:
        assert result.checks["decisive_evidence"].passed and result.checks["location"].passed
