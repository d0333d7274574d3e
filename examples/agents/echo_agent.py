"""The smallest `py:` agent: it investigates nothing and says so, repeating the prompt it was given.

Run it with `sredrill test evals/ --agent py:examples.agents.echo_agent:agent` (what `make run` does). It is
a wiring check, not a contender: every test that needs a real investigation should fail with it.
"""

from __future__ import annotations

from sredrill.agents import Task


async def agent(task: Task) -> str:
    """Answer with an honest non-answer that quotes the prompt.

    A real agent would call tools here, e.g. `alert = await task.call_tool("get_alert")`, and return a
    `Diagnosis` (or a dict of its fields, or text).
    """
    return (
        "echo agent: I called no tools and did not investigate, so I cannot name a root cause. "
        f"You asked: {task.prompt}"
    )
