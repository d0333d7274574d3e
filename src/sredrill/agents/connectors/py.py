"""The `py:` connector: an async Python callable, named `py:MODULE:ATTR`, run in an agent worker.

The target is `async def agent(task) -> Diagnosis | dict | str`, or an object whose `run(task)` is async;
any other return value, or an exception (any BaseException: `sys.exit()`, `KeyboardInterrupt`, one of its
own), makes the run `errored` with a message saying why. It calls tools with `await task.call_tool(name,
**args)`, recorded on the run's trajectory exactly as in process.

Where it runs (DESIGN §11.3): in a process that may hold scenarios and answer keys (the driver of
`sredrill run`, or any program calling the engine), the agent runs in an agent worker (`sredrill.workers`),
which imports MODULE:ATTR once and keeps it; its tool calls come back over the worker's connection to the
driver, which runs them on the run's toolset and recorder (no HTTP server, so no extra is needed). Import
errors still come at connect time, with the same messages: the first worker imports the target then. An agent
that ends its worker (`os._exit`, a crash) is an AgentError and the worker is replaced; one that hangs is
stopped by the run's timeout, which kills its worker. Its stdout and stderr are captured into the reply's
log, never the driver's stdout. A body worker of `sredrill test` holds the tests' scenarios and expectations,
so it too starts an agent worker for the agent (under the run's isolation policy); only at level `none` does
the agent run inline there (a hang kills that body worker anyway).

Examples:
    >>> async def agent(task):
    ...     alert = await task.call_tool("get_alert")
    ...     return f"looked at {alert['title']}"
"""

from __future__ import annotations

import asyncio
import builtins
import importlib
import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import PrivateAttr, ValidationError

from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reply import reply_from_value, with_agent_log
from sredrill.agents.spec import AgentSpec, ConnectOptions
from sredrill.diagnosis import Diagnosis
from sredrill.errors import AgentError, AgentSpecError, InputError, StateError, did_you_mean
from sredrill.trajectory import Recorder, ResponseStep, ToolError
from sredrill.workers import (
    START_TIMEOUT_S,
    Ask,
    ExceptionTrace,
    RemoteError,
    Worker,
    WorkerDied,
    WorkerPool,
    attach_trace,
    attach_worker_data,
    capture_output,
    worker_role,
)

__all__ = ["AgentWorkerHandler", "PyAgent", "WorkerPyAgent", "connect"]

_HANDLER: Final = "sredrill.agents.connectors.py:AgentWorkerHandler"

AgentFunction = Callable[[Task], Awaitable[object]]

_EXAMPLE = "py:examples.agents.echo_agent:agent"


