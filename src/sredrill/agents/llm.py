"""OpenAI-compatible chat completions: a small async client over httpx, with retries.

It speaks the Chat Completions wire format that OpenAI, vLLM, Ollama, LiteLLM and llama.cpp share, using
httpx (a core dependency) rather than the `openai` package (an extra). `base_url` follows the OpenAI
convention and ends with `/v1`; requests go to `{base_url}/chat/completions`. Callers resolve defaults
(`--base-url`, `OPENAI_BASE_URL`, `OPENAI_API_KEY`); this module reads no environment.

Examples:
    >>> async with ChatClient("http://127.0.0.1:8000/v1", model="qwen2.5") as llm:
    ...     reply = await llm.complete([{"role": "user", "content": "Why is the database slow?"}])
    ...     print(reply.content, reply.usage)
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final

import httpx
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from sredrill.agents.http_client import async_client
from sredrill.agents.reply import cap_text, read_capped, truncated_note
from sredrill.errors import AgentError, StateError
from sredrill.text import REPLACED_NOTE, parse_json
from sredrill.trajectory import TokenUsage

__all__ = ["ChatClient", "ChatReply", "ChatToolCall", "LLMError", "LLMUnavailable"]

_RETRY_STATUSES: Final = frozenset({408, 429})
_ERROR_EXCERPT_CHARS: Final = 300
BODY_LIMIT_BYTES: Final = 16 << 20
"""The largest response body read; a longer one is a malformed reply (retried like one)."""


class LLMError(AgentError):
    """Raised when the server rejected a chat completion (a 4xx other than 408/429: bad request, bad key).

    Attributes:
        url: the endpoint called.
        status: the last HTTP status, or None when no response came back.
        attempts: how many requests were made.
    """

    def __init__(self, message: str, *, url: str, status: int | None, attempts: int) -> None:
        self.url = url
        self.status = status
        self.attempts = attempts
        super().__init__(message)


class LLMUnavailable(LLMError):
    """Raised when the server stayed unreachable, overloaded (429, 5xx) or malformed through every retry."""


@dataclass(frozen=True, slots=True)
class ChatToolCall:
    """One tool call the model asked for."""

    id: str
    """The model's call id, or a generated one when the server sent none."""
    name: str
    arguments: dict[str, JsonValue]
    """The arguments as an object; empty when they were not a JSON object (see `arguments_error`)."""
    raw_arguments: str
    """The arguments as the server sent them, as JSON text (to echo back in the conversation)."""
    arguments_error: str | None = None
    """Why `arguments` could not be read; a loop should tell the model rather than call the tool."""


@dataclass(frozen=True, slots=True)
class ChatReply:
    """The first choice of a chat completion."""

    content: str | None
    """The message text; None when the model only called tools."""
    tool_calls: tuple[ChatToolCall, ...]
    finish_reason: str | None
    """`stop`, `tool_calls`, `length`, …; None when the server did not say."""
    usage: TokenUsage | None
    """Tokens spent; None when the server did not report them (never zeros)."""
    raw: JsonValue
    """The response body as received (lone surrogates replaced): a JSON object, as the completion is one."""
    notes: tuple[str, ...] = ()
    """What the client changed on the way in: text replaced, content cut to 1 MiB."""
    size_bytes: int | None = None
    """The response body's size."""

    def assistant_message(self) -> dict[str, Any]:
        """This reply as the assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments}}
                for c in self.tool_calls
            ]
        return message


# The wire format is OpenAI's, not ours: unknown keys are ignored, so every compatible server's extras load.
class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Function(_Wire):
    name: str
    arguments: str | dict[str, JsonValue] | None = None


class _ToolCall(_Wire):
    id: str | None = None
    function: _Function


class _Part(_Wire):
    type: str
    text: str | None = None


class _Message(_Wire):
    content: str | list[_Part] | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(_Wire):
    message: _Message
    finish_reason: str | None = None


class _PromptDetails(_Wire):
    cached_tokens: int | None = None


class _Usage(_Wire):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    prompt_tokens_details: _PromptDetails | None = None
    """OpenAI's breakdown of the prompt: `cached_tokens` were read from its prompt cache (part of the prompt)."""


