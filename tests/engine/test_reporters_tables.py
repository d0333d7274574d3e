"""The tables of the CLI's history commands (`runs list`, `runs compare`; `sredrill baselines`' are in
test_baselines_table.py), from the one summary: the same counts as the scoreboard, each rate saying what it
counts, no kinds mixed."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from sredrill.engine.reporters.tables import (
    compare_lines,
    runs_table,
    section_rates,
    totals_line,
)
from sredrill.results import Counts, ResultKind, RunReport, TestResult, TestStatus, summarize
from sredrill.store import RunRecord
from sredrill.store.records import compare_reports

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def _r(test_id: str, status: str, *, kind: ResultKind, difficulty: int, axis: int | None = None) -> TestResult:
    mode = {1: "full", 2: "selective"}.get(axis or 0)
    return TestResult(id=test_id, name=test_id, kind=kind, status=TestStatus(status), difficulty=difficulty,
                      axis=axis, mode=mode, duration_ms=1.0)  # fmt: skip


def _report(run_id: str, agent: str, results: list[TestResult]) -> RunReport:
    return RunReport(run_id=run_id, agent=agent, started_at=T0, duration_ms=1.0, summary=summarize(results),
                     results=results)  # fmt: skip


def _text(parts: list[object]) -> str:
    out = io.StringIO()
    console = Console(file=out, width=200, no_color=True)
    for part in parts:
        console.print(part)
    return out.getvalue()


def _pack(agent_passes: bool) -> list[TestResult]:
    """Two RCA scenarios (difficulty 1 and 4) and two incident episodes (difficulty 1 and 3)."""
    rca, inc = ResultKind.RCA, ResultKind.INCIDENT
    return [
        _r("p/0#1", "passed", kind=rca, difficulty=1, axis=1),
        _r("p/9#1", "passed" if agent_passes else "failed", kind=rca, difficulty=4, axis=1),
        _r("incidents/e#seed0", "passed", kind=inc, difficulty=1),
        _r("incidents/h#seed0", "failed", kind=inc, difficulty=3),
    ]


def test_runs_list_rows_are_the_summarys_counts_and_name_each_sections_rate() -> None:
    results = _pack(False)
    summary = summarize(results)
    counts = Counts(total=summary.total, passed=summary.passed, failed=summary.failed, errored=summary.errored)
    record = RunRecord(run_id="r2", kind="run", agent="keyword", mode="full", started_at=T0, finished=True,
                       duration_ms=1.0, config={}, summary=summary, counts=counts)  # fmt: skip
    running = RunRecord(run_id="r3", kind="run", agent="keyword", mode="full", started_at=T0, finished=False,
                        duration_ms=None, config={}, summary=None, counts=Counts(total=1, passed=1))  # fmt: skip
    text = _text(runs_table([record, running]))
    row = next(line for line in text.splitlines() if line.startswith("│ r2"))
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[4:9] == ["4", "2", "2", "0", "50.0%"]
    assert cells[9] == "RCA axis 1 50.0% · incidents 50.0%" == section_rates(summary)
    assert "interrupted" in next(line for line in text.splitlines() if line.startswith("│ r3"))
    assert "every result of the run, each counted once" in text


def test_compare_says_what_each_rate_counts() -> None:
    a = _report("ra", "reference", _pack(True))
    b = _report("rb", "keyword", _pack(False))
    lines = compare_lines(compare_reports(a, b))
    assert "broke    p/9#1" in lines
    assert "pass@1 75.0% → 50.0% (every result of each run, each counted once)" in lines
    assert "RCA axis 1 pass@1 100.0% → 50.0% (RCA scenarios on Axis 1 (full evidence))" in lines
    assert "incidents pass@1 50.0% → 50.0% (incident episodes (task × seed))" in lines
    assert lines[-1] == "0 fixed, 1 broke, 0 added, 0 removed"


def test_the_totals_line_counts_every_result_once() -> None:
    assert totals_line(summarize(_pack(False))) == "4 results · 2 passed · 2 failed · 0 errored · pass@1 50.0%"
    assert totals_line(summarize([])) == "0 results · 0 passed · 0 failed · 0 errored · pass@1 n/a"
