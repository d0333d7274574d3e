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


def _result(status: str, signals=(), metrics=None, reason=None, error_type=None, error_where=None) -> TestResult:
    return TestResult(
        id="t", name="t", status=TestStatus(status), signals=list(signals), metrics=metrics,
        failure_reason=reason, error_type=error_type, error_where=error_where, duration_ms=1.0,
    )  # fmt: skip


def test_insights_rank_recommendations_and_do_not_restate_the_gates() -> None:
    steps = _calls(("q", {"a": 1}, None), ("q", {"a": 1}, None), ("e", {}, "boom"))
    m = derive_metrics(Trajectory(steps), duration_ms=1.0, tokens=None)
    failed = Signal(kind=SignalKind.EXPECT, name="to_contain", role=SignalRole.GATE, passed=False,
                    message="expected 'x' to contain 'y'")  # fmt: skip
    ins = insights_for_test(_result("failed", [failed], m))
    assert ins is not None and ins.summary == "1 gate signal(s) failed"
    assert ins.why == []  # the failed gate is what every reporter lists: no `why` repeats it
    assert ins.recommendations[0].startswith("handle tool errors")  # ranked before redundancy
    assert any("redundant" in r for r in ins.recommendations)


def test_a_clean_pass_has_no_insight_and_an_unexplained_error_none_either() -> None:
    assert insights_for_test(_result("passed")) is None
    assert insights_for_test(_result("errored", reason="KeyError: 'x'", error_type="KeyError")) is None


AGENT = "the agent (agent.run())"


def test_cut_rounds_only_when_the_agent_spent_the_timeout() -> None:
    in_agent = insights_for_test(_result("errored", reason="timed out after 5s", error_type="timeout",
                                         error_where=AGENT))  # fmt: skip
    assert in_agent is not None and "cut its investigation rounds" in in_agent.recommendations[0]
    for where in ("the test body", "a before_each hook", None):
        ins = insights_for_test(_result("errored", reason="timed out after 5s", error_type="timeout",
                                        error_where=where))  # fmt: skip
        assert ins is not None and "raise the timeout" in ins.recommendations[0]
        assert not any("rounds" in r for r in ins.recommendations)
        assert "not in the agent" in ins.recommendations[0]
    # A message that merely says "timed out" (an agent's own text) is no timeout of the test.
    assert insights_for_test(_result("errored", reason="AgentError: upstream timed out", error_type="AgentError",
                                     error_where=AGENT)) is None  # fmt: skip


def test_judge_advice_only_for_a_judge_error() -> None:
    judge = insights_for_test(_result("errored", reason="JudgeError: connection refused", error_type="JudgeError",
                                      error_where="the test body"))  # fmt: skip
    assert judge is not None and "--judge-base-url" in judge.recommendations[0]
    # The word "judge" in another error (a judge that answered, then the body raised) is not a judge failure.
    body = insights_for_test(_result("errored", reason="ValueError: the judge said no", error_type="ValueError",
                                     error_where="the test body"))  # fmt: skip
    assert body is None
    failed_judge = Signal(kind=SignalKind.JUDGE, name="names the cause", role=SignalRole.GATE, passed=False,
                          message="judge: it did not", reasoning="it did not")  # fmt: skip
    verdict = insights_for_test(_result("failed", [failed_judge]))
    assert verdict is not None and not any("judge" in r for r in verdict.recommendations)


def test_no_tool_calls_when_tools_were_offered() -> None:
    m = derive_metrics(Trajectory([ResponseStep(content="guess")]), duration_ms=1.0, tokens=None)
    ins = insights_for_test(_result("failed", metrics=m), tools_offered=6)
    assert ins is not None and "without calling any of its 6 tools" in ins.recommendations[0]


def test_run_insights_roll_up_what_fails_most() -> None:
    sig = Signal(kind=SignalKind.CHECK, name="category", role=SignalRole.GATE, passed=False)
    results = [_result("failed", [sig]), _result("failed", [sig]), _result("errored", reason="boom")]
    ins = insights_for_run(results)
    assert ins is not None
    assert ins.summary == "2 failed and 1 errored of 3 results"
    assert ins.why[0] == "'category' failed in 2 test(s)"
    assert insights_for_run([_result("passed")]) is None
