"""`sredrill baselines`' tables and JSON rows, from real results: one table per scenario pack (each with its own
difficulty scale), the pass rate and the failure-mode accuracy per difficulty, and the reference agent's figure on
a built-in pack labelled a development figure."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from sredrill.engine.reporters.tables import baselines_rows, baselines_table
from sredrill.results import (
    Check,
    GradingMode,
    ResultKind,
    RunReport,
    SignalRole,
    TestResult,
    TestStatus,
    summarize,
)

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
RCA, INCIDENT = ResultKind.RCA, ResultKind.INCIDENT


def _rca(
    pack: str, folder: str, status: str, difficulty: int | None, modes: bool | None, **extra: object
) -> TestResult:
    """An RCA result on Axis 1; `modes` is its failure_modes check (None: no checks, as an errored result)."""
    role = SignalRole.OBSERVE if extra.get("grading") == GradingMode.COMPAT else SignalRole.GATE
    checks = None if modes is None else {"category": Check(passed=True, role=SignalRole.GATE),
                                         "failure_modes": Check(passed=modes, role=role)}  # fmt: skip
    return TestResult(id=f"{pack}/{folder}#1", name=folder, kind=RCA, file=pack, status=TestStatus(status),
                      difficulty=difficulty, axis=1, mode="full", checks=checks, duration_ms=1.0,
                      **extra)  # type: ignore[arg-type]  # fmt: skip


def _episode(task: str, status: str, difficulty: int) -> TestResult:
    return TestResult(id=f"incidents/{task}#seed0", name=task, kind=INCIDENT, status=TestStatus(status),
                      difficulty=difficulty, duration_ms=1.0)  # fmt: skip


def _report(run_id: str, agent: str, results: list[TestResult]) -> RunReport:
    return RunReport(run_id=run_id, agent=agent, started_at=T0, duration_ms=1.0, summary=summarize(results),
                     results=results)  # fmt: skip


def _text(parts: list[object]) -> str:
    out = io.StringIO()
    console = Console(file=out, width=250, no_color=True)
    for part in parts:
        console.print(part)
    return out.getvalue()


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.split("│")[1:-1]]


def _tables(text: str) -> dict[str, list[str]]:
    """The printed tables by title (`pack rds: …` → `rds`, the incidents' title → `incidents`), each its lines."""
    out: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("pack "):
            current = line.removeprefix("pack ").split(":", 1)[0]
        elif line.startswith("incident episodes"):
            current = "incidents"
        out.setdefault(current, []).append(line)
    return out


def _rows(lines: list[str], agent: str) -> tuple[list[str], list[str]]:
    """An agent's two rows in a pack's table: passed, then modes."""
    i = next(i for i, line in enumerate(lines) if line.startswith(f"│ {agent} "))
    return _cells(lines[i]), _cells(lines[i + 1])


def _keyword_run() -> list[TestResult]:
    """Two packs with their own difficulty scales (rds 1 and 4, kube 0 and 2) and two incident episodes."""
    return [
        _rca("rds", "001-a", "passed", 1, True),
        _rca("rds", "002-b", "failed", 1, True),  # the right modes, failed on another check
        _rca("rds", "003-c", "failed", 4, False),
        _rca("rds", "004-d", "errored", None, None),  # counted, excluded from both rates
        _rca("kube", "000-h", "failed", 0, True, grading=GradingMode.COMPAT),  # observed in compat mode: counts
        _rca("kube", "001-x", "failed", 2, False, grading=GradingMode.COMPAT),
        _episode("easy", "passed", 1),
        _episode("hard", "failed", 3),
    ]


def _reference_run() -> list[TestResult]:
    return [
        *(_rca("rds", f"00{i}-r", "passed", d, True) for i, d in ((1, 1), (2, 1), (3, 4))),
        _rca("rds", "004-d", "errored", None, None),
        _rca("kube", "000-h", "passed", 0, True, grading=GradingMode.COMPAT),
        _rca("kube", "001-x", "passed", 2, True, grading=GradingMode.COMPAT),
        _episode("easy", "passed", 1),
        _episode("hard", "passed", 3),
    ]


def _reports() -> list[RunReport]:
    return [_report("r-kw", "keyword", _keyword_run()), _report("r-ref", "reference", _reference_run())]


def test_each_pack_has_its_own_table_and_difficulty_scale() -> None:
    text = _text(baselines_table(_reports()))
    tables = _tables(text)
    assert list(tables) == ["rds", "kube", "incidents"]  # the order the run played them
    headers = {name: _cells(next(line for line in lines if "agent" in line).replace("┃", "│"))
               for name, lines in tables.items()}  # fmt: skip
    assert headers["rds"] == ["agent", "", "all", "d1", "d4", "run"]
    assert headers["kube"] == ["agent", "", "all", "d0", "d2", "run"]
    assert headers["incidents"] == ["agent", "", "all", "d1", "d3", "run"]
    assert "pack rds: RCA scenarios on Axis 1 (full evidence)" in text
    assert "incident episodes (task × seed)" in text


def test_pass_rate_and_failure_mode_accuracy_per_difficulty() -> None:
    tables = _tables(_text(baselines_table(_reports())))
    passed, modes = _rows(tables["rds"], "keyword")
    # passed/total, the rate over graded results (the errored one is counted, not rated).
    # `all` carries its 95% Wilson interval; each difficulty's rate alone (the table stays readable).
    assert passed == ["keyword", "passed", "1/4 (33.3%, 95% CI 6–79%)", "1/2 (50.0%)", "0/1 (0.0%)", "r-kw"]
    assert modes == ["", "modes", "2/4 (66.7%, 95% CI 21–94%)", "2/2 (100.0%)", "0/1 (0.0%)", ""]
    passed, modes = _rows(tables["kube"], "keyword")
    assert passed[2:5] == ["0/2 (0.0%, 95% CI 0–66%)", "0/1 (0.0%)", "0/1 (0.0%)"]
    assert modes[2:5] == ["1/2 (50.0%, 95% CI 9–91%)", "1/1 (100.0%)", "0/1 (0.0%)"]  # an observe check counts as well
    assert "2 scenarios graded in compatibility mode" in "\n".join(tables["kube"])
    assert "compatibility" not in "\n".join(tables["rds"])
    incidents = tables["incidents"]
    keyword = next(line for line in incidents if line.startswith("│ keyword "))
    assert _cells(keyword)[1:5] == ["passed", "1/2 (50.0%, 95% CI 9–91%)", "1/1 (100.0%)", "0/1 (0.0%)"]
    assert not any("modes" in line for line in incidents)  # episodes have no failure modes
    legend = next(line for line in tables["rds"] if line.startswith("passed:"))
    assert "modes: results whose failure_modes check passed" in legend and "errored excluded" in legend


def test_the_reference_row_of_a_builtin_pack_is_a_development_figure() -> None:
    tables = _tables(_text(baselines_table(_reports(), builtin=["rds"])))
    rds, kube = "\n".join(tables["rds"]), "\n".join(tables["kube"])
    assert _rows(tables["rds"], "reference (dev)")[0][2] == "3/4 (100.0%, 95% CI 44–100%)"
    assert "reference (dev): a development figure on the built-in pack rds" in rds
    assert "measure it on scenarios it has not seen" in rds
    assert "(dev)" not in kube and "development figure" not in kube  # a pack given as a folder
    assert _rows(tables["kube"], "reference")[0][0] == "reference"
    assert "(dev)" not in "\n".join(tables["incidents"])
    assert "keyword (dev)" not in rds
    # Nothing is built-in unless the caller says so.
    assert "development" not in _text(baselines_table(_reports()))


def test_json_rows_carry_both_rates_per_pack_and_the_development_label() -> None:
    rows = {row["agent"]: row for row in baselines_rows(_reports(), builtin=["rds"])}
    keyword, reference = rows["keyword"], rows["reference"]
    assert (keyword["total"], keyword["passed"]) == (8, 2)  # the run's totals, each result once
    rds = keyword["packs"]["rds"]
    assert (rds["builtin"], rds["development_figure"]) == (True, False)
    assert rds["rca"]["pass_rate"] == 1 / 3 and rds["rca"]["by_difficulty"] == {"1": 0.5, "4": 0.0}
    modes = rds["rca"]["failure_modes"]
    assert (modes["passed"], modes["total"], modes["rate"]) == (2, 4, 2 / 3)
    assert modes["by_difficulty"] == {"1": 1.0, "4": 0.0}
    kube = keyword["packs"]["kube"]
    assert kube["builtin"] is False and kube["rca"]["failure_modes"]["by_difficulty"] == {"0": 1.0, "2": 0.0}
    assert reference["packs"]["rds"]["development_figure"] is True
    assert reference["packs"]["kube"]["development_figure"] is False
    # Every pack together, as before, now with its failure-mode accuracy; and the incident episodes.
    assert keyword["rca"]["total"] == 6 and keyword["rca"]["failure_modes"]["rate"] == 3 / 5
    assert keyword["incident"]["by_difficulty"] == {"1": 1.0, "3": 0.0}
    assert "incidents" not in keyword["packs"]


def test_an_agent_whose_pack_results_are_all_errored_shows_no_rate() -> None:
    broken = _report("r-x", "random", [_rca("rds", "001-a", "errored", None, None)])
    text = _text(baselines_table([broken]))
    passed, modes = _rows(_tables(text)["rds"], "random")
    assert passed[2] == modes[2] == "0/1 (n/a)"
    assert baselines_rows([broken])[0]["packs"]["rds"]["rca"]["failure_modes"]["rate"] is None
