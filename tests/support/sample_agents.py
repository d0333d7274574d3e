"""Small `py:` agents for connector tests, one behaviour each (`py:tests.support.sample_agents:NAME`).

`sample_agent_cmd.py` beside this file has the same behaviours as a `cmd:` agent, so the connector contract
runs the same cases over both transports.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from sredrill.agents import Task
from sredrill.diagnosis import Category, Diagnosis


async def answer(task: Task) -> str:
    """Answers with the prompt it was given."""
    return f"answer: {task.prompt}"


async def fail(task: Task) -> str:
    """Crashes with a message the error must keep."""
    raise RuntimeError("disk on fire")


async def fail_in_task_group(task: Task) -> str:
    """Crashes inside a TaskGroup, so the error arrives as an ExceptionGroup."""

    async def query() -> None:
        raise ValueError("no metric CPU")

    async with asyncio.TaskGroup() as tg:
        tg.create_task(query())
    return "unreachable"


async def time_out(task: Task) -> str:
    """Raises an exception with no message (its own client timed out)."""
    raise TimeoutError


async def hang(task: Task) -> str:
    """Writes `started PID` to the file named by `SAMPLE_MARKER`, then waits; writes `stopped` when cancelled."""
    marker = Path(task.env["SAMPLE_MARKER"])
    marker.write_text(f"started {os.getpid()}")
    try:
        await asyncio.Event().wait()
    finally:
        marker.write_text("stopped")
    return "unreachable"


async def diagnose(task: Task) -> Diagnosis:
    """Returns a Diagnosis object."""
    return Diagnosis(
        root_cause="a runaway query saturates the CPU",
        category=Category.RESOURCE_EXHAUSTION,
        failure_modes=["cpu_saturation"],
        causal_chain=["runaway query", "CPU at 100%", "slow responses"],
    )


async def use_tools(task: Task) -> str:
    """Calls `get_alert` through the task, then answers with the alert's title."""
    alert = await task.call_tool("get_alert")
    return f"the alert says: {alert['title']}"  # type: ignore[index,call-overload]


class ObjectAgent:
    """An agent object whose async `run(task)` is the entry point."""

    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    async def run(self, task: Task) -> str:
        return f"{self.greeting}: {task.prompt}"


object_agent = ObjectAgent("object")


def sync_agent(task: Task) -> str:
    """Not async: resolving it must fail."""
    return "never"


async def two_arguments(task: Task, extra: str) -> str:
    """Takes one argument too many: resolving it must fail."""
    return extra


not_callable = "just a string"


async def returns(task: Task) -> object:
    """Returns whatever the test put in `task.env["RETURN"]` as Python source (a literal)."""
    import ast

    return ast.literal_eval(task.env["RETURN"])


async def capture_task(task: Task) -> str:
    """Appends the Task's `tools_url` and `token` to the file named by `$CAPTURE` (a JSON line), then answers."""
    import json
    import os

    with open(os.environ["CAPTURE"], "a") as f:
        f.write(json.dumps({"tools_url": task.tools_url, "token": task.token}) + "\n")
    return "no conclusion"
