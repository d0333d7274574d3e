"""The `py:` connector: what an in-process agent may return, and how its tools and errors surface."""

from __future__ import annotations

import json

import pytest

from sredrill.agents import Task, resolve_agent
from sredrill.diagnosis import Category
from sredrill.errors import AgentError
from sredrill.trajectory import Recorder, ResponseStep, ToolCallStep, ToolResultStep
from tests.support.toolsets import StaticToolset

ROOT_CAUSE_TEXT = """ROOT_CAUSE: the disk filled up
ROOT_CAUSE_CATEGORY: resource_exhaustion
FAILURE_MODES: storage_full
"""


async def run_returning(value: object) -> tuple[object, Recorder]:
    """Run the sample agent that returns `value` (given as a Python literal)."""
    recorder = Recorder()
    task = Task(run_id="run-0001", prompt="p", env={"RETURN": repr(value)})
    reply = await resolve_agent("py:tests.support.sample_agents:returns").run(task, recorder)
    return reply, recorder


async def test_a_diagnosis_dict_becomes_a_diagnosis() -> None:
    reply, recorder = await run_returning({"root_cause": "replica lag", "category": "resource_exhaustion"})
    assert reply.diagnosis is not None and reply.diagnosis.category is Category.RESOURCE_EXHAUSTION
    assert reply.output == "replica lag"
    assert reply.data == reply.diagnosis.model_dump(mode="json")
    assert recorder.steps == [ResponseStep(content="replica lag", t_ms=recorder.steps[0].t_ms)]


async def test_an_invalid_diagnosis_dict_is_an_agent_error_naming_the_field() -> None:
    with pytest.raises(AgentError, match=r"not a valid Diagnosis:\n  confidence: Extra inputs"):
        await run_returning({"root_cause": "x", "confidence": 0.9})


async def test_any_other_dict_is_json_data() -> None:
    reply, _ = await run_returning({"answer": 42, "notes": ["a", "é"]})
    assert reply.diagnosis is None
    assert reply.data == {"answer": 42, "notes": ["a", "é"]}
    assert json.loads(reply.output) == reply.data


async def test_plain_text_is_the_output() -> None:
    reply, recorder = await run_returning("the database is fine")
    assert (reply.output, reply.diagnosis, reply.data) == ("the database is fine", None, None)
    assert recorder.steps[-1].content == "the database is fine"


async def test_text_in_the_original_suite_format_is_parsed() -> None:
    reply, _ = await run_returning(ROOT_CAUSE_TEXT)
    assert reply.output == ROOT_CAUSE_TEXT
    assert reply.diagnosis is not None and reply.diagnosis.failure_modes == ["storage_full"]


async def test_json_text_is_parsed_and_a_diagnosis_in_it_is_used() -> None:
    reply, _ = await run_returning('{"root_cause": "checkpoint storm", "failure_modes": ["checkpoint_io_storm"]}')
    assert isinstance(reply.data, dict) and reply.data["root_cause"] == "checkpoint storm"
    assert reply.diagnosis is not None and reply.diagnosis.failure_modes == ["checkpoint_io_storm"]
    reply, _ = await run_returning("[1, 2]")
    assert (reply.data, reply.diagnosis) == ([1, 2], None)


@pytest.mark.parametrize("value", [None, 42, ["a list"], b"bytes"])
async def test_other_return_types_are_an_agent_error_naming_the_type(value: object) -> None:
    with pytest.raises(AgentError, match=rf"returned {type(value).__name__}.*a Diagnosis, a dict .* or a str"):
        await run_returning(value)


async def test_tool_calls_through_the_task_are_recorded() -> None:
    recorder = Recorder()
    task = Task(run_id="run-0001", prompt="p").bind(StaticToolset({"get_alert": {"title": "High CPU"}}), recorder)
    reply = await resolve_agent("py:tests.support.sample_agents:use_tools").run(task, recorder)
    assert reply.output == "the alert says: High CPU"
    call, result, response = recorder.steps
    assert isinstance(call, ToolCallStep) and call.name == "get_alert"
    assert isinstance(result, ToolResultStep) and result.result == {"title": "High CPU"}
    assert isinstance(response, ResponseStep)


async def test_an_uncaught_tool_error_is_an_agent_error_with_the_tools_message() -> None:
    recorder = Recorder()
    task = Task(run_id="run-0001", prompt="p").bind(StaticToolset({}), recorder)
    with pytest.raises(AgentError, match="agent raised ToolError: no tool named 'get_alert'"):
        await resolve_agent("py:tests.support.sample_agents:use_tools").run(task, recorder)
    assert [s.kind for s in recorder.steps] == ["tool_call", "tool_result"]


async def test_the_original_exception_is_the_cause() -> None:
    with pytest.raises(AgentError) as caught:
        await resolve_agent("py:tests.support.sample_agents:fail").run(Task(run_id="r", prompt="p"), Recorder())
    assert str(caught.value) == "agent raised RuntimeError: disk on fire"
    assert isinstance(caught.value.__cause__, RuntimeError)


async def test_an_object_with_an_async_run_method_is_an_agent() -> None:
    agent = resolve_agent("py:tests.support.sample_agents:object_agent")
    reply = await agent.run(Task(run_id="r", prompt="hello"), Recorder())
    assert reply.output == "object: hello"


async def test_a_dotted_attribute_reaches_a_method() -> None:
    agent = resolve_agent("py:tests.support.sample_agents:object_agent.run")
    reply = await agent.run(Task(run_id="r", prompt="hello"), Recorder())
    assert reply.output == "object: hello"


async def test_errors_inside_an_agents_task_group_keep_their_messages() -> None:
    with pytest.raises(AgentError, match=r"agent raised ExceptionGroup: .*\[ValueError: no metric CPU\]"):
        await resolve_agent("py:tests.support.sample_agents:fail_in_task_group").run(
            Task(run_id="r", prompt="p"), Recorder()
        )


async def test_an_exception_without_a_message_says_so() -> None:
    with pytest.raises(AgentError, match=r"^agent raised TimeoutError: \(no message\)$"):
        await resolve_agent("py:tests.support.sample_agents:time_out").run(Task(run_id="r", prompt="p"), Recorder())
