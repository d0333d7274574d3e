"""What one agent run left: the immutable RunResult a test body reads, and the TestInfo it may know itself by.

The engine keeps the RunResult on the test's context (its trajectory, log and notes go into the test result);
`sredrill.sdk` hands both to test authors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import JsonValue

from sredrill.diagnosis import Diagnosis
from sredrill.errors import TracesUnavailable
from sredrill.traces import RunTraces, TraceQueryTools, TraceView
from sredrill.trajectory import TokenUsage, Trajectory

__all__ = ["TRACES_TIMEOUT_S", "RunResult", "TestInfo"]

TRACES_TIMEOUT_S: Final = 10.0
"""How long `traces()` waits for an out-of-process agent's first spans by default."""


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
    notes: tuple[str, ...] = ()
    """What sredrill changed or noticed in this run (replaced text, tool calls reported but not served)."""
    rejected_answer: str | None = None
    """Why there is no diagnosis although the agent sent an answer line: which line was rejected and why
    ("the agent's diagnosis line 3 was rejected: unknown key 'foo' …"); None otherwise. Grading says it in
    place of "no diagnosis"."""
    _data: JsonValue = field(default=None, repr=False)
    _traces: RunTraces | None = field(default=None, repr=False)

    def json(self) -> Any:
        """The Diagnosis (or the output parsed as JSON) as a dict; None when the output is not JSON."""
        if self._data is not None:
            return self._data
        try:
            return json.loads(self.output)
        except (ValueError, TypeError):
            return None

    async def traces(self, *, timeout_s: float = TRACES_TIMEOUT_S) -> TraceView:
        """This agent run's OpenTelemetry view: tokens, cost when reported, tool calls, spans, durations.

        Scoped to this run. For an agent outside the process, waits up to `timeout_s` for the spans it
        exports over OTLP (and a moment more for late batches).

        Raises:
            TracesUnavailable: no spans of the agent arrived in time (never silent zeros); reading
                `total_tokens` of a view whose spans report no usage raises it too.
        """
        if self._traces is None:
            raise TracesUnavailable(
                f"run {self.run_id} was not traced: this RunResult was built outside the engine's agent.run()"
            )
        return await self._traces.view(timeout_s)

    def trace_tools(self, *, timeout_s: float = TRACES_TIMEOUT_S) -> TraceQueryTools:
        """The read-only `trace_query` tool pack over this run's spans, for judges and evaluators.

        Every tool takes a `run_id` and refuses any but this run's.

        Raises:
            TracesUnavailable: this RunResult was not made by the engine's `agent.run()`.
        """
        if self._traces is None:
            raise TracesUnavailable(
                f"run {self.run_id} was not traced: this RunResult was built outside the engine's agent.run()"
            )
        return TraceQueryTools(self._traces, timeout_s=timeout_s)
