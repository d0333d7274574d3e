"""Several reporters at once: `--reporter console --reporter junit=out.xml --reporter html=report.html`.

Each `--reporter` value is `NAME` (the result on stdout) or `NAME=PATH` (written to that file). At most one
reporter takes stdout, so what a pipe reads stays one document. When none does and no console reporter was
named, the console scoreboard is added on stdout: a file reporter never swallows the console (as pytest's
`--junitxml`). Every choice is checked before the run starts: unknown names, empty paths, unwritable files.

Examples:
    >>> from sredrill.engine.reporters.fanout import choose_reporters
    >>> [str(c) for c in choose_reporters(["junit=out.xml"], output=None)]
    ['junit=out.xml', 'console']
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from sredrill.engine.reporters.base import Reporter, ReporterName, make_reporter
from sredrill.errors import InputError, did_you_mean
from sredrill.results import RunReport, TestResult

__all__ = ["FanOut", "ReporterChoice", "choose_reporters", "make_reporters"]

_NEEDS_FILE = (ReporterName.JUNIT, ReporterName.HTML)


@dataclass(frozen=True, slots=True)
class ReporterChoice:
    """One reporter of a run and where it writes."""

    name: ReporterName
    output: Path | None
    """The file it writes; None: stdout."""

    def __str__(self) -> str:
        return self.name.value if self.output is None else f"{self.name.value}={self.output}"


def _parse(value: str) -> ReporterChoice:
    name, sep, path = value.partition("=")
    name = name.strip()
    try:
        chosen = ReporterName(name)
    except ValueError:
        allowed = [r.value for r in ReporterName]
        guess = did_you_mean(name, allowed)
        raise InputError(
            f"unknown reporter {name!r}" + (f"; {guess}" if guess else ""),
            field=f"--reporter {value}",
            allowed=allowed,
            hint="give NAME (to stdout) or NAME=PATH (to a file), e.g. --reporter junit=junit.xml",
        ) from None
    if sep and not path.strip():
        raise InputError(
            "the path after '=' is empty",
            field=f"--reporter {value}",
            hint=f"give the file to write, e.g. --reporter {name}=report.{_SUFFIX[chosen]}",
        )
    return ReporterChoice(chosen, Path(path.strip()) if sep else None)


_SUFFIX = {ReporterName.CONSOLE: "txt", ReporterName.JSON: "json", ReporterName.JUNIT: "xml", ReporterName.HTML: "html"}


def _check_writable(choice: ReporterChoice) -> None:
    """Fail now, not after an hour of tests, when the report's file cannot be written."""
    path = choice.output
    assert path is not None
    problem = None
    if path.is_dir():
        problem = "it is a folder"
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            problem = f"cannot create its folder {str(path.parent)!r}: {exc.strerror}"
        else:
            target = path if path.exists() else path.parent
            if not os.access(target, os.W_OK):
                problem = f"{str(target)!r} is not writable"
    if problem:
        raise InputError(
            f"cannot write the report to {str(path)!r}: {problem}",
            field=f"--reporter {choice}",
            hint="give a writable file, e.g. --reporter " + f"{choice.name.value}=report.{_SUFFIX[choice.name]}",
        )


