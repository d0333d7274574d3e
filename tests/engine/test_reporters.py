"""Reporters on hand-built results: console (stdout = result only), JSON round trip, JUnit XML, the factory."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sredrill.engine.reporters import ConsoleReporter, JsonReporter, JUnitReporter, make_reporter
from sredrill.errors import InputError
from sredrill.results import (
    AxisSummary,
    Check,
    Counts,
    Gap,
    Insights,
    ResultKind,
    RunReport,
    Signal,
    SignalKind,
    SignalRole,
    TestResult,
    TestStatus,
    summarize,
)

TITLE = "sredrill test - 4 test(s)"


def results() -> list[TestResult]:
    return [
        TestResult(
            id="evals/db_eval.py::finds the database",
            name="finds the database",
            file="evals/db_eval.py",
            status=TestStatus.PASSED,
            difficulty=1,
            duration_ms=120.0,
        ),
        TestResult(
            id="evals/db_eval.py::names the cause",
            name="names the cause",
            file="evals/db_eval.py",
            status=TestStatus.FAILED,
            difficulty=2,
            failure_reason="expect to_contain failed",
            signals=[
                Signal(
                    kind=SignalKind.EXPECT,
                    name="to_contain",
                    role=SignalRole.GATE,
                    passed=False,
                    message="expected 'cpu is fine' to contain 'replication lag'",
                ),
                Signal(kind=SignalKind.METRIC, name="steps", role=SignalRole.OBSERVE, passed=None, value=3),
                Signal(kind=SignalKind.EXPECT, name="to_match", role=SignalRole.GATE, passed=True),
            ],
            insights=Insights(
                source="rules",
                summary="the agent never looked at replication metrics",
                why=["no query_metrics call for ReplicaLag"],
                recommendations=["query ReplicaLag before concluding"],
            ),
            duration_ms=340.0,
        ),
        TestResult(
            id="rds_postgres/006-replication-lag#1",
            name="006-replication-lag",
            kind=ResultKind.RCA,
            status=TestStatus.FAILED,
            difficulty=2,
            failure_reason="failure_modes",
            checks={
                "failure_modes": Check(
                    passed=False, role=SignalRole.GATE, detail="expected ['replication_lag'], got ['cpu_saturation']"
                ),
                "category": Check(passed=True, role=SignalRole.GATE),
            },
            duration_ms=80.0,
        ),
        TestResult(
            id="evals/db_eval.py::[red]survives a crash",
            name="[red]survives a crash",
            file="evals/db_eval.py",
            status=TestStatus.ERRORED,
            failure_reason="agent crashed: exit code 2\x1b[0m\x00",
            duration_ms=5.0,
        ),
    ]


def report_of(rs: list[TestResult], **kw: object) -> RunReport:
    return RunReport(
        run_id="20250102-030405-abc123",
        agent="py:examples.agents.echo_agent:agent",
        started_at=datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC),
        duration_ms=1500.0,
        summary=kw.pop("summary", None) or summarize(rs),  # type: ignore[arg-type]
        results=rs,
        **kw,
    )


def drive(reporter: object, report: RunReport) -> None:
    reporter.on_run_start(report.run_id, len(report.results), title=TITLE)  # type: ignore[attr-defined]
    for r in report.results:
        reporter.on_test_start(r.id, r.name)  # type: ignore[attr-defined]
        reporter.on_test_end(r)  # type: ignore[attr-defined]
    reporter.on_run_end(report)  # type: ignore[attr-defined]


def console(**kw: object) -> tuple[ConsoleReporter, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return ConsoleReporter(output=None, stdout=out, stderr=err, **kw), out, err  # type: ignore[arg-type]


def test_console_prints_progress_on_stderr_and_only_the_result_on_stdout() -> None:
    reporter, out, err = console()
    report = report_of(results(), insights=Insights(source="rules", summary="2 of 3 graded tests failed"))
    reporter.on_run_start(report.run_id, 4, title=TITLE)
    for r in report.results:
        reporter.on_test_start(r.id, r.name)
        reporter.on_test_end(r)
    assert out.getvalue() == ""  # nothing per test on stdout
    reporter.on_run_end(report)

    stdout = out.getvalue()
    assert TITLE not in stdout and "1 passed 2 failed 1 errored" not in stdout
    assert TITLE in err.getvalue() and "1 passed 2 failed 1 errored" in err.getvalue()
    # The scoreboard: counts, pass rate over graded tests (1 of 3), rows per difficulty.
    assert "33.3%" in stdout
    assert "difficulty 1" in stdout and "difficulty 2" in stdout
    assert "flaky: 0" in stdout
    # Every failed or errored test, with its reason, failed gates (expected vs actual) and insights.
    assert "evals/db_eval.py::names the cause  FAILED" in stdout
    assert "expect to_contain: expected 'cpu is fine' to contain 'replication lag'" in stdout
    assert "to_match" not in stdout  # a passed gate is not a failure
    assert "check failure_modes: expected ['replication_lag'], got ['cpu_saturation']" in stdout
    assert "why: no query_metrics call for ReplicaLag" in stdout
    assert "1. query ReplicaLag before concluding" in stdout
    assert "evals/db_eval.py::[red]survives a crash  ERRORED" in stdout  # no markup interpretation
    assert "reason: agent crashed: exit code 2" in stdout
    assert "finds the database" not in stdout  # passed tests are counted, not listed
    assert "2 of 3 graded tests failed" in stdout
    assert stdout.rstrip().endswith("run 20250102-030405-abc123 stored; see: sredrill runs show 20250102-030405-abc123")
    assert "exit code 2\\x1b[0m\\x00" in stdout  # an agent's control characters print escaped
    assert "\x1b" not in stdout  # and no colors when stdout is not a terminal


def test_console_progress_does_not_spam_a_captured_stderr() -> None:
    reporter, _, err = console()
    many = [TestResult(id=f"t{i}", name=f"t{i}", status=TestStatus.PASSED, duration_ms=1.0) for i in range(300)]
    drive(reporter, report_of(many))
    assert err.getvalue().count("\n") <= 2
    assert "300/300" in err.getvalue()


def test_console_shows_axis2_gap_and_pass_at_k() -> None:
    reporter, out, _ = console()
    rs = results()[:3]
    summary = summarize(rs).model_copy(
        update={
            "axis2": AxisSummary(
                total=3,
                passed=0,
                failed=3,
                errored=0,
                pass_rate=0.0,
                by_difficulty={"1": Counts(total=1, failed=1), "2": Counts(total=2, failed=2)},
            ),
            "gap": Gap(overall=33.3, by_difficulty={"1": 100.0, "2": 0.0}),
            "pass_at_k": {"1": 0.5, "3": 0.875},
            "pass_hat_k": {"1": 0.5, "3": 0.125},
            "flaky": 2,
        }
    )
    drive(reporter, report_of(rs, summary=summary))
    stdout = out.getvalue()
    assert "axis 2" in stdout and "+33.3 pp" in stdout and "+100.0 pp" in stdout
    assert "axis 2: 3 total, 0 passed, 3 failed, 0 errored, pass rate 0.0%" in stdout
    assert "pass@1 50.0%  pass@3 87.5%" in stdout
    assert "pass^3 12.5%" in stdout
    assert "flaky: 2" in stdout


def test_console_unknown_pass_rate_is_not_zero() -> None:
    reporter, out, _ = console()
    only_errored = [TestResult(id="e", name="e", status=TestStatus.ERRORED, duration_ms=1.0)]
    drive(reporter, report_of(only_errored))
    assert "n/a" in out.getvalue() and "0.0%" not in out.getvalue()


def test_console_forced_color_and_file_output(tmp_path: Path) -> None:
    reporter, out, _ = console(color=True)
    drive(reporter, report_of(results()))
    assert "\x1b[" in out.getvalue()

    target = tmp_path / "out" / "scoreboard.txt"
    reporter = make_reporter("console", output=target, stdout=io.StringIO(), stderr=io.StringIO(), color=True)
    drive(reporter, report_of(results()))
    text = target.read_text()
    assert "33.3%" in text and "\x1b[" not in text


def test_json_round_trips_through_the_run_report_model(tmp_path: Path) -> None:
    report = report_of(results())
    out = io.StringIO()
    reporter = JsonReporter(output=None, stdout=out, stderr=io.StringIO())
    reporter.on_run_start(report.run_id, 4, title=TITLE)
    reporter.on_test_end(report.results[0])
    assert out.getvalue() == ""
    reporter.on_run_end(report)
    assert out.getvalue() == report.model_dump_json(indent=2) + "\n"
    assert RunReport.model_validate_json(out.getvalue()) == report

    target = tmp_path / "report.json"
    drive(make_reporter("json", output=target, stdout=io.StringIO(), stderr=io.StringIO()), report)
    assert RunReport.model_validate_json(target.read_text()) == report


def test_junit_xml_has_the_right_counts_and_messages(tmp_path: Path) -> None:
    target = tmp_path / "junit.xml"
    report = report_of(results())
    drive(JUnitReporter(output=target, stdout=io.StringIO(), stderr=io.StringIO()), report)

    root = ET.parse(target).getroot()  # parses although the error message held \x1b and \x00
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "2", "1")
    assert suite.get("name") == TITLE and suite.get("time") == "1.500"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [r.id for r in report.results]
    assert [c.get("classname") for c in cases] == ["evals/db_eval.py", "evals/db_eval.py", "rca", "evals/db_eval.py"]
    assert cases[0].find("failure") is None and cases[0].find("error") is None
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("message") == "expect to_contain failed"
    assert "expected 'cpu is fine' to contain 'replication lag'" in (failure.text or "")
    rca_failure = cases[2].find("failure")
    assert rca_failure is not None and "got ['cpu_saturation']" in (rca_failure.text or "")
    error = cases[3].find("error")
    assert error is not None and (error.get("message") or "").startswith("agent crashed: exit code 2")
    assert cases[1].get("time") == "0.340"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["run_id"] == report.run_id


def test_junit_needs_an_output_path() -> None:
    with pytest.raises(InputError, match="junit needs --output PATH"):
        make_reporter("junit", output=None, stdout=io.StringIO(), stderr=io.StringIO())


def test_an_unknown_reporter_lists_the_allowed_ones() -> None:
    with pytest.raises(InputError) as caught:
        make_reporter("junt", output=None, stdout=io.StringIO(), stderr=io.StringIO())
    assert caught.value.allowed == ["console", "html", "json", "junit"]
    assert "did you mean 'junit'?" in str(caught.value)
    with pytest.raises(InputError, match="unknown reporter 'xml'"):
        make_reporter("xml", output=None, stdout=io.StringIO(), stderr=io.StringIO())


def test_the_factory_builds_each_reporter(tmp_path: Path) -> None:
    streams = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    assert isinstance(make_reporter("console", output=None, **streams), ConsoleReporter)
    assert isinstance(make_reporter("json", output=None, **streams), JsonReporter)
    assert isinstance(make_reporter("junit", output=tmp_path / "j.xml", **streams), JUnitReporter)


def test_an_unwritable_output_is_an_input_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    reporter = make_reporter("json", output=blocker / "report.json", stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(InputError, match="cannot write the report"):
        drive(reporter, report_of(results()))
