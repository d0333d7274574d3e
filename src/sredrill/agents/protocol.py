"""The agent protocol: the Task an agent receives, the reply a connector returns, and the Agent role.

DESIGN §4.1 is the wire contract; `docs/agent-protocol.md` documents it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, JsonValue, PrivateAttr

from sredrill.diagnosis import Diagnosis
from sredrill.errors import StateError
from sredrill.trajectory import Recorder, TokenUsage, Toolset, ToolSpec

__all__ = ["Agent", "AgentReply", "ContextItem", "Task"]


class ContextItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    value: str


class Task(BaseModel):
    """What an agent receives: the prompt, context, (blinded) alert and tools of one run.

    A `py:` agent gets this object and calls `await task.call_tool(name, **args)`; other connectors get it
    as JSON (`model_dump(mode="json")`), without the private toolset.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    run_id: str
    """Opaque id of this agent run; never derived from a scenario name."""
    prompt: str
    context: list[ContextItem] = Field(default_factory=list)
    alert: dict[str, JsonValue] | None = None
    """The blinded alert (RCA scenarios only)."""
    tools: list[ToolSpec] = Field(default_factory=list)
    tools_url: str | None = None
    mcp_url: str | None = None
    token: str | None = None
    """Bearer token for `tools_url` / `mcp_url` (present when tools are served out of process)."""
    deadline_s: float | None = None
    """Seconds the agent has before it is stopped."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment for subprocess agents (from `agent.run(env=…)`)."""

    _toolset: Toolset | None = PrivateAttr(default=None)
    _recorder: Recorder | None = PrivateAttr(default=None)
    _traceparent: str | None = PrivateAttr(default=None)

    def bind(self, toolset: Toolset | None, recorder: Recorder, *, traceparent: str | None = None) -> Task:
        """Attach the run's toolset, recorder and W3C `traceparent` (engine side; not part of the wire format)."""
        self._toolset = toolset
        self._recorder = recorder
        self._traceparent = traceparent
        return self

    def traceparent(self) -> str:
        """The W3C `traceparent` the agent's spans join: the run's trace, or (none bound) a fresh one each call,
        so an untraced task run twice is still two traces. Connectors call it once per agent run."""
        if self._traceparent is None:
            return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"
        return self._traceparent

    async def call_tool(self, name: str, /, **args: Any) -> JsonValue:
        """Call one of this run's tools in process; recorded exactly like a remote call.

        Raises:
            ToolError: the tool rejected the call (unknown tool, bad arguments).
            StateError: this task has no tools.
        """
        if self._toolset is None or self._recorder is None:
            raise StateError("this task has no tools: the test did not give the agent a toolset")
        return await self._recorder.call_tool(self._toolset, name, args)


@dataclass(slots=True)
class AgentReply:
    """What a connector hands back once the agent finished (its steps are on the Recorder)."""

    output: str
    """The agent's final text."""
    diagnosis: Diagnosis | None = None
    data: JsonValue = None
    """The reply parsed as JSON when it was JSON (a Diagnosis reply: the Diagnosis dict)."""
    token_usage: TokenUsage | None = None
    raw: list[Any] = field(default_factory=list)
    """Raw events or lines as the agent sent them."""
    log: str = ""
    """What the agent wrote to its log (a subprocess's stderr)."""
    loops: int | None = None
    """Investigation rounds, when the connector reports them."""
    notes: list[str] = field(default_factory=list)
    """What sredrill changed on the way in (text replaced, output truncated); the test result's `notes`."""


@runtime_checkable
class Agent(Protocol):
    """One role, one method: run a task, record steps on the recorder, return the reply.

    A connector whose agent runs outside the sredrill process (`cmd:`, `http(s)://`) also sets the class
    attribute `needs_tool_server = True`: the engine then serves each agent run's tools over HTTP and the
    Task carries `tools_url` and `token` (`sredrill.agents.tool_server`).

    Examples:
        >>> class Echo:
        ...     spec = "py:echo"
        ...     async def run(self, task, recorder):
        ...         return AgentReply(output=task.prompt)
    """

    spec: str

    async def run(self, task: Task, recorder: Recorder) -> AgentReply: ...
