"""The OpenAI-compatible client against a real local server (`OpenAIStub`)."""

from __future__ import annotations

import json

import httpx
import pytest

from sredrill.agents import ChatClient, LLMError, LLMUnavailable
from sredrill.errors import AgentError, StateError
from sredrill.trajectory import TokenUsage
from tests.support.openai_server import (
    OpenAIStub,
    StubReply,
    chat_completion,
    malformed,
    rate_limited,
    server_error,
    tool_call,
)

MESSAGES = [{"role": "user", "content": "Why is the database slow?"}]


def client(stub: OpenAIStub, **kwargs: object) -> ChatClient:
    # Tiny backoff: the retry logic runs for real, the test does not wait for it.
    options: dict = {"model": "stub-model", "api_key": "sk-test", "backoff_s": 0.001, **kwargs}
    return ChatClient(stub.base_url, **options)


async def test_a_content_reply_with_usage(openai_stub: OpenAIStub) -> None:
    openai_stub.push(chat_completion("the disk is full", usage=(12, 5)))
    async with client(openai_stub) as llm:
        reply = await llm.complete(MESSAGES, temperature=0.2, response_format={"type": "json_object"})
    assert reply.content == "the disk is full"
    assert reply.tool_calls == ()
    assert reply.finish_reason == "stop"
    assert reply.usage == TokenUsage(prompt=12, completion=5, total=17)
    assert reply.raw["id"] == "chatcmpl-stub"
    (request,) = openai_stub.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.body == {
        "model": "stub-model",
        "messages": MESSAGES,
        "temperature": 0.2,
        "response_format": {"type": "json_object"},
    }


async def test_tool_calls_with_string_and_object_arguments(openai_stub: OpenAIStub) -> None:
    tools = [{"type": "function", "function": {"name": "query_metrics", "parameters": {"type": "object"}}}]
    openai_stub.push(
        chat_completion(
            tool_calls=[
                tool_call("query_metrics", json.dumps({"metric_name": "CPUUtilization"}), id="call_a"),
                tool_call("get_events", {"category": "failover"}, id="call_b"),
            ]
        )
    )
    async with client(openai_stub) as llm:
        reply = await llm.complete(MESSAGES, tools=tools)
    assert reply.content is None
    assert reply.finish_reason == "tool_calls"
    first, second = reply.tool_calls
    assert (first.id, first.name, first.arguments) == ("call_a", "query_metrics", {"metric_name": "CPUUtilization"})
    assert (second.id, second.name, second.arguments) == ("call_b", "get_events", {"category": "failover"})
    assert first.arguments_error is None and second.arguments_error is None
    assert openai_stub.bodies[0]["tools"] == tools
    message = reply.assistant_message()
    assert message["tool_calls"][1]["function"]["arguments"] == '{"category": "failover"}'


async def test_a_missing_call_id_is_generated_and_bad_arguments_are_reported(openai_stub: OpenAIStub) -> None:
    openai_stub.push(
        chat_completion(
            tool_calls=[
                tool_call("get_alert", "", id=None),
                tool_call("get_alert", "{not json", id=None),
                tool_call("get_alert", "[1]", id=None),
            ]
        )
    )
    async with client(openai_stub) as llm:
        empty, broken, not_object = (await llm.complete(MESSAGES)).tool_calls
    assert empty.id.startswith("call_") and len({empty.id, broken.id, not_object.id}) == 3
    assert (empty.arguments, empty.arguments_error) == ({}, None)
    assert broken.arguments == {} and "not valid JSON" in (broken.arguments_error or "")
    assert broken.raw_arguments == "{not json"
    assert "must be a JSON object, got list" in (not_object.arguments_error or "")


async def test_no_usage_and_no_finish_reason_are_none(openai_stub: OpenAIStub) -> None:
    openai_stub.push(chat_completion("ok", finish_reason=None))
    async with client(openai_stub) as llm:
        reply = await llm.complete(MESSAGES)
    assert (reply.usage, reply.finish_reason) == (None, None)


