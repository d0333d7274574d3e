"""The `http(s)://` connector: an agent service that answers a POSTed Task with JSON (DESIGN §4.1).

sredrill POSTs the Task as JSON to the URL, with a W3C `traceparent` header; the service investigates
(through the Task's `tools_url` and `token`, served by sredrill for this run) and answers `200` with

    {"output": "…", "diagnosis": {…}, "steps": [{"kind": "thinking", "content": "…"}, …]}

every key optional: `steps` are recorded like a `cmd:` agent's JSON lines (same kinds, same rules), then the
answer is `diagnosis`, else `output`, else what the steps answered. A non-2xx status, a body that is not
that JSON object, an unreachable service or one slower than the deadline make the run `errored` with the
reason. When the run is cancelled (the engine's timeout) the request is abandoned and its connection closed.

Or it answers `text/event-stream`: Server-Sent Events whose `data` are AG-UI events, recorded as they arrive
(`_AguiEvents`): text messages (`TEXT_MESSAGE_START/CONTENT/END`, `TEXT_MESSAGE_CHUNK`) are assistant steps and
the last one is the response, tool calls (`TOOL_CALL_START/ARGS/END`, `TOOL_CALL_RESULT`) are tool_call and
tool_result steps, thinking (`THINKING_TEXT_MESSAGE_*`, `REASONING_MESSAGE_*`) is a thinking step; `RUN_ERROR`
makes the run `errored` with its message, and the stream must end with `RUN_FINISHED` (whose `result`, when it
is a Diagnosis object or text, is the answer). Other AG-UI events (state, steps, custom, raw) are ignored.

Replies are bounded: a JSON body over `BODY_LIMIT_BYTES` is an error (nothing is held beyond it); of an event
stream the first `OUTPUT_LIMIT_BYTES` of event data become steps, and past that only `RUN_FINISHED` and
`RUN_ERROR` are still looked for. JSON of any depth is an error, never a crash; lone surrogates are replaced.
Each change is said in the reply's `notes`.

Examples:
    >>> from sredrill.agents import resolve_agent
    >>> agent = resolve_agent("http://127.0.0.1:8001/agent")
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import httpx
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from sredrill.agents.http_client import async_client
from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reply import OUTPUT_LIMIT_BYTES, cap_text, read_capped, truncated_note, validation_lines
from sredrill.agents.spec import AgentSpec, ConnectOptions
from sredrill.agents.transcript import Transcript
from sredrill.diagnosis import Diagnosis
from sredrill.errors import AgentError, AgentSpecError
from sredrill.text import REPLACED_NOTE, parse_json, scrub
from sredrill.trajectory import Recorder

__all__ = ["BODY_LIMIT_BYTES", "DEFAULT_TIMEOUT_S", "HttpAgent", "ServiceReply", "connect"]

DEFAULT_TIMEOUT_S: Final = 600.0
"""How long to wait for the reply when the Task sets no deadline."""
CONNECT_TIMEOUT_S: Final = 10.0
BODY_LIMIT_BYTES: Final = 16 << 20
"""The largest JSON reply read; a longer one is an error (its output would be cut to 1 MiB anyway)."""
EVENT_LIMIT_BYTES: Final = 64 << 10
"""Past the output limit, an event up to this size is still read for RUN_FINISHED / RUN_ERROR."""
_EXCERPT_CHARS: Final = 300
_ERROR_BODY_BYTES: Final = 64 << 10


class ServiceReply(BaseModel):
    """What an agent service answers (a format we own: an unknown key is an error, not ignored)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    output: str | None = None
    """The final answer as text (parsed like a `cmd:` agent's `response`: `ROOT_CAUSE:` text or JSON)."""
    diagnosis: dict[str, JsonValue] | None = None
    """The final answer as a Diagnosis; wins over `output`."""
    steps: list[dict[str, JsonValue]] = Field(default_factory=list)
    """What the agent did, in order: the step objects of a `cmd:` agent's JSON lines."""


def _excerpt(text: str) -> str:
    text = scrub(text)[0].strip()
    return repr(text[:_EXCERPT_CHARS] + ("…" if len(text) > _EXCERPT_CHARS else "")) if text else "(empty body)"


