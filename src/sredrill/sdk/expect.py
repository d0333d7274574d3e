"""`expect`: deterministic matchers that record a gate signal on the running test.

Each matcher computes `(passed, expected, actual)`; one recorder applies `.not_`, records the signal,
writes the message ("expected <actual> to <phrase> <expected>") and raises unless the expectation is soft.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from sredrill.errors import ExpectationFailed
from sredrill.results import Signal, SignalKind, SignalRole, Verdict
from sredrill.sdk.context import current_context
from sredrill.sdk.result import RunResult
from sredrill.trajectory import Trajectory

__all__ = ["Expectation", "expect"]

_MAX_SHOWN = 200


def _shown(value: Any) -> Any:
    """A JSON-safe, bounded rendering of a value for the signal and its message."""
    if isinstance(value, RunResult):
        return f"RunResult(run_id={value.run_id}, {len(value.trajectory)} steps)"
    if isinstance(value, Trajectory):
        return f"Trajectory({len(value)} steps)"
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > _MAX_SHOWN:
        return text[:_MAX_SHOWN] + "…"
    return value if isinstance(value, str | int | float | bool | type(None)) else json.loads(text)


def _trajectory_of(subject: Any) -> Trajectory:
    if isinstance(subject, RunResult):
        return subject.trajectory
    if isinstance(subject, Trajectory):
        return subject
    raise TypeError(f"this matcher needs a RunResult or a Trajectory, got {type(subject).__name__}")


class Expectation:
    """The object `expect(x)` returns; every matcher records one gate signal."""

    __slots__ = ("_message", "_negated", "_soft", "_subject")

    def __init__(self, subject: Any, *, soft: bool = False, negated: bool = False, message: str | None = None):
        self._subject = subject
        self._soft = soft
        self._negated = negated
        self._message = message

    @property
    def not_(self) -> Expectation:
        """The negated expectation: `expect(x).not_.to_contain("y")`."""
        return Expectation(self._subject, soft=self._soft, negated=not self._negated, message=self._message)

    def _check(
        self, matcher: str, phrase: str, passed: bool, expected: Any, actual: Any, *, scored: bool = False
    ) -> None:
        ctx = current_context()
        if self._negated:
            passed = not passed
            phrase = "not " + phrase
        message = f"expected {_shown(actual)!r} to {phrase} {_shown(expected)!r}".rstrip()
        if self._message:
            message = f"{self._message}: {message}"
        ctx.record(
            Signal(
                kind=SignalKind.EXPECT,
                name=("not_." if self._negated else "") + matcher,
                role=SignalRole.GATE,
                passed=passed,
                message="" if passed else message,
                expected=_shown(expected),
                actual=_shown(actual),
                soft=self._soft,
                score=(1.0 if passed else 0.0) if scored else None,
            )
        )
        if not passed and not self._soft:
            raise ExpectationFailed(message)

    def to_be(self, expected: Any) -> None:
        """Identity (or equality for None/bool/int literals)."""
        s = self._subject
        self._check("to_be", "be", s is expected or (type(s) is type(expected) and s == expected), expected, s)

    def to_equal(self, expected: Any) -> None:
        self._check("to_equal", "equal", self._subject == expected, expected, self._subject)

    def to_contain(self, expected: Any) -> None:
        """Substring for text; membership for lists, sets and dict keys."""
        s = self._subject
        try:
            passed = expected in s
        except TypeError:
            passed = False
        self._check("to_contain", "contain", passed, expected, s)

    def to_match(self, pattern: str | re.Pattern[str]) -> None:
        """`re.search` on text."""
        s = self._subject
        passed = isinstance(s, str) and re.search(pattern, s) is not None
        shown = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
        self._check("to_match", "match", passed, shown, s)

    def to_be_less_than(self, bound: float) -> None:
        s = self._subject
        passed = isinstance(s, int | float) and not isinstance(s, bool) and s < bound
        self._check("to_be_less_than", "be less than", passed, bound, s, scored=True)

    def to_be_greater_than(self, bound: float) -> None:
        s = self._subject
        passed = isinstance(s, int | float) and not isinstance(s, bool) and s > bound
        self._check("to_be_greater_than", "be greater than", passed, bound, s, scored=True)

    def to_have_called_tool(self, name: str, args: Mapping[str, Any] | None = None, *, verified: bool = False) -> None:
        """At least one call of `name` whose arguments include `args` (a recursive subset).

        Args:
            name: the tool.
            args: arguments the call must include; None for any.
            verified: False (the default) matches any call on the trajectory, the ones the agent only
                reported (its own tools, a `cmd:` agent's `tool_call` lines) included; True demands a call the
                harness served (through `task.call_tool`, the tool server or MCP).
        """
        trajectory = _trajectory_of(self._subject)
        passed = bool(trajectory.tool_calls(name, args, verified=verified))
        called = [
            c.name if not args else {"name": c.name, "args": dict(c.args)}
            for c in trajectory.tool_calls(verified=verified)
        ]
        expected = name if args is None else {"name": name, "args": dict(args)}
        phrase = "have called tool (served by the harness)" if verified else "have called tool"
        self._check("to_have_called_tool", phrase, passed, expected, called)

    def to_have_steps_of_type(self, kind: str) -> None:
        trajectory = _trajectory_of(self._subject)
        kinds = [s.kind for s in trajectory]
        self._check("to_have_steps_of_type", "have steps of type", kind in kinds, kind, sorted(set(kinds)))

    def to_complete_within(self, *, seconds: float) -> None:
        s = self._subject
        if not isinstance(s, RunResult):
            raise TypeError(f"to_complete_within needs a RunResult, got {type(s).__name__}")
        actual_s = round(s.duration_ms / 1000, 3)
        self._check("to_complete_within", "complete within (s)", actual_s <= seconds, seconds, actual_s, scored=True)

    def to_pass(self) -> None:
        """For a judge Verdict: it passed (a skipped verdict is neutral and passes)."""
        v = self._subject
        if not isinstance(v, Verdict):
            raise TypeError(f"to_pass needs a Verdict, got {type(v).__name__}")
        self._check("to_pass", "pass; reasoning", v.passed or v.skipped, "passed", v.reasoning or "failed")


class _Expect:
    """`expect(x)` records and raises on failure; `expect.soft(x)` records and lets the body go on."""

    def __call__(self, subject: Any, message: str | None = None) -> Expectation:
        return Expectation(subject, message=message)

    def soft(self, subject: Any, message: str | None = None) -> Expectation:
        return Expectation(subject, soft=True, message=message)


expect = _Expect()
