"""`expect`: deterministic matchers that record a gate signal on the running test.

Each matcher computes `(passed, expected, actual)`; one recorder applies `.not_`, records the signal,
writes the message ("expected <actual> to <phrase> <expected>") and raises unless the expectation is soft.
Each signal says where it was recorded (`Signal.where`): the user's `path:line` of the `expect(...)` call, and,
when it failed, its source line. `to_equal` on nested data adds a diff to its message.
"""

from __future__ import annotations

import difflib
import json
import linecache
import pprint
import re
import sys
from collections.abc import Mapping
from types import FrameType
from typing import Any, Final, Protocol

from sredrill.errors import ExpectationFailed
from sredrill.harness.context import current_context
from sredrill.harness.paths import is_sredrill_file, shown_path
from sredrill.harness.result import RunResult
from sredrill.results import Signal, SignalKind, SignalRole, Verdict
from sredrill.trajectory import Trajectory

__all__ = ["Expectation", "Gradable", "expect"]

_MAX_SHOWN = 200
_DIFF_LINES: Final = 40
_SOURCE_CHARS: Final = 200


def _caller() -> tuple[str, int] | None:
    """The file and line of the user's code that called into sredrill (the first frame outside it)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and is_sredrill_file(frame.f_code.co_filename):
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


def _where(caller: tuple[str, int] | None, *, source: bool) -> str | None:
    """`path:line`, and with `source` (a failed signal) `path:line: the source line`."""
    if caller is None:
        return None
    path, line = caller
    where = f"{shown_path(path)}:{line}"
    text = linecache.getline(path, line).strip() if source else ""
    if len(text) > _SOURCE_CHARS:
        text = text[: _SOURCE_CHARS - 1] + "…"
    return f"{where}: {text}" if text else where


def _is_nested(value: Any) -> bool:
    return isinstance(value, dict | list | tuple | set | frozenset)


def _lines_of(value: Any) -> list[str]:
    """One line per item: indented JSON (keys sorted) when the value is JSON, else `pprint`'s layout."""
    try:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    except (TypeError, ValueError, RecursionError):  # sets, objects, keys of mixed types, a cycle
        return pprint.pformat(value, width=60, sort_dicts=True).splitlines()


def _diff(expected: Any, actual: Any) -> str | None:
    """A unified diff of two nested values (or multi-line texts), at most `_DIFF_LINES` lines; None otherwise."""
    if _is_nested(expected) and _is_nested(actual):
        try:
            old, new = _lines_of(expected), _lines_of(actual)
        except Exception:  # a user's __repr__ failed: the message without a diff still says what differs
            return None
    elif isinstance(expected, str) and isinstance(actual, str) and ("\n" in expected or "\n" in actual):
        old, new = expected.splitlines(), actual.splitlines()
    else:
        return None
    lines = list(difflib.unified_diff(old, new, "expected", "actual", n=2, lineterm=""))
    if not lines:
        return None
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"… {len(lines) - _DIFF_LINES} more diff lines"]
    return "\n".join(lines)


class Gradable(Protocol):
    """What `to_diagnose` grades against: a scenario (the `scenario` fixture) that grades a RunResult.

    Examples:
        >>> class AlwaysRight:
        ...     def grade(self, result):
        ...         return [Signal(kind="check", name="root_cause", role="gate", passed=True)]
    """

    def grade(self, result: RunResult) -> list[Signal]:
        """Grade the run's diagnosis: one CHECK signal per check (role gate or observe)."""
        ...


