"""Runs started by the server: each on a thread of its own, calling the engine function the CLI calls.

A `LiveRun` is the engine's `RunListener` for one run: every event it hears (`run_started`, `test_started`,
`test_finished`, `run_finished`) is kept in order, so a Server-Sent Events stream opened late replays what it
missed and then waits for more. The run's results go to the store as they complete (the engine does that), so
a cancelled run keeps every finished result.

The `RunLauncher` bounds both: at most `max_running` runs go on at once (one more raises `RunCapacityError`,
HTTP 429 with `Retry-After`), and only the `KEPT_FINISHED_RUNS` most recently finished runs stay in memory;
an older one is read from the store, like a run made on the CLI. A resumed run keeps its id, so the launcher
knows it before the engine announces it, and refuses to resume a run that is going on here (`RunGoingOn`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from sredrill.errors import InputError, SredrillError
from sredrill.results import Counts, RunReport, Summary, TestResult, TestStatus

__all__ = [
    "DEFAULT_MAX_RUNS",
    "KEPT_FINISHED_RUNS",
    "RETRY_AFTER_S",
    "LiveRun",
    "LiveStatus",
    "RunCapacityError",
    "RunEvent",
    "RunGoingOn",
    "RunLauncher",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_RUNS: Final = 4
"""Runs a server lets go on at once (`sredrill serve --max-runs`)."""
KEPT_FINISHED_RUNS: Final = 8
"""Finished runs kept in memory (their events replay from there); older ones are read from the store."""
_WIND_DOWN_S: Final = 10.0
"""How long a resume waits for a finished run's thread to end (its workers and processes stopped) before 409."""
RETRY_AFTER_S: Final = 10
"""The `Retry-After` of a 429: runs last seconds to hours, so this is a polling interval, not a promise."""


class RunCapacityError(SredrillError):
    """Raised when `max_running` runs are going on already; the message says what to do.

    Attributes:
        running: runs going on now.
        limit: the server's `max_running` (`--max-runs`).
        retry_after_s: when to try again.
    """

    def __init__(self, running: int, limit: int) -> None:
        self.running = running
        self.limit = limit
        self.retry_after_s = RETRY_AFTER_S
        super().__init__(
            f"server busy: {running}/{limit} runs are going on; wait for one to finish, or cancel one "
            "(POST /api/runs/{run_id}/cancel), then retry (start the server with --max-runs N for more)"
        )


class RunGoingOn(SredrillError):
    """Raised when a run is resumed while it goes on (started or resumed by this server, and not ended).

    Attributes:
        run_id: the run.
    """

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(
            f"run {run_id!r} is going on: wait for it to end, or cancel it (POST /api/runs/{run_id}/cancel), "
            "then resume it"
        )


class LiveStatus(StrEnum):
    """Where a run started by this server is."""

    STARTING = "starting"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    FAILED = "failed"
    """The run stopped on an error of sredrill's or of its input (the event carries the message)."""
    INTERRUPTED = "interrupted"
    """A stored run this server did not start and that has not finished (`store.RunStatus.INTERRUPTED`: stopped,
    `--resume` continues it, or running in another process, the CLI)."""


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunStarted(_Event):
    kind: Literal["run_started"] = "run_started"
    run_id: str
    total: int
    """Results the run will have, each counted once (an RCA scenario once per axis, an incident episode, a test)."""
    title: str


class TestStarted(_Event):
    __test__ = False
    kind: Literal["test_started"] = "test_started"
    test_id: str
    name: str


class TestFinished(_Event):
    __test__ = False
    kind: Literal["test_finished"] = "test_finished"
    test_id: str
    name: str
    status: TestStatus
    score: float | None
    failure_reason: str | None
    signals: list[dict[str, JsonValue]]
    """Every signal of the result (gate and observe), as in the RunReport."""
    done: Counts
    """The results finished so far, this one included: the counts the run's summary will have at the end."""


class RunFinished(_Event):
    kind: Literal["run_finished"] = "run_finished"
    run_id: str
    status: LiveStatus
    summary: Summary | None
    """The run's one summary (as in its RunReport); None when the run was cancelled or failed before the engine
    summarized it."""
    message: str | None = None


_AnyEvent = RunStarted | TestStarted | TestFinished | RunFinished
RunEvent = Annotated[_AnyEvent, Field(discriminator="kind")]
"""One Server-Sent Event of `GET /api/runs/{run_id}/events` (its `event:` line is the `kind`)."""


