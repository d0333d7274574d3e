"""Fixture resolution for one test: by parameter name, setup in dependency order, teardown LIFO, always.

Whatever a fixture raises names the fixture and the phase (a note on an `Exception`; a `SredrillError`
saying so in place of `sys.exit()`, `KeyboardInterrupt`, a `CancelledError` of its own or any other
BaseException), and every teardown runs. Only a real cancellation of the run passes through unchanged.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

from sredrill.errors import EvalFileError, SredrillError
from sredrill.harness.context import exit_text, is_engine_cancelled

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
        try:
            if inspect.isasyncgenfunction(fn):
                gen = fn(**kwargs)
                try:
                    value = await gen.__anext__()
                except StopAsyncIteration:
                    raise EvalFileError(f"fixture {name!r} did not yield a value: add `yield value`") from None
                self._teardowns.append((name, gen))
            else:
                value = await fn(**kwargs)
        except EvalFileError:
            raise
        except BaseException as exc:  # named, then re-raised for the engine's per-test boundary
            named = _named(exc, f"fixture {name!r} setup")
            if named is exc:
                raise
            raise named from exc
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

    async def teardown(self, *, timeout_s: float | None = None) -> list[BaseException]:
        """Run every teardown, last set up first; keep every error instead of stopping at the first.

        Args:
            timeout_s: the limit for each teardown; one that takes longer is stopped and reported.

        Returns:
            The errors, each with a note naming its fixture: any BaseException, a `CancelledError` included
            (the caller re-raises a real cancellation of the run once every teardown has run).
        """
        errors: list[BaseException] = []
        while self._teardowns:
            name, gen = self._teardowns.pop()
            where = f"fixture {name!r} teardown"
            limit = asyncio.timeout(timeout_s)
            try:
                async with limit:
                    await gen.__anext__()
            except StopAsyncIteration:
                continue
            except TimeoutError as exc:
                stopped = TimeoutError(f"took longer than {timeout_s:g}s and was stopped")
                errors.append(_named(stopped if limit.expired() else exc, where))
                continue
            except BaseException as exc:  # every teardown runs; errors are collected for the test result
                errors.append(_named(exc, where))
                continue
            errors.append(EvalFileError(f"fixture {name!r} yielded more than once: a fixture yields exactly once"))
            try:
                await gen.aclose()
            except BaseException as exc:  # the generator's own cleanup failed too: keep that as well
                errors.append(_named(exc, where))
        return errors


def _named(exc: BaseException, where: str) -> BaseException:
    """`exc` with a note saying where; a BaseException of the fixture's own becomes an error that says it."""
    if isinstance(exc, Exception) or is_engine_cancelled():
        exc.add_note(f"in {where}")
        return exc
    return SredrillError(exit_text(exc, where))


async def call_with_fixtures(fn: Callable[..., Any], fixtures: FixtureSet) -> Any:
    return await fn(**(await fixtures.arguments(fn)))
