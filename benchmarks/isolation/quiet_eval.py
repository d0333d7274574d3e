"""The eval file the isolation benchmark runs with `sredrill test`: QUIET_EVAL_TESTS tests (default 1), each one
`await agent.run(...)` of the quiet agent (`quiet_agent.py`) and one expect, so what is measured is the harness.

    QUIET_EVAL_TESTS=31 sredrill test benchmarks/isolation/quiet_eval.py --agent py:quiet_agent:agent \\
        --agent-dir benchmarks/isolation --no-judge
"""

from __future__ import annotations

import os

from sredrill import expect, test

TESTS = int(os.environ.get("QUIET_EVAL_TESTS", "1"))


def _register(index: int) -> None:
    @test(f"quiet {index:04d}", prompt="Why is checkout failing?")
    async def _(agent) -> None:  # type: ignore[no-untyped-def]
        result = await agent.run()
        expect(result.output).to_contain("nothing investigated")


for _index in range(TESTS):
    _register(_index)
