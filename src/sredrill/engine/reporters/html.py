"""The HTML reporter: the web UI's run page as one self-contained file (inline CSS and SVG, no network)."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from sredrill.engine.reporters.base import write_output
from sredrill.engine.reporters.html_pages import run_page
from sredrill.errors import InputError
from sredrill.results import RunReport, TestResult

__all__ = ["HtmlReporter", "render_run_html"]


def render_run_html(report: RunReport, *, status: str = "finished") -> str:
    """The run page of `report` as one HTML document, rendered by the UI's own page function."""
    return run_page(report, status=status, standalone=True)


class HtmlReporter:
    """Writes the run page to `output` once the run ends (`--reporter html=FILE`).

    Args:
        output: the HTML file (required).
        stdout: unused: the page goes to the file.
        stderr: unused.
        color: unused.
        verbose: unused: the document holds every test.

    Raises:
        InputError: no output path was given.
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
        if output is None:
            raise InputError("html needs --output PATH", field="--output", hint="e.g. --reporter html=report.html")
        self._output = output

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None:
        """Nothing to write yet."""

    def on_test_start(self, test_id: str, name: str) -> None:
        """Nothing to write yet."""

    def on_test_end(self, result: TestResult) -> None:
        """Nothing to write yet: the page is written whole at the end."""

    def on_run_end(self, report: RunReport) -> None:
        """Write the page."""
        write_output(self._output, render_run_html(report))
