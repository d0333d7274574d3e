"""The console reporter: a progress bar on stderr, the scoreboard and the failures on stdout.

stdout carries only the result (STYLE #22), written once at the end of the run, so piping it stays cheap
and clean whatever the number of tests; everything live goes to stderr.
"""

from __future__ import annotations

import io
import re
import time
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from sredrill.engine.reporters.base import (
    captured_sections,
    error_header,
    failed_gates,
    generated_note,
    isolation_note,
    shown_reason,
    shows_file,
    traceback_tail,
    write_output,
)
from sredrill.engine.reporters.tables import progress_words, scoreboard
from sredrill.results import Counts, GradingMode, Insights, RunReport, TestResult, TestStatus
from sredrill.text import scrub

__all__ = ["ConsoleReporter"]

_STATUS_STYLE = {TestStatus.PASSED: "green", TestStatus.FAILED: "red", TestStatus.ERRORED: "yellow"}
# Control characters in agent text (ANSI escapes, NULs) would restyle or garble the terminal: they print
# escaped. Newlines and tabs stay.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# The file version of the scoreboard is plain text at a width that keeps the table on one line.
_FILE_WIDTH = 120


class ConsoleReporter:
    """Progress on stderr while tests run; at the end, the scoreboard and every failure on stdout.

    Args:
        output: write the scoreboard (plain text) to this file instead of stdout.
        stdout: the result stream.
        stderr: the progress stream; when it is not a terminal, the bar is printed once, at the end.
        color: force colors on or off; None lets the terminal (and `NO_COLOR`) decide.
        verbose: `-v`: a line per finished test on stderr as it ends, and the passed tests listed at the end.
    """

    def __init__(
        self,
        *,
        output: Path | None,
        stdout: TextIO,
        stderr: TextIO,
        color: bool | None = None,
        verbose: bool = False,
    ) -> None:
        self._output = output
        self._stdout = stdout
        self._color = color
        self._verbose = verbose
        # markup/emoji off: test ids, reasons and agent text must print as they are ("[red]", ":x:").
        self._err = Console(file=stderr, no_color=color is False, markup=False, emoji=False, highlight=False)
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._counts = Counts()
        self._title: str | None = None
        self._total = 0
        self._t0 = 0.0

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None:
        """Start the progress bar: results done of those to run, in the words of the scoreboard's totals line.

        When stderr is not a terminal (CI, a pipe), no bar: one plain line at the end, never cut to a width.
        """
        self._counts = Counts()
        self._title, self._total, self._t0 = title, total, time.perf_counter()
        if not self._err.is_terminal:
            return
        self._progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TextColumn(
                "{task.completed}/{task.total} results · [green]{task.fields[passed]} passed[/] · "
                "[red]{task.fields[failed]} failed[/] · [yellow]{task.fields[errored]} errored[/]"
            ),
            TimeElapsedColumn(),
            console=self._err,
            # Process-wide streams stay untouched: tests run in threads and subprocesses may print.
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._task = self._progress.add_task(_safe(title), total=total, passed=0, failed=0, errored=0)
        self._progress.start()

    def on_test_start(self, test_id: str, name: str) -> None:
        """Nothing to show: with `--jobs N` the bar would flicker between names."""

    def on_test_end(self, result: TestResult) -> None:
        """Advance the bar and its live counts; with `verbose`, print the test's status line above it."""
        c = self._counts
        c.total += 1
        setattr(c, result.status.value, getattr(c, result.status.value) + 1)
        if self._verbose:
            line = Text(f"{result.status.value.upper():<7}", style=_STATUS_STYLE[result.status])
            line.append(f"  {_safe(result.id)}  ({result.duration_ms / 1000:.1f} s)")
            self._err.print(line, soft_wrap=True)
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, passed=c.passed, failed=c.failed, errored=c.errored)

    def on_run_end(self, report: RunReport) -> None:
        """Stop the bar, then print the scoreboard, the failures and the insights."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        elif self._title is not None:
            c = self._counts
            words = progress_words(self._total, c.passed, c.failed, c.errored)
            elapsed = time.perf_counter() - self._t0
            self._err.print(f"{_safe(self._title)} · {c.total}/{words} · {elapsed:.1f} s", soft_wrap=True)
        if self._output is None:
            out = Console(
                file=self._stdout,
                force_terminal=True if self._color else None,
                no_color=self._color is False,
                markup=False,
                emoji=False,
                highlight=False,
            )
            _render(out, report, verbose=self._verbose)
            return
        buffer = io.StringIO()
        console = Console(file=buffer, width=_FILE_WIDTH, no_color=True, markup=False, emoji=False)
        _render(console, report, verbose=self._verbose)
        write_output(self._output, buffer.getvalue())


def _render(out: Console, report: RunReport, *, verbose: bool = False) -> None:
    header = Text(f"run {_safe(report.run_id)}", style="bold")
    for label, value in (("agent", report.agent), ("mode", report.mode)):
        if value:
            header.append(f"  {label} {_safe(value)}")
    header.append(f"  {report.duration_ms / 1000:.1f} s")
    isolation = isolation_note(report.isolation)
    if isolation is not None:
        header.append(f"  isolation: {_safe(isolation)}")
    if report.generated is not None:
        header.append(f"  generated: {_safe(generated_note(report.generated))}")
    out.print(header, soft_wrap=True)
    for part in scoreboard(report.summary, report.results):
        out.print(part, soft_wrap=isinstance(part, Text))

    if verbose:
        passed = [r for r in report.results if r.status == TestStatus.PASSED]
        if passed:
            out.print()
            out.print(Text(f"passed ({len(passed)})", style="bold"))
            for result in passed:
                out.print(f"  {_safe(result.id)}  ({result.duration_ms / 1000:.1f} s)", soft_wrap=True)
    not_passed = [r for r in report.results if r.status != TestStatus.PASSED]
    if not_passed:
        out.print()
        out.print(Text(f"failures ({len(not_passed)})", style="bold"))
        for result in not_passed:
            _print_failure(out, result)
    if report.insights is not None:
        out.print()
        out.print(Text("insights", style="bold"))
        _print_insights(out, report.insights, indent="  ", summary=True)
    out.print()
    out.print(f"run {report.run_id} stored; see: sredrill runs show {report.run_id}", soft_wrap=True)


def _print_failure(out: Console, result: TestResult) -> None:
    """A result that did not pass: its header, each failed gate once (with where it was recorded), the error,
    the traceback, the harness's notes, the insights' advice and the captured output."""
    out.print()
    line = Text(_safe(result.id), style="bold")
    line.append("  ")
    line.append(error_header(result), style=_STATUS_STYLE[result.status])
    if shows_file(result):
        line.append(f"  {_safe(result.file or '')}")
    if result.grading == GradingMode.COMPAT:
        line.append("  graded in compatibility mode (upstream answer key)", style="dim")
    out.print(line, soft_wrap=True)
    gates = failed_gates(result)
    reason = shown_reason(result, gates)
    if reason:
        label = "error" if result.status == TestStatus.ERRORED else "reason"
        out.print(f"  {label}: {_safe(reason)}", soft_wrap=True)
    for gate in gates:
        first, *more = gate.text.split("\n")  # a message on several lines (an assert's values) stays under its gate
        out.print(f"  - {_safe(first)}", soft_wrap=True)
        for rest in more:
            out.print(f"    {_safe(rest)}", soft_wrap=True)
        if gate.where:
            out.print(Text(f"      at {_safe(gate.where)}", style="dim"), soft_wrap=True)
    tb = traceback_tail(result)
    if tb is not None:
        out.print(Text("  ----- Traceback -----", style="dim"), soft_wrap=True)
        for tb_line in tb.split("\n"):
            out.print(Text(f"  {_safe(tb_line)}"), soft_wrap=True)
    for note in result.notes:
        out.print(f"  note: {_safe(note)}", soft_wrap=True)
    if result.insights is not None:
        # A test's rule-based summary only counts its gates, which are listed above; an LLM's says more.
        _print_insights(out, result.insights, indent="  ", summary=result.insights.source == "llm")
    for title, text in captured_sections(result):
        out.print(Text(f"  ----- {title} -----", style="dim"), soft_wrap=True)
        for text_line in text.split("\n"):
            out.print(Text(f"  {_safe(text_line)}"), soft_wrap=True)


def _print_insights(out: Console, insights: Insights, *, indent: str, summary: bool) -> None:
    if summary and insights.summary:
        out.print(f"{indent}{_safe(insights.summary)}", soft_wrap=True)
    for why in insights.why:
        out.print(f"{indent}why: {_safe(why)}", soft_wrap=True)
    for rank, recommendation in enumerate(insights.recommendations, start=1):
        out.print(f"{indent}{rank}. {_safe(recommendation)}", soft_wrap=True)


def _safe(text: str) -> str:
    # A lone surrogate (a test name, an agent's text) cannot be written to a UTF-8 stream: it prints as U+FFFD.
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", scrub(text)[0])
