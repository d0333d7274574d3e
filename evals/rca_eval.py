"""An RCA-shaped eval: give the agent tools over a small incident, then check what it did and concluded.

Copy this file to start your own. Run it with:
    sredrill test evals/rca_eval.py --agent py:examples.agents.toy_rca_agent:agent
"""

from sredrill import expect, test

# A tiny incident the tools below serve. Real benchmarks use scenario packs (`sredrill run`).
METRICS = {
    "DatabaseConnections": [180, 240, 610, 990, 998, 997],
    "CPUUtilization": [22, 25, 31, 38, 41, 40],
}
EVENTS = [{"date": "2026-03-02T10:04:00Z", "message": "Connection limit reached for DB instance"}]


async def list_metrics():
    """Names of the metrics that can be queried."""
    return sorted(METRICS)


async def query_metrics(metric_name: str):
    """One metric's values, one point per minute."""
    return {"metric_name": metric_name, "values": METRICS.get(metric_name, [])}


async def get_events():
    """Database events around the alert."""
    return EVENTS


TOOLS = {"list_metrics": list_metrics, "query_metrics": query_metrics, "get_events": get_events}


@test(
    "finds connection exhaustion behind the checkout errors",
    labels=["category:RCA", "difficulty:1"],
    prompt="Checkout requests fail with 'too many clients'. Investigate the database and find the root cause.",
    context=[("Alert", "RDSConnectionsHigh fired on orders-db at 10:05 UTC")],
    timeout=60,
)
async def _(agent):
    result = await agent.run(tools=TOOLS)
    expect(result).to_have_called_tool("query_metrics", args={"metric_name": "DatabaseConnections"})
    expect(result).to_have_called_tool("get_events")
    expect(result.output.lower()).to_contain("connection")
    expect.soft(result.output.lower()).not_.to_contain("cpu saturation")
    expect(result).to_complete_within(seconds=60)
