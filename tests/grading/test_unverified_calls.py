"""Grading reads only the tool calls the harness served: a call the agent reported satisfies no check.

Trajectories are recorded the way connectors record them: served calls through `Recorder.call_tool` on a
real toolset, reported calls through a real `Transcript` fed the JSON lines a `cmd:` agent prints.
"""

from __future__ import annotations

import json

from sredrill.agents.transcript import Transcript
from sredrill.domains.rds import DOMAIN as RDS
from sredrill.grading import count_loops, count_redundant_calls, queried_sources, reported_sources, score_trajectory
from sredrill.scenarios import Pack
from sredrill.trajectory import Recorder, ToolCallStep, ToolResultStep, Trajectory, step_adapter
from tests.grading.agent_output import trajectory
from tests.grading.test_checks import ANSWER, GOOD_TRAJECTORY, good, grade
from tests.support.scenario_builder import PackWriter, only
from tests.support.toolsets import StaticToolset

TOOLS = StaticToolset({name: {"ok": True} for name in GOOD_TRAJECTORY})


def reported(*lines: dict[str, object], recorder: Recorder | None = None) -> Recorder:
    recorder = recorder or Recorder()
    transcript = Transcript(recorder)
    for line in lines:
        transcript.feed(json.dumps(line))
    return recorder


async def served(*names: str, recorder: Recorder | None = None) -> Recorder:
    recorder = recorder or Recorder()
    for name in names:
        await recorder.call_tool(TOOLS, name, {})
    return recorder


def report_calls(*names: str) -> list[dict[str, object]]:
    return [{"kind": "tool_call", "name": n, "args": {}, "call_id": f"r{i}"} for i, n in enumerate(names)] + [
        {"kind": "tool_result", "call_id": f"r{i}", "name": n, "result": {"ok": True}} for i, n in enumerate(names)
    ]


def test_reported_calls_fail_evidence_queried_and_sequencing(write_pack: PackWriter) -> None:
    pack = write_pack(**ANSWER)
    t = Trajectory(reported(*report_calls(*GOOD_TRAJECTORY)).steps)
    g = grade(pack, good(), t)
    assert not g.passed
    assert g.checks["evidence_queried"].passed is False
    assert g.checks["evidence_queried"].detail == (
        "never queried: aws_rds_events, aws_performance_insights (no successful call to get_events or "
        "get_performance_insights; the agent reported calls for aws_rds_events, aws_performance_insights "
        "that the harness never served)"
    )
    assert g.checks["trajectory_sequencing"].passed is False
    assert g.checks["trajectory_sequencing"].detail == (
        "never executed: query_grafana_metrics, query_grafana_logs (tools called: none; reported by the agent "
        "but not served: get_alert, query_metrics, get_events, get_performance_insights)"
    )
    assert g.trajectory.tool_calls == [] and g.failure_reason is not None
    assert g.failure_reason.startswith("evidence_queried:")


async def test_the_same_calls_served_pass(write_pack: PackWriter) -> None:
    pack = write_pack(**ANSWER)
    g = grade(pack, good(), Trajectory((await served(*GOOD_TRAJECTORY)).steps))
    assert g.passed, g.failure_reason
    assert g.trajectory.tool_calls == list(GOOD_TRAJECTORY)


async def test_in_a_mixed_trajectory_only_the_served_calls_count(write_pack: PackWriter) -> None:
    pack = write_pack(**ANSWER)
    recorder = await served("get_alert", "query_metrics")
    reported(*report_calls("get_events", "get_performance_insights"), recorder=recorder)
    t = Trajectory(recorder.steps)
    g = grade(pack, good(), t)
    assert g.checks["evidence_queried"].passed is False
    assert queried_sources(t, RDS) == {"alert", "aws_cloudwatch_metrics"}
    assert reported_sources(t, RDS) == {"aws_rds_events", "aws_performance_insights"}
    assert g.trajectory.tool_calls == ["get_alert", "query_metrics"]


async def test_a_reported_result_never_answers_a_served_call(write_pack: PackWriter) -> None:
    # The agent reuses the id the harness gave its real call, to attach a result of its own.
    recorder = await served("get_events")
    (call,) = Trajectory(recorder.steps).tool_calls()
    reported(
        {"kind": "tool_result", "call_id": call.call_id, "name": "get_events", "error": "made up"}, recorder=recorder
    )
    t = Trajectory(recorder.steps)
    (joined,) = t.tool_calls(verified=True)
    assert joined.error is None and joined.result == {"ok": True} and joined.verified is True
    assert queried_sources(t, RDS) == {"aws_rds_events"}


def test_a_served_call_id_reused_by_a_reported_call_is_still_unverified() -> None:
    t = trajectory("get_events")
    steps = [*t, *reported(*report_calls("get_events")).steps]
    calls = Trajectory(steps).tool_calls()
    assert [c.verified for c in calls] == [True, False]


def test_loops_and_redundant_calls_count_only_served_calls() -> None:
    fake = Trajectory(
        reported(
            {"kind": "thinking", "content": "round 1"},
            *report_calls("get_alert", "get_alert"),
            {"kind": "thinking", "content": "round 2"},
            *report_calls("get_events"),
        ).steps
    )
    assert count_loops(fake) == 1
    assert count_redundant_calls(fake) == 0
    assert count_loops(trajectory("get_alert", "think", "get_events")) == 2
    assert count_redundant_calls(trajectory("get_alert", "get_alert")) == 1


def test_a_hand_built_call_without_provenance_counts_as_not_served(write_pack: PackWriter) -> None:
    pack: Pack = write_pack(**ANSWER)
    steps = [ToolCallStep(call_id="1", name="get_events"), ToolResultStep(call_id="1", name="get_events", result={})]
    t = Trajectory(steps)
    assert t.tool_calls()[0].verified is None
    assert queried_sources(t, RDS) == frozenset()
    score = score_trajectory(t, optimal=["get_events"], max_loops=1)
    assert score.sequencing_ok is False
    # Neither served nor reported: no note about the agent's reports.
    assert t.unverified_note() is None
    assert grade(pack, good(), t).checks["evidence_queried"].passed is False
    assert only(pack).answer.required_evidence_sources


def test_the_note_counts_the_reported_calls() -> None:
    assert Trajectory(reported(*report_calls("a")).steps).unverified_note() == (
        "1 tool call the agent reported was not served by the harness"
    )
    assert Trajectory(reported(*report_calls("a", "b", "c")).steps).unverified_note() == (
        "3 tool calls the agent reported were not served by the harness"
    )
    assert trajectory("get_alert").unverified_note() is None


def test_a_stored_step_without_the_field_still_loads() -> None:
    old = {"kind": "tool_call", "t_ms": 1.0, "call_id": "call_1", "name": "get_alert", "args": {}}
    step = step_adapter.validate_python(old)
    assert step.verified is None  # type: ignore[union-attr]
    assert step_adapter.validate_python({**old, "verified": True}).verified is True  # type: ignore[union-attr]
