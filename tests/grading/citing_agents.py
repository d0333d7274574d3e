"""Two `py:` agents for the end-to-end grading tests (`py:tests.grading.citing_agents:NAME`).

Each reads only what the tools return: `grounded` cites the CPU series by the id its result gave, with the
trend `grading.facts.trend_of` finds in the values served; `made_up` cites an id no tool ever gave.
"""

from __future__ import annotations

from typing import Any

from sredrill.agents import Task
from sredrill.diagnosis import Category, Citation, Claim, Diagnosis, FactKind
from sredrill.grading.facts import trend_of


async def _cpu(task: Task) -> dict[str, Any]:
    result = await task.call_tool("query_metrics", metric_name="CPUUtilization")
    (series,) = [s for s in result["series"] if s["metric_name"] == "CPUUtilization"]
    return dict(series)


def _diagnosis(citation: Citation, location: str) -> Diagnosis:
    return Diagnosis(
        root_cause="CPU saturation: the instance's CPU climbed to its limit.",
        category=Category.RESOURCE_EXHAUSTION,
        failure_modes=["cpu_saturation"],
        claims=[Claim(text="CPU climbed", evidence=[citation], supports=["cpu_saturation"])],
        location=[location],
    )


async def grounded(task: Task) -> Diagnosis:
    series = await _cpu(task)
    trend = trend_of([float(v) for v in series["values"]]) or FactKind.PRESENT
    return _diagnosis(Citation(item=series["id"], fact=trend), series["dimensions"]["DBInstanceIdentifier"])


async def made_up(task: Task) -> Diagnosis:
    series = await _cpu(task)
    return _diagnosis(
        Citation(item="metric-0000000000", fact=FactKind.RISING), series["dimensions"]["DBInstanceIdentifier"]
    )
