"""Every matcher: a pass, a failure with expected vs actual, `.not_`, and `expect.soft`."""

from __future__ import annotations

import os
import sys

import pytest

from sredrill.errors import ExpectationFailed, StateError
from sredrill.harness import Runtime, Scope, TestContext, TestDef, enter_context, exit_context
from sredrill.results import Signal, SignalKind, SignalRole, Verdict
from sredrill.sdk import RunResult, expect
from sredrill.trajectory import ResponseStep, ToolCallStep, ToolResultStep, Trajectory


def _testdef() -> TestDef:
    async def body() -> None: ...

    return TestDef(
        id="t", name="t", file="f.py", line=1, describe_path=(), labels=(), timeout_s=1.0, prompt=None, context=(),
        skip_judge=False, description=None, body=body, fixtures={}, scope=Scope(name="f.py"), content_hash="h",
    )  # fmt: skip


@pytest.fixture
def ctx():
    context = TestContext(test=_testdef(), runtime=Runtime(run_id="r", agent=None))
    token = enter_context(context)
    yield context
    exit_context(token)


RESULT = RunResult(
    trajectory=Trajectory(
        [
            ToolCallStep(call_id="1", name="query_metrics", args={"metric_name": "CPUUtilization", "stat": "Average"}),
            ToolResultStep(call_id="1", name="query_metrics", result=[1, 2]),
            ResponseStep(content="cpu saturated"),
        ]
    ),
    output="cpu saturated",
    run_id="run",
    duration_ms=1500.0,
    token_usage=None,
    diagnosis=None,
)

CASES = [
    (lambda: expect(3).to_be(3), lambda: expect(3).to_be(4), "to be 4"),
    (lambda: expect({"a": 1}).to_equal({"a": 1}), lambda: expect([1]).to_equal([2]), "to equal [2]"),
    (lambda: expect("abc").to_contain("b"), lambda: expect("abc").to_contain("z"), "to contain 'z'"),
    (lambda: expect([1, 2]).to_contain(2), lambda: expect([1, 2]).to_contain(3), "to contain 3"),
    (lambda: expect("lag 900s").to_match(r"\d+s"), lambda: expect("lag").to_match(r"\d"), "to match"),
    (lambda: expect(1).to_be_less_than(2), lambda: expect(5).to_be_less_than(2), "to be less than 2"),
    (lambda: expect(3).to_be_greater_than(2), lambda: expect(1).to_be_greater_than(2), "to be greater than 2"),
    (
        lambda: expect(RESULT).to_have_called_tool("query_metrics", args={"metric_name": "CPUUtilization"}),
        lambda: expect(RESULT).to_have_called_tool("query_metrics", args={"metric_name": "ReplicaLag"}),
        "to have called tool",
    ),
    (
        lambda: expect(RESULT).to_have_steps_of_type("tool_result"),
        lambda: expect(RESULT).to_have_steps_of_type("thinking"),
        "to have steps of type 'thinking'",
    ),
    (
        lambda: expect(RESULT).to_complete_within(seconds=2),
        lambda: expect(RESULT).to_complete_within(seconds=1),
        "expected 1.5 to complete within (s) 1",
    ),
    (
        lambda: expect(Verdict(passed=True)).to_pass(),
        lambda: expect(Verdict(passed=False, reasoning="no")).to_pass(),
        "no",
    ),
]


@pytest.mark.parametrize(("ok", "bad", "phrase"), CASES)
def test_matcher_pass_and_fail(ctx: TestContext, ok, bad, phrase: str) -> None:
    ok()
    assert ctx.signals[-1].passed is True and ctx.signals[-1].message == ""
    with pytest.raises(ExpectationFailed) as info:
        bad()
    assert phrase in str(info.value)
    assert ctx.signals[-1].passed is False and phrase in ctx.signals[-1].message


