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
    Attempt,
    Check,
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
    progress = "4/4 results · 1 passed · 2 failed · 1 errored"
    assert TITLE not in stdout and progress not in stdout
    assert TITLE in err.getvalue() and progress in err.getvalue()
    # The totals line, in the progress line's words, over every result; then a table per kind of result.
    assert "4 results · 1 passed · 2 failed · 1 errored · pass@1 33.3%" in stdout
    assert "(every result of the run, each counted once: RCA scenarios, tests)" in stdout
    assert "RCA scenarios (axis 1: mixed evidence)" in stdout
    assert "\ntests\n" in stdout
    assert "flaky" not in stdout  # nothing repeated, nothing flaky: no line for it
    # Every failed or errored test, with its failed gates (expected vs actual) and insights.
    assert "evals/db_eval.py::names the cause  FAILED  evals/db_eval.py" in stdout
    assert "expect to_contain: expected 'cpu is fine' to contain 'replication lag'" in stdout
    assert "to_match" not in stdout  # a passed gate is not a failure
    assert "check failure_modes: expected ['replication_lag'], got ['cpu_saturation']" in stdout
    assert "rds_postgres/006-replication-lag#1  FAILED\n" in stdout  # an RCA id names its pack: no `file`
    assert "reason: failure_modes" not in stdout  # the reason is the first gate, printed already
    assert "why: no query_metrics call for ReplicaLag" in stdout
    assert "1. query ReplicaLag before concluding" in stdout
    assert "the agent never looked at replication metrics" not in stdout  # a rules summary only counts gates
    assert "evals/db_eval.py::[red]survives a crash  ERRORED" in stdout  # no markup interpretation
    assert "error: agent crashed: exit code 2" in stdout
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
    assert "300/300 results" in err.getvalue()


def _rca(scenario: str, axis: int, status: str, difficulty: int, **kw: object) -> TestResult:
    return TestResult(
        id=f"p/{scenario}#{axis}", name=f"p/{scenario}#{axis}", kind=ResultKind.RCA, file="p", axis=axis,
        mode="full" if axis == 1 else "selective", status=TestStatus(status), difficulty=difficulty,
        duration_ms=1.0, **kw,
    )  # fmt: skip


def _episode(task: str, seed: int, status: str, difficulty: int, grade: float) -> TestResult:
    return TestResult(
        id=f"incidents/{task}#seed{seed}", name=f"incidents/{task}#seed{seed}", kind=ResultKind.INCIDENT,
        file="incidents", status=TestStatus(status), difficulty=difficulty, score=grade, duration_ms=1.0,
    )  # fmt: skip


def mixed() -> list[TestResult]:
    """An `--axis2` run over an RCA pack and incident episodes: what one summary must keep apart."""
    return [
        _rca("001", 1, "passed", 1),
        _rca("011", 1, "passed", 4),
        _rca("001", 2, "passed", 1),
        _rca("011", 2, "failed", 4),
        _episode("easy", 0, "passed", 1, 0.76),
        _episode("easy", 1, "failed", 1, 0.0),
        _episode("hard", 0, "errored", 3, 0.0),
    ]


