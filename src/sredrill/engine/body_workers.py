"""Body workers: each attempt of an eval-file test runs in a worker process, through the same `run_test`.

`sredrill test` runs eval files: their bodies, hooks and fixtures are user code, so they run in body workers
(`sredrill.workers`), one per `--jobs` slot, started lazily and reused. A worker loads the eval files itself,
builds its own Runtime (the agent resolved there: a `py:` agent in an agent worker of its own, under the run's
isolation, or inline at level none; the judge settings; the store's SQLite file for the judge cache) and runs
`run_test` for the attempt the driver asks for, with the test's stdout and stderr captured at fd level. The
driver (`execute`) keeps discovery, scheduling, retries, insights, storage and reporters.

Timeouts: the driver waits the test's timeout plus `GRACE_S`; code that did not stop by then (a busy loop,
`time.sleep`, a C call) gets its worker killed and replaced, and the test is `errored`. `before_all` runs once
per worker that runs a test of its scope (as pytest-xdist does with session fixtures); a scope's `after_all`
runs when the run's last test of that scope ends, in every worker that ran its `before_all`, and its errors
go on that last test's result.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from sredrill import errors
from sredrill.errors import InputError, SredrillError
from sredrill.harness import JudgeConfig, Runtime, Scope, TestDef, exit_text
from sredrill.results import TestResult, TestStatus
from sredrill.traces import Span
from sredrill.workers import (
    START_TIMEOUT_S,
    Ask,
    PoolWorker,
    RemoteError,
    Worker,
    WorkerDied,
    WorkerPool,
    attach_worker_data,
    capture_output,
    read_capture,
)

from .execute import ScopeEnd, errored_outcome
from .runner import TEARDOWN_TIMEOUT_S, AttemptOutcome, HookState, error_type, run_test

if TYPE_CHECKING:
    from sredrill.isolation import IsolationPolicy

__all__ = [
    "GRACE_S",
    "LOST_WHERE",
    "PACK_HANDLER",
    "BodyHandler",
    "BodyInit",
    "BodyWorkers",
    "PackInit",
    "WorkerHooks",
    "policy_of",
]

GRACE_S: Final = 2.0
"""Past the test's timeout, how long its worker may take to report the timeout itself before it is killed."""
HANDLER: Final = "sredrill.engine.body_workers:BodyHandler"
PACK_HANDLER: Final = "sredrill.engine.pack_workers:PackHandler"
"""The handler of a pack run's workers (`--workers N`): `BodyHandler`, its tests built from the run's plan."""
LOST_WHERE: Final = "the test (its worker was killed, so where it stopped is unknown)"
"""`error_where` of a test whose body worker had to be killed or died: its own progress went with it."""


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BodyInit(_Wire):
    """What a new body worker needs to rebuild the run's Runtime: the eval files and the run's settings."""

    op: Literal["init"] = "init"
    paths: list[str]
    run_id: str
    agent: str | None = None
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    judge_base_url: str | None = None
    judge_model: str | None = None
    judge_api_key: str | None = Field(default=None, repr=False)
    skip_judge: bool = False
    db: str | None = None
    """The store's SQLite file (the judge cache); None when the run keeps nothing."""
    isolation: dict[str, Any] | None = None
    """The run's isolation policy (`IsolationPolicy` fields), for the `cmd:` and `py:` agents the worker
    starts; None: level none."""


class _Run(_Wire):
    op: Literal["run"] = "run"
    test_id: str
    attempt: int
    timeout_s: float | None
    capture_dir: str


class _End(_Wire):
    op: Literal["end"] = "end"
    test_id: str
    depths: list[int]
    """Which scopes of the test's chain (0 = its file) ended: the run has no test of them left."""
    capture_dir: str


class PackInit(_Wire):
    """What a pack worker needs (`PACK_HANDLER`): the run's plan and id, the agent's endpoint, the isolation."""

    op: Literal["init_plan"] = "init_plan"
    plan: dict[str, Any]
    """`RunPlan.stored()`: the episode key in clear (the worker is the driver's own, never an agent's)."""
    run_id: str
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    isolation: dict[str, Any] | None = None


_Request = TypeAdapter(Annotated[BodyInit | _Run | _End, Field(discriminator="op")])


class _Outcome(_Wire):
    result: TestResult
    steps: list[dict[str, Any]] | None
    tools_offered: int
    spans: list[tuple[str, Span]]
    started: list[int]
    """Scopes of the test's chain whose `before_all` has run in this worker."""


