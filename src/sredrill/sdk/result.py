"""The `agent` fixture (`agent.run()`, which returns a RunResult) and `FunctionTools` for its `tools=`."""

from __future__ import annotations

import inspect
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic import JsonValue

from sredrill.agents import ContextItem, Task, needs_tool_server
from sredrill.agents.reply import agent_log_of
from sredrill.agents.transcript import TranscriptReply
from sredrill.errors import AgentError, StateError
from sredrill.evidence import RcaToolset
from sredrill.harness.context import TestContext
from sredrill.harness.result import RunResult
from sredrill.traces import RunTraces, sredrill_spans
from sredrill.trajectory import Recorder, ToolError, Toolset, ToolSpec, Trajectory, UserStep

__all__ = ["AgentFixture", "FunctionTools"]


class FunctionTools:
    """A toolset from plain async functions: `agent.run(tools={"search_logs": search_logs})`."""

    def __init__(self, functions: Mapping[str, Callable[..., Awaitable[Any]]]) -> None:
        self._functions = dict(functions)

    def specs(self) -> list[ToolSpec]:
        """A strict schema from each function's typed parameters; an open one when they are untyped."""
        return [_function_spec(n, f) for n, f in self._functions.items()]

    async def call(self, name: str, args: dict[str, Any]) -> JsonValue:
        fn = self._functions.get(name)
        if fn is None:
            raise ToolError("unknown_tool", f"no tool {name!r}; tools: {', '.join(self._functions)}")
        try:
            # Strict function calling sends null for an optional parameter left out: null means "not given".
            params = inspect.signature(fn).parameters
            optional = {k for k, p in params.items() if p.default is not p.empty}
            args = {k: v for k, v in args.items() if not (v is None and k in optional)}
            answer: JsonValue = await fn(**args)
            return answer
        except TypeError as exc:
            raise ToolError("bad_arguments", f"{name}: {exc}") from exc


def _function_spec(name: str, fn: Callable[..., Any]) -> ToolSpec:
    try:
        return ToolSpec.from_function(name, fn)
    except Exception:  # untyped or unexpressible parameters (or unresolvable annotations): an open schema
        return ToolSpec(name=name, description=inspect.cleandoc(fn.__doc__ or name))


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
            tools: a Toolset (`sc.tools` of a `scenario()`, which also gives the agent its alert), or a dict of
                async functions; None: no tools.
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
            toolset = None
        elif isinstance(tools, Mapping):
            toolset = FunctionTools(tools)
        else:
            toolset = tools
        items = _context(context) if context is not None else list(ctx.test.context)
        recorder = Recorder()
        recorder_started_ns = time.time_ns()
        run_id = uuid.uuid4().hex
        host = runtime.tool_host
        access = None
        if host is not None and toolset is not None:
            # An agent outside this process reaches its tools over HTTP (DESIGN §4.1): served for this agent
            # run only, with a token of its own, until it ends.
            access = await host.open(run_id, toolset, recorder)
        trace = runtime.spans.open(run_id, ctx.test.id) if runtime.spans is not None else None
        env = dict(env or {})
        otlp_url = None
        if host is not None and trace is not None:
            otlp_url = (await host.started()).otlp_url
            if otlp_url is not None:
                # The agent's own spans come back to this run's receiver unless the test sends them elsewhere.
                env.setdefault("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", otlp_url)
        task = Task(
            run_id=run_id,
            prompt=text,
            context=items,
            # An RCA scenario's tools come with the (blinded) alert the agent investigates.
            alert=toolset.alert if isinstance(toolset, RcaToolset) else None,
            tools=toolset.specs() if toolset is not None else [],
            tools_url=access.tools_url if access is not None else None,
            mcp_url=access.mcp_url if access is not None else None,
            token=access.token if access is not None else None,
            deadline_s=ctx.test.timeout_s,
            env=env,
        ).bind(toolset, recorder, traceparent=trace.trace.header() if trace is not None else None)
        ctx.tools_offered = len(task.tools)
        content = text + "".join(f"\n\n{c.description}:\n{c.value}" for c in items)
        recorder.add(UserStep(content=content, t_ms=0.0))
        start = time.perf_counter()
        reply = None
        error: str | None = "the agent run was cancelled"
        try:
            reply = await runtime.agent.run(task, recorder)
            error = None
        except BaseException as exc:
            if isinstance(exc, Exception):
                error = f"{type(exc).__name__}: {exc}"
            ctx.agent_log = agent_log_of(exc)  # what a failed or stopped agent logged, for the test result
            raise
        finally:
            if host is not None and access is not None:
                host.close_run(run_id)
            # Keep what the agent did even when it failed or timed out: the store shows it.
            ctx.steps = [s.model_dump(mode="json") for s in recorder.steps]
            if trace is not None and runtime.spans is not None:
                runtime.spans.add(
                    sredrill_spans(
                        trace,
                        test_name=ctx.test.name,
                        agent=runtime.agent.spec,
                        test_started_ns=recorder_started_ns - int((start - ctx.started) * 1e9),
                        agent_started_ns=recorder_started_ns,
                        agent_ended_ns=time.time_ns(),
                        steps=recorder.steps,
                        token_usage=reply.token_usage if reply is not None else None,
                        error=error,
                        llm_calls=recorder.llm_calls,
                    )
                )
        trajectory = Trajectory(recorder.steps)
        unverified = trajectory.unverified_note()
        result = RunResult(
            trajectory=trajectory,
            output=reply.output,
            run_id=task.run_id,
            duration_ms=round((time.perf_counter() - start) * 1000, 3),
            token_usage=reply.token_usage,
            diagnosis=reply.diagnosis,
            raw=tuple(reply.raw),
            log=reply.log,
            loops=reply.loops,
            rejected_answer=reply.rejected_answer if isinstance(reply, TranscriptReply) else None,
            # Once each: the transcript and the reply may both have replaced text in the same run.
            notes=tuple(dict.fromkeys([*recorder.notes, *reply.notes, *((unverified,) if unverified else ())])),
            _data=reply.data,
            _traces=RunTraces(
                collector=runtime.spans,
                run_id=run_id,
                agent_exports=needs_tool_server(runtime.agent),
                otlp_url=otlp_url,
            )
            if runtime.spans is not None
            else None,
        )
        ctx.result = result
        return result
