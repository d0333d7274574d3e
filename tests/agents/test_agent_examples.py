"""The example agents of `examples/agents/` run as their docstrings say (`make run` uses the echo agent)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from sredrill.agents import Task, resolve_agent
from sredrill.trajectory import Recorder, ThinkingStep, ToolSpec

ROOT = Path(__file__).resolve().parents[2]
TASK = Task(
    run_id="run-0001",
    prompt="Why is checkout slow?",
    tools=[ToolSpec(name="get_alert", description="the alert")],
)


@pytest.fixture(autouse=True)
def _from_the_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


async def test_echo_agent_answers_honestly_with_the_prompt() -> None:
    recorder = Recorder()
    reply = await resolve_agent("py:examples.agents.echo_agent:agent").run(TASK, recorder)
    assert "Why is checkout slow?" in reply.output
    assert "did not investigate" in reply.output
    assert reply.diagnosis is None
    assert [s.kind for s in recorder.steps] == ["response"]


async def test_script_agent_prints_thinking_then_a_response() -> None:
    recorder = Recorder()
    agent = resolve_agent(f"cmd:{shlex.quote(sys.executable)} examples/agents/script_agent.py")
    reply = await agent.run(TASK, recorder)
    assert [s.kind for s in recorder.steps] == ["thinking", "thinking", "response"]
    assert isinstance(recorder.steps[0], ThinkingStep) and "Why is checkout slow?" in recorder.steps[0].content
    assert "get_alert" in recorder.steps[1].content
    assert reply.output.startswith("script agent:")
    assert "run run-0001: starting" in reply.log


async def test_plain_agent_is_all_text() -> None:
    recorder = Recorder()
    reply = await resolve_agent("cmd:examples/agents/plain_agent.sh").run(TASK, recorder)
    assert [s.kind for s in recorder.steps] == ["assistant", "assistant", "response"]
    assert reply.output.startswith("plain agent for run run-0001: received a task of ")
    assert reply.output.endswith("I did not investigate, so I cannot name a root cause.")
