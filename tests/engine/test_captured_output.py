"""A failed test's captured stdout/stderr and notes, shown by every reporter (issue: hardening, item 7).

The results are built by hand with `stdout`/`stderr` set, as the engine fills them when it captures a test's
output; passing tests' output stays out of the console.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

from sredrill.engine.reporters import make_reporter
from sredrill.engine.reporters.base import CAPTURED_LINES
from sredrill.engine.reporters.html_pages import result_page
from sredrill.results import TestResult, TestStatus
from tests.engine.test_reporters import console, drive, report_of


def captured_results() -> list[TestResult]:
    return [
        TestResult(
            id="evals/db_eval.py::prints and fails",
            name="prints and fails",
            file="evals/db_eval.py",
            status=TestStatus.FAILED,
            failure_reason="expected 'cpu is fine' to contain 'replication lag'",
            stdout="connecting to db-primary:5432\nreplica lag: 42s\n",
            stderr="WARNING: slow query log is off\n",
            notes=["the agent reported 1 tool call the harness did not serve"],
            duration_ms=12.0,
        ),
        TestResult(
            id="evals/db_eval.py::prints and errors",
            name="prints and errors",
            file="evals/db_eval.py",
            status=TestStatus.ERRORED,
            failure_reason="SystemExit: 0 (sys.exit() in the test body)",
            stdout="about to exit \x1b[31mred\x1b[0m \ud800\n",
            duration_ms=3.0,
        ),
        TestResult(
            id="evals/db_eval.py::prints and passes",
            name="prints and passes",
            file="evals/db_eval.py",
            status=TestStatus.PASSED,
            stdout="quiet success output\n",
            duration_ms=1.0,
        ),
    ]


def test_console_shows_the_captured_output_and_notes_of_failed_tests_only() -> None:
    reporter, out, _err = console(color=False)
    drive(reporter, report_of(captured_results()))
    text = out.getvalue()
    failed = text[text.index("prints and fails  FAILED") :]
    assert "----- Captured stdout -----" in failed
    assert "  replica lag: 42s" in failed
    assert "----- Captured stderr -----" in failed and "WARNING: slow query log is off" in failed
    assert "note: the agent reported 1 tool call the harness did not serve" in failed
    assert "about to exit \\x1b[31mred\\x1b[0m \ufffd" in text  # escapes and lone surrogates print safely
    assert "quiet success output" not in text  # a passing test's output is not shown


def test_console_keeps_the_last_lines_of_long_output_and_says_how_many_it_left_out() -> None:
    lines = [f"line {i}" for i in range(1, 501)]
    result = captured_results()[0].model_copy(update={"stdout": "\n".join(lines) + "\n", "stderr": None})
    reporter, out, _err = console(color=False)
    drive(reporter, report_of([result]))
    text = out.getvalue()
    assert "  line 500" in text and f"  line {500 - CAPTURED_LINES + 1}\n" in text
    assert f"  line {500 - CAPTURED_LINES}\n" not in text
    assert f"… {500 - CAPTURED_LINES} earlier line(s)" in text and "--json report has all" in text


def test_junit_carries_system_out_and_system_err(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    reporter = make_reporter("junit", output=path, stdout=io.StringIO(), stderr=io.StringIO())
    drive(reporter, report_of(captured_results()))
    cases = {c.get("name"): c for c in ET.parse(path).getroot().iter("testcase")}
    failed = cases["evals/db_eval.py::prints and fails"]
    assert failed.findtext("system-out") == "connecting to db-primary:5432\nreplica lag: 42s\n"
    assert failed.findtext("system-err") == "WARNING: slow query log is off\n"
    assert "note: the agent reported 1 tool call" in (failed.findtext("failure") or "")
    errored = cases["evals/db_eval.py::prints and errors"]
    assert (errored.findtext("system-out") or "").startswith("about to exit \ufffd[31mred")  # XML-safe
    assert errored.find("system-err") is None


def test_html_report_file_shows_each_failed_test_s_captured_output(tmp_path: Path) -> None:
    path = tmp_path / "run.html"
    reporter = make_reporter("html", output=path, stdout=io.StringIO(), stderr=io.StringIO())
    drive(reporter, report_of(captured_results()))
    page = path.read_text(encoding="utf-8")
    failures = page[page.index('<section id="failures">') :]
    assert "<h3>Captured stdout</h3>" in failures and "replica lag: 42s" in failures
    assert "<h3>Captured stderr</h3>" in failures and "WARNING: slow query log is off" in failures
    assert "<h3>Notes</h3>" in failures and "did not serve" in failures
    assert "SystemExit: 0 (sys.exit() in the test body)" in failures
    assert "quiet success output" not in page


def test_html_test_page_shows_captured_output_and_notes() -> None:
    page = result_page("run-1", captured_results()[0], None, evidence="")
    assert 'id="captured"' in page and "replica lag: 42s" in page and "slow query log" in page
    assert "did not serve" in page


def test_json_carries_the_captured_fields(tmp_path: Path) -> None:
    out = io.StringIO()
    drive(make_reporter("json", output=None, stdout=out, stderr=io.StringIO()), report_of(captured_results()[:1]))
    result = json.loads(out.getvalue())["results"][0]
    assert result["stdout"].startswith("connecting to db-primary")
    assert result["stderr"] == "WARNING: slow query log is off\n"
    assert result["notes"] == ["the agent reported 1 tool call the harness did not serve"]


def test_console_cuts_one_huge_line_by_characters() -> None:
    result = captured_results()[0].model_copy(update={"stdout": "x" * 20_000 + "END", "stderr": None})
    reporter, out, _err = console(color=False)
    drive(reporter, report_of([result]))
    text = out.getvalue()
    assert "earlier character(s) not shown" in text and "xEND" in text
    assert "x" * 10_000 not in text