def test_console_keeps_rca_axes_and_incidents_apart_with_the_gap_labelled() -> None:
    reporter, out, err = console()
    rs = mixed()
    summary = summarize(rs).model_copy(update={"flaky": 2})
    drive(reporter, report_of(rs, summary=summary))
    stdout = out.getvalue()
    lines = stdout.splitlines()
    assert "7 results · 4 passed · 2 failed · 1 errored · pass@1 66.7% (95% CI 30–90%)" in stdout
    assert "7/7 results · 4 passed · 2 failed · 1 errored" in err.getvalue()
    assert "RCA scenarios (axis 1: full evidence; axis 2: selective evidence)" in stdout
    # Rows: difficulty, axis, total, passed, failed, errored, pass@1, mean score[, gap on the Axis 2 row].
    cells = [[c.strip() for c in line.split("│")] for line in lines if "│" in line]
    assert ["all", "1", "2", "2", "0", "0", "100.0%", "n/a", ""] in cells
    assert ["", "2", "2", "1", "1", "0", "50.0%", "n/a", "+50.0 pp"] in cells
    assert ["4", "1", "1", "1", "0", "0", "100.0%", "n/a", ""] in cells
    assert ["", "2", "1", "0", "1", "0", "0.0%", "n/a", "+100.0 pp"] in cells
    assert "gap: Axis 1 − Axis 2 pass rate (pass@1) over the 2 scenario(s) run on both axes, in points" in stdout
    # Incident difficulty (1–3) is its own scale: never added to an RCA row.
    assert "incident episodes (task × seed) · mean grade 0.25" in stdout
    assert ["all", "3", "1", "1", "1", "50.0%", "9–91%"] in cells
    assert ["3", "1", "0", "0", "1", "n/a", ""] in cells
    # Each rate's 95% Wilson interval: in its own column, or for the RCA table (80 columns) below it.
    assert "pass@1 95% CI (Wilson interval): axis 1 34–100% · axis 2 9–91%" in stdout
    assert "flaky: 2" in stdout


def test_console_shows_pass_at_k() -> None:
    reporter, out, _ = console()
    rs = results()[:3]
    summary = summarize(rs).model_copy(
        update={"pass_at_k": {"1": 0.5, "3": 0.875}, "pass_hat_k": {"1": 0.5, "3": 0.125}, "flaky": 2}
    )
    drive(reporter, report_of(rs, summary=summary))
    stdout = out.getvalue()
    assert "pass@1 50.0%  pass@3 87.5%" in stdout
    assert "pass^3 12.5%" in stdout
    assert "flaky: 2" in stdout


def _check_twice() -> TestResult:
    """An RCA result as the engine builds it: each grading check is a CHECK signal and an entry of `checks`."""
    signals = [
        Signal(kind=SignalKind.CHECK, name="category", role=SignalRole.GATE, passed=False,
               message="expected healthy, got unknown"),
        Signal(kind=SignalKind.CHECK, name="evidence_cited", role=SignalRole.GATE, passed=False,
               message="not cited by any claim"),
        Signal(kind=SignalKind.CHECK, name="failure_modes", role=SignalRole.GATE, passed=True),
    ]  # fmt: skip
    checks = {
        "category": Check(passed=False, role=SignalRole.GATE, detail="expected healthy, got unknown"),
        "evidence_cited": Check(passed=False, role=SignalRole.GATE, detail="not cited by any claim"),
        "failure_modes": Check(passed=True, role=SignalRole.GATE),
        "ruling_out": Check(passed=False, role=SignalRole.GATE, detail="no hypothesis ruled out"),
    }
    return _rca("000", 1, "failed", 1, signals=signals, checks=checks,
                failure_reason="category: expected healthy, got unknown",
                insights=Insights(source="rules", summary="2 gate signal(s) failed",
                                  recommendations=["gather evidence first"]))  # fmt: skip


def test_each_failed_check_prints_once() -> None:
    reporter, out, _ = console()
    drive(reporter, report_of([_check_twice()]))
    stdout = out.getvalue()
    assert stdout.count("expected healthy, got unknown") == 1  # not as reason, not twice, not as why
    assert stdout.count("not cited by any claim") == 1
    assert stdout.count("check ruling_out: no hypothesis ruled out") == 1  # a check without a signal still shows
    assert "why:" not in stdout and "2 gate signal(s) failed" not in stdout
    assert "1. gather evidence first" in stdout
    assert "FAILED  p" not in stdout  # the pack's name is in the id already


