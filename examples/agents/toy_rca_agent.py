"""A toy `py:` RCA agent: look at every metric, find the one that moved most, check events, answer.

It shows the in-process tool API (`await task.call_tool(name, **args)`); every call is recorded on the
trajectory exactly like a remote one. Run it with:
    sredrill test evals/rca_eval.py --agent py:examples.agents.toy_rca_agent:agent
"""

from sredrill import Diagnosis
from sredrill.diagnosis import Claim


async def agent(task):
    tools = {t.name for t in task.tools}
    if "list_metrics" not in tools:
        return f"I was asked: {task.prompt!r}, but given no metrics to look at."

    # Relative growth from the first to the peak value, per metric.
    names = await task.call_tool("list_metrics")
    if not isinstance(names, list):  # a scenario pack's tools answer in their own shapes (docs/evidence.md)
        return "toy agent: these are not the tools it knows (evals/rca_eval.py's), so it names no root cause."
    growth = {}
    for name in names:
        values = (await task.call_tool("query_metrics", metric_name=name))["values"]
        if values and values[0]:
            growth[name] = max(values) / values[0]
    suspect = max(growth, key=growth.get)
    events = await task.call_tool("get_events") if "get_events" in tools else []
    related = [e["message"] for e in events if any(w in e["message"].lower() for w in suspect.lower().split())]
    return Diagnosis(
        root_cause=f"{suspect} grew {growth[suspect]:.1f}x within the window: the database ran out of {suspect}.",
        failure_modes=["unknown"],
        claims=[Claim(text=f"{suspect} peaked at {growth[suspect]:.1f}x its start", evidence=["metrics"])],
        report="; ".join(related) or "no related events",
    )
