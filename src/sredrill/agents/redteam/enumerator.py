"""The enumerate-everything agent: the reference agent's reasoning, after reading every series there is.

Axis 2 measures choosing (issue 18, point 3). This agent does not choose: it lists what the tools offer and asks
for every value a required argument can take (every metric name of every listing, so every series of every
instance and statistic), reads every tool once, and only then runs the reference agent of the task's domain on
the same tools, whose diagnosis it returns. Its Axis 1 is the reference agent's (the `full` backend serves
everything to both); on Axis 2 it is served the whole scenario, over any data budget below it, and must fail
there. It reads only what tool results return; nothing here names a domain's tools or a scenario's series.
"""

from __future__ import annotations

from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reference import DomainReference
from sredrill.trajectory import Recorder, ThinkingStep

from .notebook import investigate

__all__ = ["EVERYTHING", "EnumeratorAgent"]

EVERYTHING = 1_000_000
"""Values tried per required argument: all of them."""

_PLAN = (
    "Plan: read everything first. List every series and query each one, read every tool once, then reason over "
    "all of it (the reference agent's reasoning)."
)


class EnumeratorAgent:
    """Every series first, then the reference agent's diagnosis."""

    __slots__ = ("spec",)

    def __init__(self, *, spec: str = "redteam:enumerator") -> None:
        self.spec = spec

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        recorder.add(ThinkingStep(content=_PLAN))
        await investigate(task, targets=EVERYTHING)
        return await DomainReference().run(task, recorder)