class LiveRun:
    """One run started by the server: its events so far, its status, and how to cancel it.

    The engine calls the listener methods on the run's own thread; readers (`events_after`) may be on any, and
    an event loop that `subscribe`d is woken (thread-safely) on each new event, so an SSE stream waits without
    holding a worker thread.
    """

    def __init__(self) -> None:
        self.run_id: str | None = None
        self.status = LiveStatus.STARTING
        self.error: SredrillError | None = None
        self._events: list[_AnyEvent] = []
        self.counts = Counts()
        """The results finished so far (every result once); at the end, the summary's top-level counts."""
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._started = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._cancel_asked = False
        self._thread: threading.Thread | None = None
        self.on_done: Callable[[LiveRun], None] | None = None
        """Called (on the run's thread) once the run ended; the launcher uses it to bound its memory."""

    # -- RunListener ----------------------------------------------------------------------------------

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None:
        self.run_id = run_id
        self.status = LiveStatus.RUNNING
        self._add(RunStarted(run_id=run_id, total=total, title=title))
        self._started.set()

    def on_test_start(self, test_id: str, name: str) -> None:
        self._add(TestStarted(test_id=test_id, name=name))

    def on_test_end(self, result: TestResult) -> None:
        done = self.counts
        done.total += 1
        setattr(done, result.status.value, getattr(done, result.status.value) + 1)
        self._add(
            TestFinished(
                test_id=result.id,
                name=result.name,
                status=result.status,
                score=result.score,
                failure_reason=result.failure_reason,
                signals=[s.model_dump(mode="json") for s in result.signals],
                done=done.model_copy(),
            )
        )

    def on_run_end(self, report: RunReport) -> None:
        self._finish(LiveStatus.FINISHED, report.summary, None)

    # -- readers ----------------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.status in (LiveStatus.FINISHED, LiveStatus.CANCELLED, LiveStatus.FAILED)

    def events_after(self, seen: int) -> list[_AnyEvent]:
        """Events after the first `seen` (none yet: an empty list)."""
        with self._lock:
            return self._events[seen:]

    def subscribe(self) -> asyncio.Event:
        """An event of the running loop, set whenever a run event is added; `unsubscribe` it when done."""
        wake = asyncio.Event()
        with self._lock:
            self._waiters.append((asyncio.get_running_loop(), wake))
        return wake

    def unsubscribe(self, wake: asyncio.Event) -> None:
        with self._lock:
            self._waiters = [(loop, w) for loop, w in self._waiters if w is not wake]

    def wait_started(self, timeout_s: float) -> bool:
        """True once the engine announced the run (its id is known) or the run stopped before that."""
        return self._started.wait(timeout_s)

    def cancel(self) -> bool:
        """Ask the run to stop; finished results stay stored. False when it already ended."""
        if self.done or self._loop is None or self._task is None:
            return False
        self._cancel_asked = True
        self._loop.call_soon_threadsafe(self._task.cancel)
        return True

    # -- the run's thread ---------------------------------------------------------------------------------

    def run_in_thread(self, make: Callable[[LiveRun], Coroutine[Any, Any, RunReport]]) -> threading.Thread:
        """Start `make(self)` (an engine coroutine with this object as its listener) on a new thread."""

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            try:
                await make(self)
            except asyncio.CancelledError:
                self._finish(LiveStatus.CANCELLED, None, "cancelled: every finished result is stored")
            except SredrillError as exc:
                self.error = exc
                self._finish(LiveStatus.FAILED, None, exc.message if isinstance(exc, InputError) else str(exc))
            except Exception as exc:  # the server's edge (STYLE #16): logged with its traceback, reported
                log.exception("a run started by the server crashed")
                self._finish(LiveStatus.FAILED, None, f"internal error in sredrill (a bug): {exc!r}")

        def target() -> None:
            try:
                # A cancelled main task ends asyncio.run with CancelledError after `main` handled it.
                with contextlib.suppress(asyncio.CancelledError):
                    asyncio.run(main())
            finally:
                if self.on_done is not None:
                    self.on_done(self)

        self._thread = threading.Thread(target=target, name="sredrill-run", daemon=True)
        self._thread.start()
        return self._thread

    def join(self, timeout_s: float) -> None:
        """Wait up to `timeout_s` for the run's thread to end."""
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _add(self, event: _AnyEvent) -> None:
        with self._lock:
            self._events.append(event)
            waiters = list(self._waiters)
        for loop, wake in waiters:
            # A server stopped while its run goes on has closed its loop: nobody is left to wake.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(wake.set)

    def _finish(self, status: LiveStatus, summary: Summary | None, message: str | None) -> None:
        if self._cancel_asked and status is LiveStatus.FINISHED:
            status = LiveStatus.CANCELLED
        self.status = status
        self._add(RunFinished(run_id=self.run_id or "", status=status, summary=summary, message=message))
        self._started.set()


