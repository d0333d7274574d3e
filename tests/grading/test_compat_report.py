"""Compatibility mode is reported as such: in the stored result, the run summary and every report format."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from sredrill.diagnosis import Category
from sredrill.engine.reporters.console import ConsoleReporter
from sredrill.engine.reporters.html import render_run_html
from sredrill.engine.reporters.html_pages import result_page
from sredrill.engine.reporters.junit import junit_xml
from sredrill.engine.reporters.tables import scoreboard
from sredrill.grading import Grade, grade_diagnosis
from sredrill.results import GradingMode, ResultKind, RunReport, TestResult, TestStatus, summarize
from sredrill.scenarios import Pack
from sredrill.store import Store
from tests.grading.agent_output import diagnosis, trajectory
from tests.support.scenario_builder import PackWriter, only

KEY = {"failure_mode": "cpu_saturation", "root_cause_category": "resource_exhaustion", "required_keywords": ["CPU"]}


def graded(pack: Pack, axis: int, category: Category) -> TestResult:
    """The RCA result of a diagnosis on `pack`'s scenario, its grade's fields set as the engine sets them."""
    s = only(pack)
    g: Grade = grade_diagnosis(
        s,
        diagnosis("CPU saturation from an analytics query.", category=category),
        trajectory("get_alert", "query_metrics"),
        axis=axis,
        returned_metrics=(),
        vocabulary=pack.vocabulary,
    )
    return TestResult(
        id=f"{s.qualified_id}#{axis}",
        name=f"{s.qualified_id}#{axis}",
        kind=ResultKind.RCA,
        file=s.pack,
        status=TestStatus.PASSED if g.passed else TestStatus.FAILED,
        failure_reason=g.failure_reason,
        axis=axis,
        mode="full" if axis == 1 else "selective",
        difficulty=s.difficulty,
        expected=g.expected,
        actual=g.actual,
        checks=g.report_checks(),
        trajectory=g.trajectory,
        grading=g.grading,
        duration_ms=1.0,
    )


def report_of(results: list[TestResult]) -> RunReport:
    return RunReport(
        run_id="r1",
        agent="reference",
        started_at=datetime(2026, 4, 1, tzinfo=UTC),
        duration_ms=5.0,
        summary=summarize(results),
        results=results,
    )


def text(parts: list[object]) -> str:
    out = io.StringIO()
    console = Console(file=out, width=140, no_color=True)
    for part in parts:
        console.print(part)
    return out.getvalue()


def test_the_summary_counts_scenarios_graded_in_compat_mode_once_whatever_their_axes(
    write_pack: PackWriter,
) -> None:
    compat = write_pack(**KEY)
    keyed = write_pack(**KEY, failure_modes=["cpu_saturation"])
    results = [
        graded(compat, 1, Category.RESOURCE_EXHAUSTION),
        graded(compat, 2, Category.RESOURCE_EXHAUSTION),
        graded(keyed, 1, Category.RESOURCE_EXHAUSTION),
    ]
    assert [r.grading for r in results] == [GradingMode.COMPAT, GradingMode.COMPAT, GradingMode.SREDRILL]
    rca = summarize(results).rca
    assert rca is not None and rca.compat_scenarios == 1
    shown = text(scoreboard(summarize(results)))
    assert "1 scenario graded in compatibility mode (upstream answer key)" in shown


def test_a_run_without_compat_scenarios_says_nothing_of_it(write_pack: PackWriter) -> None:
    keyed = write_pack(**KEY, failure_modes=["cpu_saturation"])
    summary = summarize([graded(keyed, 1, Category.RESOURCE_EXHAUSTION)])
    assert summary.rca is not None and summary.rca.compat_scenarios == 0
    assert "compatibility" not in text(scoreboard(summary))
    assert 'id="compat"' not in render_run_html(report_of([graded(keyed, 1, Category.RESOURCE_EXHAUSTION)]))


def test_the_mode_is_in_the_stored_result_and_its_report(write_pack: PackWriter, tmp_path: Path) -> None:
    compat = write_pack(**KEY)
    results = [graded(compat, 1, Category.RESOURCE_EXHAUSTION), graded(compat, 2, Category.INFRASTRUCTURE)]
    with Store(tmp_path / "runs.db") as store:
        store.begin_run("r1", kind="run", agent="reference", mode=None, started_at=datetime.now(UTC), config={})
        for r in results:
            store.write_result("r1", r, None)
        stored = store.report("r1")
    assert stored is not None
    assert [r.grading for r in stored.results] == [GradingMode.COMPAT, GradingMode.COMPAT]
    assert stored.summary.rca is not None and stored.summary.rca.compat_scenarios == 1
    assert '"grading":"compat"' in stored.results[0].model_dump_json()


def test_every_report_format_says_compat(write_pack: PackWriter, tmp_path: Path) -> None:
    compat = write_pack(**KEY)
    ok, wrong = graded(compat, 1, Category.RESOURCE_EXHAUSTION), graded(compat, 2, Category.INFRASTRUCTURE)
    report = report_of([ok, wrong])
    # the console: the scoreboard line, and the failed result's header
    out = tmp_path / "board.txt"
    reporter = ConsoleReporter(output=out, stdout=io.StringIO(), stderr=io.StringIO(), color=False)
    reporter.on_run_end(report)
    board = out.read_text()
    assert "1 scenario graded in compatibility mode (upstream answer key)" in board
    assert f"{wrong.id}  FAILED  graded in compatibility mode (upstream answer key)" in board
    # HTML: the RCA card and each result's row; the result page says it in words
    html = render_run_html(report)
    assert 'id="compat" data-scenarios="1"' in html and html.count('data-grading="compat"') == 2
    page = result_page("r1", wrong, None, evidence="")
    assert 'data-grading="compat"' in page and "upstream-format answer key" in page
    # JUnit: a property per test case
    root = junit_xml(report, title="sredrill")
    values = [p.get("value") for p in root.iter("property") if p.get("name") == "grading"]
    assert values == ["compat", "compat"]
    assert ET.tostring(root, encoding="unicode").count('name="grading"') == 2
