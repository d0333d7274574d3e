"""The JUnit reporter: one `<testsuite>` of the run as JUnit XML, for CI systems that display test results."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TextIO

from sredrill.engine.reporters.base import failed_gate_lines, write_output
from sredrill.errors import InputError
from sredrill.results import RunReport, TestResult, TestStatus

__all__ = ["JUnitReporter"]

# Characters XML 1.0 cannot carry even escaped; agent output is full of them (ANSI escapes, NULs), and a
# single one makes the whole file unparseable for the CI system.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class JUnitReporter:
    """Writes the run as JUnit XML to `output` once the run ends.

    Failed tests get a `<failure>` (the failure reason, then every failed gate with expected vs actual);
    errored tests get an `<error>` with their message; the harness's notes follow. A test's captured output
    goes in its `<system-out>` and `<system-err>`.

    Args:
        output: the XML file (required).
        stdout: unused: the XML goes to the file.
        stderr: unused.
        color: unused.

    Raises:
        InputError: no output path was given.
    """

    def __init__(self, *, output: Path | None, stdout: TextIO, stderr: TextIO, color: bool | None = None) -> None:
        if output is None:
            raise InputError(
                "junit needs --output PATH", field="--output", hint="e.g. --reporter junit --output junit.xml"
            )
        self._output = output
        self._title = "sredrill"

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None:
        """Remember the run's title: it names the test suite."""
        self._title = title

    def on_test_start(self, test_id: str, name: str) -> None:
        """Nothing to write yet."""

    def on_test_end(self, result: TestResult) -> None:
        """Nothing to write yet: the file is written whole at the end."""

    def on_run_end(self, report: RunReport) -> None:
        """Write the XML file."""
        root = junit_xml(report, title=self._title)
        ET.indent(root)
        write_output(self._output, ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")


def junit_xml(report: RunReport, *, title: str) -> ET.Element:
    """The run as a `<testsuites>` element holding one `<testsuite>`.

    Args:
        report: the finished run.
        title: the test suite's name.

    Returns:
        The root element.
    """
    results = report.results
    failures = sum(r.status == TestStatus.FAILED for r in results)
    errors = sum(r.status == TestStatus.ERRORED for r in results)
    counts = {"tests": str(len(results)), "failures": str(failures), "errors": str(errors)}
    time_s = _seconds(report.duration_ms)
    root = ET.Element("testsuites", {"name": _clean(title), **counts, "time": time_s})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": _clean(title),
            **counts,
            "skipped": "0",
            "time": time_s,
            "timestamp": report.started_at.isoformat(),
        },
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (("run_id", report.run_id), ("agent", report.agent), ("mode", report.mode)):
        if value is not None:
            ET.SubElement(properties, "property", {"name": name, "value": _clean(value)})
    for result in results:
        suite.append(_testcase(result))
    return root


def _testcase(result: TestResult) -> ET.Element:
    case = ET.Element(
        "testcase",
        {
            "classname": _clean(result.file or result.kind.value),
            "name": _clean(result.id),
            "time": _seconds(result.duration_ms),
        },
    )
    notes = [f"note: {n}" for n in result.notes]
    if result.status == TestStatus.FAILED:
        lines = failed_gate_lines(result)
        failure = ET.SubElement(
            case, "failure", {"message": _clean(result.failure_reason or (lines[0] if lines else "failed"))}
        )
        failure.text = _clean("\n".join(filter(None, [result.failure_reason, *lines, *notes])))
    elif result.status == TestStatus.ERRORED:
        error = ET.SubElement(case, "error", {"message": _clean(result.failure_reason or "errored")})
        error.text = _clean("\n".join(filter(None, [result.failure_reason, *notes])))
    # What the test printed, whole (it was capped when captured), where CI systems look for it.
    for tag, text in (("system-out", result.stdout), ("system-err", result.stderr)):
        if text:
            ET.SubElement(case, tag).text = _clean(text)
    return case


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _seconds(duration_ms: float) -> str:
    return f"{duration_ms / 1000:.3f}"
