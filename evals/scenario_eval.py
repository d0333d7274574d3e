"""A built-in scenario as an SDK test: the agent gets what `sredrill run` gives it, and is graded the same way.

`scenario(ID)` hands the test the scenario's RCA prompt, its tools (blinded, on a backend) and its answer key;
`expect(result).to_diagnose(sc)` records every grading check and fails the test on a failed gate check.
Run it with:
    sredrill test evals/scenario_eval.py --agent reference     # passes
    sredrill test evals/scenario_eval.py --agent keyword       # fails: it never looks at the evidence
"""

from sredrill import expect, scenario, test

LAG = scenario("rds_postgres/001-replication-lag")  # safe at the top: each test gets its own toolset


@test("finds the replication lag", labels=["category:RCA", "difficulty:1"])
async def _(agent):
    result = await agent.run(LAG.prompt, tools=LAG.tools)
    expect(result).to_diagnose(LAG)


@test("finds the replication lag when it must ask for each metric by name", labels=["axis:2"])
async def _(agent):
    sc = scenario("001-replication-lag", mode="selective", axis=2)  # as sredrill run --axis2 grades Axis 2
    result = await agent.run(sc.prompt, tools=sc.tools)
    expect(result).to_have_called_tool("get_alert", verified=True)
    expect(result).to_diagnose(sc)
