"""The console reporter: a progress bar on stderr, the scoreboard and the failures on stdout.

stdout carries only the result (STYLE #22), written once at the end of the run, so piping it stays cheap
and clean whatever the number of tests; everything live goes to stderr.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from sredrill.engine.reporters.base import captured_sections, failed_gate_lines, write_output
from sredrill.results import Counts, Insights, RunReport, Summary, TestResult, TestStatus
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
    """

    def __init__(self, *, output: Path | None, stdout: TextIO, stderr: TextIO, color: bool | None = None) -> None:
        self._output = output
        self._stdout = stdout
        self._color = color
        # markup/emoji off: test ids, reasons and agent text must print as they are ("[red]", ":x:").
        self._err = Console(file=stderr, no_color=color is False, markup=False, emoji=False, highlight=False)
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._counts = Counts()

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None:
        """Start the progress bar."""
        self._counts = Counts()
        self._progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(
                "[green]{task.fields[passed]} passed[/] [red]{task.fields[failed]} failed[/] "
                "[yellow]{task.fields[errored]} errored[/]"
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
        """Advance the bar and its live counts."""
        c = self._counts
        c.total += 1
        setattr(c, result.status.value, getattr(c, result.status.value) + 1)
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, passed=c.passed, failed=c.failed, errored=c.errored)

    def on_run_end(self, report: RunReport) -> None:
        """Stop the bar, then print the scoreboard, the failures and the insights."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if self._output is None:
            out = Console(
                file=self._stdout,
                force_terminal=True if self._color else None,
                no_color=self._color is False,
                markup=False,
                emoji=False,
                highlight=False,
            )
            _render(out, report)
            return
        buffer = io.StringIO()
        _render(Console(file=buffer, width=_FILE_WIDTH, no_color=True, markup=False, emoji=False), report)
        write_output(self._output, buffer.getvalue())


def _render(out: Console, report: RunReport) -> None:
    header = Text(f"run {_safe(report.run_id)}", style="bold")
    for label, value in (("agent", report.agent), ("mode", report.mode)):
        if value:
            header.append(f"  {label} {_safe(value)}")
    header.append(f"  {report.duration_ms / 1000:.1f} s")
    out.print(header, soft_wrap=True)
    out.print(_scoreboard(report.summary))
    for line in _summary_lines(report.summary):
        out.print(line, soft_wrap=True)

    not_passed = [r for r in report.results if r.status != TestStatus.PASSED]
    if not_passed:
        out.print()
        out.print(Text(f"failures ({len(not_passed)})", style="bold"))
        for result in not_passed:
            _print_failure(out, result)
    if report.insights is not None:
        out.print()
        out.print(Text("insights", style="bold"))
        _print_insights(out, report.insights, indent="  ")
    out.print()
    out.print(f"run {report.run_id} stored; see: sredrill runs show {report.run_id}", soft_wrap=True)


def _scoreboard(summary: Summary) -> Table:
    axis2 = summary.axis2
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("")
    for name in ("total", "passed", "failed", "errored"):
        table.add_column(name, justify="right")
    table.add_column("pass rate" if axis2 is None else "axis 1", justify="right")
    if axis2 is not None:
        table.add_column("axis 2", justify="right")
        table.add_column("gap", justify="right")

    def row(label: str, counts: Counts | Summary, level: str | None) -> list[str]:
        cells = [label, str(counts.total), str(counts.passed), str(counts.failed), str(counts.errored)]
        cells.append(_percent(counts.pass_rate))
        if axis2 is not None:
            a2 = axis2.by_difficulty.get(level) if level is not None else None
            rate2 = axis2.pass_rate if level is None else (a2.pass_rate if a2 is not None else None)
            gap = summary.gap
            points = None if gap is None else gap.overall if level is None else gap.by_difficulty.get(level)
            cells += [_percent(rate2), _points(points)]
        return cells

    table.add_row(*row("all", summary, None))
    for level, counts in sorted(summary.by_difficulty.items()):
        table.add_row(*row(f"difficulty {level}", counts, level))
    return table


def _summary_lines(summary: Summary) -> list[str]:
    lines = []
    if summary.axis2 is not None:
        a2 = summary.axis2
        lines.append(
            f"axis 2: {a2.total} total, {a2.passed} passed, {a2.failed} failed, {a2.errored} errored, "
            f"pass rate {_percent(a2.pass_rate)}"
        )
    if summary.gap is not None:
        lines.append(f"gap (axis 1 - axis 2): {_points(summary.gap.overall)}")
    if summary.pass_at_k:
        lines.append("  ".join(f"pass@{k} {_percent(v)}" for k, v in summary.pass_at_k.items()))
    if summary.pass_hat_k:
        lines.append("  ".join(f"pass^{k} {_percent(v)}" for k, v in summary.pass_hat_k.items()))
    lines.append(f"flaky: {summary.flaky}")
    return lines


def _print_failure(out: Console, result: TestResult) -> None:
    out.print()
    line = Text(_safe(result.id), style="bold")
    line.append("  ")
    line.append(result.status.value.upper(), style=_STATUS_STYLE[result.status])
    if result.file:
        line.append(f"  {_safe(result.file)}")
    out.print(line, soft_wrap=True)
    if result.failure_reason:
        out.print(f"  reason: {_safe(result.failure_reason)}", soft_wrap=True)
    for gate in failed_gate_lines(result):
        out.print(f"  - {_safe(gate)}", soft_wrap=True)
    for note in result.notes:
        out.print(f"  note: {_safe(note)}", soft_wrap=True)
    if result.insights is not None:
        _print_insights(out, result.insights, indent="  ")
    for title, text in captured_sections(result):
        out.print(Text(f"  ----- {title} -----", style="dim"), soft_wrap=True)
        for line in text.split("\n"):
            out.print(Text(f"  {_safe(line)}"), soft_wrap=True)


def _print_insights(out: Console, insights: Insights, *, indent: str) -> None:
    if insights.summary:
        out.print(f"{indent}{_safe(insights.summary)}", soft_wrap=True)
    for why in insights.why:
        out.print(f"{indent}why: {_safe(why)}", soft_wrap=True)
    for rank, recommendation in enumerate(insights.recommendations, start=1):
        out.print(f"{indent}{rank}. {_safe(recommendation)}", soft_wrap=True)


def _safe(text: str) -> str:
    # A lone surrogate (a test name, an agent's text) cannot be written to a UTF-8 stream: it prints as U+FFFD.
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", scrub(text)[0])


def _percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate * 100:.1f}%"


def _points(points: float | None) -> str:
    return "n/a" if points is None else f"{points:+.1f} pp"
