"""The built-in `openai:MODEL` agent against a real local OpenAI-compatible server (`OpenAIStub`)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest

from sredrill.agents import LLMError, LLMUnavailable, Task, resolve_agent
from sredrill.agents.connectors.openai import LAST_TURN, NUDGE, SYSTEM_PROMPT, OpenAIAgent
from sredrill.diagnosis import diagnosis_text
from sredrill.errors import AgentSpecError
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.scenarios import leak_needles, load_pack
from sredrill.trajectory import Recorder, TokenUsage, ToolCallStep, ToolResultStep
from tests.support.openai_server import OpenAIStub, chat_completion, rate_limited, server_error, tool_call
from tests.support.toolsets import StaticToolset

ALERT = {"title": "CPU above 90% on orders-db", "state": "alerting"}
DIAGNOSIS = {
    "root_cause": "a runaway reporting query saturates the CPU",
    "category": "resource_exhaustion",
    "failure_modes": ["cpu_saturation"],
    "causal_chain": ["reporting query", "CPU at 100%", "alert"],
}


class Tools(StaticToolset):
    """Fixed answers, plus a `submit_diagnosis` that accepts only a dict with `root_cause` (like RCA's)."""

    def __init__(self) -> None:
        super().__init__({"get_alert": ALERT, "query_metrics": {"series": [{"values": [20, 97]}]}})
        self.submitted: list[dict[str, Any]] = []

    def specs(self) -> list[Any]:
        from sredrill.trajectory import ToolSpec

        return [*super().specs(), ToolSpec(name="submit_diagnosis", description="submit")]

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        from sredrill.trajectory import ToolError

        if name == "submit_diagnosis":
            if "root_cause" not in args:
                raise ToolError("bad_arguments", "root_cause: Field required")
            self.submitted.append(args)
            return {"accepted": True}
        return await super().call(name, args)


def _agent(stub: OpenAIStub, **changes: Any) -> OpenAIAgent:
    agent = resolve_agent("openai:stub-model", base_url=stub.base_url)
    assert isinstance(agent, OpenAIAgent)
    return dataclasses.replace(agent, backoff_s=0.001, **changes)


def _task(tools: Any = None, recorder: Recorder | None = None) -> tuple[Task, Recorder]:
    recorder = recorder or Recorder()
    tools = Tools() if tools is None else tools
    task = Task(
        run_id="run-1",
        prompt="Diagnose the alert.",
        context=[{"description": "Runbook", "value": "check the top SQL first"}],  # type: ignore[list-item]
        alert=ALERT,
        tools=tools.specs() if tools else [],
    ).bind(tools or None, recorder)
    return task, recorder


def _kinds(recorder: Recorder) -> list[str]:
    return [
        s.kind if not isinstance(s, ToolCallStep | ToolResultStep) else f"{s.kind}:{s.name}" for s in recorder.steps
    ]


async def test_a_whole_sloppy_conversation_is_survived_and_recorded(openai_stub: OpenAIStub) -> None:
    openai_stub.push(
        rate_limited(retry_after_s=0),
        # content null beside a tool call; arguments as a JSON string; no call id; finish_reason tool_calls
        chat_completion(None, tool_calls=[tool_call("get_alert", "{}", id=None)], usage=(100, 10)),
        # arguments as an object; bad JSON arguments; an unknown tool; no finish_reason at all
        chat_completion(
            "Checking the metrics.",
            tool_calls=[
                tool_call("query_metrics", {"metric_name": "CPUUtilization"}, id="q1"),
                tool_call("query_metrics", '{"metric_name": ', id="q2"),
                tool_call("get_logs", "{}", id="q3"),
            ],
            usage=(200, 20),
            absent=("finish_reason",),
        ),
        # neither content nor tool calls: nudged
        chat_completion(None, usage=(300, 1), absent=("content",)),
        # an invalid submission (corrected next turn), then a valid one
        chat_completion(
            None, tool_calls=[tool_call("submit_diagnosis", {"category": "unknown"}, id="s1")], usage=(1, 1)
        ),
        chat_completion(None, tool_calls=[tool_call("submit_diagnosis", json.dumps(DIAGNOSIS), id="s2")], usage=(2, 2)),
    )
    task, recorder = _task()
    reply = await _agent(openai_stub).run(task, recorder)

    assert reply.diagnosis is not None and reply.diagnosis.failure_modes == ["cpu_saturation"]
    assert reply.output == diagnosis_text(reply.diagnosis)
    assert reply.token_usage == TokenUsage(prompt=603, completion=34, total=637)
    assert reply.loops == 5  # model turns; the 429 was a retry, not a turn
    assert len(openai_stub.requests) == 6 and len(reply.raw) == 5
    assert _kinds(recorder) == [
        "tool_call:get_alert",
        "tool_result:get_alert",
        "assistant",
        "tool_call:query_metrics",
        "tool_result:query_metrics",
        "tool_call:query_metrics",
        "tool_result:query_metrics",
        "tool_call:get_logs",
        "tool_result:get_logs",
        "tool_call:submit_diagnosis",
        "tool_result:submit_diagnosis",
        "tool_call:submit_diagnosis",
        "tool_result:submit_diagnosis",
        "response",
    ]
    calls = {c.call_id: c for c in recorder_calls(recorder)}
    assert len(calls) == 6  # the recorder numbers every call, whatever ids the model sent
    results = [s for s in recorder.steps if isinstance(s, ToolResultStep)]
    assert results[1].result == {"series": [{"values": [20, 97]}]}
    assert results[2].error is not None and results[2].error.startswith("bad_arguments: arguments are not valid JSON")
    assert results[3].error is not None and results[3].error.startswith("unknown_tool: no tool named 'get_logs'")
    assert results[4].error == "bad_arguments: root_cause: Field required"
    assert recorder.steps[-1].content == reply.output  # type: ignore[union-attr]

    # What the model was told, turn by turn.
    last = openai_stub.bodies[-1]["messages"]
    tool_messages = [m for m in last if m["role"] == "tool"]
    first_id = last[2]["tool_calls"][0]["id"]
    assert first_id and tool_messages[0]["tool_call_id"] == first_id  # a generated id, echoed back
    assert json.loads(tool_messages[0]["content"]) == ALERT
    assert [m["tool_call_id"] for m in tool_messages[1:]] == ["q1", "q2", "q3", "s1"]
    assert tool_messages[2]["content"].startswith("error: bad_arguments: arguments are not valid JSON")
    assert tool_messages[3]["content"].startswith("error: unknown_tool:")
    assert tool_messages[4]["content"] == "error: bad_arguments: root_cause: Field required"
    assert {"role": "user", "content": NUDGE} in last
    assert "nudged once" in reply.log and "rejected: bad_arguments" in reply.log


def recorder_calls(recorder: Recorder) -> list[ToolCallStep]:
    return [s for s in recorder.steps if isinstance(s, ToolCallStep)]


async def test_the_request_carries_the_generic_prompt_the_task_and_the_tools(openai_stub: OpenAIStub) -> None:
    openai_stub.push(chat_completion("ROOT_CAUSE: unclear\nFAILURE_MODES: unknown"))
    task, recorder = _task()
    await _agent(openai_stub).run(task, recorder)
    body = openai_stub.bodies[0]
    assert body["model"] == "stub-model" and body["temperature"] == 0
    system, user = body["messages"]
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    assert "Diagnose the alert." in user["content"] and "Runbook:\ncheck the top SQL first" in user["content"]
    assert ALERT["title"] in user["content"]
    assert [t["function"]["name"] for t in body["tools"]] == ["get_alert", "query_metrics", "submit_diagnosis"]
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "get_alert",
            "description": "returns a fixed get_alert",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,  # an open schema (the test's own tool): strict mode would reject it
        },
    }