def choose_reporters(values: Sequence[str], *, output: Path | None) -> list[ReporterChoice]:
    """The reporters of a run, from its `--reporter` values (or the config's `reporter`) and `--output`.

    Args:
        values: each `NAME` or `NAME=PATH`; empty means the console.
        output: `--output PATH`, the file of a single reporter given without `=PATH` (the older spelling of
            `--reporter junit --output junit.xml`).

    Returns:
        The choices, in the order given; the console on stdout is added last when no reporter takes stdout
        and none is a console one.

    Raises:
        InputError: an unknown name, an empty or unwritable path, two reporters on stdout or on one file, a
            junit or html reporter without a file, or `--output` with several reporters.
    """
    choices = [_parse(v) for v in values] or [ReporterChoice(ReporterName.CONSOLE, None)]
    if output is not None:
        if len(choices) > 1:
            raise InputError(
                f"it names the file of a single reporter, and {len(choices)} reporters were given",
                field="--output",
                hint="give each its file instead: --reporter junit=junit.xml --reporter html=report.html",
            )
        if choices[0].output is not None:
            raise InputError(
                f"--reporter {choices[0]} names its file already, and --output {output} names another",
                field="--output",
                hint="give the file once: --reporter NAME=PATH, or --reporter NAME --output PATH",
            )
        choices = [ReporterChoice(choices[0].name, output)]
    for choice in choices:
        if choice.output is None and choice.name in _NEEDS_FILE:
            name = choice.name.value
            raise InputError(
                f"{name} writes a file, and none was given",
                field=f"--reporter {name}",
                hint=f"e.g. --reporter {name}={name}.{_SUFFIX[choice.name]} (the console still prints)",
            )
    on_stdout = [c for c in choices if c.output is None]
    if len(on_stdout) > 1:
        names = " and ".join(c.name.value for c in on_stdout)
        raise InputError(
            f"{names} would both write to stdout, and at most one reporter may",
            field="--reporter",
            hint=f"give the other one a file, e.g. --reporter {on_stdout[-1].name.value}="
            f"report.{_SUFFIX[on_stdout[-1].name]}",
        )
    paths: dict[Path, ReporterChoice] = {}
    for choice in choices:
        if choice.output is None:
            continue
        key = choice.output.resolve()
        if key in paths:
            raise InputError(
                f"{paths[key]} and {choice} write the same file",
                field="--reporter",
                hint="give each reporter its own file",
            )
        paths[key] = choice
        _check_writable(choice)
    if not on_stdout and all(c.name != ReporterName.CONSOLE for c in choices):
        choices.append(ReporterChoice(ReporterName.CONSOLE, None))
    return choices


class FanOut:
    """Tells every reporter of a run each event, in order; one that fails does not stop the others.

    Args:
        reporters: the reporters, in the order they write.
        stderr: where the `--maxfail` stop line goes when no reporter shows it itself (`on_run_stopped`).
    """

    def __init__(self, reporters: Sequence[Reporter], *, stderr: TextIO) -> None:
        self.reporters = list(reporters)
        self._stderr = stderr
        self._note: str | None = None

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None:
        """Every reporter hears the run begin."""
        for r in self.reporters:
            r.on_run_start(run_id, total, title=title)

    def on_test_start(self, test_id: str, name: str) -> None:
        """Every reporter hears the test start."""
        for r in self.reporters:
            r.on_test_start(test_id, name)

    def on_test_end(self, result: TestResult) -> None:
        """Every reporter hears the test end."""
        for r in self.reporters:
            r.on_test_end(result)

    def on_run_stopped(self, message: str) -> None:
        """`--maxfail` stopped the run: the reporters that show it get it; if none does, it is printed after."""
        shown = False
        for r in self.reporters:
            stopped = getattr(r, "on_run_stopped", None)
            if stopped is not None:
                stopped(message)
                shown = True
        if not shown:
            self._note = message

    def on_run_end(self, report: RunReport) -> None:
        """Every reporter writes; the first error (a file that could not be written) is raised after all did."""
        first: Exception | None = None
        for r in self.reporters:
            try:
                r.on_run_end(report)
            except Exception as exc:  # the other reports still get written
                first = first or exc
        if self._note is not None:
            print(self._note, file=self._stderr)
        if first is not None:
            raise first


def make_reporters(
    choices: Sequence[ReporterChoice],
    *,
    stdout: TextIO,
    stderr: TextIO,
    color: bool | None = None,
    verbose: bool = False,
) -> FanOut:
    """The reporters of `choose_reporters`, built and fanned out as one listener."""
    built = [
        make_reporter(c.name.value, output=c.output, stdout=stdout, stderr=stderr, color=color, verbose=verbose)
        for c in choices
    ]
    return FanOut(built, stderr=stderr)
