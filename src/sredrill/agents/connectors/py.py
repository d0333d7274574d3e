"""The `py:` connector: an async Python callable in this process, named `py:MODULE:ATTR`.

The target is `async def agent(task) -> Diagnosis | dict | str`, or an object whose `run(task)` is async;
any other return value, or an exception, makes the run `errored` with a message saying why.
It calls tools with `await task.call_tool(name, **args)`; the engine bound the task to the run's toolset
and recorder before `run`, so every call lands on the trajectory without this connector doing anything.

Examples:
    >>> async def agent(task):
    ...     alert = await task.call_tool("get_alert")
    ...     return f"looked at {alert['title']}"
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reply import reply_from_value
from sredrill.agents.spec import AgentSpec, ConnectOptions
from sredrill.errors import AgentError, AgentSpecError, did_you_mean
from sredrill.trajectory import Recorder, ResponseStep

__all__ = ["PyAgent", "connect"]

AgentFunction = Callable[[Task], Awaitable[object]]

_EXAMPLE = "py:examples.agents.echo_agent:agent"


def _describe(exc: BaseException) -> str:
    """`Type: message`; for an exception group (an agent's TaskGroup), the messages of what it holds too."""
    text = f"{type(exc).__name__}: {str(exc) or '(no message)'}"
    if isinstance(exc, BaseExceptionGroup):
        text += " [" + "; ".join(_describe(e) for e in exc.exceptions) + "]"
    return text


@dataclass(frozen=True, slots=True)
class PyAgent:
    """An async Python callable run in this process."""

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
        except Exception as exc:
            # The agent's own code may fail in any way; it becomes `errored` with the agent's message, never a
            # sredrill crash. CancelledError is not an Exception, so a timeout still cancels the agent.
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
        function: AgentFunction = obj  # type: ignore[assignment]
    elif inspect.iscoroutinefunction(getattr(obj, "run", None)):
        function = obj.run  # type: ignore[attr-defined]
    elif callable(obj) and inspect.iscoroutinefunction(type(obj).__call__):  # type: ignore[operator]
        function = obj  # type: ignore[assignment]
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


def connect(spec: AgentSpec, options: ConnectOptions) -> PyAgent:
    """Import `MODULE:ATTR` and check it is an async callable taking the Task.

    Args:
        spec: a parsed `py:` spec; its target is `MODULE:ATTR` (ATTR may be dotted: `Class.method`).
        options: unused; a Python agent brings its own configuration.

    Raises:
        AgentSpecError: the target is malformed, not importable, missing, or not an async callable.
    """
    module_name, _, attr = spec.target.partition(":")
    if not module_name.strip() or not attr.strip():
        raise _error(spec, "a py: spec needs MODULE:ATTR", hint=f"for example --agent {_EXAMPLE}")
    module = _import(spec, module_name.strip())
    obj = _attribute(spec, module, module_name.strip(), attr.strip())
    return PyAgent(spec=spec.text, function=_function(spec, obj, attr.strip()))
