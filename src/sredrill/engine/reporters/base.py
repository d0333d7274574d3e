"""The Reporter role: what the engine tells a reporter during a run, and the factory that picks one.

A reporter is one module implementing `Reporter` plus one line in `_REPORTERS` (STYLE #31). Its class is
built as `cls(output=…, stdout=…, stderr=…, color=…)`; the engine calls its methods from the event loop,
so they must be quick and must not block on the network.
"""

from __future__ import annotations

import importlib
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Protocol, TextIO

from sredrill.errors import InputError, did_you_mean
from sredrill.results import RunReport, SignalRole, TestResult

__all__ = [
    "CAPTURED_LINES",
    "Reporter",
    "ReporterName",
    "captured_sections",
    "failed_gate_lines",
    "make_reporter",
    "write_output",
]

CAPTURED_LINES = 50
"""How many lines of a test's captured stdout or stderr the console shows (the last ones, as they are
nearest the failure); the JSON and JUnit reports and the store keep all that was captured."""
_CAPTURED_CHARS = 8000


class ReporterName(StrEnum):
    """The reporters `--reporter` accepts."""

    CONSOLE = "console"
    JSON = "json"
    JUNIT = "junit"
    HTML = "html"


# name -> "module:class", imported when chosen (the agents' spec table does the same).
_REPORTERS = MappingProxyType(
    {
        ReporterName.CONSOLE: "sredrill.engine.reporters.console:ConsoleReporter",
        ReporterName.JSON: "sredrill.engine.reporters.json_reporter:JsonReporter",
        ReporterName.JUNIT: "sredrill.engine.reporters.junit:JUnitReporter",
        ReporterName.HTML: "sredrill.engine.reporters.html:HtmlReporter",
    }
)


class Reporter(Protocol):
    """Receives a run's events and renders them (a scoreboard, a JSON document, a JUnit file).

    Examples:
        >>> class CountingReporter:
        ...     def __init__(self, *, output, stdout, stderr, color=None):
        ...         self.stdout, self.done = stdout, 0
        ...     def on_run_start(self, run_id, total, *, title): ...
        ...     def on_test_start(self, test_id, name): ...
        ...     def on_test_end(self, result):
        ...         self.done += 1
        ...     def on_run_end(self, report):
        ...         print(f"{self.done} tests", file=self.stdout)
    """

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None:
        """The run begins with `total` tests to run (after `--resume` skipped the finished ones)."""
        ...

    def on_test_start(self, test_id: str, name: str) -> None:
        """A test starts; with `--jobs N`, up to N tests are in flight."""
        ...

    def on_test_end(self, result: TestResult) -> None:
        """A test finished (and was stored)."""
        ...

    def on_run_end(self, report: RunReport) -> None:
        """The run finished: render the result."""
        ...


def make_reporter(
    name: str, *, output: Path | None, stdout: TextIO, stderr: TextIO, color: bool | None = None
) -> Reporter:
    """Build the reporter `--reporter NAME` asks for.

    Args:
        name: one of `ReporterName`'s values.
        output: where to write the result (`--output PATH`); None for stdout (junit requires it).
        stdout: the result stream.
        stderr: the progress and log stream.
        color: force colors on or off; None lets the terminal decide.

    Returns:
        The reporter, ready for `on_run_start`.

    Raises:
        InputError: the name is unknown, or the reporter needs an `--output` it did not get.
    """
    try:
        chosen = ReporterName(name)
    except ValueError:
        guess = did_you_mean(name, [r.value for r in ReporterName])
        raise InputError(
            f"unknown reporter {name!r}" + (f"; {guess}" if guess else ""),
            field="--reporter",
            allowed=[r.value for r in ReporterName],
        ) from None
    module_name, _, attr = _REPORTERS[chosen].partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    reporter: Reporter = cls(output=output, stdout=stdout, stderr=stderr, color=color)
    return reporter


def failed_gate_lines(result: TestResult) -> list[str]:
    """Why a test did not pass, one line per failed gate signal or check: its name and expected vs actual."""
    lines = []
    for signal in result.signals:
        if signal.role == SignalRole.GATE and signal.passed is False:
            message = signal.message or _expected_actual(signal.expected, signal.actual)
            lines.append(f"{signal.kind.value} {signal.name}: {message}" if message else signal.name)
    for check_id, check in (result.checks or {}).items():
        if check.role == SignalRole.GATE and not check.passed:
            lines.append(f"check {check_id}: {check.detail}" if check.detail else f"check {check_id}")
    return lines


def captured_sections(result: TestResult, *, max_lines: int | None = CAPTURED_LINES) -> list[tuple[str, str]]:
    """A test's captured output as (title, text) pairs: "Captured stdout", "Captured stderr" (as pytest), then
    "Agent log" (a `cmd:` agent's stderr and sredrill's warnings about its replies).

    Args:
        result: the test; empty or missing streams give no section.
        max_lines: keep only the last lines (and at most a few thousand characters), saying how many were
            left out; None keeps everything.
    """
    sections = []
    streams = (("Captured stdout", result.stdout), ("Captured stderr", result.stderr), ("Agent log", result.agent_log))
    for title, text in streams:
        if not text or not text.strip():
            continue
        text = text.rstrip("\n")
        if max_lines is not None:
            lines = text.split("\n")
            shown = "\n".join(lines[-max_lines:])
            cut = len(shown) > _CAPTURED_CHARS
            if cut:
                shown = shown[-_CAPTURED_CHARS:]
            if len(shown) < len(text):
                dropped = len(lines) - len(shown.split("\n"))
                left_out = f"{len(text) - len(shown)} earlier character(s)" if cut else f"{dropped} earlier line(s)"
                shown = f"… {left_out} not shown (the --json report has all)\n{shown}"
            text = shown
        sections.append((title, text))
    return sections


def write_output(output: Path, text: str) -> None:
    """Write a reporter's document to `--output PATH`, creating its folder.

    Raises:
        InputError: the file cannot be written.
    """
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"cannot write the report: {exc.strerror}", path=str(output), hint="pass a writable --output PATH"
        ) from exc


def _expected_actual(expected: object, actual: object) -> str:
    if expected is None and actual is None:
        return ""
    return f"expected {expected!r}, got {actual!r}"
