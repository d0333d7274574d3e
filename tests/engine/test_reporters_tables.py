"""The tables of the CLI's history commands (`runs list`, `runs compare`; `sredrill baselines`' are in
test_baselines_table.py), from the one summary: the same counts as the scoreboard, each rate saying what it
counts, no kinds mixed."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from sredrill.engine.reporters.tables import (
    compare_lines,
    paired_line,
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
    assert cells[4:10] == ["4", "2", "2", "0", "50.0%", "15–85%"]
    assert cells[10] == "RCA axis 1 50.0% (95% CI 9–91%) · incidents 50.0% (95% CI 9–91%)" == section_rates(summary)
    running_row = next(line for line in text.splitlines() if line.startswith("│ r3"))
    assert [c.strip() for c in running_row.split("│")[1:-1]][8:10] == ["100.0%", "21–100%"]  # its counts so far
    assert "interrupted" in next(line for line in text.splitlines() if line.startswith("│ r3"))
    assert "every result of the run, each counted once" in text


def test_compare_says_what_each_rate_counts() -> None:
    a = _report("ra", "reference", _pack(True))
    b = _report("rb", "keyword", _pack(False))
    lines = compare_lines(compare_reports(a, b))
    assert "pass@1 75.0% (95% CI 30–95%) → 50.0% (95% CI 15–85%) (every result of each run, each counted once)" in lines
    assert (
        "RCA axis 1 pass@1 100.0% (95% CI 34–100%) → 50.0% (95% CI 9–91%) (RCA scenarios on Axis 1 (full evidence))"
        in lines
    )
    assert "incidents pass@1 50.0% (95% CI 9–91%) → 50.0% (95% CI 9–91%) (incident episodes (task × seed))" in lines
    assert "paired (McNemar, 4 shared tests): 0 fixed, 1 regressed, p = 1: within noise (p ≥ 0.05)" in lines


def _tests(statuses: str, prefix: str = "t") -> list[TestResult]:
    return [_r(f"{prefix}{i}", s, kind=ResultKind.TEST, difficulty=1) for i, s in enumerate(statuses.split())]


def test_compare_groups_each_direction_regressions_first_with_both_test_pages() -> None:
    a = _report("ra", "x", [*_tests("passed failed errored passed failed passed"), *_tests("passed", "gone")])
    b = _report("rb", "x", [*_tests("failed passed passed passed errored errored"), *_tests("failed", "new")])
    cmp = compare_reports(a, b)
    assert (cmp.regressed, cmp.fixed, cmp.changed_status) == (("t0", "t5"), ("t1", "t2"), ("t4",))
    assert (cmp.new, cmp.gone, cmp.unchanged) == (("new0",), ("gone0",), 1)
    lines = compare_lines(cmp)
    heads = [line for line in lines if line and not line.startswith(" ") and ": " in line and "(" in line]
    assert heads[:5] == [
        "regressed: 2 (passed in A, failed or errored in B)",
        "fixed: 2 (failed or errored in A, passed in B)",
        "changed: 1 (failed in one run, errored in the other)",
        "new: 1 (only in B)",
        "gone: 1 (only in A)",
    ]
    at = lines.index("  t5  passed → errored")
    assert lines[at + 1 : at + 3] == ["    A /ui/runs/ra/tests/t5", "    B /ui/runs/rb/tests/t5"]
    at = lines.index("  new0  — → failed")
    assert lines[at + 1] == "    B /ui/runs/rb/tests/new0" and not lines[at + 2].startswith("    A")
    assert "unchanged: 1" in lines
    assert lines[-2] == "2 regressed, 2 fixed, 1 changed, 1 new, 1 gone, 1 unchanged"
    assert "sredrill serve" in lines[-1]


def test_an_id_with_slashes_and_hashes_links_to_its_ui_route() -> None:
    a = _report("ra", "x", _pack(True))
    cmp = compare_reports(a, _report("rb", "x", _pack(False)))
    broke = next(t for t in cmp.tests if t.test_id == "p/9#1")
    assert (broke.url_a, broke.url_b) == ("/ui/runs/ra/tests/p%2F9%231", "/ui/runs/rb/tests/p%2F9%231")
    assert (cmp.url_a, cmp.url_b) == ("/ui/runs/ra", "/ui/runs/rb")


def test_the_paired_test_is_over_the_tests_both_runs_have() -> None:
    # Six fixed, none regressed: p = 2 / 2**6 = 0.03125, more than noise; tests only one run has do not pair.
    a = _report("ra", "x", [*_tests("failed " * 6), *_tests("passed", "gone")])
    b = _report("rb", "x", [*_tests("passed " * 6), *_tests("failed failed", "new")])
    t = compare_reports(a, b).paired
    assert (t.shared, t.b, t.c, t.p_value, t.significant) == (6, 6, 0, 0.03125, True)
    assert paired_line(compare_reports(a, b)) == (
        "paired (McNemar, 6 shared tests): 6 fixed, 0 regressed, p = 0.031: more than noise (p < 0.05)"
    )
    none = compare_reports(_report("ra", "x", _tests("passed")), _report("rb", "x", _tests("passed", "u")))
    assert none.paired.shared == 0 and none.paired.p_value == 1.0
    assert paired_line(none) == "paired (McNemar): no test is in both runs, nothing to pair"


def test_the_totals_line_counts_every_result_once() -> None:
    assert totals_line(summarize(_pack(False))) == (
        "4 results · 2 passed · 2 failed · 0 errored · pass@1 50.0% (95% CI 15–85%)"
    )
    assert totals_line(summarize([])) == "0 results · 0 passed · 0 failed · 0 errored · pass@1 n/a"


def test_one_result_is_one_result_not_one_results() -> None:
    assert totals_line(summarize(_pack(False)[:1])).startswith("1 result · ")
