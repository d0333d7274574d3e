"""An AG-UI agent service end to end: `python -m sredrill test` against a real process answering SSE.

Its thinking, its own tool calls (AG-UI tool-call events) and its messages land on the trajectory, next to
the call to sredrill's tool that sredrill recorded itself; a RUN_ERROR makes the test errored with its message.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sredrill.store import Store

from .conftest import Project

SERVICE = Path(__file__).resolve().parents[1] / "support" / "agui_agent_service.py"

EVAL = """
from sredrill import test, expect

async def get_alert():
    \"\"\"the alert\"\"\"
    return {"title": "CPU above 90%"}

@test("an AG-UI agent", prompt="investigate")
async def _(agent):
    result = await agent.run(tools={"get_alert": get_alert})
    expect(result).to_have_called_tool("search_runbook", args={"query": "cpu saturation"})
    expect(result).to_have_called_tool("get_alert")
    expect(result).to_have_steps_of_type("thinking")
    expect(result.output).to_equal("The alert 'CPU above 90%' comes from a runaway query.")
"""


@pytest.fixture
def service() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, str(SERVICE), "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_an_agui_stream_lands_on_the_trajectory(project: Project, service: str) -> None:
    project.write("agui_eval.py", EVAL)
    cli = project.run("test", "agui_eval.py", "--agent", f"{service}/", "--json")
    result = cli.result("an AG-UI agent")
    assert result["status"] == "passed", result["failure_reason"] or result["signals"]
    with Store(project.db) as store:
        steps = store.trajectory(cli.report()["run_id"], result["id"])
    assert steps is not None
    shape = [(s["kind"], s.get("name") or s.get("content")) for s in steps if s["kind"] != "user"]
    assert shape == [
        ("thinking", "The alert names CPU; check the runbook first."),
        ("tool_call", "get_alert"),  # recorded by sredrill's tool server, while the stream was open
        ("tool_result", "get_alert"),
        ("tool_call", "search_runbook"),
        ("tool_result", "search_runbook"),
        ("assistant", "Looking at the alert."),
        ("response", "The alert 'CPU above 90%' comes from a runaway query."),
    ]
    runbook = next(s for s in steps if s["kind"] == "tool_result" and s["name"] == "search_runbook")
    assert (runbook["call_id"], runbook["result"]) == ("tc-1", {"steps": ["kill the query"]})


def test_a_run_error_event_makes_the_test_errored(project: Project, service: str) -> None:
    project.write("agui_eval.py", EVAL)
    cli = project.run("test", "agui_eval.py", "--agent", f"{service}/error", "--json")
    result = cli.result("an AG-UI agent")
    assert result["status"] == "errored"
    assert "RUN_ERROR: the model provider is down (code upstream)" in result["failure_reason"]
    assert cli.code == 3