def test_the_system_prompt_knows_no_scenario() -> None:
    assert "submit_diagnosis" in SYSTEM_PROMPT and "answer in text" in SYSTEM_PROMPT
    pack = load_pack("rds_postgres")
    for scenario in pack.scenarios:
        leaks = [n for n in leak_needles(scenario, pack.vocabulary) if n.lower() in SYSTEM_PROMPT.lower()]
        assert not leaks, f"{scenario.id}: {leaks}"
    assert not [m for m in pack.vocabulary.names if m != "unknown" and m in SYSTEM_PROMPT]


async def test_a_text_answer_ends_the_run_and_is_parsed(openai_stub: OpenAIStub) -> None:
    text = "ROOT_CAUSE: a runaway query\nROOT_CAUSE_CATEGORY: resource_exhaustion\nFAILURE_MODES: cpu_saturation"
    openai_stub.push(
        chat_completion(None, tool_calls=[tool_call("get_alert", "", id="a")], finish_reason="tool_calls"),
        chat_completion(text, finish_reason="stop"),
    )
    task, recorder = _task()
    reply = await _agent(openai_stub).run(task, recorder)
    assert reply.output == text
    assert reply.diagnosis is not None and reply.diagnosis.failure_modes == ["cpu_saturation"]
    assert _kinds(recorder) == ["tool_call:get_alert", "tool_result:get_alert", "response"]
    assert reply.token_usage is None  # the server reported no usage: unknown, not zero
    assert reply.loops == 2