def test_checks_that_failed_for_one_reason_share_one_line() -> None:
    nothing = "no diagnosis: the agent's diagnosis line 2 was rejected"
    checks = {"root_cause_present": nothing, "category": nothing, "evidence_queried": "never queried: metrics"}
    result = TestResult(
        id="p/001-lag#1",
        name="001-lag#1",
        kind=ResultKind.RCA,
        status=TestStatus.FAILED,
        failure_reason=f"root_cause_present: {nothing}",
        signals=[
            Signal(kind=SignalKind.CHECK, name=k, role=SignalRole.GATE, passed=False, message=v)
            for k, v in checks.items()
        ],
        checks={k: Check(passed=False, role=SignalRole.GATE, detail=v) for k, v in checks.items()},
        duration_ms=1.0,
    )
    reporter, out, _ = console()
    drive(reporter, report_of([result]))
    stdout = out.getvalue()
    assert f"  - checks root_cause_present, category: {nothing}\n" in stdout
    assert "  - check evidence_queried: never queried: metrics\n" in stdout
    assert stdout.count(nothing) == 1  # not again as the reason


def test_where_traceback_and_where_an_error_happened_are_shown() -> None:
    frames = "\n".join(f"  evals/x_eval.py:{n} in helper" for n in range(1, 61))
    failed = TestResult(
        id="evals/x_eval.py::t", name="t", file="evals/x_eval.py", status=TestStatus.FAILED, duration_ms=1.0,
        failure_reason="expected 'a' to contain 'b'",
        signals=[Signal(kind=SignalKind.EXPECT, name="to_contain", role=SignalRole.GATE, passed=False,
                        message="expected 'a' to contain 'b'",
                        where="evals/x_eval.py:12: expect(result.output).to_contain('b')")],
    )  # fmt: skip
    errored = TestResult(
        id="evals/x_eval.py::e", name="e", file="evals/x_eval.py", status=TestStatus.ERRORED, duration_ms=1.0,
        failure_reason="ValueError: boom", error_type="ValueError", error_where="the agent (agent.run())",
        traceback=f"Traceback (most recent call last):\n{frames}\nValueError: boom",
    )  # fmt: skip
    asserted = TestResult(
        id="evals/x_eval.py::a", name="a", file="evals/x_eval.py", status=TestStatus.FAILED, duration_ms=1.0,
        signals=[Signal(kind=SignalKind.EXPECT, name="assert", role=SignalRole.GATE, passed=False,
                        message="assert x == 4\nwhere x = 3")],
    )  # fmt: skip
    reporter, out, _ = console()
    drive(reporter, report_of([failed, errored, asserted]))
    stdout = out.getvalue()
    assert "  - expect to_contain: expected 'a' to contain 'b'\n      at evals/x_eval.py:12: " in stdout
    assert "  - expect assert: assert x == 4\n    where x = 3\n" in stdout  # the values stay under their gate
    assert "reason:" not in stdout
    assert "evals/x_eval.py::e  ERRORED in the agent (agent.run())" in stdout
    assert "error: ValueError: boom" in stdout
    assert "----- Traceback -----" in stdout and "evals/x_eval.py:60 in helper" in stdout
    assert "evals/x_eval.py:5 in helper" not in stdout  # the console keeps the last 40 lines
    assert "22 earlier line(s) not shown" in stdout