def test_not_negates_and_says_so(ctx: TestContext) -> None:
    expect("abc").not_.to_contain("z")
    assert ctx.signals[-1].passed and ctx.signals[-1].name == "not_.to_contain"
    with pytest.raises(ExpectationFailed, match="to not contain 'b'"):
        expect("abc").not_.to_contain("b")


def test_soft_records_without_raising(ctx: TestContext) -> None:
    expect.soft("abc").to_contain("z")
    expect.soft("abc").to_contain("a")
    assert [(s.passed, s.soft) for s in ctx.signals] == [(False, True), (True, True)]


def test_custom_message_prefixes_the_failure(ctx: TestContext) -> None:
    with pytest.raises(ExpectationFailed, match=r"^root cause: expected"):
        expect("x", "root cause").to_equal("y")


def test_numeric_matchers_reject_non_numbers_and_bools(ctx: TestContext) -> None:
    with pytest.raises(ExpectationFailed):
        expect("3").to_be_less_than(5)
    with pytest.raises(ExpectationFailed):
        expect(True).to_be_greater_than(0)


def test_a_skipped_verdict_is_neutral_for_to_pass(ctx: TestContext) -> None:
    expect(Verdict(passed=True, skipped=True)).to_pass()
    assert ctx.signals[-1].passed


def test_expect_outside_a_test_raises_state_error() -> None:
    with pytest.raises(StateError, match="outside a test"):
        expect(1).to_be(1)


def test_long_values_are_truncated_in_messages(ctx: TestContext) -> None:
    with pytest.raises(ExpectationFailed) as info:
        expect("x" * 5000).to_contain("y")
    assert len(str(info.value)) < 400


# -- where a signal was recorded --------------------------------------------------------------------------------


def test_each_signal_says_where_it_was_recorded_and_a_failure_shows_the_source(ctx: TestContext) -> None:
    line = sys._getframe().f_lineno
    expect(1).to_be(1)
    expect.soft([1]).to_contain(2)
    passed, failed = ctx.signals
    path = os.path.relpath(__file__)
    assert passed.where == f"{path}:{line + 1}"  # a pass: the place only, no source read
    assert failed.where == f"{path}:{line + 2}: expect.soft([1]).to_contain(2)"


def test_where_is_the_users_call_even_through_a_helper_of_sredrill(ctx: TestContext) -> None:
    with pytest.raises(ExpectationFailed):
        expect(RESULT).to_have_called_tool("nope")
    assert ctx.signals[-1].where is not None and ctx.signals[-1].where.startswith(os.path.relpath(__file__))


# -- to_equal on nested data ----------------------------------------------------------------------------------


def test_to_equal_on_nested_data_shows_a_diff(ctx: TestContext) -> None:
    actual = {"service": "payments", "checks": [{"name": "db", "ok": False}, {"name": "cache", "ok": True}]}
    expected = {"service": "payments", "checks": [{"name": "db", "ok": True}, {"name": "cache", "ok": True}]}
    with pytest.raises(ExpectationFailed) as info:
        expect(actual).to_equal(expected)
    message = str(info.value)
    assert message.startswith("expected {")
    assert "--- expected\n+++ actual\n" in message
    assert '-      "ok": true\n+      "ok": false' in message
    signal = ctx.signals[-1]
    assert (signal.expected, signal.actual) == (expected, actual)  # kept as values, as before


def test_a_long_diff_is_cut(ctx: TestContext) -> None:
    with pytest.raises(ExpectationFailed) as info:
        expect([i * 2 for i in range(200)]).to_equal(list(range(200)))
    lines = str(info.value).splitlines()
    assert lines[-1].endswith("more diff lines") and len(lines) <= 43


def test_to_equal_on_scalars_and_unserializable_values_has_no_diff_and_never_crashes(ctx: TestContext) -> None:
    with pytest.raises(ExpectationFailed) as info:
        expect(3).to_equal(4)
    assert "---" not in str(info.value)

    class Unprintable:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    with pytest.raises(ExpectationFailed) as info:
        expect([Unprintable()]).to_equal([1])
    assert "list object (its repr failed)" in str(info.value)
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(ExpectationFailed, match=r"^expected '\[\[\.\.\.\]\]' to equal \[1\]"):
        expect(cycle).to_equal([1])
    with pytest.raises(ExpectationFailed) as info:
        expect({1, 2}).to_equal({1, 3})
    assert "-{1, 3}\n+{1, 2}" in str(info.value)


