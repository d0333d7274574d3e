"""The connector contract (STYLE #27): every connector passes the same cases.

Each case runs one behaviour of `tests/support/sample_agents.py` (py:) or `sample_agent_cmd.py` (cmd:).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from sredrill.agents import Agent, AgentReply, Task, resolve_agent
from sredrill.errors import AgentError
from sredrill.trajectory import Recorder, ResponseStep
from tests.support.processes import is_running, wait_until

SUPPORT = Path(__file__).resolve().parents[1] / "support"


@dataclass(frozen=True)
class Connector:
    name: str
    make: Callable[[str], Agent]
    """Builds the agent for one behaviour of the sample agents."""
    is_stopped: Callable[[Path], bool]
    """Reads the `hang` behaviour's marker file: has the agent (and all it started) stopped?"""


def _py_stopped(marker: Path) -> bool:
    # Cancelled in process (inside a worker), or its agent worker killed (DESIGN §11.3).
    text = marker.read_text()
    return text == "stopped" or not is_running(int(text.split()[1]))


def _cmd_stopped(marker: Path) -> bool:
    pids = json.loads(marker.read_text())
    return not is_running(pids["pid"]) and not is_running(pids["child"])


CONNECTORS = [
    Connector("py", lambda b: resolve_agent(f"py:tests.support.sample_agents:{b}"), _py_stopped),
    Connector(
        "cmd",
        lambda b: resolve_agent(
            f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(SUPPORT / 'sample_agent_cmd.py'))} {b}"
        ),
        _cmd_stopped,
    ),
]


@pytest.fixture(params=CONNECTORS, ids=lambda c: c.name)
def connector(request: pytest.FixtureRequest) -> Connector:
    return request.param


def _task(**env: str) -> Task:
    return Task(run_id="run-0001", prompt="Why is checkout slow?", env=env)


async def test_it_is_an_agent_with_its_spec(connector: Connector) -> None:
    agent = connector.make("answer")
    assert isinstance(agent, Agent)
    assert agent.spec.startswith(f"{connector.name}:")


async def test_it_returns_the_answer_and_records_a_response(connector: Connector) -> None:
    recorder = Recorder()
    reply = await connector.make("answer").run(_task(), recorder)
    assert isinstance(reply, AgentReply)
    assert reply.output == "answer: Why is checkout slow?"
    assert isinstance(recorder.steps[-1], ResponseStep)
    assert recorder.steps[-1].content == reply.output


async def test_a_diagnosis_becomes_the_reply_diagnosis(connector: Connector) -> None:
    recorder = Recorder()
    reply = await connector.make("diagnose").run(_task(), recorder)
    assert reply.diagnosis is not None
    assert reply.diagnosis.failure_modes == ["cpu_saturation"]
    assert isinstance(reply.data, dict)
    assert reply.data["root_cause"] == "a runaway query saturates the CPU"
    assert reply.output.startswith("a runaway query saturates the CPU")
    assert "runaway query -> CPU at 100% -> slow responses" in reply.output
    assert recorder.steps[-1] == ResponseStep(content=reply.output, t_ms=recorder.steps[-1].t_ms)


async def test_an_agent_failure_is_an_agent_error_with_its_message(connector: Connector) -> None:
    with pytest.raises(AgentError, match="disk on fire"):
        await connector.make("fail").run(_task(), Recorder())


async def test_a_timeout_cancels_the_agent_and_stops_it(connector: Connector, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    agent = connector.make("hang")
    scopes: list[asyncio.Timeout] = []

    async def run_under_timeout() -> None:
        # The engine's way of stopping an agent: asyncio.timeout around run().
        async with asyncio.timeout(None) as scope:
            scopes.append(scope)
            await agent.run(_task(SAMPLE_MARKER=str(marker)), Recorder())

    running = asyncio.create_task(run_under_timeout())
    assert await asyncio.to_thread(wait_until, marker.exists)
    assert not connector.is_stopped(marker)
    scopes[0].reschedule(asyncio.get_running_loop().time())
    with pytest.raises(TimeoutError):
        await running
    # A killed process is gone at once; its orphaned child is reaped by init a moment later.
    assert await asyncio.to_thread(wait_until, lambda: connector.is_stopped(marker))
