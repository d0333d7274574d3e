"""The `openai:` agent's model calls become GenAI `chat` spans of its run: `result.traces()` sees each one."""

from __future__ import annotations

import json

from tests.support.openai_server import OpenAIStub, chat_completion, tool_call

from .conftest import Project

EVAL = """
from sredrill import test, expect

@test("model calls are spans", prompt="Why is the database slow?")
async def _(agent):
    result = await agent.run(tools={"lookup": lookup})
    traces = await result.traces()
    chats = [s for s in traces.spans if s.name == "chat stub-model"]
    expect(len(chats)).to_equal(2)
    expect(traces.total_tokens).to_equal(150)   # 100 + 50 from the two calls, not doubled by the agent span
    expect(traces.span_duration("chat stub-model")).to_be_greater_than(0)

async def lookup(metric_name):
    \"\"\"Look a metric up.\"\"\"
    return {"metric_name": metric_name, "values": [1, 2, 3]}
"""


def test_each_model_call_is_a_chat_span_with_its_tokens(project: Project) -> None:
    project.write("spans_eval.py", EVAL)
    replies = [
        chat_completion(tool_calls=[tool_call("lookup", {"metric_name": "CPUUtilization"})], usage=(80, 20)),
        chat_completion("CPU is saturated by a bad query.", usage=(40, 10)),
    ]
    with OpenAIStub(replies) as stub:
        cli = project.run(
            "test", "spans_eval.py", "--agent", "openai:stub-model", "--base-url", stub.base_url, "--json",
            env={"OPENAI_API_KEY": "sk-test"},
        )  # fmt: skip
        assert len(stub.requests) == 2
    result = cli.result("model calls are spans")
    assert result["status"] == "passed", json.dumps(result["signals"], indent=1)[:3000] + cli.stderr
