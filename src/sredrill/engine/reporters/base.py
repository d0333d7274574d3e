"""The Reporter role: what the engine tells a reporter during a run, and the factory that picks one.

A reporter is one module implementing `Reporter` plus one line in `_REPORTERS` (STYLE #31). Its class is
built as `cls(output=…, stdout=…, stderr=…, color=…, verbose=…)`; the engine calls its methods from the event
loop, so they must be quick and must not block on the network. Every reporter reads the report's one summary
(`RunReport.summary`) for its counts, and `failed_gates` for why a test did not pass.
"""

from __future__ import annotations

import importlib
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple, Protocol, TextIO

from sredrill.errors import InputError, did_you_mean
from sredrill.results import GeneratedSet, ResultKind, RunReport, SignalKind, SignalRole, TestResult, TestStatus

__all__ = [
    "CAPTURED_LINES",
    "TRACEBACK_LINES",
    "FailedGate",
    "Reporter",
    "ReporterName",
    "captured_sections",
    "error_header",
    "failed_gate_lines",
    "failed_gates",
    "generated_note",
    "isolation_note",
    "make_reporter",
    "seed_split",
    "shown_reason",
    "shows_file",
    "traceback_tail",
    "write_output",
]

_ISOLATION_NOTES = MappingProxyType(
    {
        "process": "disk and /proc reads are not prevented",
        "none": "the agent could read the answer keys",
        "sandbox+host-network": "the agent had the host's network",
    }
)


def generated_note(generated: GeneratedSet) -> str:
    """What a report says of the generated set a run played: its spec and generator version, and whether its
    seed is a development or an evaluation one (docs/generator.md, "Seeds")."""
    return f"{generated.spec} ({generated.generator} {generated.version}, {seed_split(generated.seed)})"


def seed_split(seed: int) -> str:
    """Which split a generator seed belongs to (docs/generator.md, "Seeds")."""
    if seed < 1_000:
        return "development seed"
    if 100_000 <= seed < 1_000_000:
        return "public split"
    if seed >= 1_000_000:
        return "evaluation seed"
    return "unassigned seed"


def isolation_note(level: str | None) -> str | None:
    """What a report says of the run's isolation level (`RunReport.isolation`): the level, and what it does not
    prevent (`process: disk and /proc reads are not prevented`); None when the run recorded no level."""
    if not level:
        return None
    note = _ISOLATION_NOTES.get(level)
    return f"{level} ({note})" if note else level


CAPTURED_LINES = 50
"""How many lines of a test's captured stdout or stderr the console shows (the last ones, as they are
nearest the failure); the JSON and JUnit reports and the store keep all that was captured."""
_CAPTURED_CHARS = 8000
TRACEBACK_LINES = 40
"""How many lines of a traceback the console shows (the last ones: the raising frame is last)."""


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
        ...     def __init__(self, *, output, stdout, stderr, color=None, verbose=False):
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
    name: str,
    *,
    output: Path | None,
    stdout: TextIO,
    stderr: TextIO,
    color: bool | None = None,
    verbose: bool = False,
) -> Reporter:
    """Build the reporter `--reporter NAME` asks for.

    Args:
        name: one of `ReporterName`'s values.
        output: where to write the result (`--output PATH`); None for stdout (junit requires it).
        stdout: the result stream.
        stderr: the progress and log stream.
        color: force colors on or off; None lets the terminal decide.
        verbose: `-v`: the console prints a line per finished test and lists the passed ones; the document
            reporters (json, junit, html) ignore it.

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
    reporter: Reporter = cls(output=output, stdout=stdout, stderr=stderr, color=color, verbose=verbose)
    return reporter


class FailedGate(NamedTuple):
    """One failed gate of a result, as every reporter prints it."""

    text: str
    """`<kind> <name>: <expected vs actual, or why>`."""
    where: str | None
    """Where it was recorded in the user's code (`path:line: source`), when known."""


