"""Fixture resolution for one test: by parameter name, setup in dependency order, teardown LIFO, always."""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

from sredrill.errors import EvalFileError

__all__ = ["FixtureSet", "call_with_fixtures"]


class FixtureSet:
    """The fixtures of one test attempt. Values are created on first request and torn down in reverse."""

    def __init__(self, builtins: Mapping[str, Any], definitions: Mapping[str, Callable[..., Any]]) -> None:
        self._values: dict[str, Any] = dict(builtins)
        self._definitions = definitions
        self._teardowns: list[tuple[str, AsyncGenerator[Any, None]]] = []

    async def get(self, name: str) -> Any:
        if name in self._values:
            return self._values[name]
        fn = self._definitions.get(name)
        if fn is None:  # registration already checked names; this guards hooks asking for unknown ones
            raise EvalFileError(f"fixture {name!r} not found", allowed=[*self._values, *self._definitions])
        kwargs = await self.arguments(fn)
        if inspect.isasyncgenfunction(fn):
            gen = fn(**kwargs)
            try:
                value = await gen.__anext__()
            except StopAsyncIteration:
                raise EvalFileError(f"fixture {name!r} did not yield a value: add `yield value`") from None
            self._teardowns.append((name, gen))
        else:
            value = await fn(**kwargs)
        self._values[name] = value
        return value

    async def arguments(self, fn: Callable[..., Any]) -> dict[str, Any]:
        """Resolve every required parameter of `fn` as a fixture."""
        out = {}
        for pname, param in inspect.signature(fn).parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.default is not param.empty:
                continue
            out[pname] = await self.get(pname)
        return out

    async def teardown(self) -> list[BaseException]:
        """Run every teardown, last set up first; keep every error instead of stopping at the first."""
        errors: list[BaseException] = []
        while self._teardowns:
            name, gen = self._teardowns.pop()
            try:
                await gen.__anext__()
            except StopAsyncIteration:
                continue
            except Exception as exc:  # every teardown runs; errors are collected for the test result
                errors.append(_named(exc, f"fixture {name!r} teardown"))
                continue
            await gen.aclose()
            errors.append(EvalFileError(f"fixture {name!r} yielded more than once: a fixture yields exactly once"))
        return errors


def _named(exc: Exception, where: str) -> Exception:
    exc.add_note(f"in {where}")
    return exc


async def call_with_fixtures(fn: Callable[..., Any], fixtures: FixtureSet) -> Any:
    return await fn(**(await fixtures.arguments(fn)))
