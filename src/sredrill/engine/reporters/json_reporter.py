"""The JSON reporter: the RunReport as one JSON document (`--json`), at the end of the run.

Named `json_reporter` so that it never shadows the standard `json` module.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from sredrill.engine.reporters.base import write_output
from sredrill.results import RunReport, TestResult

__all__ = ["JsonReporter"]


class JsonReporter:
    """Writes `report.model_dump_json(indent=2)` (and a final newline) once the run ends; nothing before.

    Args:
        output: the file to write; None for stdout.
        stdout: the result stream.
        stderr: unused: the document is the only thing this reporter writes.
        color: unused.
        verbose: unused: the document holds every test.
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

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None:
        """Nothing to write yet."""

    def on_test_start(self, test_id: str, name: str) -> None:
        """Nothing to write yet."""

    def on_test_end(self, result: TestResult) -> None:
        """Nothing to write yet: the document is whole or absent."""

    def on_run_end(self, report: RunReport) -> None:
        """Write the report."""
        document = report.model_dump_json(indent=2) + "\n"
        if self._output is None:
            self._stdout.write(document)
            self._stdout.flush()
        else:
            write_output(self._output, document)