@dataclass(frozen=True, slots=True)
class HttpAgent:
    """An agent service reached over HTTP(S) (DESIGN §4.1)."""

    spec: str
    url: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    """Longest wait for the reply when the Task has no `deadline_s`."""
    transport: httpx.AsyncBaseTransport | None = None
    """An httpx transport instead of the network (tests)."""
    needs_tool_server: ClassVar[bool] = True
    """It runs outside this process: the engine serves its tools over HTTP (the Task's `tools_url`)."""

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """POST the Task, record the reply's steps and return its answer.

        Raises:
            AgentError: the service is unreachable, too slow, answered a non-2xx status, or a body that is
                not a reply object; the message has the status and an excerpt of the body.
        """
        deadline = task.deadline_s if task.deadline_s is not None else self.timeout_s
        timeout = httpx.Timeout(deadline, connect=min(CONNECT_TIMEOUT_S, deadline))
        headers = {"traceparent": task.traceparent(), "Accept": "application/json, text/event-stream"}
        # `env` is for subprocess agents (their environment); it is never sent over the network.
        payload = task.model_dump_json(exclude={"env"}).encode()
        # One client per run: closing it (also when the run is cancelled) closes the connection, so the
        # service sees the request abandoned. Its TLS context is the process's one (`http_client`).
        async with async_client(self.url, timeout=timeout, transport=self.transport) as client:
            try:
                request = client.build_request(
                    "POST", self.url, content=payload, headers={**headers, "Content-Type": "application/json"}
                )
                response = await client.send(request, stream=True)
                try:
                    if response.is_success and _is_event_stream(response):
                        return await self._stream(response, recorder)
                    limit = BODY_LIMIT_BYTES if response.is_success else _ERROR_BODY_BYTES
                    content, complete = await read_capped(response.aiter_bytes(), limit)
                finally:
                    await response.aclose()
            except httpx.TimeoutException as exc:
                raise AgentError(
                    f"agent service {self.url} did not answer within {deadline:g}s ({type(exc).__name__})"
                ) from exc
            except httpx.HTTPError as exc:
                raise AgentError(f"cannot reach agent service {self.url}: {type(exc).__name__}: {exc}") from exc
        text = content.decode("utf-8", errors="replace")
        if not response.is_success:
            raise AgentError(
                f"agent service {self.url} answered HTTP {response.status_code} {response.reason_phrase}: "
                f"{_excerpt(text)}"
            )
        if not complete:
            raise AgentError(
                f"agent service {self.url} answered more than {BODY_LIMIT_BYTES} bytes: {_excerpt(text)}; keep "
                f"replies under that (the output is kept up to {OUTPUT_LIMIT_BYTES} bytes anyway)"
            )
        body, replaced = self._json(response, content, text)
        reply = self._record(self._validate(body), recorder, body, text)
        if replaced and REPLACED_NOTE not in reply.notes:
            reply.notes.append(REPLACED_NOTE)
        return reply

    async def _stream(self, response: httpx.Response, recorder: Recorder) -> AgentReply:
        events = _AguiEvents(self.url, Transcript(recorder))
        lines = _SseLines()
        async for chunk in response.aiter_bytes():
            for line in lines.add(chunk, events.full):
                events.line(line)
            if events.finished:
                break
        else:
            for line in lines.finish():
                events.line(line)
            events.line("")  # a stream may end without the blank line after its last event
        events.dropped_bytes += lines.dropped_bytes
        return events.reply()

    def _json(self, response: httpx.Response, content: bytes, text: str) -> tuple[dict[str, JsonValue], bool]:
        content_type = response.headers.get("content-type", "")
        try:
            body, replaced = parse_json(content)
        except ValueError as exc:
            raise AgentError(
                f"agent service {self.url} answered {content_type or 'no content type'}, not JSON: "
                f"{_excerpt(text)} ({exc}); reply with a JSON object {{output?, diagnosis?, steps?}}"
            ) from None
        if not isinstance(body, dict):
            raise AgentError(
                f"agent service {self.url} answered JSON {type(body).__name__}, not an object: "
                f"{_excerpt(text)}; reply with {{output?, diagnosis?, steps?}}"
            )
        return body, replaced

    def _validate(self, body: dict[str, JsonValue]) -> ServiceReply:
        try:
            return ServiceReply.model_validate(body)
        except ValidationError as exc:
            raise AgentError(
                f"agent service {self.url} answered an invalid reply:\n{validation_lines(exc)}\n"
                "  a reply is a JSON object {output?: str, diagnosis?: object, steps?: [object]}"
            ) from exc

    def _record(self, reply: ServiceReply, recorder: Recorder, body: dict[str, JsonValue], text: str) -> AgentReply:
        # A top-level diagnosis is the answer itself, so a broken one fails the run with its fields named;
        # a broken step is kept as text with a warning, as for a `cmd:` agent.
        diagnosis = None
        if reply.diagnosis is not None:
            try:
                diagnosis = Diagnosis.model_validate(reply.diagnosis)
            except ValidationError as exc:
                raise AgentError(
                    f"agent service {self.url} answered a diagnosis that is not valid:\n{validation_lines(exc)}"
                ) from exc
        transcript = Transcript(recorder)
        try:
            for step in reply.steps:
                transcript.feed(json.dumps(step, ensure_ascii=False))
        except RecursionError:
            raise AgentError(f"agent service {self.url} answered steps nested too deeply: flatten them") from None
        if diagnosis is not None:
            transcript.feed(json.dumps({"kind": "diagnosis", "diagnosis": diagnosis.model_dump(mode="json")}))
        elif reply.output is not None:
            transcript.feed(json.dumps({"kind": "response", "content": reply.output}, ensure_ascii=False))
        answer = transcript.reply("")
        raw: list[Any] = [body]
        notes = list(answer.notes)
        if len(text) > OUTPUT_LIMIT_BYTES // 4 and len(encoded := text.encode("utf-8")) > OUTPUT_LIMIT_BYTES:
            # The whole body is held until the reply is built; what is kept of it is its head, as text.
            raw = [cap_text(text)[0]]
            notes.append(truncated_note("the agent service's reply body", len(encoded)))
        return dataclasses.replace(answer, raw=raw, notes=notes)