def test_verbose_prints_each_finished_test_and_lists_the_passed_ones() -> None:
    reporter, out, err = console(verbose=True)
    drive(reporter, report_of(results()))
    assert "PASSED   evals/db_eval.py::finds the database  (0.1 s)" in err.getvalue()
    assert "FAILED   rds_postgres/006-replication-lag#1  (0.1 s)" in err.getvalue()
    assert "passed (1)\n  evals/db_eval.py::finds the database  (0.1 s)" in out.getvalue()
    quiet, out2, err2 = console()
    drive(quiet, report_of(results()))
    assert "PASSED " not in err2.getvalue() and "passed (1)" not in out2.getvalue()


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
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "2", "1")
    suites = {s.get("name"): s for s in root.findall("testsuite")}  # one per kind of result
    assert set(suites) == {f"{TITLE} · RCA scenarios", f"{TITLE} · tests"}
    tests, rca = suites[f"{TITLE} · tests"], suites[f"{TITLE} · RCA scenarios"]
    assert (tests.get("tests"), tests.get("failures"), tests.get("errors")) == ("3", "1", "1")
    assert (rca.get("tests"), rca.get("failures"), rca.get("errors")) == ("1", "1", "0")
    cases = tests.findall("testcase")
    assert [c.get("name") for c in cases] == [r.id for r in report.results if r.kind == ResultKind.TEST]
    assert [c.get("classname") for c in cases] == ["evals/db_eval.py"] * 3
    assert [c.get("classname") for c in rca.findall("testcase")] == ["rca"]
    assert cases[0].find("failure") is None and cases[0].find("error") is None
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("message") == "expect to_contain failed"
    assert "expected 'cpu is fine' to contain 'replication lag'" in (failure.text or "")
    rca_failure = rca.find("testcase/failure")
    assert rca_failure is not None and "got ['cpu_saturation']" in (rca_failure.text or "")
    error = cases[2].find("error")
    assert error is not None and (error.get("message") or "").startswith("agent crashed: exit code 2")
    assert cases[1].get("time") == "0.340"
    props = {p.get("name"): p.get("value") for p in tests.iter("property")}
    assert props["run_id"] == report.run_id


def test_junit_prints_each_check_once_with_where_and_the_traceback(tmp_path: Path) -> None:
    target = tmp_path / "junit.xml"
    errored = TestResult(
        id="evals/x_eval.py::e", name="e", file="evals/x_eval.py", status=TestStatus.ERRORED, duration_ms=1.0,
        failure_reason="ValueError: boom", error_type="ValueError", error_where="the test body",
        traceback="Traceback (most recent call last):\n  evals/x_eval.py:3 in _\nValueError: boom",
        agent_log="[sredrill] line 2 is not JSON",
    )  # fmt: skip
    report = report_of([_check_twice(), errored])
    drive(JUnitReporter(output=target, stdout=io.StringIO(), stderr=io.StringIO()), report)
    root = ET.parse(target).getroot()
    failure = root.find(".//testcase[@name='p/000#1']/failure")
    assert failure is not None and failure.get("message") == "check category: expected healthy, got unknown"
    assert (failure.text or "").count("expected healthy, got unknown") == 1
    assert (failure.text or "").count("not cited by any claim") == 1
    error = root.find(".//testcase[@name='evals/x_eval.py::e']/error")
    assert error is not None
    assert (error.text or "").startswith("errored in the test body\nValueError: boom\nTraceback:")
    assert "evals/x_eval.py:3 in _" in (error.text or "")
    system_err = root.find(".//testcase[@name='evals/x_eval.py::e']/system-err")
    assert system_err is not None and "[sredrill] line 2 is not JSON" in (system_err.text or "")


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
    for name in ("console", "json", "junit", "html"):  # `-v` reaches every reporter; the documents ignore it
        output = None if name in ("console", "json") else tmp_path / f"out.{name}"
        drive(make_reporter(name, output=output, verbose=True, **streams), report_of(results()))