class _Ended(_Wire):
    errors: list[str]
    error_type: str | None = None
    stdout: str
    stderr: str


def _notes_for(truncated: list[str]) -> list[str]:
    return [f"{name} was cut at 64 KiB" for name in truncated]


# -- the worker side ------------------------------------------------------------------------------------------


class WorkerHooks(HookState):
    """The run's HookState in one worker: remembers which scopes' `before_all` ran here; the driver says when
    a scope ends."""

    def __init__(self, tests: list[TestDef]) -> None:
        super().__init__(tests)
        self.started: dict[int, Scope] = {}

    async def before_all(self, scope: Scope) -> None:
        self.started.setdefault(id(scope), scope)
        await super().before_all(scope)


def _hook_error(exc: BaseException) -> str:
    if isinstance(exc, SredrillError):
        return str(exc)
    if isinstance(exc, Exception):
        return f"{type(exc).__name__}: {exc}"
    return exit_text(exc, "an after_all hook")


class BodyHandler:
    """Serves one driver: `init` once, then `run` (one attempt) and `end` (after_all hooks) requests."""

    def __init__(self) -> None:
        self._runtime: Runtime | None = None
        self._tests: dict[str, TestDef] = {}
        self._hooks: WorkerHooks | None = None
        self._shipped: set[str] = set()

    async def handle(self, body: Any, ask: Ask) -> Any:
        request = _Request.validate_python(body)
        if isinstance(request, BodyInit):
            return self._init(request)
        if isinstance(request, _Run):
            outcome = await self._run(request)
            # As JSON text, which the driver validates in one pass (half the cost of a dict walked twice);
            # a lone surrogate in the test's text cannot be encoded so, and travels as a dict (escaped) instead.
            try:
                return outcome.model_dump_json()
            except ValueError:
                return outcome.model_dump(mode="json")
        return (await self._end(request)).model_dump(mode="json")

    def _init(self, init: BodyInit) -> dict[str, Any]:
        from sredrill.agents import ToolHost, needs_tool_server
        from sredrill.traces import SpanCollector

        from .loader import load_eval_files

        policy = policy_of(init.isolation)  # for the agents it starts (the worker itself is never sandboxed)
        loaded = load_eval_files(init.paths)
        agent = None
        if init.agent:
            from sredrill.agents.spec import resolve_agent

            try:
                agent = resolve_agent(init.agent, base_url=init.base_url, api_key=init.api_key, isolation=policy)
            except InputError as exc:  # the driver raises it again, with the same fields: a usage error
                fields: dict[str, object] = {"class": type(exc).__name__, "message": exc.message, "path": exc.path}
                fields |= {"field": exc.field, "allowed": exc.allowed, "hint": exc.hint}
                attach_worker_data(exc, fields)
                raise
        store = None
        if init.db is not None:
            from sredrill.store import Store

            store = Store(init.db)
        spans = SpanCollector()
        self._runtime = Runtime(
            run_id=init.run_id,
            agent=agent,
            judge=JudgeConfig(
                base_url=init.judge_base_url,
                model=init.judge_model,
                api_key=init.judge_api_key,
                skip=init.skip_judge,
            ),
            evaluators=dict(loaded.evaluators),
            store=store,
            spans=spans,
            tool_host=(
                ToolHost(spans=spans, unix_path=getattr(agent, "tools_socket", None))
                if needs_tool_server(agent)
                else None
            ),
        )
        self._tests = {t.id: t for t in loaded.tests}
        self._hooks = WorkerHooks(list(loaded.tests))
        gc.freeze()  # the eval files and the runtime live as long as this worker: keep full collections off them
        return {"tests": len(self._tests)}

    async def _run(self, request: _Run) -> _Outcome:
        runtime, hooks = self._runtime, self._hooks
        if runtime is None or hooks is None:
            raise SredrillError("the body worker got a test before its init")
        test = self._tests.get(request.test_id)
        if test is None:
            raise SredrillError(
                f"test {request.test_id!r} is not registered when a worker loads the eval files again: "
                "register tests the same way on every import (no randomness, no state outside the file)"
            )
        with capture_output(request.capture_dir) as out:
            outcome = await run_test(test, runtime, hooks, attempt=request.attempt, timeout_s=request.timeout_s)
        update: dict[str, Any] = {"stdout": out.stdout or None, "stderr": out.stderr or None}
        if out.truncated:
            update["notes"] = [*outcome.result.notes, *_notes_for(out.truncated)]
        outcome.result = outcome.result.model_copy(update=update)
        assert runtime.spans is not None
        runtime.spans.end_test(test.id, is_error=outcome.result.status != TestStatus.PASSED)
        spans = [(run, s) for run, s in runtime.spans.spans_of_test(test.id) if run not in self._shipped]
        self._shipped.update(run for run, _ in spans)
        started = [d for d, scope in enumerate(test.scope.chain()) if id(scope) in hooks.started]
        return _Outcome(
            result=outcome.result,
            steps=outcome.steps,
            tools_offered=outcome.tools_offered,
            spans=spans,
            started=started,
        )

    async def _end(self, request: _End) -> _Ended:
        test = self._tests.get(request.test_id)
        hooks = self._hooks
        found: list[str] = []
        first_type: str | None = None
        if test is None or hooks is None:
            return _Ended(errors=found, stdout="", stderr="")
        chain = test.scope.chain()
        with capture_output(request.capture_dir) as out:
            for depth in sorted(request.depths, reverse=True):  # inner scopes first, as HookState.finished
                scope = chain[depth] if 0 <= depth < len(chain) else None
                if scope is None or hooks.started.pop(id(scope), None) is None:
                    continue
                for hook in scope.after_all:
                    try:
                        await hook()
                    except BaseException as exc:  # reported on the run's last test of the scope
                        found.append(f"after_all hook failed: {_hook_error(exc)}")
                        first_type = first_type or error_type(exc)
        return _Ended(errors=found, error_type=first_type, stdout=out.stdout, stderr=out.stderr)