def _shown(value: Any) -> Any:
    """A JSON-safe, bounded rendering of a value for the signal and its message."""
    if isinstance(value, RunResult):
        return f"RunResult(run_id={value.run_id}, {len(value.trajectory)} steps)"
    if isinstance(value, Trajectory):
        return f"Trajectory({len(value)} steps)"
    try:
        text = json.dumps(value, default=str)
    except Exception:  # a cycle, or a user's __str__ that raises: show its repr (or its type), never crash
        try:
            text = repr(value)
        except Exception:
            text = f"<{type(value).__name__} object (its repr failed)>"
        return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "…"
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
        self,
        matcher: str,
        phrase: str,
        passed: bool,
        expected: Any,
        actual: Any,
        *,
        scored: bool = False,
        detail: str | None = None,
    ) -> None:
        ctx = current_context()
        caller = _caller()
        if self._negated:
            passed = not passed
            phrase = "not " + phrase
        message = f"expected {_shown(actual)!r} to {phrase} {_shown(expected)!r}".rstrip()
        if self._message:
            message = f"{self._message}: {message}"
        if detail and not passed and not self._negated:
            message = f"{message}\n{detail}"
        ctx.record(
            Signal(
                kind=SignalKind.EXPECT,
                name=("not_." if self._negated else "") + matcher,
                role=SignalRole.OBSERVE if ctx.in_hook else SignalRole.GATE,
                passed=passed,
                message="" if passed else message,
                expected=_shown(expected),
                actual=_shown(actual),
                soft=self._soft,
                score=(1.0 if passed else 0.0) if scored else None,
                where=_where(caller, source=not passed),
            )
        )
        if not passed and not self._soft:
            raise ExpectationFailed(message)

    def to_be(self, expected: Any) -> None:
        """Identity (or equality for None/bool/int literals)."""
        s = self._subject
        self._check("to_be", "be", s is expected or (type(s) is type(expected) and s == expected), expected, s)

    def to_equal(self, expected: Any) -> None:
        """Equality (`==`); on nested data (dicts, lists) a failure shows a diff of expected and actual."""
        passed = self._subject == expected
        detail = None if passed else _diff(expected, self._subject)
        self._check("to_equal", "equal", passed, expected, self._subject, detail=detail)

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

    def to_diagnose(self, scenario: Gradable) -> None:
        """The RunResult's diagnosis passes the scenario's grading (`scenario.grade(result)`).

        Every check the grading returns is recorded on the test (gate checks decide its status, observe
        checks are reported); unless soft, a failed gate check stops the body, naming each one that failed
        (their details are on their signals).

        Raises:
            TypeError: the subject is not a RunResult, the expectation is negated (a grade has no opposite),
                or `grade` returned something else than a list of Signals.
            ExpectationFailed: a gate check failed (not with `expect.soft`).
        """
        if self._negated:
            raise TypeError(
                "expect(result).not_.to_diagnose(scenario) has no meaning: a grade cannot be negated; "
                "drop .not_, or check one field instead (e.g. expect(result.diagnosis.category).not_.to_equal(...))"
            )
        result = self._subject
        if not isinstance(result, RunResult):
            raise TypeError(f"to_diagnose needs the RunResult of agent.run(), got {type(result).__name__}")
        ctx = current_context()
        caller = _caller()
        signals = scenario.grade(result)
        if not isinstance(signals, list | tuple) or not all(isinstance(s, Signal) for s in signals):
            raise TypeError(
                f"{type(scenario).__name__}.grade() must return a list of Signals, got {type(signals).__name__}"
            )
        failed = [s for s in signals if s.role == SignalRole.GATE and s.passed is False]
        for signal in signals:
            ctx.record(
                signal.model_copy(update={"soft": self._soft, "where": _where(caller, source=signal.passed is False)})
            )
        if failed and not self._soft:
            # Names only: each failed check's detail is its own signal, shown once (issue 11 point 2).
            named = ", ".join(s.name for s in failed)
            message = f"expected the diagnosis to pass the scenario's grading; failed gate checks: {named}"
            raise ExpectationFailed(f"{self._message}: {message}" if self._message else message)


class _Expect:
    """`expect(x)` records and raises on failure; `expect.soft(x)` records and lets the body go on."""

    def __call__(self, subject: Any, message: str | None = None) -> Expectation:
        return Expectation(subject, message=message)

    def soft(self, subject: Any, message: str | None = None) -> Expectation:
        return Expectation(subject, soft=True, message=message)


expect = _Expect()