def failed_gates(result: TestResult) -> list[FailedGate]:
    """Why a test did not pass, each failed gate once: its name and expected vs actual, and where it was recorded.

    A grading check is both a CHECK signal and an entry of `result.checks` (RCA results carry both): it is
    listed once, from its signal. Checks that failed for the same reason (no diagnosis fails most of them)
    share one line: `check root_cause_present, category: no diagnosis: …`.
    """
    gates: list[FailedGate] = []
    checks: dict[str, list[str]] = {}  # message -> the ids of the checks that failed with it, in order
    check_line: dict[str, int] = {}  # message -> index of its line in `gates`

    def add_check(check_id: str, message: str) -> None:
        if message in checks:
            if check_id not in checks[message]:
                checks[message].append(check_id)
            return
        checks[message] = [check_id]
        check_line[message] = len(gates)
        gates.append(FailedGate("", None))

    seen_checks: set[str] = set()
    for signal in result.signals:
        if signal.role != SignalRole.GATE or signal.passed is not False:
            continue
        message = signal.message or _expected_actual(signal.expected, signal.actual)
        if signal.kind == SignalKind.CHECK:
            seen_checks.add(signal.name)
            add_check(signal.name, message)
            continue
        if not message and signal.kind == SignalKind.JUDGE and signal.reasoning:
            message = f"judge: {signal.reasoning}"
        # A soft expect (`expect.soft`) let the body go on, and says so on every surface.
        label = f"{signal.kind.value} {signal.name}" + (" (soft)" if signal.soft else "")
        text = f"{label}: {message}" if message else label
        gates.append(FailedGate(text, signal.where))
    for check_id, check in (result.checks or {}).items():
        if check.role == SignalRole.GATE and not check.passed and check_id not in seen_checks:
            add_check(check_id, check.detail)
    for message, ids in checks.items():
        label = f"check {ids[0]}" if len(ids) == 1 else f"checks {', '.join(ids)}"
        gates[check_line[message]] = FailedGate(f"{label}: {message}" if message else label, None)
    return list(dict.fromkeys(gates))


def failed_gate_lines(result: TestResult) -> list[str]:
    """The text of each failed gate of a result, once (see `failed_gates`)."""
    return [gate.text for gate in failed_gates(result)]


def shown_reason(result: TestResult, gates: list[FailedGate]) -> str | None:
    """The failure reason when it says more than the gate lines (a failed test's reason is often its first
    gate, which is printed already); None when it would repeat one."""
    reason = result.failure_reason
    if not reason:
        return None
    if result.status != TestStatus.FAILED:
        return reason
    for gate in gates:
        message = gate.text.partition(": ")[2]  # a grouped line names several checks before it
        if reason in gate.text or (message and reason.endswith(message)):
            return None
    return reason


def error_header(result: TestResult) -> str:
    """The status word of a result's header: `FAILED`, `ERRORED`, or `ERRORED in the agent (agent.run())`
    when the engine said where it happened."""
    word = result.status.value.upper()
    if result.status == TestStatus.ERRORED and result.error_where:
        return f"{word} in {result.error_where}"
    return word


def shows_file(result: TestResult) -> bool:
    """A result's `file` says something its id does not only for SDK tests (RCA and incident ids start with
    their pack's name)."""
    return result.kind == ResultKind.TEST and bool(result.file)


def traceback_tail(result: TestResult, *, max_lines: int | None = TRACEBACK_LINES) -> str | None:
    """A result's traceback, its last `max_lines` lines (None: all), saying how many were left out; None when
    it has none."""
    text = (result.traceback or "").rstrip("\n")
    if not text.strip():
        return None
    lines = text.split("\n")
    if max_lines is None or len(lines) <= max_lines:
        return text
    return f"… {len(lines) - max_lines} earlier line(s) not shown (the --json report has all)\n" + "\n".join(
        lines[-max_lines:]
    )


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