class _Completion(_Wire):
    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None


class _Malformed(Exception):
    """A 2xx response whose body is not a chat completion."""


def _tool_call(call: _ToolCall) -> ChatToolCall:
    args = call.function.arguments
    call_id = call.id or f"call_{uuid.uuid4().hex[:24]}"
    if isinstance(args, dict):
        try:
            return ChatToolCall(call_id, call.function.name, args, json.dumps(args))
        except RecursionError:
            return ChatToolCall(call_id, call.function.name, {}, "{}", "arguments are nested too deeply")
    raw = args or ""
    if not raw.strip():
        return ChatToolCall(call_id, call.function.name, {}, raw or "{}")
    try:
        parsed, _ = parse_json(raw)
    except ValueError as exc:
        return ChatToolCall(call_id, call.function.name, {}, raw, f"arguments are not valid JSON: {exc}")
    if not isinstance(parsed, dict):
        problem = f"arguments must be a JSON object, got {type(parsed).__name__}"
        return ChatToolCall(call_id, call.function.name, {}, raw, problem)
    return ChatToolCall(call_id, call.function.name, parsed, raw)


def _usage(usage: _Usage | None) -> TokenUsage | None:
    if usage is None or usage.prompt_tokens is None or usage.completion_tokens is None:
        return None
    total = usage.total_tokens
    details = usage.prompt_tokens_details
    return TokenUsage(
        prompt=usage.prompt_tokens,
        completion=usage.completion_tokens,
        total=total if total is not None else usage.prompt_tokens + usage.completion_tokens,
        cached=details.cached_tokens if details is not None else None,
    )


def _parse_reply(content: bytes) -> ChatReply:
    try:
        body, replaced = parse_json(content)
        completion = _Completion.model_validate(body)
    except (ValueError, ValidationError) as exc:
        excerpt = content[: _ERROR_EXCERPT_CHARS * 4].decode("utf-8", errors="replace")[:_ERROR_EXCERPT_CHARS]
        raise _Malformed(f"the reply is not a chat completion ({type(exc).__name__}): {excerpt!r}") from exc
    choice = completion.choices[0]
    text = choice.message.content
    if isinstance(text, list):
        text = "".join(p.text for p in text if p.type == "text" and p.text)
    notes = [REPLACED_NOTE] if replaced else []
    if text is not None:
        text, dropped = cap_text(text)
        if dropped:
            notes.append(truncated_note("the model's message", len(text.encode("utf-8")) + dropped))
    return ChatReply(
        content=text,
        tool_calls=tuple(_tool_call(c) for c in choice.message.tool_calls or ()),
        finish_reason=choice.finish_reason,
        usage=_usage(completion.usage),
        raw=body,
        notes=tuple(notes),
        size_bytes=len(content),
    )


def _error_text(response: httpx.Response, content: bytes) -> str:
    """The server's own explanation of a failed request, kept short."""
    try:
        body, _ = parse_json(content)
    except ValueError:
        text = content[: _ERROR_EXCERPT_CHARS * 4].decode("utf-8", errors="replace")
        return text[:_ERROR_EXCERPT_CHARS].strip() or response.reason_phrase
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str):
        return message[:_ERROR_EXCERPT_CHARS]
    if isinstance(error, str):
        return error[:_ERROR_EXCERPT_CHARS]
    try:
        return json.dumps(body)[:_ERROR_EXCERPT_CHARS]
    except RecursionError:
        return content[:_ERROR_EXCERPT_CHARS].decode("utf-8", errors="replace")


def _retry_after_s(response: httpx.Response) -> float | None:
    # Only the delay-seconds form; an HTTP date (rare from LLM servers) falls back to our own backoff.
    value = response.headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 else None


