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

Examples:
    >>> from sredrill.agents import resolve_agent
    >>> agent = resolve_agent("http://127.0.0.1:8001/agent")
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import ClassVar, Final

import httpx
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reply import validation_lines
from sredrill.agents.spec import AgentSpec, ConnectOptions
from sredrill.agents.transcript import Transcript
from sredrill.diagnosis import Diagnosis
from sredrill.errors import AgentError, AgentSpecError
from sredrill.trajectory import Recorder

__all__ = ["DEFAULT_TIMEOUT_S", "HttpAgent", "ServiceReply", "connect"]

DEFAULT_TIMEOUT_S: Final = 600.0
"""How long to wait for the reply when the Task sets no deadline."""
CONNECT_TIMEOUT_S: Final = 10.0
_EXCERPT_CHARS: Final = 300


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
    text = text.strip()
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
        # service sees the request abandoned.
        async with httpx.AsyncClient(timeout=timeout, transport=self.transport) as client:
            try:
                request = client.build_request(
                    "POST", self.url, content=payload, headers={**headers, "Content-Type": "application/json"}
                )
                response = await client.send(request, stream=True)
                try:
                    if response.is_success and _is_event_stream(response):
                        return await self._stream(response, recorder)
                    await response.aread()
                finally:
                    await response.aclose()
            except httpx.TimeoutException as exc:
                raise AgentError(
                    f"agent service {self.url} did not answer within {deadline:g}s ({type(exc).__name__})"
                ) from exc
            except httpx.HTTPError as exc:
                raise AgentError(f"cannot reach agent service {self.url}: {type(exc).__name__}: {exc}") from exc
        if not response.is_success:
            raise AgentError(
                f"agent service {self.url} answered HTTP {response.status_code} {response.reason_phrase}: "
                f"{_excerpt(response.text)}"
            )
        body = self._json(response)
        return self._record(self._validate(body), recorder, body)

    async def _stream(self, response: httpx.Response, recorder: Recorder) -> AgentReply:
        events = _AguiEvents(self.url, Transcript(recorder))
        data: list[str] = []
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif not line and data:
                events.feed("\n".join(data))
                data = []
            if events.finished:
                break
        if data and not events.finished:
            events.feed("\n".join(data))
        return events.reply()

    def _json(self, response: httpx.Response) -> dict[str, JsonValue]:
        content_type = response.headers.get("content-type", "")
        try:
            body = response.json()
        except ValueError as exc:
            raise AgentError(
                f"agent service {self.url} answered {content_type or 'no content type'}, not JSON: "
                f"{_excerpt(response.text)}; reply with a JSON object {{output?, diagnosis?, steps?}}"
            ) from exc
        if not isinstance(body, dict):
            raise AgentError(
                f"agent service {self.url} answered JSON {type(body).__name__}, not an object: "
                f"{_excerpt(response.text)}; reply with {{output?, diagnosis?, steps?}}"
            )
        return body

    def _validate(self, body: dict[str, JsonValue]) -> ServiceReply:
        try:
            return ServiceReply.model_validate(body)
        except ValidationError as exc:
            raise AgentError(
                f"agent service {self.url} answered an invalid reply:\n{validation_lines(exc)}\n"
                "  a reply is a JSON object {output?: str, diagnosis?: object, steps?: [object]}"
            ) from exc

    def _record(self, reply: ServiceReply, recorder: Recorder, body: dict[str, JsonValue]) -> AgentReply:
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
        for step in reply.steps:
            transcript.feed(json.dumps(step))
        if diagnosis is not None:
            transcript.feed(json.dumps({"kind": "diagnosis", "diagnosis": diagnosis.model_dump(mode="json")}))
        elif reply.output is not None:
            transcript.feed(json.dumps({"kind": "response", "content": reply.output}))
        return dataclasses.replace(transcript.reply(""), raw=[body])