def _is_cancelled() -> bool:
    """This task is being cancelled from outside (the run's timeout, Ctrl-C), not by the agent's own code."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _describe(exc: BaseException) -> str:
    """`Type: message`; for an exception group (an agent's TaskGroup), the messages of what it holds too."""
    text = f"{type(exc).__name__}: {str(exc) or '(no message)'}"
    if isinstance(exc, BaseExceptionGroup):
        text += " [" + "; ".join(_describe(e) for e in exc.exceptions) + "]"
    return text


@dataclass(frozen=True, slots=True)
class PyAgent:
    """An async Python callable run in this process (inside a worker)."""

    spec: str
    function: AgentFunction
    """`agent(task)`, or the bound `run` of an agent object."""

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Await the callable and turn what it returned into a reply, recorded as a response step.

        Raises:
            AgentError: the agent raised (its type and message are kept, the original is the cause), or
                returned something that is not a Diagnosis, dict or str.
        """
        try:
            value = await self.function(task)
        except BaseException as exc:
            # The agent's own code may fail in any way, sys.exit() included; it becomes `errored` with the
            # agent's message, never a sredrill crash. A real cancellation (the run's timeout) goes on.
            if isinstance(exc, asyncio.CancelledError) and _is_cancelled():
                raise
            raise AgentError(f"agent raised {_describe(exc)}") from exc
        reply = reply_from_value(value)
        recorder.add(ResponseStep(content=reply.output))
        return reply


def _error(
    spec: AgentSpec, message: str, *, hint: str | None = None, allowed: list[str] | None = None
) -> AgentSpecError:
    return AgentSpecError(f"{spec.text!r}: {message}", field="--agent", hint=hint, allowed=allowed)


def _import(spec: AgentSpec, module_name: str) -> object:
    # Like `python -m`, the current directory is importable, so `--agent py:examples.agents.echo_agent:agent`
    # works from the repository root under the `sredrill` script too (the engine adds each eval file's folder).
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            top = module_name.split(".")[0]
            raise _error(
                spec,
                f"cannot import module {module_name!r}: no module named {exc.name!r}",
                hint=(
                    f"the eval file's folder and the current directory ({cwd}) are on sys.path: run from the "
                    f"folder that contains {top}/ (or {top}.py), or install the package that provides it"
                ),
            ) from exc
        raise _error(spec, f"importing module {module_name!r} failed: {exc}") from exc
    except Exception as exc:
        # Importing runs the user's module: whatever it raises is theirs to fix, so it is an input error
        # carrying their message rather than a crash of sredrill.
        raise _error(spec, f"importing module {module_name!r} failed: {type(exc).__name__}: {exc}") from exc


def _attribute(spec: AgentSpec, module: object, module_name: str, path: str) -> object:
    obj = module
    where = module_name
    for part in path.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_") and callable(getattr(obj, n, None))]
            raise _error(
                spec,
                f"{where!r} has no attribute {part!r}",
                allowed=names,
                hint=did_you_mean(part, names) or f"define it, e.g. `async def {part}(task): ...`",
            )
        obj = getattr(obj, part)
        where = f"{where}.{part}"
    return obj


def _function(spec: AgentSpec, obj: object, name: str) -> AgentFunction:
    """The coroutine function to await for `obj`, or a clear error saying what to change."""
    fix = f"declare it `async def {name}(task): ...` (sredrill awaits agents)"
    if inspect.isclass(obj):
        raise _error(spec, f"{name!r} is a class", hint=f"point at an instance (`agent = {name}()`) instead")
    if inspect.iscoroutinefunction(obj):
        function: AgentFunction = obj
    elif inspect.iscoroutinefunction(run := getattr(obj, "run", None)):
        function = run
    elif callable(obj) and inspect.iscoroutinefunction(type(obj).__call__):
        function = obj
    elif inspect.isasyncgenfunction(obj):
        raise _error(spec, f"{name!r} is an async generator", hint="return the answer instead of yielding it")
    elif callable(getattr(obj, "run", None)):
        raise _error(spec, f"{name}.run is not async", hint="declare it `async def run(self, task): ...`")
    elif callable(obj):
        raise _error(spec, f"{name!r} is a regular function, not an async one", hint=fix)
    else:
        raise _error(spec, f"{name!r} is not callable (it is a {type(obj).__name__})", hint=fix)
    try:
        inspect.signature(function).bind(None)
    except TypeError as exc:
        raise _error(spec, f"{name!r} must accept one argument, the Task ({exc})", hint=fix) from exc
    except ValueError:
        pass  # no signature to inspect (some builtins and C callables): the call itself will tell
    return function


def _load(spec: AgentSpec) -> AgentFunction:
    module_name, _, attr = spec.target.partition(":")
    if not module_name.strip() or not attr.strip():
        raise _error(spec, "a py: spec needs MODULE:ATTR", hint=f"for example --agent {_EXAMPLE}")
    module = _import(spec, module_name.strip())
    obj = _attribute(spec, module, module_name.strip(), attr.strip())
    return _function(spec, obj, attr.strip())


# -- the agent worker -----------------------------------------------------------------------------------------


class _RelayedTask(Task):
    """The Task inside an agent worker: `call_tool` asks the driver, which runs and records the call."""

    _ask: Ask | None = PrivateAttr(default=None)

    async def call_tool(self, name: str, /, **args: Any) -> Any:
        if self._ask is None:
            raise StateError("this task has no tools: the test did not give the agent a toolset")
        answer = await self._ask({"name": name, "args": args})
        if answer.get("ok"):
            return answer.get("result")
        if answer.get("kind") == "tool":
            raise ToolError(str(answer.get("code")), str(answer.get("message")))
        raise StateError(str(answer.get("message")))


def _spec_error_data(exc: InputError) -> dict[str, Any]:
    return {"message": exc.message, "path": exc.path, "field": exc.field, "allowed": exc.allowed, "hint": exc.hint}


def _wire_value(value: object) -> dict[str, Any]:
    if isinstance(value, Diagnosis):
        return {"kind": "diagnosis", "value": value.model_dump(mode="json")}
    if isinstance(value, Mapping):
        return {"kind": "mapping", "value": dict(value)}
    return {"kind": "text", "value": value}


class AgentWorkerHandler:
    """Serves an agent worker: `load` imports the target once; `run` runs it on one Task."""

    def __init__(self) -> None:
        self._function: AgentFunction | None = None

    async def handle(self, body: Any, ask: Ask) -> Any:
        if body.get("op") == "load":
            try:
                self._function = _load(_parse_spec(body["spec"]))
            except InputError as exc:
                attach_worker_data(exc, _spec_error_data(exc))
                raise
            return {}
        if self._function is None:
            raise StateError("the agent worker got a run before its load")
        task = _RelayedTask.model_validate(body["task"])
        task.bind(None, Recorder(), traceparent=body.get("traceparent"))
        task._ask = ask
        with capture_output() as out:
            try:
                value = await self._function(task)
                checked = reply_from_value(value)  # the same check as in process, so the same message
                # Its notes (text replaced, output cut) are said here: the value crosses the pipe already clean.
                answer: dict[str, Any] = {"ok": True, "value": _wire_value(value), "notes": checked.notes}
            except AgentError as exc:
                answer = {"ok": False, "error": str(exc)}
            except BaseException as exc:  # the agent's own error, whatever it is: named, the worker goes on
                answer = {
                    "ok": False,
                    "error": f"agent raised {_describe(exc)}",
                    "cause": {"type": type(exc).__name__, "message": str(exc)},
                    # Its frames are only here: the driver shows them as the cause of its AgentError.
                    "trace": ExceptionTrace.of(exc).model_dump(mode="json"),
                }
        answer["log"] = out.stdout + out.stderr
        return answer


def _parse_spec(text: str) -> AgentSpec:
    from sredrill.agents.spec import parse_agent_spec

    return parse_agent_spec(text)


def _cause(data: object) -> BaseException | None:
    """The agent's exception, rebuilt in the driver when it is a builtin one (`RuntimeError("disk on fire")`)."""
    if not isinstance(data, dict):
        return None
    cls = getattr(builtins, str(data.get("type")), None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return None
    try:
        return cls(data.get("message", ""))
    except Exception:  # a builtin whose constructor wants other arguments: the message still says it all
        return None


def _trace(data: object) -> ExceptionTrace | None:
    """The agent's traceback as its worker sent it; None when absent or not one."""
    if not isinstance(data, dict):
        return None
    try:
        return ExceptionTrace.model_validate(data)
    except ValidationError:
        return None


async def _answer_tool(task: Task, question: Any) -> dict[str, Any]:
    """Run a tool call the worker asked for, on the driver's task: recorded on the run's recorder."""
    try:
        result = await task.call_tool(str(question["name"]), **dict(question.get("args") or {}))
    except ToolError as exc:
        return {"ok": False, "kind": "tool", "code": exc.code, "message": exc.message}
    except StateError as exc:
        return {"ok": False, "kind": "state", "message": str(exc)}
    return {"ok": True, "result": result}


class WorkerPyAgent:
    """A `py:` agent run in agent workers: one per concurrent run, started when needed, reused."""

    def __init__(self, spec: str, first: Worker) -> None:
        self.spec = spec
        self.isolation = first.isolation
        """The run's isolation policy, which every worker of this agent runs under."""
        self._pool = WorkerPool(self._new_worker)
        self._pool.adopt(first)
        self._loaded: set[Worker] = {first}

    def __repr__(self) -> str:
        return f"WorkerPyAgent({self.spec!r}, {self._pool!r})"

    def _new_worker(self) -> Worker:
        return Worker(_HANDLER, role="agent", isolation=self.isolation)

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Run the agent on `task` in a worker; its tool calls are run and recorded here.

        Raises:
            AgentError: the agent raised or returned something unusable, or its worker ended during the run.
        """
        async with self._pool.worker() as worker:
            assert worker is not None
            try:
                if worker not in self._loaded:
                    await worker.call({"op": "load", "spec": self.spec}, timeout_s=START_TIMEOUT_S)
                    self._loaded.add(worker)
                answer = await worker.call(
                    {"op": "run", "task": task.model_dump(mode="json"), "traceparent": task.traceparent()},
                    timeout_s=None,  # the run's timeout cancels this call, which kills the worker
                    on_ask=lambda question: _answer_tool(task, question),
                )
            except WorkerDied as exc:
                raise AgentError(
                    f"the {exc} while the agent ran (os._exit(), a crash or running out of memory); "
                    "a new worker runs the next agent run"
                ) from None
            except RemoteError as exc:
                raise AgentError(f"the agent worker failed: {exc}") from None
        if not answer.get("ok"):
            error = with_agent_log(AgentError(str(answer.get("error"))), str(answer.get("log") or ""))
            trace = _trace(answer.get("trace"))
            if trace is not None:
                attach_trace(error, trace)
            raise error from _cause(answer.get("cause"))
        wire = answer["value"]
        value: object = wire.get("value")
        if wire.get("kind") == "diagnosis":
            value = Diagnosis.model_validate(value)
        reply = reply_from_value(value)
        reply.notes.extend(n for n in answer.get("notes") or () if isinstance(n, str) and n not in reply.notes)
        reply.log = str(answer.get("log") or "")
        recorder.add(ResponseStep(content=reply.output))
        return reply

    async def aclose(self) -> None:
        """Kill the workers (the run ended); a later run starts new ones."""
        self._pool.kill_all()
        self._loaded.clear()


def _inline_allowed(options: ConnectOptions) -> bool:
    """Whether this worker may run the agent in its own heap: only at level none (a body worker holds keys)."""
    from sredrill.isolation import Isolation

    return worker_role() == "agent" or options.isolation is None or options.isolation.level is Isolation.NONE


def connect(spec: AgentSpec, options: ConnectOptions) -> PyAgent | WorkerPyAgent:
    """Import `MODULE:ATTR` (in an agent worker; inline in a body worker at level none) and check it is an
    async callable.

    Args:
        spec: a parsed `py:` spec; its target is `MODULE:ATTR` (ATTR may be dotted: `Class.method`).
        options: `isolation`, the policy the agent workers run under (their environment the allow-list; at
            sandbox level under bubblewrap); the rest is unused: a Python agent brings its own configuration.

    Raises:
        AgentSpecError: the target is malformed, not importable, missing, or not an async callable.
    """
    if worker_role() is not None and _inline_allowed(options):
        return PyAgent(spec=spec.text, function=_load(spec))
    worker = Worker(_HANDLER, role="agent", isolation=options.isolation)
    try:
        worker.call_sync({"op": "load", "spec": spec.text}, timeout_s=START_TIMEOUT_S)
    except RemoteError as exc:
        worker.kill()
        data = exc.data if isinstance(exc.data, dict) else {}
        raise AgentSpecError(
            str(data.get("message") or f"{spec.text!r}: {exc}"),
            path=data.get("path"),
            field=data.get("field") or "--agent",
            allowed=data.get("allowed"),
            hint=data.get("hint"),
        ) from None
    except (WorkerDied, TimeoutError) as exc:
        worker.kill()
        raise _error(spec, f"the agent worker could not import it: {exc}") from None
    return WorkerPyAgent(spec.text, worker)