def test_a_negated_to_equal_has_no_diff(ctx: TestContext) -> None:
    with pytest.raises(ExpectationFailed) as info:
        expect({"a": 1}).not_.to_equal({"a": 1})
    assert "---" not in str(info.value)


# -- to_diagnose ----------------------------------------------------------------------------------------------


class FakeScenario:
    """A gradable: grading returns the checks it was built with, and remembers what it graded."""

    def __init__(self, *checks: tuple[str, str, bool, str]) -> None:
        self.checks = checks
        self.graded: list[RunResult] = []

    def grade(self, result: RunResult) -> list[Signal]:
        self.graded.append(result)
        return [
            Signal(kind=SignalKind.CHECK, name=name, role=SignalRole(role), passed=passed, message=message)
            for name, role, passed, message in self.checks
        ]


def test_to_diagnose_records_every_check_and_passes_when_every_gate_passed(ctx: TestContext) -> None:
    scenario = FakeScenario(("root_cause", "gate", True, ""), ("ruling_out", "observe", False, "not ruled out: x"))
    expect(RESULT).to_diagnose(scenario)
    assert scenario.graded == [RESULT]
    assert [(s.name, s.role, s.passed) for s in ctx.signals] == [
        ("root_cause", SignalRole.GATE, True),
        ("ruling_out", SignalRole.OBSERVE, False),
    ]
    assert all(s.kind == SignalKind.CHECK and s.where for s in ctx.signals)


def test_to_diagnose_fails_naming_each_failed_gate(ctx: TestContext) -> None:
    scenario = FakeScenario(
        ("root_cause", "gate", False, "no diagnosis"),
        ("category", "gate", False, "expected resource_exhaustion, got healthy"),
        ("evidence", "gate", True, ""),
        ("ruling_out", "observe", False, "not ruled out: x"),
    )
    with pytest.raises(ExpectationFailed) as info:
        expect(RESULT, "payments").to_diagnose(scenario)
    assert str(info.value) == (
        "payments: expected the diagnosis to pass the scenario's grading; failed gate checks: root_cause, category"
    )
    assert [s.message for s in ctx.signals[:2]] == ["no diagnosis", "expected resource_exhaustion, got healthy"]
    assert len(ctx.signals) == 4  # recorded before raising
    assert ctx.signals[0].where is not None and "to_diagnose(scenario)" in ctx.signals[0].where


def test_soft_to_diagnose_records_the_failed_gates_and_goes_on(ctx: TestContext) -> None:
    expect.soft(RESULT).to_diagnose(FakeScenario(("root_cause", "gate", False, "no diagnosis")))
    (signal,) = ctx.signals
    assert (signal.passed, signal.soft, signal.role) == (False, True, SignalRole.GATE)


def test_to_diagnose_rejects_a_negation_a_non_result_and_a_bad_grade(ctx: TestContext) -> None:
    scenario = FakeScenario(("root_cause", "gate", True, ""))
    with pytest.raises(TypeError, match=r"not_\.to_diagnose\(scenario\) has no meaning: a grade cannot be negated"):
        expect(RESULT).not_.to_diagnose(scenario)
    with pytest.raises(TypeError, match=r"to_diagnose needs the RunResult of agent\.run\(\), got str"):
        expect("text").to_diagnose(scenario)

    class Broken:
        def grade(self, result: RunResult) -> object:
            return {"root_cause": True}

    with pytest.raises(TypeError, match=r"Broken.grade\(\) must return a list of Signals, got dict"):
        expect(RESULT).to_diagnose(Broken())  # type: ignore[arg-type]
    assert ctx.signals == []