def _is_event_stream(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").startswith("text/event-stream")


class _AguiEvents:
    """An AG-UI event stream turned into trajectory steps, through the `cmd:` agents' transcript rules.

    A text message is held until the next step: the last one of the run is the response, the others are
    assistant text. Tool-call arguments arrive as JSON fragments and are parsed when the call ends.
    """

    def __init__(self, url: str, transcript: Transcript) -> None:
        self.url = url
        self.transcript = transcript
        self.finished = False
        self.events: list[JsonValue] = []
        self._texts: dict[str, list[str]] = {}
        self._thinking: list[str] | None = None
        self._calls: dict[str, tuple[str, list[str]]] = {}
        self._held: str | None = None
        self._result: JsonValue = None

    def _step(self, **step: JsonValue) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            self.transcript.feed(json.dumps({"kind": "assistant", "content": held}))
        self.transcript.feed(json.dumps(step))

    def _end_text(self, message_id: str) -> None:
        text = "".join(self._texts.pop(message_id, []))
        if text:
            if self._held is not None:
                self.transcript.feed(json.dumps({"kind": "assistant", "content": self._held}))
            self._held = text

    def feed(self, data: str) -> None:
        """One SSE event's data: an AG-UI event object."""
        try:
            event = json.loads(data)
        except ValueError:
            self.transcript.warnings.append(f"an event's data is not JSON, ignored: {_excerpt(data)}")
            return
        if not isinstance(event, dict):
            return
        self.events.append(event)
        kind = event.get("type")
        message_id = str(event.get("messageId", ""))
        call_id = str(event.get("toolCallId", ""))
        match kind:
            case "TEXT_MESSAGE_START":
                self._texts[message_id] = []
            case "TEXT_MESSAGE_CONTENT" | "TEXT_MESSAGE_CHUNK":
                self._texts.setdefault(message_id, []).append(str(event.get("delta") or ""))
                if kind == "TEXT_MESSAGE_CHUNK" and not message_id:
                    self._end_text(message_id)
            case "TEXT_MESSAGE_END":
                self._end_text(message_id)
            case "THINKING_TEXT_MESSAGE_START" | "REASONING_MESSAGE_START" | "THINKING_START":
                self._thinking = self._thinking if self._thinking is not None else []
            case "THINKING_TEXT_MESSAGE_CONTENT" | "REASONING_MESSAGE_CONTENT" | "REASONING_MESSAGE_CHUNK":
                (self._thinking if self._thinking is not None else self._open_thinking()).append(
                    str(event.get("delta") or "")
                )
            case "THINKING_TEXT_MESSAGE_END" | "REASONING_MESSAGE_END" | "THINKING_END" | "REASONING_END":
                text, self._thinking = "".join(self._thinking or []), None
                if text:
                    self._step(kind="thinking", content=text)
            case "TOOL_CALL_START":
                self._calls[call_id] = (str(event.get("toolCallName", "")), [])
            case "TOOL_CALL_ARGS" | "TOOL_CALL_CHUNK":
                name = str(event.get("toolCallName") or self._calls.get(call_id, ("", []))[0])
                self._calls.setdefault(call_id, (name, []))[1].append(str(event.get("delta") or ""))
            case "TOOL_CALL_END":
                self._end_call(call_id)
            case "TOOL_CALL_RESULT":
                if call_id in self._calls:
                    self._end_call(call_id)
                self._step(kind="tool_result", call_id=call_id, result=_parsed(event.get("content")))
            case "RUN_ERROR":
                raise AgentError(
                    f"agent service {self.url} reported RUN_ERROR: {event.get('message', '(no message)')}"
                    + (f" (code {event['code']})" if event.get("code") else "")
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
            self.transcript.warnings.append(f"tool call {call_id} ({name}): arguments are not a JSON object: {raw!r}")
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
            self.transcript.feed(json.dumps({"kind": "response", "content": held}))
        return dataclasses.replace(self.transcript.reply(""), raw=list(self.events))


def _parsed(content: JsonValue) -> JsonValue:
    """A tool result or arguments sent as a JSON string: the value it encodes, else the text itself."""
    if isinstance(content, str):
        try:
            return json.loads(content)
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