class RunLauncher:
    """The runs this server started, by id (runs from the CLI are read from the store instead).

    Args:
        max_running: runs that may go on at once (≥ 1); one more raises `RunCapacityError`.
        kept_finished: finished runs kept in memory, the most recent ones; the others are forgotten here
            (their events and status are read from the store).
    """

    def __init__(self, *, max_running: int = DEFAULT_MAX_RUNS, kept_finished: int = KEPT_FINISHED_RUNS) -> None:
        if max_running < 1:
            raise InputError(f"max_runs must be at least 1, got {max_running}", field="max_runs")
        self.max_running = max_running
        self.kept_finished = kept_finished
        self._runs: dict[str, LiveRun] = {}
        self._going: set[LiveRun] = set()
        """Runs whose thread has not ended, named or not yet (the capacity counts these)."""
        self._finished: OrderedDict[str, None] = OrderedDict()
        """Ids of finished runs still in `_runs`, oldest first."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Runs held in memory (going on, or among the most recently finished)."""
        with self._lock:
            return len(self._runs)

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._going)

    def get(self, run_id: str) -> LiveRun | None:
        with self._lock:
            return self._runs.get(run_id)

    def start(
        self,
        make: Callable[[LiveRun], Coroutine[Any, Any, RunReport]],
        *,
        timeout_s: float,
        run_id: str | None = None,
    ) -> LiveRun:
        """Start a run and return once the engine announced it.

        Args:
            make: the engine coroutine, given the run's `LiveRun` as its listener.
            timeout_s: how long to wait for the engine to announce the run.
            run_id: the id of the run `make` resumes (a new run's id is the engine's, known once announced).

        Raises:
            RunCapacityError: `max_running` runs are going on already.
            RunGoingOn: `run_id` is going on here already (checked under the lock, so two resumes cannot race).
            SredrillError: the run stopped before it started (an unknown pack or scenario, a bad agent spec).
        """
        if run_id is not None:
            # A run that has finished (its results stored, `run_finished` sent) may still be winding down its
            # thread (workers and processes ended); resuming it then waits for that instead of answering 409.
            with self._lock:
                ending = [g for g in self._going if g.run_id == run_id and g.done]
            for old in ending:
                old.join(_WIND_DOWN_S)
        live = LiveRun()
        live.on_done = self._ended
        with self._lock:
            if run_id is not None and any(going.run_id == run_id for going in self._going):
                raise RunGoingOn(run_id)
            if len(self._going) >= self.max_running:
                raise RunCapacityError(len(self._going), self.max_running)
            live.run_id = run_id
            self._going.add(live)
        try:
            live.run_in_thread(make)
        except BaseException:
            self._ended(live)
            raise
        live.wait_started(timeout_s)
        if live.error is not None:
            raise live.error
        if live.run_id is not None:
            with self._lock:
                self._runs[live.run_id] = live
                if live not in self._going:  # it ended before it was named here
                    self._keep_finished(live.run_id)
        return live

    def cancel_all(self, *, timeout_s: float) -> None:
        """Cancel every run still going and wait (up to `timeout_s` each) for its finished results to be written."""
        with self._lock:
            runs = list(self._going)
        for live in runs:
            live.cancel()
        for live in runs:
            live.join(timeout_s)

    def _ended(self, live: LiveRun) -> None:
        with self._lock:
            self._going.discard(live)
            if live.run_id is not None and self._runs.get(live.run_id) is live:
                self._keep_finished(live.run_id)

    def _keep_finished(self, run_id: str) -> None:
        """Note a finished run and forget the oldest beyond `kept_finished` (call with the lock held)."""
        self._finished[run_id] = None
        while len(self._finished) > self.kept_finished:
            oldest, _ = self._finished.popitem(last=False)
            self._runs.pop(oldest, None)
