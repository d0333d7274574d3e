"""`to_have_called_tool`: any call on the trajectory by default; `verified=True` only calls the harness served.

The trajectories are recorded as connectors record them: a served call through `Recorder.call_tool` on a
real toolset, a reported one through a real `Transcript` fed a `cmd:` agent's JSON line.
"""

from __future__ import annotations

import json

import pytest

from sredrill.agents.transcript import Transcript
from sredrill.errors import ExpectationFailed
from sredrill.harness import Runtime, TestContext, enter_context, exit_context
from sredrill.sdk import RunResult, expect
from sredrill.trajectory import Recorder, Trajectory
from tests.sdk.test_expect import _testdef
from tests.support.toolsets import StaticToolset


@pytest.fixture
def ctx():
    context = TestContext(test=_testdef(), runtime=Runtime(run_id="r", agent=None))
    token = enter_context(context)
    yield context
    exit_context(token)


def _result(recorder: Recorder) -> RunResult:
    return RunResult(
        trajectory=Trajectory(recorder.steps),
        output="",
        run_id="run",
        duration_ms=1.0,
        token_usage=None,
        diagnosis=None,
    )


@pytest.fixture
def reported() -> RunResult:
    """The agent says it searched the logs with its own tool; sredrill executed nothing."""
    recorder = Recorder()
    Transcript(recorder).feed(json.dumps({"kind": "tool_call", "name": "search_logs", "args": {"q": "OOM"}}))
    return _result(recorder)


@pytest.fixture
async def served() -> RunResult:
    recorder = Recorder()
    await recorder.call_tool(StaticToolset({"search_logs": ["OOM at 10:02"]}), "search_logs", {"q": "OOM"})
    return _result(recorder)


def test_by_default_a_reported_call_matches(ctx: TestContext, reported: RunResult) -> None:
    expect(reported).to_have_called_tool("search_logs")
    expect(reported).to_have_called_tool("search_logs", args={"q": "OOM"})
    assert [s.passed for s in ctx.signals] == [True, True]


def test_verified_rejects_a_call_the_harness_did_not_serve(ctx: TestContext, reported: RunResult) -> None:
    with pytest.raises(ExpectationFailed) as err:
        expect(reported).to_have_called_tool("search_logs", verified=True)
    assert str(err.value) == "expected [] to have called tool (served by the harness) 'search_logs'"
    (signal,) = ctx.signals
    assert signal.name == "to_have_called_tool" and signal.passed is False and signal.actual == []


def test_verified_accepts_a_served_call(ctx: TestContext, served: RunResult) -> None:
    expect(served).to_have_called_tool("search_logs", verified=True)
    expect(served).to_have_called_tool("search_logs", args={"q": "OOM"}, verified=True)
    expect(served.trajectory).to_have_called_tool("search_logs")
    assert all(s.passed for s in ctx.signals) and len(ctx.signals) == 3


def test_verified_with_args_still_filters_by_args(ctx: TestContext, served: RunResult) -> None:
    with pytest.raises(ExpectationFailed):
        expect(served).to_have_called_tool("search_logs", args={"q": "disk"}, verified=True)


def test_not_verified_passes_for_a_reported_only_call(ctx: TestContext, reported: RunResult) -> None:
    expect(reported).not_.to_have_called_tool("search_logs", verified=True)
    with pytest.raises(ExpectationFailed):
        expect(reported).not_.to_have_called_tool("search_logs")
    assert [s.name for s in ctx.signals] == ["not_.to_have_called_tool", "not_.to_have_called_tool"]