def _policy_fields(policy: IsolationPolicy | None) -> dict[str, Any] | None:
    """A policy as `BodyInit` carries it (JSON values)."""
    if policy is None:
        return None
    return {
        "level": policy.level.value,
        "network": policy.network.value,
        "agent_env": list(policy.agent_env),
        "launch_dir": str(policy.launch_dir),
        "agent_dir": None if policy.agent_dir is None else str(policy.agent_dir),
        "masked": [str(p) for p in policy.masked],
    }


def policy_of(fields: dict[str, Any] | None) -> IsolationPolicy | None:
    """The policy `_policy_fields` wrote, in the worker."""
    if fields is None:
        return None
    from sredrill.isolation import AgentNetwork, Isolation, IsolationPolicy

    return IsolationPolicy(
        level=Isolation(fields["level"]),
        network=AgentNetwork(fields["network"]),
        agent_env=tuple(fields["agent_env"]),
        launch_dir=Path(fields["launch_dir"]),
        agent_dir=None if fields["agent_dir"] is None else Path(fields["agent_dir"]),
        masked=tuple(Path(p) for p in fields["masked"]),
    )


# -- the driver side ------------------------------------------------------------------------------------------


def _input_error(exc: RemoteError) -> InputError | None:
    data = exc.data if isinstance(exc.data, dict) else None
    if data is None:
        return None
    cls = getattr(errors, str(data.get("class")), None)
    if not (isinstance(cls, type) and issubclass(cls, InputError)) or cls is errors.MissingExtra:
        cls = InputError
    return cls(
        str(data.get("message", exc.message)),
        path=data.get("path"),
        field=data.get("field"),
        allowed=data.get("allowed"),
        hint=data.get("hint"),
    )


_CAPTURE_PREFIX: Final = "sredrill-body-"


def _sweep_stale_capture_roots() -> None:
    """Remove the capture folders of drivers that died without cleaning up (SIGKILL, a crash).

    Each driver's folder is named `sredrill-body-<pid>-…`; one whose pid no longer runs is left over (its workers
    follow their driver within a second). A pid reused since keeps its folder until that process is gone too.
    """
    root = tempfile.gettempdir()
    with contextlib.suppress(OSError):
        for name in os.listdir(root):
            pid = name.removeprefix(_CAPTURE_PREFIX).partition("-")[0]
            if not name.startswith(_CAPTURE_PREFIX) or not pid.isdigit() or _alive(int(pid)):
                continue
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive, and not ours to clean
        return True
    return True


def _local_worker(handler: str) -> PoolWorker:
    return Worker(handler, role="body")


