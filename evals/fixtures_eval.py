"""Fixtures and hooks: set up what the agent reads before it runs, tear it down after, whatever happens.

sredrill test evals/fixtures_eval.py --agent py:examples.agents.echo_agent:agent
"""

import shutil
import tempfile
from pathlib import Path

from sredrill import after_each, before_all, describe, expect, test


async def workspace():
    """A scratch folder per test; removed after the test even when it fails."""
    folder = Path(tempfile.mkdtemp(prefix="sredrill-eval-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def runbook(workspace):
    """A runbook file the agent is pointed at (fixtures may use other fixtures)."""
    path = workspace / "runbook.md"
    path.write_text("If replication lag grows, check WAL generation on the primary first.\n")
    yield path


it = test.extend(workspace=workspace, runbook=runbook)


@before_all
async def _():
    # Runs once, before the first test of this file: e.g. start a fake service.
    pass


with describe("runbooks"):

    @after_each
    async def _(test_info):
        # Runs after every test in this block, after the agent: e.g. collect logs.
        pass

    @it("the agent gets the runbook path through its environment", prompt="Read the runbook and summarise it.")
    async def _(agent, runbook):
        result = await agent.run(env={"RUNBOOK": str(runbook)})
        expect(result.output).to_contain("summarise")
        expect(runbook.exists()).to_be(True)

    @it("a computed prompt: the body decides what to ask", labels=["kind:dynamic"])
    async def _(agent, workspace):
        ticket = workspace / "ticket-1234.txt"
        ticket.write_text("open")
        result = await agent.run(f"Triage ticket {ticket.stem}")
        expect(result.output).to_match(r"ticket-\d+")