class ChatClient:
    """An async client for one model on one OpenAI-compatible server.

    Use it as an async context manager (or call `aclose()`), so its connections are released.

    Args:
        base_url: the API root, ending with `/v1` (`https://api.openai.com/v1`, `http://127.0.0.1:8000/v1`).
        model: the model name sent with every request.
        api_key: sent as `Authorization: Bearer …` when given.
        timeout_s: per-request network timeout.
        max_retries: retries after the first attempt, on 408, 429, 5xx, connection errors and malformed
            replies; other 4xx are never retried.
        backoff_s: the first retry's delay; it doubles each retry, with jitter, up to `max_backoff_s`.
        max_backoff_s: the longest delay between retries of our own choosing.
        max_retry_after_s: a server's `Retry-After` is honoured up to this many seconds.
        transport: an httpx transport to use instead of the network (tests).
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 8.0,
        max_retry_after_s: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_retry_after_s = max_retry_after_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # The process's one TLS context (`http_client`): a client per run or judged test costs no bundle read.
        self._http = async_client(self.url, timeout=timeout_s, headers=headers, transport=transport)
        # Jitter only spreads retries of concurrent clients apart; it needs no seed, but not the global one.
        self._random = random.Random()
        self._closed = False

    def __repr__(self) -> str:
        return f"ChatClient({self.url!r}, model={self.model!r})"

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Release the connections; the client cannot be used afterwards."""
        self._closed = True
        await self._http.aclose()

    def _delay_s(self, retry: int, retry_after_s: float | None) -> float:
        if retry_after_s is not None:
            return min(retry_after_s, self.max_retry_after_s)
        ceiling = min(self.backoff_s * 2.0**retry, self.max_backoff_s)
        return ceiling * (0.5 + self._random.random() / 2)

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        temperature: float = 0,
        response_format: Mapping[str, Any] | None = None,
    ) -> ChatReply:
        """Ask the model for the next message.

        Args:
            messages: the conversation, in the Chat Completions format (`{"role", "content", …}`).
            tools: tool definitions (`{"type": "function", "function": {name, description, parameters}}`).
            temperature: sampling temperature; 0 for the most repeatable answers.
            response_format: e.g. `{"type": "json_object"}`, passed through as given.

        Returns:
            The first choice, with its tool calls and token usage.

        Raises:
            LLMError: the server rejected the request (4xx other than 408/429).
            LLMUnavailable: every attempt failed (connection error, 408, 429, 5xx, malformed reply).
            StateError: the client was closed.
        """
        if self._closed:
            raise StateError("this ChatClient is closed: create a new one (or use it inside `async with`)")
        body: dict[str, Any] = {"model": self.model, "messages": list(messages), "temperature": temperature}
        if tools:
            body["tools"] = list(tools)
        if response_format is not None:
            body["response_format"] = dict(response_format)
        # Encoded here, ASCII-only: a lone surrogate in the conversation travels as its JSON escape instead of
        # failing to encode as UTF-8.
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        attempts = self.max_retries + 1
        problem = ""
        status: int | None = None
        retry_after_s: float | None = None
        for attempt in range(1, attempts + 1):
            if attempt > 1:
                await asyncio.sleep(self._delay_s(attempt - 2, retry_after_s))
            status, retry_after_s = None, None
            try:
                async with self._http.stream("POST", self.url, content=payload, headers=headers) as response:
                    content, complete = await read_capped(response.aiter_bytes(), BODY_LIMIT_BYTES)
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                continue
            status = response.status_code
            if response.is_success and not complete:
                problem = f"the reply is larger than {BODY_LIMIT_BYTES} bytes"
            elif response.is_success:
                try:
                    return _parse_reply(content)
                except _Malformed as exc:
                    problem = str(exc)
            elif status in _RETRY_STATUSES or status >= 500:
                problem = f"HTTP {status}: {_error_text(response, content)}"
                retry_after_s = _retry_after_s(response)
            else:
                raise LLMError(
                    f"{self.url} rejected the request for model {self.model!r}: HTTP {status}: "
                    f"{_error_text(response, content)}",
                    url=self.url,
                    status=status,
                    attempts=attempt,
                )
        raise LLMUnavailable(
            f"{self.url} failed {attempts} time(s) for model {self.model!r}; last: {problem}",
            url=self.url,
            status=status,
            attempts=attempts,
        )
