"""Every matcher: a pass, a failure with expected vs actual, `.not_`, and `expect.soft`."""

from __future__ import annotations

import pytest

from sredrill.errors import ExpectationFailed, StateError
from sredrill.results import Verdict
from sredrill.sdk import RunResult, Runtime, TestContext, expect
from sredrill.sdk.context import enter_context, exit_context
from sredrill.sdk.registry import Scope, TestDef
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