def _is_event_stream(response: httpx.Response) -> bool:
    content_type: str = response.headers.get("content-type", "")  # httpx's Headers.get returns Any
    return content_type.startswith("text/event-stream")


class _SseLines:
    """A byte stream cut into text lines, each at most `OUTPUT_LIMIT_BYTES` (`EVENT_LIMIT_BYTES` once the
    stream is past its output limit); the rest of a longer line is dropped and counted."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self._skipping = False
        self.dropped_bytes = 0

    def add(self, chunk: bytes, full: bool) -> list[str]:
        limit = EVENT_LIMIT_BYTES if full else OUTPUT_LIMIT_BYTES
        lines: list[str] = []
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            self._part(chunk[start:end], limit)
            if self._skipping:
                self._skipping = False
            else:
                lines.append(self._take())
            start = end + 1
        self._part(chunk[start:], limit)
        return lines

    def _part(self, part: bytes, limit: int) -> None:
        if self._skipping:
            self.dropped_bytes += len(part)
            return
        self._pending += part
        if len(self._pending) > limit:
            self.dropped_bytes += len(self._pending)
            self._pending.clear()
            self._skipping = True

    def _take(self) -> str:
        line = self._pending.decode("utf-8", errors="replace").rstrip("\r")
        self._pending.clear()
        return line

    def finish(self) -> list[str]:
        return [self._take()] if self._pending and not self._skipping else []


class _AguiEvents:
    """An AG-UI event stream turned into trajectory steps, through the `cmd:` agents' transcript rules.

    A text message is held until the next step: the last one of the run is the response, the others are
    assistant text. Tool-call arguments arrive as JSON fragments and are parsed when the call ends. Event data
    is taken up to `OUTPUT_LIMIT_BYTES`; past that only a short RUN_FINISHED or RUN_ERROR is still read.
    """

    def __init__(self, url: str, transcript: Transcript) -> None:
        self.url = url
        self.transcript = transcript
        self.finished = False
        self.events: list[JsonValue] = []
        self.kept_bytes = 0
        self.dropped_bytes = 0
        self.replaced = False
        self._data: list[str] = []
        self._data_bytes = 0
        self._skipping = False
        self._texts: dict[str, list[str]] = {}
        self._thinking: list[str] | None = None
        self._calls: dict[str, tuple[str, list[str]]] = {}
        self._held: str | None = None
        self._result: JsonValue = None

    @property
    def full(self) -> bool:
        return self.kept_bytes >= OUTPUT_LIMIT_BYTES

    def line(self, line: str) -> None:
        """One line of the SSE stream; a blank line ends an event."""
        if self.finished:
            return
        if not line:
            data, self._data, self._data_bytes = "\n".join(self._data), [], 0
            if self._skipping:
                self._skipping = False
            elif data:
                self._dispatch(data)
            return
        if not line.startswith("data:") or self._skipping:
            return
        part = line[5:].removeprefix(" ")
        self._data.append(part)
        self._data_bytes += len(part)
        if self._data_bytes > (EVENT_LIMIT_BYTES if self.full else OUTPUT_LIMIT_BYTES):
            self.dropped_bytes += self._data_bytes
            self._data, self._data_bytes, self._skipping = [], 0, True

    def _dispatch(self, data: str) -> None:
        if self.full and "RUN_FINISHED" not in data and "RUN_ERROR" not in data:
            self.dropped_bytes += len(data)
            return
        self.kept_bytes += len(data)
        self.feed(data)

    def _feed_step(self, step: dict[str, JsonValue]) -> None:
        try:
            line = json.dumps(step, ensure_ascii=False)
        except RecursionError:
            raise AgentError(f"agent service {self.url}: an AG-UI event is nested too deeply: flatten it") from None
        self.transcript.feed(line)

    def _step(self, **step: JsonValue) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            self._feed_step({"kind": "assistant", "content": held})
        self._feed_step(step)

    def _end_text(self, message_id: str) -> None:
        text = "".join(self._texts.pop(message_id, []))
        if text:
            if self._held is not None:
                self._feed_step({"kind": "assistant", "content": self._held})
            self._held = text

    def feed(self, data: str) -> None:
        """One SSE event's data: an AG-UI event object."""
        try:
            event, replaced = parse_json(data)
        except ValueError as exc:
            self.transcript.warnings.append(f"an event's data is not JSON ({exc}), ignored: {_excerpt(data)}")
            return
        self.replaced |= replaced
        if not isinstance(event, dict):
            return
        self.events.append(event)
        kind = event.get("type")
        message_id = _field(event, "messageId")
        call_id = _field(event, "toolCallId")
        match kind:
            case "TEXT_MESSAGE_START":
                self._texts[message_id] = []
            case "TEXT_MESSAGE_CONTENT" | "TEXT_MESSAGE_CHUNK":
                self._texts.setdefault(message_id, []).append(_field(event, "delta"))
                if kind == "TEXT_MESSAGE_CHUNK" and not message_id:
                    self._end_text(message_id)
            case "TEXT_MESSAGE_END":
                self._end_text(message_id)
            case "THINKING_TEXT_MESSAGE_START" | "REASONING_MESSAGE_START" | "THINKING_START":
                self._thinking = self._thinking if self._thinking is not None else []
            case "THINKING_TEXT_MESSAGE_CONTENT" | "REASONING_MESSAGE_CONTENT" | "REASONING_MESSAGE_CHUNK":
                (self._thinking if self._thinking is not None else self._open_thinking()).append(_field(event, "delta"))
            case "THINKING_TEXT_MESSAGE_END" | "REASONING_MESSAGE_END" | "THINKING_END" | "REASONING_END":
                text, self._thinking = "".join(self._thinking or []), None
                if text:
                    self._step(kind="thinking", content=text)
            case "TOOL_CALL_START":
                self._calls[call_id] = (_field(event, "toolCallName"), [])
            case "TOOL_CALL_ARGS" | "TOOL_CALL_CHUNK":
                name = _field(event, "toolCallName") or self._calls.get(call_id, ("", []))[0]
                self._calls.setdefault(call_id, (name, []))[1].append(_field(event, "delta"))
            case "TOOL_CALL_END":
                self._end_call(call_id)
            case "TOOL_CALL_RESULT":
                if call_id in self._calls:
                    self._end_call(call_id)
                self._step(kind="tool_result", call_id=call_id, result=_parsed(event.get("content")))
            case "RUN_ERROR":
                message, code = _field(event, "message")[:_EXCERPT_CHARS], _field(event, "code")[:_EXCERPT_CHARS]
                raise AgentError(
                    f"agent service {self.url} reported RUN_ERROR: {message or '(no message)'}"
                    + (f" (code {code})" if code else "")
                )
            case "RUN_FINISHED":
                self._result = event.get("result")
                self.finished = True

    def _open_thinking(self) -> list[str]:
        self._thinking = []
        return self._thinking

    def _end_call(self, call_id: str) -> None:
        name, parts = self._calls.pop(call_id, ("", []))
        raw = "".join(parts).strip()
        args = _parsed(raw) if raw else {}
        if not isinstance(args, dict):
            self.transcript.warnings.append(
                f"tool call {call_id} ({name}): arguments are not a JSON object: {_excerpt(raw)}"
            )
            args = {"arguments": raw}
        self._step(kind="tool_call", name=name, args=args, call_id=call_id)

    def reply(self) -> AgentReply:
        """The answer once the stream ended.

        Raises:
            AgentError: the stream ended without RUN_FINISHED.
        """
        if not self.finished:
            raise AgentError(
                f"agent service {self.url}: the AG-UI stream ended without RUN_FINISHED (or RUN_ERROR); "
                "end every run with one of them"
            )
        result = self._result
        if isinstance(result, dict) and "root_cause" in result:
            self._step(kind="diagnosis", diagnosis=result)
        elif isinstance(result, dict) and isinstance(result.get("diagnosis"), dict):
            self._step(kind="diagnosis", diagnosis=result["diagnosis"])
        elif isinstance(result, str) and result:
            self._step(kind="response", content=result)
        elif self._held is not None:
            held, self._held = self._held, None
            self._feed_step({"kind": "response", "content": held})
        answer = self.transcript.reply("")
        notes = list(answer.notes)
        if self.replaced and REPLACED_NOTE not in notes:
            notes.append(REPLACED_NOTE)
        if self.dropped_bytes:
            notes.append(
                truncated_note("the agent service's event stream", self.kept_bytes + self.dropped_bytes)
                + "; past that only RUN_FINISHED and RUN_ERROR were read"
            )
        return dataclasses.replace(answer, raw=list(self.events), notes=notes)


