"""Custom evaluators and judges: deterministic ones in code, an LLM judge when one is configured.

sredrill test evals/evaluator_eval.py --agent py:examples.agents.echo_agent:agent
# with an OpenAI-compatible judge:
sredrill test evals/evaluator_eval.py --agent … --judge-base-url http://localhost:8000/v1 --judge-model m
"""

from sredrill import evaluator, expect, judge, test


@evaluator("mentions-evidence")
async def mentions_evidence(result, criteria):
    """Passes when the output names every comma-separated word of the criteria."""
    words = [w.strip().lower() for w in criteria.split(",")]
    missing = [w for w in words if w not in result.output.lower()]
    return {
        "passed": not missing,
        "score": 1 - len(missing) / len(words),
        "reasoning": f"missing: {missing}" if missing else "every word present",
    }


@test("a custom evaluator gates the test", prompt="Explain the replication lag on the replica.")
async def _(agent):
    result = await agent.run()
    verdict = await judge(result, {"criteria": "replication, replica", "evaluator": "mentions-evidence"})
    expect(verdict).to_pass()


@test("an observing judge scores without gating", prompt="Explain the storage alert.", skip_judge=True)
async def _(agent):
    result = await agent.run()
    # skip_judge=True: the LLM judge is not called; the verdict is neutral (skipped) and never fails the test.
    verdict = await judge.observe(result, "the explanation cites FreeStorageSpace")
    expect(verdict.skipped).to_be(True)
