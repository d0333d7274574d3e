"""The JUnit reporter: the run as JUnit XML, one `<testsuite>` per kind of result, for CI systems that show them."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TextIO

from sredrill.engine.reporters.base import (
    error_header,
    failed_gates,
    shown_reason,
    shows_file,
    traceback_tail,
    write_output,
)
from sredrill.errors import InputError
from sredrill.results import Rate, ResultKind, RunReport, Summary, TestResult, TestStatus

__all__ = ["JUnitReporter"]

# Characters XML 1.0 cannot carry even escaped; agent output is full of them (ANSI escapes, NULs), and a
# single one makes the whole file unparseable for the CI system.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class JUnitReporter:
    """Writes the run as JUnit XML to `output` once the run ends.

    Failed tests get a `<failure>` (each failed gate once, with expected vs actual and where it was recorded);
    errored tests get an `<error>` with their message and where it happened; the traceback and the harness's
    notes follow. A test's captured output goes in its `<system-out>` and `<system-err>`. The counts of
    `<testsuites>` and of each `<testsuite>` are the run summary's (every result once; each section's own).
    A suite's properties hold its headline, labelled: `pass@1` (RCA: `axisN.pass@1`, with `axisN.mean_score`,
    `axisN.claims`, `axisN.uncited_claims`, `axisN.hallucination_rate`) and the run's `run.pass@k` / `run.pass^k`
    after retries or repeats; an RCA case's properties hold `grading`, `score`, `score.<component>`, `claims`
    and `uncited_claims`.

    Args:
        output: the XML file (required).
        stdout: unused: the XML goes to the file.
        stderr: unused.
        color: unused.
        verbose: unused: the file holds every test.

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
            raise InputError("junit needs --output PATH", field="--output", hint="e.g. --reporter junit=junit.xml")
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


_SUITES = ((ResultKind.RCA, "RCA scenarios"), (ResultKind.INCIDENT, "incident episodes"), (ResultKind.TEST, "tests"))


def _suite_counts(summary: Summary, kind: ResultKind) -> Rate | None:
    """A kind's counts, from the summary: an RCA suite holds both axes' results."""
    if kind == ResultKind.RCA:
        axes = [a for a in (summary.rca.axis1, summary.rca.axis2) if a is not None] if summary.rca else []
        if not axes:
            return None
        return Rate(**{k: sum(getattr(a, k) for a in axes) for k in ("total", "passed", "failed", "errored")})
    return summary.incident if kind == ResultKind.INCIDENT else summary.test


def _figure(value: float | None) -> str | None:
    return None if value is None else f"{value:.4f}"


def _suite_figures(summary: Summary, kind: ResultKind) -> list[tuple[str, str | None]]:
    """A suite's headline figures as properties: pass@1 (per axis for RCA, with the mean score and the
    hallucination rate), and the run's pass@k / pass^k when results ran more than once, each labelled."""
    figures: list[tuple[str, str | None]] = []
    if kind == ResultKind.RCA and summary.rca is not None:
        for axis in (summary.rca.axis1, summary.rca.axis2):
            if axis is None:
                continue
            figures += [
                (f"axis{axis.axis}.pass@1", _figure(axis.pass_rate)),
                (f"axis{axis.axis}.mean_score", _figure(axis.mean_score)),
                (f"axis{axis.axis}.claims", str(axis.claims)),
                (f"axis{axis.axis}.uncited_claims", str(axis.uncited_claims)),
                (f"axis{axis.axis}.hallucination_rate", _figure(axis.hallucination_rate)),
            ]
    else:
        section = summary.incident if kind == ResultKind.INCIDENT else summary.test
        figures.append(("pass@1", _figure(section.pass_rate if section is not None else None)))
    figures += [(f"run.pass@{k}", _figure(v)) for k, v in (summary.pass_at_k or {}).items()]
    figures += [(f"run.pass^{k}", _figure(v)) for k, v in (summary.pass_hat_k or {}).items()]
    if summary.pass_k_counts:
        figures.append(("run.pass@k.counts", summary.pass_k_counts))
    return figures