async def test_usage_missing_on_one_turn_makes_the_total_unknown(openai_stub: OpenAIStub) -> None:
    openai_stub.push(
        chat_completion(None, tool_calls=[tool_call("get_alert", "{}")], usage=(10, 1)),
        chat_completion("done"),
    )
    task, recorder = _task()
    reply = await _agent(openai_stub).run(task, recorder)
    assert reply.token_usage is None
    assert "turn 2: the server reported no token usage" in reply.log


async def test_two_empty_replies_stop_the_run_with_what_the_model_said(openai_stub: OpenAIStub) -> None:
    openai_stub.push(
        chat_completion("Looking at the alert first.", tool_calls=[tool_call("get_alert", {})]),
        chat_completion(None, finish_reason="stop"),
        chat_completion("", finish_reason=None),
    )
    task, recorder = _task()
    reply = await _agent(openai_stub).run(task, recorder)
    assert len(openai_stub.requests) == 3
    assert reply.output == "Looking at the alert first." and reply.diagnosis is None
    assert recorder.steps[-1].kind == "response" and recorder.steps[-1].content == reply.output  # type: ignore[union-attr]
    assert "a second empty reply" in reply.log
    assert openai_stub.bodies[2]["messages"][-1] == {"role": "user", "content": NUDGE}


async def test_the_turn_limit_stops_a_model_that_never_concludes(openai_stub: OpenAIStub) -> None:
    openai_stub.push(*[chat_completion(None, tool_calls=[tool_call("get_alert", {}, id=f"c{i}")]) for i in range(3)])
    task, recorder = _task()
    reply = await _agent(openai_stub, max_turns=3).run(task, recorder)
    assert len(openai_stub.requests) == 3 and reply.loops == 3
    assert openai_stub.bodies[2]["messages"][-1] == {"role": "user", "content": LAST_TURN}
    assert LAST_TURN not in json.dumps(openai_stub.bodies[1])
    assert "turn limit (3)" in reply.log
    assert reply.output == "" and recorder.steps[-1].kind == "response"


async def test_a_run_without_tools_sends_none_and_rejects_a_call(openai_stub: OpenAIStub) -> None:
    openai_stub.push(
        chat_completion(None, tool_calls=[tool_call("get_alert", {})]),
        chat_completion("I have no tools, so: unknown."),
    )
    task, recorder = _task(tools=False)
    reply = await _agent(openai_stub).run(task, recorder)
    assert "tools" not in openai_stub.bodies[0]
    assert reply.output == "I have no tools, so: unknown."
    result = recorder.steps[1]
    assert isinstance(result, ToolResultStep) and result.error == "unknown_tool: this run has no tools: answer in text"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [("[1, 2]", "arguments must be a JSON object, got list"), ('{"a": 1', "arguments are not valid JSON")],
)
async def test_arguments_that_are_not_an_object_are_sent_back(
    openai_stub: OpenAIStub, arguments: str, problem: str
) -> None:
    openai_stub.push(chat_completion(None, tool_calls=[tool_call("get_alert", arguments)]), chat_completion("ok"))
    task, recorder = _task()
    await _agent(openai_stub).run(task, recorder)
    tool_message = openai_stub.bodies[1]["messages"][-1]
    assert tool_message["role"] == "tool" and problem in tool_message["content"]
    assert isinstance(recorder.steps[0], ToolCallStep) and recorder.steps[0].args == {}


