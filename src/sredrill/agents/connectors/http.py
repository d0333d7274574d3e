"""The `http(s)://` connector: an agent service that answers a POSTed Task with JSON (DESIGN §4.1).

sredrill POSTs the Task as JSON to the URL, with a W3C `traceparent` header; the service investigates
(through the Task's `tools_url` and `token`, served by sredrill for this run) and answers `200` with

    {"output": "…", "diagnosis": {…}, "steps": [{"kind": "thinking", "content": "…"}, …]}

every key optional: `steps` are recorded like a `cmd:` agent's JSON lines (same kinds, same rules), then the
answer is `diagnosis`, else `output`, else what the steps answered. A non-2xx status, a body that is not
that JSON object, an unreachable service or one slower than the deadline make the run `errored` with the
reason. When the run is cancelled (the engine's timeout) the request is abandoned and its connection closed.
The AG-UI event stream (`text/event-stream`) is a later issue.

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
        headers = {"traceparent": task.traceparent(), "Accept": "application/json"}
        # `env` is for subprocess agents (their environment); it is never sent over the network.
        payload = task.model_dump_json(exclude={"env"}).encode()
        # One client per run: closing it (also when the run is cancelled) closes the connection, so the
        # service sees the request abandoned.
        async with httpx.AsyncClient(timeout=timeout, transport=self.transport) as client:
            try:
                response = await client.post(
                    self.url, content=payload, headers={**headers, "Content-Type": "application/json"}
                )
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

    def _json(self, response: httpx.Response) -> dict[str, JsonValue]:
        content_type = response.headers.get("content-type", "")
        if content_type.startswith("text/event-stream"):
            raise AgentError(
                f"agent service {self.url} answered an event stream ({content_type}): sredrill reads a JSON "
                'reply {"output", "diagnosis", "steps"} (AG-UI streams are not supported yet)'
            )
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
