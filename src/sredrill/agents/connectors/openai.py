"""The `openai:MODEL` connector: sredrill's built-in LLM agent, a tool-calling loop on any OpenAI-compatible API.

Each turn sends the conversation and the run's tools to `{base_url}/chat/completions` (`--base-url` /
`OPENAI_BASE_URL`, key `OPENAI_API_KEY`) and runs the tools the model asks for through the run's recorder,
exactly like a `py:` agent's `task.call_tool`. The run ends when the model calls `submit_diagnosis` and the
toolset accepts it, or answers in text without calling a tool, or at the turn limit.

Real servers are sloppy, so each of these is survivable: tool arguments as a JSON string or an object, a tool
call without an `id`, no `usage` (token usage is then unknown, None, never 0), `content: null` beside tool
calls, any `finish_reason` or none (the presence of tool calls decides), an unknown tool name or arguments
that are not a JSON object (the model is told what was wrong and may correct it), an empty reply (nudged
once, then the run stops with what it has). 429 and 5xx are retried with backoff by `ChatClient`; other
errors make the run `errored` with the server's message.

Examples:
    >>> from sredrill.agents import resolve_agent
    >>> agent = resolve_agent("openai:qwen2.5-7b-instruct", base_url="http://127.0.0.1:8000/v1")
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Final

import httpx
from pydantic import JsonValue, ValidationError

from sredrill.agents.llm import ChatClient, ChatReply, ChatToolCall
from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reply import OUTPUT_LIMIT_BYTES, reply_from_diagnosis, reply_from_text
from sredrill.agents.spec import AgentSpec, ConnectOptions
from sredrill.diagnosis import Diagnosis, diagnosis_text
from sredrill.errors import AgentSpecError
from sredrill.trajectory import (
    AssistantStep,
    LLMCall,
    Recorder,
    ResponseStep,
    TokenUsage,
    ToolCallStep,
    ToolError,
    ToolResultStep,
    is_strict,
)

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_MAX_TURNS", "NUDGE", "SUBMIT_TOOL", "SYSTEM_PROMPT", "OpenAIAgent", "connect"]

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
DEFAULT_MAX_TURNS: Final = 30
"""Model calls per agent run; the last one is told it is the last."""
SUBMIT_TOOL: Final = "submit_diagnosis"

# Generic on purpose: nothing here may name a scenario, a failure mode or a fix (blind mode, STYLE #39).
SYSTEM_PROMPT: Final = """\
You are an experienced site reliability engineer on call, investigating a production incident with the tools \
you are given. Work from evidence, not from guesses:
1. Start with the alert: what fired, on which resource, when, and how far past its threshold.
2. Gather evidence around that time: compare each relevant signal before the alert with its peak, note when \
it started to move, and read events and workload data (the busiest queries, what sessions wait on). A few \
targeted queries beat reading everything.
3. Form hypotheses for the root cause and test each against the evidence. A signal that moves only as a \
consequence of another is a symptom, not the root cause. Rule out what the evidence contradicts, and say why.
4. Several independent faults can happen at once: report each one the evidence supports.
5. Cite, for every claim, the ids of the evidence items the tools returned, each with a fact the data shows \
(submit_diagnosis says how); use the failure-mode names the task lists; say so when something is a guess.
When a tool call returns an error, read it, correct the call, and go on.
Finish by calling submit_diagnosis when that tool exists, or answer in text: the root cause, its category, \
the causal chain from cause to alert, the evidence for each claim, and the hypotheses you ruled out."""

NUDGE: Final = (
    "Your last reply was empty. Continue the investigation with a tool call, or give your final answer now "
    "(call submit_diagnosis when that tool exists, or answer in text)."
)
LAST_TURN: Final = (
    "This is your last turn: give your final answer now (call submit_diagnosis when that tool exists, or "
    "answer in text)."
)


def _tool_definitions(task: Task) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
                # Strict mode only for a schema that meets its rules: an open schema would be rejected.
                "strict": is_strict(t.input_schema),
            },
        }
        for t in task.tools
    ]


def _user_message(task: Task) -> str:
    parts = [task.prompt]
    parts += [f"{item.description}:\n{item.value}" for item in task.context]
    if task.alert is not None:
        parts.append("The alert:\n" + json.dumps(task.alert, indent=2, ensure_ascii=False))
    return "\n\n".join(parts)


@dataclass(slots=True)
class _Run:
    """The mutable state of one agent run (never shared: `run()` makes a new one each time)."""

    task: Task
    recorder: Recorder
    messages: list[dict[str, Any]]
    turns: int = 0
    usage: TokenUsage | None = None
    usage_known: bool = True
    texts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    raw: list[Any] = field(default_factory=list)
    raw_bytes: int = 0
    edge_notes: list[str] = field(default_factory=list)
    """What the client changed in the replies (the result's notes, once each)."""
    submitted: Diagnosis | None = None

    def count(self, reply: ChatReply) -> None:
        self.turns += 1
        self.raw_bytes += reply.size_bytes or 0
        if self.raw_bytes <= OUTPUT_LIMIT_BYTES:
            self.raw.append(copy.copy(reply.raw))  # a shallow copy of the body, as received
        elif len(self.raw) == self.turns - 1:
            self.edge_notes.append(
                f"the model's replies passed {OUTPUT_LIMIT_BYTES} bytes at turn {self.turns}; "
                "the raw replies from there on were not kept"
            )
        for note in reply.notes:
            if note not in self.edge_notes:
                self.edge_notes.append(note)
        if reply.usage is None:
            if self.usage_known:
                self.notes.append(f"turn {self.turns}: the server reported no token usage, so the total is unknown")
            self.usage_known = False
            self.usage = None
        elif self.usage_known:
            before = self.usage or TokenUsage(prompt=0, completion=0, total=0)
            # Cached tokens are summed over the turns that report them (a server may report them on some only).
            cached = [c for c in (before.cached, reply.usage.cached) if c is not None]
            self.usage = TokenUsage(
                prompt=before.prompt + reply.usage.prompt,
                completion=before.completion + reply.usage.completion,
                total=before.total + reply.usage.total,
                cached=sum(cached) if cached else None,
            )

    def reject(self, call: ChatToolCall, code: str, message: str) -> str:
        """Record a call the toolset never saw (it could not be made), and what the model is told."""
        call_id = self.recorder.new_call_id()
        self.recorder.add(ToolCallStep(call_id=call_id, name=call.name, args={}))
        self.recorder.add(ToolResultStep(call_id=call_id, name=call.name, error=f"{code}: {message}"))
        self.notes.append(f"turn {self.turns}: tool call {call.name!r} rejected: {code}: {message}")
        return f"error: {code}: {message}"

    async def call(self, call: ChatToolCall) -> str:
        """Run one tool call; returns the tool message's content (the result as JSON, or the error)."""
        if call.arguments_error is not None:
            return self.reject(
                call, "bad_arguments", f"{call.arguments_error}; call {call.name} again with a JSON object"
            )
        if not self.task.tools:
            return self.reject(call, "unknown_tool", "this run has no tools: answer in text")
        try:
            result = await self.task.call_tool(call.name, **call.arguments)
        except ToolError as exc:
            return f"error: {exc.code}: {exc.message}"
        if call.name == SUBMIT_TOOL and self.submitted is None:
            self.submitted = _diagnosis(call.arguments)
        return json.dumps(result, ensure_ascii=False)

    def finish(self, reply: AgentReply) -> AgentReply:
        reply.token_usage = self.usage if self.usage_known else None
        reply.loops = self.turns
        reply.raw = self.raw
        reply.log = "\n".join(f"[sredrill] {note}" for note in self.notes)
        reply.notes = [*reply.notes, *(n for n in self.edge_notes if n not in reply.notes)]
        return reply


def _diagnosis(args: dict[str, JsonValue]) -> Diagnosis | None:
    # The toolset accepted the call, so this validates; a toolset of the user's own may accept anything.
    try:
        return Diagnosis.model_validate(args)
    except ValidationError:
        return None


@dataclass(frozen=True, slots=True)
class OpenAIAgent:
    """The built-in LLM agent on one model of one OpenAI-compatible server."""

    spec: str
    model: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    max_turns: int = DEFAULT_MAX_TURNS
    timeout_s: float = 120.0
    """Per model request; the test's timeout bounds the whole run."""
    max_retries: int = 3
    """Retries of a request on 408, 429, 5xx, network errors and malformed replies."""
    backoff_s: float = 0.5
    transport: httpx.AsyncBaseTransport | None = None
    """An httpx transport instead of the network (tests)."""

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Converse with the model until it answers, recording its messages, tool calls and results.

        Raises:
            LLMError: the server rejected a request (bad key, unknown model, bad request).
            LLMUnavailable: the server stayed unreachable or overloaded through every retry.
        """
        run = _Run(
            task=task,
            recorder=recorder,
            messages=[{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": _user_message(task)}],
        )
        tools = _tool_definitions(task)
        nudged = False
        async with ChatClient(
            self.base_url,
            model=self.model,
            api_key=self.api_key,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
            backoff_s=self.backoff_s,
            transport=self.transport,
        ) as llm:
            while run.turns < self.max_turns:
                if run.turns == self.max_turns - 1 and self.max_turns > 1:
                    run.messages.append({"role": "user", "content": LAST_TURN})
                started_ms = recorder.elapsed_ms()
                reply = await llm.complete(run.messages, tools=tools or None)
                recorder.record_llm_call(
                    LLMCall(
                        model=self.model,
                        t_ms=round(started_ms, 3),
                        duration_ms=round(recorder.elapsed_ms() - started_ms, 3),
                        usage=reply.usage,
                        finish_reason=reply.finish_reason,
                    )
                )
                run.count(reply)
                text = (reply.content or "").strip()
                if reply.tool_calls:
                    run.messages.append(reply.assistant_message())
                    if text:
                        run.texts.append(text)
                        recorder.add(AssistantStep(content=text))
                    for call in reply.tool_calls:
                        content = await run.call(call)
                        run.messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
                    if run.submitted is not None:
                        recorder.add(ResponseStep(content=diagnosis_text(run.submitted)))
                        return run.finish(reply_from_diagnosis(run.submitted))
                    continue
                if text:
                    recorder.add(ResponseStep(content=text))
                    return run.finish(reply_from_text(text))
                # Neither text nor tool calls: some models stall once; a second time means they are done.
                run.messages.append({"role": "assistant", "content": ""})
                if nudged:
                    run.notes.append(f"turn {run.turns}: a second empty reply; stopping with what the model said")
                    break
                nudged = True
                run.notes.append(f"turn {run.turns}: an empty reply (no text, no tool call); nudged once")
                run.messages.append({"role": "user", "content": NUDGE})
            else:
                run.notes.append(f"stopped at the turn limit ({self.max_turns}) without a final answer")
        output = run.texts[-1] if run.texts else ""
        recorder.add(ResponseStep(content=output))
        return run.finish(reply_from_text(output))


def connect(spec: AgentSpec, options: ConnectOptions) -> OpenAIAgent:
    """Check the model name and the endpoint.

    Args:
        spec: a parsed `openai:` spec; its target is the model name (`gpt-4o-mini`, `qwen2.5:7b`).
        options: `base_url` (`--base-url` / `OPENAI_BASE_URL`, default OpenAI's API) and `api_key`
            (`OPENAI_API_KEY`).

    Raises:
        AgentSpecError: no model name; a base URL that is not http(s); OpenAI's own API without a key.
    """
    model = spec.target.strip()
    example = "e.g. --agent openai:gpt-4o-mini, or --agent openai:MODEL --base-url http://127.0.0.1:8000/v1"
    if not model:
        raise AgentSpecError(f"{spec.text!r}: an openai: spec needs a model name", field="--agent", hint=example)
    base_url = options.base_url or DEFAULT_BASE_URL
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL as exc:
        raise AgentSpecError(f"{base_url!r} is not a URL: {exc}", field="--base-url", hint=example) from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise AgentSpecError(
            f"{base_url!r} is not an http(s) URL",
            field="--base-url",
            hint="give the API root, ending with /v1: --base-url http://127.0.0.1:8000/v1",
        )
    if options.base_url is None and not options.api_key:
        raise AgentSpecError(
            f"{spec.text!r}: no API key for {DEFAULT_BASE_URL}",
            field="--agent",
            hint="set OPENAI_API_KEY, or point --base-url (OPENAI_BASE_URL) at an OpenAI-compatible server",
        )
    return OpenAIAgent(spec=spec.text, model=model, base_url=base_url, api_key=options.api_key)
