"""`agent.run()` and the immutable RunResult it returns."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from sredrill.agents import ContextItem, Task
from sredrill.diagnosis import Diagnosis
from sredrill.errors import AgentError, StateError, TracesUnavailable
from sredrill.sdk.context import TestContext
from sredrill.trajectory import Recorder, TokenUsage, ToolError, Toolset, ToolSpec, Trajectory, UserStep

__all__ = ["AgentFixture", "FunctionTools", "RunResult", "TestInfo"]


@dataclass(frozen=True, slots=True)
class TestInfo:
    """What a test body may know about itself."""

    __test__ = False

    id: str
    name: str
    file: str
    describe_path: tuple[str, ...]
    labels: tuple[str, ...]
    timeout_s: float
    attempt: int


@dataclass(frozen=True, slots=True)
class RunResult:
    """One agent run, fully captured. Immutable: matchers and judges read it, nothing changes it."""

    trajectory: Trajectory
    output: str
    run_id: str
    duration_ms: float
    token_usage: TokenUsage | None
    """None when the agent did not report usage (unknown is not zero)."""
    diagnosis: Diagnosis | None
    raw: tuple[Any, ...] = ()
    log: str = ""
    loops: int | None = None
    _data: JsonValue = field(default=None, repr=False)

    def json(self) -> Any:
        """The Diagnosis (or the output parsed as JSON) as a dict; None when the output is not JSON."""
        if self._data is not None:
            return self._data
        try:
            return json.loads(self.output)
        except (ValueError, TypeError):
            return None

    async def traces(self) -> Any:
        """This run's OpenTelemetry view.

        Raises:
            TracesUnavailable: always until span collection exists for this agent (never silent zeros).
        """
        raise TracesUnavailable(
            f"no spans were received for run {self.run_id}: this agent exported no OpenTelemetry spans "
            "(export them with the TRACEPARENT sredrill passes, or do not read traces in this test)"
        )


class FunctionTools:
    """A toolset from plain async functions: `agent.run(tools={"search_logs": search_logs})`."""

    def __init__(self, functions: Mapping[str, Callable[..., Awaitable[Any]]]) -> None:
        self._functions = dict(functions)

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name=n, description=(f.__doc__ or n).strip()) for n, f in self._functions.items()]

    async def call(self, name: str, args: dict[str, Any]) -> JsonValue:
        fn = self._functions.get(name)
        if fn is None:
            raise ToolError("unknown_tool", f"no tool {name!r}; tools: {', '.join(self._functions)}")
        try:
            return await fn(**args)
        except TypeError as exc:
            raise ToolError("bad_arguments", f"{name}: {exc}") from exc


def _context(items: Sequence[Any] | None) -> list[ContextItem]:
    out = []
    for item in items or ():
        if isinstance(item, ContextItem):
            out.append(item)
        elif isinstance(item, Mapping):
            out.append(ContextItem(description=str(item["description"]), value=str(item["value"])))
        else:
            desc, value = item
            out.append(ContextItem(description=str(desc), value=str(value)))
    return out


class AgentFixture:
    """The `agent` fixture: `await agent.run(...)` exactly once per test."""

    def __init__(self, ctx: TestContext) -> None:
        self._ctx = ctx

    @property
    def invoked(self) -> bool:
        return self._ctx.agent_started

    async def run(
        self,
        prompt: str | None = None,
        *,
        context: Sequence[Any] | None = None,
        tools: Toolset | Mapping[str, Callable[..., Awaitable[Any]]] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        """Run the agent once and capture everything it did.

        Args:
            prompt: defaults to the test's `prompt`.
            context: defaults to the test's `context`; a list of (description, value).
            tools: a Toolset, or a dict of async functions; defaults to the run's tools (RCA scenarios).
            env: extra environment for subprocess agents.

        Raises:
            StateError: a second call in the same test, or no prompt anywhere.
            AgentError: no agent configured, or the agent failed.
        """
        ctx = self._ctx
        if ctx.agent_started:
            raise StateError(
                "agent.run() was already called in this test: one test is one agent run "
                "(model multi-turn conversations inside your agent)"
            )
        ctx.agent_started = True  # set before awaiting, so concurrent calls in one body fail too
        runtime = ctx.runtime
        if runtime.agent is None:
            raise AgentError("no agent: pass --agent SPEC (e.g. --agent py:my_agent:run or --agent cmd:./agent.sh)")
        text = prompt if prompt is not None else ctx.test.prompt
        if not text:
            raise StateError(
                f"test {ctx.test.name!r} has no prompt: pass one to agent.run(prompt) or to @test(prompt=...)"
            )
        toolset: Toolset | None
        if tools is None:
            toolset = runtime.toolset
        elif isinstance(tools, Mapping):
            toolset = FunctionTools(tools)
        else:
            toolset = tools
        items = _context(context) if context is not None else list(ctx.test.context)
        recorder = Recorder()
        run_id = uuid.uuid4().hex
        host = runtime.tool_host
        access = None
        if host is not None and toolset is not None:
            # An agent outside this process reaches its tools over HTTP (DESIGN §4.1): served for this agent
            # run only, with a token of its own, until it ends.
            access = await host.open(run_id, toolset, recorder)
        task = Task(
            run_id=run_id,
            prompt=text,
            context=items,
            alert=ctx.extra.get("alert", runtime.alert),
            tools=toolset.specs() if toolset is not None else [],
            tools_url=access.tools_url if access is not None else None,
            mcp_url=access.mcp_url if access is not None else None,
            token=access.token if access is not None else None,
            deadline_s=ctx.test.timeout_s,
            env=dict(env or {}),
        ).bind(toolset, recorder)
        ctx.extra["tools_offered"] = len(task.tools)
        content = text + "".join(f"\n\n{c.description}:\n{c.value}" for c in items)
        recorder.add(UserStep(content=content, t_ms=0.0))
        start = time.perf_counter()
        try:
            reply = await runtime.agent.run(task, recorder)
        finally:
            if host is not None and access is not None:
                host.close_run(run_id)
            # Keep what the agent did even when it failed or timed out: the store shows it.
            ctx.steps = [s.model_dump(mode="json") for s in recorder.steps]
        result = RunResult(
            trajectory=Trajectory(recorder.steps),
            output=reply.output,
            run_id=task.run_id,
            duration_ms=round((time.perf_counter() - start) * 1000, 3),
            token_usage=reply.token_usage,
            diagnosis=reply.diagnosis,
            raw=tuple(reply.raw),
            log=reply.log,
            loops=reply.loops,
            _data=reply.data,
        )
        ctx.result = result
        return result
