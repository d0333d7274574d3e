"""The trajectory score: loops, redundant calls, sequencing over the original suite's action names."""

from __future__ import annotations

import pytest

from sredrill.domains.rds import DOMAIN as RDS
from sredrill.grading import count_loops, count_redundant_calls, score_trajectory
from sredrill.trajectory import AssistantStep, Trajectory
from tests.grading.agent_output import trajectory


@pytest.mark.parametrize(
    ("items", "loops"),
    [
        ((), 1),
        (("get_alert", "query_metrics"), 1),
        (("think", "get_alert", "query_metrics"), 1),
        (("think", "get_alert", "think", "query_metrics", "get_events"), 2),
        (("get_alert", "think", "query_metrics", "think", "get_events", "think"), 3),
        (("think", "think", "get_alert"), 1),
        (("think", "get_alert", "think", "submit_diagnosis"), 1),
        (("think", "think"), 1),
    ],
)
def test_count_loops_counts_thinking_separated_rounds_that_investigated(items: tuple[str, ...], loops: int) -> None:
    assert count_loops(trajectory(*items)) == loops


def test_an_agent_with_only_text_has_one_round() -> None:
    assert count_loops(Trajectory([AssistantStep(content="it is the disk")])) == 1


def test_redundant_calls_are_identical_name_and_args_beyond_the_first() -> None:
    t = trajectory(
        ("query_metrics", {"metric_name": "CPUUtilization"}),
        ("query_metrics", {"metric_name": "CPUUtilization"}),
        ("query_metrics", {"metric_name": "FreeStorageSpace"}),
        "get_events",
        "get_events",
        "get_events",
    )
    assert count_redundant_calls(t) == 3


def test_sequencing_maps_the_original_action_names_to_tools() -> None:
    t = trajectory("get_alert", "query_metrics", "get_performance_insights")
    score = score_trajectory(
        t,
        optimal=["query_grafana_metrics", "query_grafana_logs", "query_grafana_alert_rules"],
        max_loops=4,
        legacy=RDS.legacy_actions,
    )
    assert score.sequencing_ok is True
    assert score.missing_actions == ()


def test_sequencing_fails_with_the_actions_never_executed() -> None:
    score = score_trajectory(
        trajectory("query_metrics"), optimal=["query_grafana_logs", "get_alert"], max_loops=4, legacy=RDS.legacy_actions
    )
    assert score.sequencing_ok is False
    assert score.missing_actions == ("query_grafana_logs", "get_alert")


def test_sequencing_ignores_order() -> None:
    score = score_trajectory(trajectory("get_events", "get_alert"), optimal=["get_alert", "get_events"], max_loops=1)
    assert score.sequencing_ok is True


def test_no_optimal_trajectory_means_no_sequencing_and_efficiency_is_calibration_alone() -> None:
    score = score_trajectory(trajectory("get_alert"), optimal=[], max_loops=1)
    assert score.sequencing_ok is None
    assert score.efficiency_score == 1.0


def test_calibration_and_efficiency() -> None:
    t = trajectory("think", "get_alert", "think", "query_metrics")
    score = score_trajectory(t, optimal=["get_alert", "get_events"], max_loops=1)
    assert (score.loops, score.calibration_ok, score.sequencing_ok, score.efficiency_score) == (2, False, False, 0.0)
    assert score_trajectory(t, optimal=["get_alert"], max_loops=2).efficiency_score == 1.0
    assert score_trajectory(t, optimal=["get_alert"], max_loops=1).efficiency_score == 0.5


def test_loops_reported_by_the_connector_win() -> None:
    t = trajectory("think", "get_alert", "think", "query_metrics")
    assert score_trajectory(t, optimal=[], max_loops=1, loops=1).loops == 1
