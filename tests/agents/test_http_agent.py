"""The `http(s)://` connector against a real agent service: the connector contract, then its own edges."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from sredrill.agents import Agent, AgentReply, Task, ToolHost, resolve_agent
from sredrill.agents.connectors.http import HttpAgent, ServiceReply
from sredrill.errors import AgentError, AgentSpecError
from sredrill.trajectory import Recorder, ResponseStep
from tests.support.sample_agent_service import AgentService
from tests.support.toolsets import StaticToolset


@pytest.fixture
def service() -> Iterator[AgentService]:
    with AgentService() as svc:
        yield svc


def _task(**fields: object) -> Task:
    return Task(run_id="run-0001", prompt="Why is checkout slow?", **fields)  # type: ignore[arg-type]


def _agent(service: AgentService, behaviour: str) -> Agent:
    return resolve_agent(f"{service.url}/{behaviour}")


# -- the connector contract (tests/agents/test_connector_contract.py, over HTTP) -------------------------------


async def test_it_is_an_agent_with_its_spec(service: AgentService) -> None:
    agent = _agent(service, "answer")
    assert isinstance(agent, Agent) and isinstance(agent, HttpAgent)
    assert agent.spec == f"{service.url}/answer"
    assert isinstance(resolve_agent("https://agents.example.com/rca"), HttpAgent)


async def test_it_returns_the_answer_and_records_a_response(service: AgentService) -> None:
    recorder = Recorder()
    reply = await _agent(service, "answer").run(_task(), recorder)
    assert isinstance(reply, AgentReply)
    assert reply.output == "answer: Why is checkout slow?"
    assert isinstance(recorder.steps[-1], ResponseStep) and recorder.steps[-1].content == reply.output
    assert reply.raw == [{"output": "answer: Why is checkout slow?"}]


async def test_a_diagnosis_becomes_the_reply_diagnosis(service: AgentService) -> None:
    recorder = Recorder()
    reply = await _agent(service, "diagnose").run(_task(), recorder)
    assert reply.diagnosis is not None and reply.diagnosis.failure_modes == ["cpu_saturation"]
    assert isinstance(reply.data, dict) and reply.data["root_cause"] == "a runaway query saturates the CPU"
    assert "runaway query -> CPU at 100% -> slow responses" in reply.output
    assert recorder.steps[-1] == ResponseStep(content=reply.output, t_ms=recorder.steps[-1].t_ms)


async def test_an_agent_failure_is_an_agent_error_with_its_status_and_message(service: AgentService) -> None:
    with pytest.raises(AgentError, match=r"answered HTTP 500 Internal Server Error: .*disk on fire"):
        await _agent(service, "fail").run(_task(), Recorder())


async def test_a_timeout_cancels_the_request_and_closes_its_connection(service: AgentService) -> None:
    agent = _agent(service, "hang")

    async def run_under_timeout(scopes: list[asyncio.Timeout]) -> None:
        async with asyncio.timeout(None) as scope:
            scopes.append(scope)
            await agent.run(_task(), Recorder())

    scopes: list[asyncio.Timeout] = []
    running = asyncio.create_task(run_under_timeout(scopes))
    assert await asyncio.to_thread(service.hanging.wait, 10)
    assert not service.closed.is_set()
    scopes[0].reschedule(asyncio.get_running_loop().time())
    with pytest.raises(TimeoutError):
        await running
    assert await asyncio.to_thread(service.closed.wait, 10)


# -- its own edges --------------------------------------------------------------------------------------------


async def test_its_own_deadline_is_the_task_s(service: AgentService) -> None:
    with pytest.raises(AgentError, match=r"did not answer within 0.3s \(ReadTimeout\)"):
        await _agent(service, "hang").run(_task(deadline_s=0.3), Recorder())
    assert await asyncio.to_thread(service.closed.wait, 10)


async def test_the_task_is_posted_as_json_with_a_traceparent_and_without_env(service: AgentService) -> None:
    task = _task(env={"SECRET": "x"}, alert={"title": "CPU high"})
    reply = await _agent(service, "echo").run(task, Recorder())
    seen = json.loads(reply.output)
    assert seen["task"] == json.loads(task.model_dump_json(exclude={"env"}))
    assert re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-01", seen["headers"]["traceparent"])
    assert seen["headers"]["Content-Type"] == "application/json"


async def test_steps_are_recorded_like_a_cmd_agent_s_lines_then_the_output(service: AgentService) -> None:
    recorder = Recorder()
    reply = await _agent(service, "steps").run(_task(), recorder)
    assert [s.kind for s in recorder.steps] == [
        "thinking",
        "tool_call",
        "tool_result",
        "assistant",
        "assistant",  # the malformed step, kept as text
        "response",
    ]
    assert recorder.steps[2].name == "psql"  # type: ignore[union-attr]  # the result found its call
    assert reply.diagnosis is not None and reply.diagnosis.failure_modes == ["cpu_saturation"]
    assert "invalid step, kept as text" in reply.log


async def test_a_service_uses_the_run_s_http_tools(service: AgentService) -> None:
    recorder = Recorder()
    tools = StaticToolset({"get_alert": {"title": "CPU above 90%"}})
    host = ToolHost()
    try:
        async with host.serving("run-0001", tools, recorder) as access:
            task = _task(tools=tools.specs(), tools_url=access.tools_url, token=access.token)
            reply = await _agent(service, "use_tools").run(task, recorder)
    finally:
        await host.aclose()
    assert reply.output == "the alert says: CPU above 90%"
    # The tool call happened while the request was open; the reply's steps arrive after it (JSON replies
    # are not streamed).
    assert [s.kind for s in recorder.steps] == ["tool_call", "tool_result", "thinking", "response"]


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        ("not_json", r"answered text/html, not JSON: '<html><body>Welcome to nginx!"),
        ("event_stream", r"the AG-UI stream ended without RUN_FINISHED \(or RUN_ERROR\)"),
        ("not_an_object", r"answered JSON list, not an object: '\[1, 2\]'"),
        ("unknown_key", r"invalid reply:\n  verdict: Extra inputs are not permitted"),
        ("bad_diagnosis", r"diagnosis that is not valid:\n  root_cause: Field required\n  category: Input should be"),
        ("no_such_behaviour", r"answered HTTP 404 Not Found: .*unknown behaviour"),
    ],
)
async def test_an_unusable_reply_is_an_agent_error_saying_why(
    service: AgentService, behaviour: str, message: str
) -> None:
    recorder = Recorder()
    with pytest.raises(AgentError, match=message):
        await _agent(service, behaviour).run(_task(), recorder)
    assert recorder.steps == []


async def test_an_unreachable_service_is_an_agent_error() -> None:
    with AgentService() as gone:
        url = f"{gone.url}/answer"
    with pytest.raises(AgentError, match=rf"cannot reach agent service {re.escape(url)}: ConnectError"):
        await resolve_agent(url).run(_task(), Recorder())


@pytest.mark.parametrize("spec", ["http://", "https://:8080/x", "http://host:port/"])
def test_a_url_without_a_host_is_rejected_when_resolved(spec: str) -> None:
    with pytest.raises(AgentSpecError, match="--agent"):
        resolve_agent(spec)


# -- docs/agent-protocol.md ------------------------------------------------------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "agent-protocol.md"
REPLY_SCHEMA = ("<!-- service-reply-schema:start -->", "<!-- service-reply-schema:end -->")


def render_reply_schema(doc: str) -> str:
    """The doc with the agent service reply's schema regenerated between its markers."""
    start, end = REPLY_SCHEMA
    before, rest = doc.split(start, 1)
    _, after = rest.split(end, 1)
    schema = json.dumps(ServiceReply.model_json_schema(), indent=2, ensure_ascii=False)
    return f"{before}{start}\n```json\n{schema}\n```\n{end}{after}"


def test_the_reply_schema_in_the_doc_is_current() -> None:
    doc = DOC.read_text()
    assert doc == render_reply_schema(doc), "regenerate: python tests/agents/test_http_agent.py"


if __name__ == "__main__":
    DOC.write_text(render_reply_schema(DOC.read_text()))