def _case_properties(result: TestResult) -> list[tuple[str, str]]:
    """A test case's properties: how it was graded, its score and components, its claim counts."""
    found: list[tuple[str, str | None]] = [
        ("grading", result.grading.value if result.grading is not None else None),
        ("score", _figure(result.score) if result.kind == ResultKind.RCA else None),
        *((f"score.{k}", _figure(v)) for k, v in (result.score_components or {}).items()),
        ("claims", str(result.claims) if result.claims is not None else None),
        ("uncited_claims", str(result.uncited_claims) if result.uncited_claims is not None else None),
    ]
    return [(name, value) for name, value in found if value is not None]


def _attrs(counts: Rate) -> dict[str, str]:
    return {"tests": str(counts.total), "failures": str(counts.failed), "errors": str(counts.errored)}


def junit_xml(report: RunReport, *, title: str) -> ET.Element:
    """The run as a `<testsuites>` element holding one `<testsuite>` per kind of result in it.

    Args:
        report: the finished run.
        title: the name of the test suites (each suite is `title · RCA scenarios`, `title · tests`, …).

    Returns:
        The root element.
    """
    summary = report.summary
    time_s = _seconds(report.duration_ms)
    root = ET.Element("testsuites", {"name": _clean(title), **_attrs(summary), "time": time_s})
    for kind, label in _SUITES:
        counts = _suite_counts(summary, kind)
        results = [r for r in report.results if r.kind == kind]
        if counts is None or not results:
            continue
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": _clean(f"{title} · {label}"),
                **_attrs(counts),
                "skipped": "0",
                "time": _seconds(sum(r.duration_ms for r in results)),
                "timestamp": report.started_at.isoformat(),
            },
        )
        properties = ET.SubElement(suite, "properties")
        for name, value in (
            ("run_id", report.run_id),
            ("agent", report.agent),
            ("mode", report.mode),
            *_suite_figures(summary, kind),
        ):
            if value is not None:
                ET.SubElement(properties, "property", {"name": name, "value": _clean(value)})
        for result in results:
            suite.append(_testcase(result))
    return root


def _testcase(result: TestResult) -> ET.Element:
    case = ET.Element(
        "testcase",
        {
            "classname": _clean(result.file if shows_file(result) and result.file else result.kind.value),
            "name": _clean(result.id),
            "time": _seconds(result.duration_ms),
        },
    )
    found = _case_properties(result)
    if found:
        properties = ET.SubElement(case, "properties")
        for name, value in found:
            ET.SubElement(properties, "property", {"name": name, "value": _clean(value)})
    notes = [f"note: {n}" for n in result.notes]
    tb = traceback_tail(result, max_lines=None)
    tail = [f"Traceback:\n{tb}"] if tb else []
    gates = failed_gates(result)
    lines = [line for gate in gates for line in (gate.text, f"  at {gate.where}" if gate.where else "") if line]
    reason = shown_reason(result, gates)
    if result.status == TestStatus.FAILED:
        message = reason or (gates[0].text if gates else result.failure_reason or "failed")
        failure = ET.SubElement(case, "failure", {"message": _clean(message)})
        failure.text = _clean("\n".join(filter(None, [reason, *lines, *tail, *notes])))
    elif result.status == TestStatus.ERRORED:
        header = error_header(result).lower()  # "errored in the agent (agent.run())"
        error = ET.SubElement(case, "error", {"message": _clean(result.failure_reason or "errored")})
        where = header if result.error_where else None
        error.text = _clean("\n".join(filter(None, [where, result.failure_reason, *lines, *tail, *notes])))
    # What the test printed, whole (it was capped when captured), where CI systems look for it.
    agent_log = f"----- Agent log -----\n{result.agent_log}" if result.agent_log else None
    stderr = "\n".join(filter(None, [result.stderr, agent_log]))
    for tag, text in (("system-out", result.stdout), ("system-err", stderr)):
        if text:
            ET.SubElement(case, tag).text = _clean(text)
    return case


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _seconds(duration_ms: float) -> str:
    return f"{duration_ms / 1000:.3f}"