async def test_server_errors_make_the_run_fail_with_the_server_s_message(openai_stub: OpenAIStub) -> None:
    openai_stub.push(server_error(401, "Incorrect API key provided"))
    task, recorder = _task()
    with pytest.raises(LLMError, match="HTTP 401: Incorrect API key provided"):
        await _agent(openai_stub).run(task, recorder)
    openai_stub.push(*[server_error(503, "overloaded")] * 4)
    with pytest.raises(LLMUnavailable, match="failed 4 time"):
        await _agent(openai_stub).run(*_task())


async def test_cancellation_closes_the_model_request() -> None:
    arrived, closed = asyncio.Event(), asyncio.Event()

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        arrived.set()
        while await reader.read(65536):  # the body, then EOF when the client closes the connection
            pass
        closed.set()
        writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    agent = resolve_agent("openai:m", base_url=f"http://127.0.0.1:{port}/v1")
    running = asyncio.create_task(agent.run(*_task()))
    async with server:
        await asyncio.wait_for(arrived.wait(), 10)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        await asyncio.wait_for(closed.wait(), 10)


async def test_a_whole_rca_scenario_ends_with_a_submission_the_toolset_kept(openai_stub: OpenAIStub) -> None:
    pack = load_pack("rds_postgres")
    tools = RcaToolset(pack.scenario("004-cpu-saturation-bad-query"), BackendMode.FULL, vocabulary=pack.vocabulary)
    openai_stub.push(
        chat_completion(None, tool_calls=[tool_call("get_performance_insights", {"dimension": "top_sql"})]),
        chat_completion(None, tool_calls=[tool_call("submit_diagnosis", DIAGNOSIS)]),
    )
    recorder = Recorder()
    task = Task(run_id="r", prompt="p", tools=tools.specs(), alert=tools.alert).bind(tools, recorder)
    reply = await _agent(openai_stub).run(task, recorder)
    assert tools.submitted == reply.diagnosis
    assert [e.tool for e in tools.audit] == ["get_performance_insights", "submit_diagnosis"]
    # The RCA tools' schemas meet strict function calling, so they are sent with strict: true.
    sent = openai_stub.bodies[0]["tools"]
    assert sent and all(t["function"]["strict"] is True for t in sent)


@pytest.mark.parametrize(
    ("spec", "kwargs", "message"),
    [
        ("openai:", {"base_url": "http://127.0.0.1:9/v1"}, "needs a model name"),
        ("openai:m", {"base_url": "ftp://models/v1"}, "not an http"),
        ("openai:m", {}, "no API key for https://api.openai.com/v1"),
    ],
)
def test_a_spec_that_cannot_work_is_rejected_when_resolved(spec: str, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(AgentSpecError, match=message):
        resolve_agent(spec, **kwargs)


def test_the_endpoint_comes_from_the_options_and_the_key_stays_out_of_reprs() -> None:
    agent = resolve_agent("openai:gpt-4o-mini", api_key="sk-secret")
    assert isinstance(agent, OpenAIAgent)
    assert (agent.model, agent.base_url, agent.api_key) == ("gpt-4o-mini", "https://api.openai.com/v1", "sk-secret")
    assert "sk-secret" not in repr(agent)
    local = resolve_agent("openai:qwen2.5", base_url="http://127.0.0.1:8000/v1")
    assert isinstance(local, OpenAIAgent) and local.base_url == "http://127.0.0.1:8000/v1" and local.api_key is None
