"""The span collector: one engine run's spans, routed to agent runs by the trace id each was given.

Each agent run gets a trace of its own (`open`): sredrill's spans of that run go in it, and an agent outside
the process receives its `traceparent` (TRACEPARENT, or the `traceparent` header), so the spans it exports
over OTLP (`otlp.py`, `receiver.py`) carry that trace id and land on that run. A span of a trace no agent run
was given is refused: that is what scopes a run's traces to the run.

The collector is shared by the event loop that runs the tests and, in `sredrill serve`, a server thread
receiving OTLP; a lock guards its maps, and waiters are woken on their own loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from sredrill.errors import StateError

from .spans import Span, SpanSource, SpanStatus, TraceParent, new_span_id

__all__ = ["Acceptance", "AgentRunTrace", "SpanCollector"]

_SETTLE_S: Final = 0.2
"""After the first span of an agent arrives, how long a quiet spell must last before the wait ends: an
exporter sends a run's spans in a few batches, close together."""


@dataclass(frozen=True, slots=True)
class Acceptance:
    """What became of one OTLP export."""

    accepted: int
    rejected: int
    """Spans of traces no agent run was given (another run's, one that ended long ago, or none)."""


@dataclass(slots=True)
class AgentRunTrace:
    """One agent run's trace: its ids and the spans gathered so far."""

    run_id: str
    test_id: str
    trace: TraceParent
    """What the agent is given: its spans hang from `trace.parent_span_id`, sredrill's agent run span."""
    test_span_id: str
    spans: list[Span] = field(default_factory=list)
    waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = field(default_factory=list)

    def agent_spans(self) -> list[Span]:
        return [s for s in self.spans if s.source is SpanSource.AGENT]


class SpanCollector:
    """The spans of one engine run (or one `sredrill serve`), by agent run; never module-level."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, AgentRunTrace] = {}
        self._by_trace: dict[str, AgentRunTrace] = {}
        self._by_test: dict[str, list[AgentRunTrace]] = {}
        """Agent runs per test: per-test lookups stay O(1) in a run of thousands of tests."""

    def __repr__(self) -> str:
        return f"SpanCollector({len(self._runs)} agent run(s))"

    def open(self, run_id: str, test_id: str) -> AgentRunTrace:
        """Start the trace of agent run `run_id` (of test `test_id`); returns what to give the agent.

        Raises:
            StateError: `run_id` already has a trace.
        """
        trace = AgentRunTrace(run_id=run_id, test_id=test_id, trace=TraceParent.new(), test_span_id=new_span_id())
        with self._lock:
            if run_id in self._runs:
                raise StateError(f"agent run {run_id!r} already has a trace")
            self._runs[run_id] = trace
            self._by_trace[trace.trace.trace_id] = trace
            self._by_test.setdefault(test_id, []).append(trace)
        return trace

    def add(self, spans: Iterable[Span]) -> Acceptance:
        """Take spans (from sredrill or an OTLP export); each lands on the agent run of its trace id."""
        accepted = rejected = 0
        woken: list[AgentRunTrace] = []
        with self._lock:
            for span in spans:
                run = self._by_trace.get(span.trace_id)
                if run is None:
                    rejected += 1
                    continue
                run.spans.append(span)
                accepted += 1
                if span.source is SpanSource.AGENT and run not in woken:
                    woken.append(run)
            waiters = [w for run in woken for w in run.waiters]
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)
        return Acceptance(accepted=accepted, rejected=rejected)

    def trace_of(self, run_id: str) -> AgentRunTrace:
        """Raises StateError for an agent run that was never opened here."""
        with self._lock:
            run = self._runs.get(run_id)
        if run is None:
            raise StateError(f"agent run {run_id!r} has no trace in this collector")
        return run

    def spans(self, run_id: str) -> list[Span]:
        """A copy of the agent run's spans so far."""
        run = self.trace_of(run_id)
        with self._lock:
            return list(run.spans)

    def spans_of_test(self, test_id: str) -> list[tuple[str, Span]]:
        """(agent run id, span) for every span of the test's agent runs so far."""
        with self._lock:
            return [(run.run_id, s) for run in self._by_test.get(test_id, ()) for s in run.spans]

    def all_spans(self) -> list[Span]:
        """Every span of every agent run so far."""
        with self._lock:
            return [s for run in self._runs.values() for s in run.spans]

    def end_test(self, test_id: str, *, is_error: bool) -> None:
        """Close the test spans of `test_id`'s agent runs now (they were opened when its agent run ended)."""
        end_ns = time.time_ns()
        status = SpanStatus.ERROR if is_error else SpanStatus.OK
        with self._lock:
            for run in self._by_test.get(test_id, ()):
                run.spans = [
                    s.model_copy(update={"end_ns": max(end_ns, s.end_ns), "status": status})
                    if s.span_id == run.test_span_id and s.source is SpanSource.SREDRILL
                    else s
                    for s in run.spans
                ]

    async def wait_for_agent_spans(self, run_id: str, timeout_s: float) -> list[Span]:
        """The agent run's spans once the agent's own have arrived and gone quiet, within `timeout_s`.

        Returns every span of the run (sredrill's and the agent's); the agent's part is empty when none
        arrived in time.
        """
        run = self.trace_of(run_id)
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        with self._lock:
            run.waiters.append((loop, event))
        deadline = loop.time() + max(0.0, timeout_s)
        try:
            seen = -1
            while True:
                with self._lock:
                    count = len(run.agent_spans())
                    event.clear()
                if count and count == seen:
                    break
                seen = count
                left = deadline - loop.time()
                if left <= 0:
                    break
                # Before the first span: wait for it. After: wait for a quiet spell, so a later batch lands too.
                wait_s = left if count == 0 else min(left, _SETTLE_S)
                try:
                    async with asyncio.timeout(wait_s):
                        await event.wait()
                except TimeoutError:
                    if count == 0:
                        break
                    seen = count  # quiet for a whole spell: done
        finally:
            with self._lock:
                run.waiters.remove((loop, event))
        return self.spans(run_id)