def _field(event: dict[str, JsonValue], key: str) -> str:
    """A text field of an event; a number is taken as its text, anything else (a list, an object) as empty."""
    value = event.get(key)
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return ""


def _parsed(content: JsonValue) -> JsonValue:
    """A tool result or arguments sent as a JSON string: the value it encodes, else the text itself."""
    if isinstance(content, str):
        try:
            return parse_json(content)[0]
        except ValueError:
            return content
    return content


def connect(spec: AgentSpec, options: ConnectOptions) -> HttpAgent:
    """Check that the spec is an http(s) URL with a host.

    Args:
        spec: a parsed `http://` or `https://` spec; the whole spec is the URL.
        options: unused; the service brings its own configuration.

    Raises:
        AgentSpecError: the URL cannot be parsed or has no host.
    """
    try:
        url = httpx.URL(spec.text)
    except httpx.InvalidURL as exc:
        raise AgentSpecError(
            f"{spec.text!r}: not a valid URL: {exc}", field="--agent", hint="e.g. --agent http://127.0.0.1:8001/agent"
        ) from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise AgentSpecError(
            f"{spec.text!r}: an agent service URL needs a host",
            field="--agent",
            hint="e.g. --agent http://127.0.0.1:8001/agent",
        )
    return HttpAgent(spec=spec.text, url=str(url))