class BodyWorkers:
    """The `Executor` of `sredrill test`: attempts in body workers, one per `--jobs` slot (and of a pack run with
    `--workers N`: `pack_workers`, whose handler builds the plan's episodes instead of loading eval files).

    Args:
        init: what each worker loads and resolves (its handler's first request).
        tests: the tests this run executes (a scope ends when the last of them ends).
        jobs: the number of workers at most.
        isolation: the run's isolation policy, for the agents the workers start: a `cmd:` agent, or the agent
            worker of a `py:` one, gets it, every mask included. The body workers themselves run the tests' code
            (which grades: it holds scenarios, answer keys and expectations) as without isolation. None: none.
        handler: the workers' handler (`"module:factory"`).
        make_worker: starts a worker for a handler; None: a process on this machine (`Worker`). The Ray
            executor's actors (`ray_executor.RayWorkers.make`) serve the same handler and requests.
    """

    def __init__(
        self,
        init: BaseModel,
        tests: Sequence[TestDef],
        *,
        jobs: int,
        isolation: IsolationPolicy | None = None,
        handler: str = HANDLER,
        make_worker: Callable[[str], PoolWorker] | None = None,
    ) -> None:
        self._handler = handler
        self._make_worker = make_worker or _local_worker
        self._init = init.model_copy(update={"isolation": _policy_fields(isolation)}).model_dump(mode="json")
        self._pool = WorkerPool(self._new_worker, size=max(1, jobs))
        self._ready: set[PoolWorker] = set()
        self._remaining: dict[int, int] = {}
        for t in tests:
            for scope in t.scope.chain():
                self._remaining[id(scope)] = self._remaining.get(id(scope), 0) + 1
        self._scope_workers: dict[int, list[PoolWorker]] = {}
        self._spans: dict[str, list[tuple[str, Span]]] = {}
        self._all_spans: list[Span] = []
        _sweep_stale_capture_roots()
        self._capture_root = tempfile.mkdtemp(prefix=f"{_CAPTURE_PREFIX}{os.getpid()}-")
        self._capture_dirs: dict[PoolWorker, str] = {}

    def __repr__(self) -> str:
        return f"BodyWorkers({self._pool!r})"

    def _new_worker(self) -> PoolWorker:
        capture = Path(tempfile.mkdtemp(dir=self._capture_root))
        worker = self._make_worker(self._handler)
        self._capture_dirs[worker] = str(capture)
        return worker

    def _capture_dir(self, worker: PoolWorker) -> str:
        path = self._capture_dirs.get(worker)
        if path is None:
            path = self._capture_dirs[worker] = tempfile.mkdtemp(dir=self._capture_root)
        return path

    async def _prepare(self, worker: PoolWorker) -> None:
        if worker in self._ready:
            return
        try:
            await worker.call(self._init, timeout_s=START_TIMEOUT_S)
        except TimeoutError:
            raise WorkerDied(
                f"a worker did not get the run's tests ready within {START_TIMEOUT_S:g}s, so it was killed",
                returncode=None,
            ) from None
        except RemoteError as exc:
            worker.kill()
            error = _input_error(exc)
            if error is not None:
                raise error from None
            raise SredrillError(f"a worker could not get the run's tests ready: {exc}") from exc
        self._ready.add(worker)

    async def start(self) -> None:
        """Start the first worker now: a bad `--agent` is a usage error before the run begins.

        Raises:
            InputError: the worker could not resolve the agent (the same message as in process).
            WorkerDied: the worker could not start.
        """
        async with self._pool.worker() as worker:
            assert worker is not None
            await self._prepare(worker)

    async def attempt(self, test: TestDef, *, attempt: int, timeout_s: float | None) -> AttemptOutcome:
        limit = timeout_s or test.timeout_s
        start = time.perf_counter()
        async with self._pool.worker() as worker:
            assert worker is not None
            capture = self._capture_dir(worker)
            request = _Run(test_id=test.id, attempt=attempt, timeout_s=timeout_s, capture_dir=capture)
            try:
                await self._prepare(worker)
                reply = await worker.call(request.model_dump(mode="json"), timeout_s=limit + GRACE_S)
            except TimeoutError:
                reason = (
                    f"timed out after {limit:g}s: the test did not stop (blocking code such as a busy loop or "
                    "time.sleep()), so its worker was killed; a new worker runs the next test"
                )
                return self._lost(test, reason, capture, start, error_type="timeout")
            except WorkerDied as exc:
                reason = (
                    f"the test's {exc} during the test (os._exit(), a crash or running out of memory); "
                    "a new worker runs the next test"
                )
                return self._lost(test, reason, capture, start, error_type=type(exc).__name__)
            except (InputError, RemoteError) as exc:  # a replacement worker could not start, or lost the test
                reason = exc.message if isinstance(exc, RemoteError) else str(exc)
                lost = errored_outcome(test, reason, duration_ms=(time.perf_counter() - start) * 1000)
                error_type = exc.type_name if isinstance(exc, RemoteError) else type(exc).__name__
                update = {"error_type": error_type, "error_where": "a body worker"}
                lost.result = lost.result.model_copy(update=update)
                return lost
        outcome = _Outcome.model_validate_json(reply) if isinstance(reply, str) else _Outcome.model_validate(reply)
        chain = test.scope.chain()
        for depth in outcome.started:
            if 0 <= depth < len(chain):
                ran = self._scope_workers.setdefault(id(chain[depth]), [])
                if worker not in ran:
                    ran.append(worker)
        self._spans.setdefault(test.id, []).extend(outcome.spans)
        self._all_spans.extend(span for _, span in outcome.spans)
        return AttemptOutcome(result=outcome.result, steps=outcome.steps, tools_offered=outcome.tools_offered)

    def _lost(self, test: TestDef, reason: str, capture: str, start: float, *, error_type: str) -> AttemptOutcome:
        """The attempt's worker is gone: the test is errored, with what it printed before."""
        outcome = errored_outcome(test, reason, duration_ms=(time.perf_counter() - start) * 1000)
        out = read_capture(capture)
        outcome.result = outcome.result.model_copy(
            update={
                "stdout": out.stdout or None,
                "stderr": out.stderr or None,
                "notes": _notes_for(out.truncated),
                "error_type": error_type,
                # Where it blocked or crashed died with the worker: only that it was this test is known.
                "error_where": LOST_WHERE,
            }
        )
        return outcome

    async def finished(self, test: TestDef) -> ScopeEnd:
        chain = test.scope.chain()
        ended: list[int] = []
        for depth, scope in enumerate(chain):
            self._remaining[id(scope)] = self._remaining.get(id(scope), 1) - 1
            if self._remaining[id(scope)] == 0:
                ended.append(depth)
        workers: list[PoolWorker] = []
        for depth in ended:
            for worker in self._scope_workers.pop(id(chain[depth]), []):
                if worker not in workers:
                    workers.append(worker)
        found: list[str] = []
        first_type: str | None = None
        stdout = stderr = ""
        for worker in workers:
            async with self._pool.worker(worker) as w:
                if w is None:
                    continue  # killed since (a timeout): its before_all state died with it
                capture = self._capture_dir(w)
                request = _End(test_id=test.id, depths=ended, capture_dir=capture)
                try:
                    reply = await w.call(request.model_dump(mode="json"), timeout_s=TEARDOWN_TIMEOUT_S + GRACE_S)
                except TimeoutError:
                    found.append(f"after_all hook did not end within {TEARDOWN_TIMEOUT_S:g}s; its worker was killed")
                    first_type = first_type or "timeout"
                    out = read_capture(capture)
                    stdout, stderr = stdout + out.stdout, stderr + out.stderr
                    continue
                except WorkerDied as exc:
                    found.append(f"after_all hook failed: the {exc}")
                    first_type = first_type or type(exc).__name__
                    continue
            ended_reply = _Ended.model_validate(reply)
            found.extend(ended_reply.errors)
            first_type = first_type or ended_reply.error_type
            stdout, stderr = stdout + ended_reply.stdout, stderr + ended_reply.stderr
        return ScopeEnd(errors=found, error_type=first_type, stdout=stdout, stderr=stderr)

    def spans_of_test(self, test_id: str, *, is_error: bool) -> list[tuple[str, Span]]:
        return self._spans.pop(test_id, [])  # closed in the worker when each attempt ended

    def all_spans(self) -> list[Span]:
        return list(self._all_spans)

    async def aclose(self) -> None:
        self._pool.kill_all()
        self._ready.clear()
        self._capture_dirs.clear()
        with contextlib.suppress(OSError):
            shutil.rmtree(self._capture_root, ignore_errors=True)