def test_an_unwritable_output_is_an_input_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    reporter = make_reporter("json", output=blocker / "report.json", stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(InputError, match="cannot write the report"):
        drive(reporter, report_of(results()))


def _retried() -> list[TestResult]:
    """A retry guesser's run: one pass on the first attempt, two only on a retry, one never."""
    attempts = [["passed"], ["failed", "failed", "passed"], ["errored", "passed"], ["failed", "failed", "failed"]]
    out = []
    for i, statuses in enumerate(attempts):
        final = statuses[-1]
        out.append(
            _rca(f"00{i}", 1, final, 2).model_copy(
                update={"attempts": [Attempt(status=TestStatus(s), duration_ms=1.0) for s in statuses]}
            )
        )
    return out


def test_the_console_headline_is_pass_at_1_and_retries_are_labelled_pass_at_k() -> None:
    reporter, out, _ = console()
    rs = _retried()
    drive(reporter, report_of(rs))
    stdout = out.getvalue()
    # pass@1 counts p/000 of the three whose first attempt was graded; the retried rate is labelled.
    assert "4 results · 3 passed · 1 failed · 0 errored · pass@1 33.3%" in stdout
    assert "pass@3 75.0% with retries (2 passed only on a retry)" in stdout
    assert "pass@1 33.3%  pass@3 75.0%" in stdout
    assert "pass@1 is the first attempt (the headline)" in stdout
    assert "passed only on a retry" in stdout


def _scored(scenario: str, status: str, score: float, claims: int, uncited: int) -> TestResult:
    components = {"modes": 1.0, "location": 1.0, "evidence": 0.5, "ruling_out": 1.0, "efficiency": 0.5}
    return _rca(scenario, 1, status, 2, score=score, score_components=components, claims=claims,
                uncited_claims=uncited)  # fmt: skip


def test_the_scoreboard_shows_the_mean_score_and_the_hallucination_rate() -> None:
    reporter, out, _ = console()
    drive(reporter, report_of([_scored("000", "passed", 0.8, 3, 0), _scored("001", "failed", 0.4, 5, 2)]))
    stdout = out.getvalue()
    cells = [[c.strip() for c in line.split("│")] for line in stdout.splitlines() if "│" in line]
    assert ["all", "1", "2", "1", "1", "0", "50.0%", "0.60"] in cells
    assert "uncited claims (hallucination rate: claims citing no evidence item): axis 1: 2 of 8 (25.0%)" in stdout


def test_junit_carries_pass_at_1_the_score_and_the_claim_counts(tmp_path: Path) -> None:
    target = tmp_path / "junit.xml"
    rs = [_scored("000", "passed", 0.8, 3, 0), _scored("001", "failed", 0.4, 5, 2)]
    drive(JUnitReporter(output=target, stdout=io.StringIO(), stderr=io.StringIO()), report_of(rs))
    suite = ET.parse(target).getroot().find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["axis1.pass@1"] == "0.5000" and props["axis1.mean_score"] == "0.6000"
    assert (props["axis1.claims"], props["axis1.uncited_claims"], props["axis1.hallucination_rate"]) == (
        "8", "2", "0.2500",
    )  # fmt: skip
    case = suite.findall("testcase")[1]
    case_props = {p.get("name"): p.get("value") for p in case.findall("properties/property")}
    assert case_props["score"] == "0.4000" and case_props["score.evidence"] == "0.5000"
    assert (case_props["claims"], case_props["uncited_claims"]) == ("5", "2")


def test_junit_labels_the_retried_rate(tmp_path: Path) -> None:
    target = tmp_path / "junit.xml"
    drive(JUnitReporter(output=target, stdout=io.StringIO(), stderr=io.StringIO()), report_of(_retried()))
    suite = ET.parse(target).getroot().find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert (props["axis1.pass@1"], props["run.pass@1"], props["run.pass@3"]) == ("0.3333", "0.3333", "0.7500")
    assert "run.pass^3" not in props  # retries stop at a pass: pass^k is not measured


def test_a_run_of_two_packs_shows_each_packs_score_and_every_packs_uncited_claims() -> None:
    reporter, out, _ = console()
    other = _scored("000", "passed", 0.2, 2, 2).model_copy(update={"id": "q/000#1", "name": "q/000#1", "file": "q"})
    drive(reporter, report_of([_scored("000", "passed", 0.8, 3, 0), other]))
    stdout = out.getvalue()
    assert "axis 1: 2 of 5 (40.0%) (every pack)" in stdout
    cells = [[c.strip() for c in line.split("│")] for line in stdout.splitlines() if "│" in line]
    assert ["all", "1", "1", "1", "0", "0", "100.0%", "0.80"] in cells  # pack p's own table
    assert ["all", "1", "1", "1", "0", "0", "100.0%", "0.20"] in cells  # pack q's
