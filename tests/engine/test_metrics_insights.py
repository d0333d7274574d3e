"""Derived metrics and rule-based insights, from trajectories built by hand."""

from __future__ import annotations

from sredrill.engine.insights import insights_for_run, insights_for_test
from sredrill.engine.metrics import derive_metrics, metric_signals
from sredrill.results import Signal, SignalKind, SignalRole, TestResult, TestStatus
from sredrill.trajectory import AssistantStep, ResponseStep, TokenUsage, ToolCallStep, ToolResultStep, Trajectory


def _calls(*specs: tuple[str, dict, str | None]) -> list:
    steps = []
    for i, (name, args, error) in enumerate(specs):
        steps.append(ToolCallStep(call_id=str(i), name=name, args=args))
        steps.append(ToolResultStep(call_id=str(i), name=name, result=None if error else {"ok": 1}, error=error))
    return steps


def test_metrics_count_tools_redundancy_and_ignored_errors() -> None:
    steps = _calls(
        ("query_metrics", {"metric_name": "CPUUtilization"}, None),
        ("query_metrics", {"metric_name": "CPUUtilization"}, None),
        ("get_events", {}, "bad_arguments: nope"),
    )
    m = derive_metrics(Trajectory([*steps, ResponseStep(content="done")]), duration_ms=12.0, tokens=None)
    assert m.tool_histogram == {"query_metrics": 2, "get_events": 1}
    assert (m.tool_calls, m.redundant_calls, m.tool_errors, m.ignored_tool_errors) == (3, 1, 1, 1)
    assert m.tokens is None  # unknown, not zero
    names = {s.name for s in metric_signals(m)}
    assert "total_tokens" not in names and {s.role for s in metric_signals(m)} == {SignalRole.OBSERVE}


def test_a_retried_or_acknowledged_error_is_not_ignored() -> None:
    retried = _calls(("get_events", {}, "boom"), ("get_events", {"category": "failure"}, None))
    assert derive_metrics(Trajectory(retried), duration_ms=None, tokens=None).ignored_tool_errors == 0
    said = [*_calls(("get_events", {}, "boom")), AssistantStep(content="get_events failed, moving on")]
    assert derive_metrics(Trajectory(said), duration_ms=None, tokens=None).ignored_tool_errors == 0
    usage = TokenUsage(prompt=3, completion=2, total=5)
    assert derive_metrics(Trajectory([]), duration_ms=None, tokens=usage).tokens == usage


def _result(status: str, signals=(), metrics=None, reason=None) -> TestResult:
    return TestResult(
        id="t", name="t", status=TestStatus(status), signals=list(signals), metrics=metrics,
        failure_reason=reason, duration_ms=1.0,
    )  # fmt: skip


def test_insights_explain_failures_and_rank_recommendations() -> None:
    steps = _calls(("q", {"a": 1}, None), ("q", {"a": 1}, None), ("e", {}, "boom"))
    m = derive_metrics(Trajectory(steps), duration_ms=1.0, tokens=None)
    failed = Signal(kind=SignalKind.EXPECT, name="to_contain", role=SignalRole.GATE, passed=False,
                    message="expected 'x' to contain 'y'")  # fmt: skip
    ins = insights_for_test(_result("failed", [failed], m))
    assert ins is not None and ins.why == ["expected 'x' to contain 'y'"]
    assert ins.recommendations[0].startswith("handle tool errors")  # ranked before redundancy
    assert any("redundant" in r for r in ins.recommendations)


def test_a_clean_pass_has_no_insight_and_a_timeout_says_what_to_do() -> None:
    assert insights_for_test(_result("passed")) is None
    ins = insights_for_test(_result("errored", reason="timed out after 5s"))
    assert ins is not None and "timeout" in ins.recommendations[0]
    assert insights_for_test(_result("errored", reason="KeyError: 'x'")) is None  # the message says it all


def test_no_tool_calls_when_tools_were_offered() -> None:
    m = derive_metrics(Trajectory([ResponseStep(content="guess")]), duration_ms=1.0, tokens=None)
    ins = insights_for_test(_result("failed", metrics=m), tools_offered=6)
    assert ins is not None and "without calling any of its 6 tools" in ins.recommendations[0]


def test_run_insights_roll_up_what_fails_most() -> None:
    sig = Signal(kind=SignalKind.CHECK, name="category", role=SignalRole.GATE, passed=False)
    results = [_result("failed", [sig]), _result("failed", [sig]), _result("errored", reason="boom")]
    ins = insights_for_run(results)
    assert ins is not None
    assert ins.summary == "2 failed and 1 errored of 3"
    assert ins.why[0] == "'category' failed in 2 test(s)"
    assert insights_for_run([_result("passed")]) is None