async def test_content_given_as_parts_is_joined(openai_stub: OpenAIStub) -> None:
    body = chat_completion("x").body
    assert isinstance(body, dict)
    body["choices"][0]["message"]["content"] = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    openai_stub.push(StubReply(body=body))
    async with client(openai_stub) as llm:
        assert (await llm.complete(MESSAGES)).content == "ab"


async def test_a_429_is_retried_after_its_retry_after(openai_stub: OpenAIStub) -> None:
    openai_stub.push(rate_limited(retry_after_s=0), chat_completion("second time lucky"))
    async with client(openai_stub) as llm:
        reply = await llm.complete(MESSAGES)
    assert reply.content == "second time lucky"
    assert len(openai_stub.requests) == 2


async def test_5xx_and_malformed_replies_are_retried(openai_stub: OpenAIStub) -> None:
    openai_stub.push(server_error(503), malformed(), chat_completion("finally"))
    async with client(openai_stub) as llm:
        assert (await llm.complete(MESSAGES)).content == "finally"
    assert len(openai_stub.requests) == 3


async def test_500_on_every_attempt_is_llm_unavailable(openai_stub: OpenAIStub) -> None:
    openai_stub.push(*[server_error(500, "model crashed")] * 4)
    async with client(openai_stub, max_retries=3) as llm:
        with pytest.raises(LLMUnavailable) as caught:
            await llm.complete(MESSAGES)
    assert len(openai_stub.requests) == 4
    error = caught.value
    assert isinstance(error, AgentError)
    assert (error.status, error.attempts) == (500, 4)
    assert "failed 4 time(s)" in str(error) and "HTTP 500: model crashed" in str(error)
    assert "sk-test" not in str(error)


async def test_a_400_is_not_retried(openai_stub: OpenAIStub) -> None:
    openai_stub.push(server_error(400, "unknown model 'stub-model'"), chat_completion("never sent"))
    async with client(openai_stub) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.complete(MESSAGES)
    assert not isinstance(caught.value, LLMUnavailable)
    assert len(openai_stub.requests) == 1
    assert caught.value.status == 400
    assert "HTTP 400: unknown model 'stub-model'" in str(caught.value)


async def test_an_unreachable_server_is_llm_unavailable_after_retries() -> None:
    with OpenAIStub() as stub:
        base_url = stub.base_url  # a port that was just free: nothing listens on it once the stub closed
    async with ChatClient(base_url, model="m", max_retries=1, backoff_s=0.001) as llm:
        with pytest.raises(LLMUnavailable, match="ConnectError") as caught:
            await llm.complete(MESSAGES)
    assert (caught.value.status, caught.value.attempts) == (None, 2)


async def test_a_responder_answers_when_the_queue_is_empty(openai_stub: OpenAIStub) -> None:
    openai_stub.responder = lambda body: (200, dict(chat_completion(body["messages"][-1]["content"]).body), {})
    async with client(openai_stub) as llm:
        assert (await llm.complete(MESSAGES)).content == "Why is the database slow?"


async def test_a_long_retry_after_is_capped(openai_stub: OpenAIStub) -> None:
    openai_stub.push(rate_limited(retry_after_s=3600), chat_completion("ok"))
    async with client(openai_stub, max_retry_after_s=0.01) as llm:
        assert (await llm.complete(MESSAGES)).content == "ok"
    assert len(openai_stub.requests) == 2


async def test_a_closed_client_says_so() -> None:
    llm = ChatClient("http://127.0.0.1:9/v1", model="m")
    await llm.aclose()
    with pytest.raises(StateError, match="closed"):
        await llm.complete(MESSAGES)


async def test_the_base_url_may_end_with_a_slash() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json=chat_completion("ok").body)

    async with ChatClient("http://llm.invalid/v1/", model="m", transport=httpx.MockTransport(handler)) as llm:
        await llm.complete(MESSAGES)
    assert seen == ["http://llm.invalid/v1/chat/completions"]
