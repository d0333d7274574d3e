"""Test registration: `test`, `describe`, the four hooks and `test.extend`.

Registration is discovery only (seed 001 §3.5): `@test` records a TestDef (`sredrill.harness.registry`) into
the suite the engine's loader is collecting; nothing runs until the engine runs it.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sredrill.agents import ContextItem
from sredrill.errors import EvalFileError, did_you_mean
from sredrill.harness.registry import BUILTIN_FIXTURES, Fixture, Scope, TestDef, collecting_suite
from sredrill.text import scrub

__all__ = [
    "TestFn",
    "after_all",
    "after_each",
    "before_all",
    "before_each",
    "describe",
    "evaluator",
    "test",
]

DEFAULT_TIMEOUT_S = 120.0


def _where(fn: Callable[..., Any]) -> tuple[str, int]:
    code = getattr(fn, "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code else ("?", 0)


def _context_items(context: Sequence[Any] | None, where: str) -> tuple[ContextItem, ...]:
    items = []
    for i, item in enumerate(context or ()):
        if isinstance(item, ContextItem):
            items.append(item)
        elif isinstance(item, Mapping):
            items.append(ContextItem(description=str(item["description"]), value=str(item["value"])))
        elif isinstance(item, tuple) and len(item) == 2:
            items.append(ContextItem(description=str(item[0]), value=str(item[1])))
        else:
            raise EvalFileError(
                f"context[{i}] must be (description, value), a dict or a ContextItem; got {item!r}",
                path=where,
            )
    return tuple(items)


def _check_fixtures(
    fn: Callable[..., Any], available: Mapping[str, Fixture], where: str, seen: tuple[str, ...]
) -> None:
    known = [*BUILTIN_FIXTURES, *available]
    for pname, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.default is not param.empty:
            continue
        if pname in seen:
            raise EvalFileError(f"fixture {pname!r} depends on itself: {' -> '.join([*seen, pname])}", path=where)
        if pname not in known:
            hint = did_you_mean(pname, known)
            raise EvalFileError(
                f"fixture {pname!r} not found" + (f"; {hint}" if hint else ""),
                path=where,
                allowed=known,
                hint="add it with test.extend(name=fixture) and use the returned test function",
            )
        if pname in available:
            _check_fixtures(available[pname], available, where, (*seen, pname))


def _check_fixture_fn(name: str, fn: Any) -> None:
    if not callable(fn):
        raise EvalFileError(f"fixture {name!r} must be an async generator function or async function, got {fn!r}")
    if not (inspect.isasyncgenfunction(fn) or inspect.iscoroutinefunction(fn)):
        raise EvalFileError(
            f"fixture {name!r} must be async: write `async def {name}(...): ...; yield value; ...teardown`",
            path=f"{_where(fn)[0]}:{_where(fn)[1]}",
        )


class TestFn:
    """`test(name, ...)` as a decorator, with `.extend(**fixtures)` for custom fixtures.

    Examples:
        >>> @test("diagnoses the outage", labels=["category:RCA"], prompt="Why is checkout failing?")
        ... async def _(agent):
        ...     result = await agent.run()
        ...     expect(result.output).to_match(r"database")
    """

    __test__ = False

    def __init__(self, fixtures: Mapping[str, Fixture] | None = None) -> None:
        self._fixtures = dict(fixtures or {})

    def extend(self, **fixtures: Fixture) -> TestFn:
        """A new `test` whose bodies may also ask for these fixtures by parameter name."""
        for name, fn in fixtures.items():
            if name in BUILTIN_FIXTURES:
                raise EvalFileError(f"fixture {name!r} is built in and cannot be replaced; pick another name")
            _check_fixture_fn(name, fn)
        return TestFn({**self._fixtures, **fixtures})

    def __call__(
        self,
        name: str,
        *,
        labels: Sequence[str] = (),
        timeout: float = DEFAULT_TIMEOUT_S,
        prompt: str | None = None,
        context: Sequence[Any] | None = None,
        skip_judge: bool = False,
        description: str | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        suite = collecting_suite("test()")
        if not isinstance(name, str) or not name.strip():
            raise EvalFileError(f"test() needs a non-empty name, got {name!r}", path=suite.display)
        if not isinstance(timeout, int | float) or timeout <= 0:
            raise EvalFileError(f"test {name!r}: timeout must be a positive number of seconds, got {timeout!r}")
        # Names, labels and prompts go into ids, hashes, the store and reports: not-Unicode text is replaced here.
        name = _clean(name)
        labels = tuple(_clean(label) for label in labels)
        prompt = _clean(prompt) if prompt is not None else None

        def register(body: Callable[..., Any]) -> Callable[..., Any]:
            file, line = _where(body)
            display = suite.display_of(file)
            where = f"{display}:{line}"
            if not inspect.iscoroutinefunction(body):
                raise EvalFileError(
                    f"test {name!r}: the body must be `async def` (got a sync function)",
                    path=where,
                    hint="write: async def _(agent): result = await agent.run() ...",
                )
            _check_fixtures(body, self._fixtures, where, ())
            scope = suite.current_scope()
            test_id = "::".join([display, *scope.path(), name])
            if test_id in suite.ids:
                raise EvalFileError(f"test {name!r} is registered twice in the same scope", path=where)
            suite.ids.add(test_id)
            source = suite.source_of(body, file, line)
            digest = hashlib.sha256("\0".join([name, *labels, source]).encode()).hexdigest()[:16]
            suite.tests.append(
                TestDef(
                    id=test_id,
                    name=name,
                    file=display,
                    line=line,
                    describe_path=scope.path(),
                    labels=tuple(labels),
                    timeout_s=float(timeout),
                    prompt=prompt,
                    context=_context_items(context, where),
                    skip_judge=skip_judge,
                    description=description,
                    body=body,
                    fixtures=dict(self._fixtures),
                    scope=scope,
                    content_hash=digest,
                )
            )
            return body

        return register


test = TestFn()


def _clean(value: Any) -> Any:
    return scrub(value)[0] if isinstance(value, str) else value


@contextmanager
def _describe_block(name: str) -> Iterator[None]:
    suite = collecting_suite("describe()")
    name = _clean(name)
    parent = suite.current_scope()
    suite.scope = Scope(name=name, parent=parent)
    try:
        yield
    finally:
        suite.scope = parent if parent is not suite.root else None


def describe(name: str, fn: Callable[[], Any] | None = None) -> Any:
    """Group tests: `with describe("payments"): ...` or `describe("payments", lambda: ...)`.

    Hooks registered inside apply to the group's tests only; test ids carry the group's name.
    """
    if fn is None:
        return _describe_block(name)
    if inspect.iscoroutinefunction(fn):
        raise EvalFileError(f"describe({name!r}): the block must be a plain function, not async")
    with _describe_block(name):
        fn()
    return None


def _hook(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        suite = collecting_suite(f"{kind}()")
        if not inspect.iscoroutinefunction(fn):
            raise EvalFileError(f"{kind} hook {fn.__name__!r} must be `async def`", path=suite.display)
        getattr(suite.current_scope(), kind).append(fn)
        return fn

    register.__name__ = kind
    register.__doc__ = f"Register an async `{kind}` hook on the current file or describe block."
    return register


before_all = _hook("before_all")
after_all = _hook("after_all")
before_each = _hook("before_each")
after_each = _hook("after_each")


def evaluator(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a custom judge for this run: `judge(result, {"criteria": ..., "evaluator": name})`.

    The function is `async (result, criteria) -> Verdict | bool | dict(passed, score, reasoning)`.

    Examples:
        >>> @evaluator("mentions-metric")
        ... async def mentions_metric(result, criteria):
        ...     return criteria.lower() in result.output.lower()
    """

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        suite = collecting_suite("@evaluator")
        if not inspect.iscoroutinefunction(fn):
            raise EvalFileError(f"evaluator {name!r} must be `async def`", path=suite.display)
        if name in suite.evaluators and suite.evaluators[name] is not fn:
            raise EvalFileError(f"evaluator {name!r} is registered twice", path=suite.display)
        suite.evaluators[name] = fn
        return fn

    return register
