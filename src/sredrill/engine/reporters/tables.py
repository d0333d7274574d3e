"""Tables of summaries: the run's scoreboard, `runs list`, `runs compare` and the baselines' discrimination table.

Every number comes from a run's one summary (`results.summarize`), and every table says what it counts, so the
console, the CLI's history commands and the web UI show the same numbers under the same words.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from sredrill.grading.grade import CheckId
from sredrill.results import (
    AxisSection,
    Rate,
    RcaSummary,
    ResultKind,
    RunReport,
    Section,
    Summary,
    TestResult,
    TestStatus,
    rate_ci,
    summarize,
)

from .usage import usage_change_line, usage_line

if TYPE_CHECKING:
    from sredrill.engine.api import NotRun
    from sredrill.store import RunComparison

__all__ = [
    "baselines_rows",
    "baselines_table",
    "claims_line",
    "compare_lines",
    "compat_line",
    "interval",
    "p_value",
    "paired_line",
    "percent",
    "percent_ci",
    "points",
    "progress_words",
    "retry_words",
    "runs_table",
    "score",
    "scoreboard",
    "section_rates",
    "totals_line",
]

_COUNTS = ("total", "passed", "failed", "errored")
_CI_WORDS = "95% CI: its Wilson interval (the noise of a rate over this many results)"


def percent(rate: float | None) -> str:
    """A pass rate as `27.8%`; `n/a` when nothing was graded (unknown is not zero)."""
    return "n/a" if rate is None else f"{rate * 100:.1f}%"


def interval(ci: tuple[float, float] | None) -> str:
    """A pass rate's 95% interval as `64–93%` (whole points: its own width dwarfs a decimal); "" when unknown."""
    return "" if ci is None else f"{ci[0] * 100:.0f}–{ci[1] * 100:.0f}%"


def percent_ci(rate: float | None, ci: tuple[float, float] | None) -> str:
    """A pass rate with its 95% Wilson interval beside it: `83.3% (95% CI 64–93%)`; without an interval (nothing
    graded, or a summary stored before intervals), the rate alone."""
    return percent(rate) if ci is None or rate is None else f"{percent(rate)} (95% CI {interval(ci)})"


def points(value: float | None) -> str:
    """A gap as `+27.8 pp`; `n/a` when one side graded nothing."""
    return "n/a" if value is None else f"{value:+.1f} pp"


def progress_words(total: int, passed: int, failed: int, errored: int) -> str:
    """The counts in the words of the totals line: `66 results · 10 passed · 56 failed · 0 errored`."""
    return f"{total} result{'' if total == 1 else 's'} · {passed} passed · {failed} failed · {errored} errored"


def totals_line(summary: Summary) -> str:
    """The run's first line: every result counted once, and its pass rate, pass@1 (the first attempt); after
    retries, the retried rate beside it, labelled pass@k, and how many passed only on a retry."""
    words = progress_words(summary.total, summary.passed, summary.failed, summary.errored)
    return f"{words} · pass@1 {percent_ci(summary.pass_rate, summary.pass_rate_ci)}{retry_words(summary)}"


def retry_words(summary: Summary) -> str:
    """` · pass@21 94.4% with retries (16 passed only on a retry)` after a run with `--retries`; else ""."""
    if summary.pass_rate_with_retries is None or not summary.pass_at_k:
        return ""
    k = max(summary.pass_at_k, key=int)
    return (
        f" · pass@{k} {percent(summary.pass_rate_with_retries)} with retries "
        f"({summary.passed_on_retry} passed only on a retry)"
    )


def score(value: float | None) -> str:
    """A mean score as `0.62`; `n/a` when nothing was scored."""
    return "n/a" if value is None else f"{value:.2f}"


def claims_line(rca: RcaSummary | None) -> str | None:
    """`uncited claims: 3 of 40 (7.5%, the hallucination rate) · axis 1` per axis, when any claim was made."""
    axes = [a for a in (rca.axis1, rca.axis2) if a is not None] if rca is not None else []
    parts = [
        f"axis {a.axis}: {a.uncited_claims} of {a.claims} ({percent(a.hallucination_rate)})" for a in axes if a.claims
    ]
    if not parts:
        return None
    return "uncited claims (hallucination rate: claims citing no evidence item): " + "; ".join(parts)


def compat_line(rca: RcaSummary | None) -> str | None:
    """`14 scenarios graded in compatibility mode (upstream answer keys)`, when any was; else None."""
    n = rca.compat_scenarios if rca is not None else 0
    if not n:
        return None
    return (
        f"{n} scenario{'s' if n != 1 else ''} graded in compatibility mode (upstream answer key{'s' if n != 1 else ''})"
    )


def _counts(rate: Rate, *, ci_shown: bool = True) -> list[str]:
    cells = [str(getattr(rate, name)) for name in _COUNTS] + [percent(rate.pass_rate)]
    return [*cells, interval(rate.pass_rate_ci)] if ci_shown else cells


def _scored(rate: Rate) -> list[str]:
    """The counts, pass@1, then the mean score (RCA tables: no interval column, at 80 columns it would cut the
    difficulty; `_axes_ci` says each axis's below the table)."""
    return [*_counts(rate, ci_shown=False), score(rate.mean_score)]


def _axes_ci(axes: Sequence[AxisSection]) -> str:
    """`pass@1 95% CI (Wilson): axis 1 34–100% · axis 2 9–91%`: each axis's interval, beside its table."""
    cis = " · ".join(f"axis {a.axis} {interval(a.pass_rate_ci) or 'n/a'}" for a in axes)
    return f"pass@1 95% CI (Wilson interval): {cis}"


def _levels(*sections: Section | None) -> list[str]:
    return sorted({d for s in sections if s is not None for d in s.by_difficulty}, key=int)


def _table(*extra: str, scored: bool = False) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("difficulty")
    for name in extra:
        table.add_column(name, justify="right")
    for name in (*_COUNTS, "pass@1", *(["score"] if scored else ["95% CI"])):
        table.add_column(name, justify="right", no_wrap=True)
    return table


def _rca_table(rca: RcaSummary) -> list[RenderableType]:
    axes = [s for s in (rca.axis1, rca.axis2) if s is not None]
    table = _table("axis", scored=True)
    if rca.gap is not None:
        table.add_column("gap", justify="right", no_wrap=True)
    for level in ["all", *_levels(*axes)]:
        first = True
        for axis in axes:
            rate = axis if level == "all" else axis.by_difficulty.get(level)
            if rate is None:
                continue
            cells = [level if first else "", str(axis.axis), *_scored(rate)]
            if rca.gap is not None:
                gap = rca.gap.overall if level == "all" else rca.gap.by_difficulty.get(level)
                cells.append(points(gap) if axis is rca.axis2 else "")
            table.add_row(*cells)
            first = False
    evidence = "; ".join(f"axis {a.axis}: {a.mode or 'mixed'} evidence" for a in axes)
    parts: list[RenderableType] = [Text(f"RCA scenarios ({evidence})", style="bold"), table]
    if rca.gap is not None:
        parts.append(Text(f"gap: {rca.gap.counts}"))
    parts.append(Text("pass@1: the first attempt's pass rate; score: the mean score (0-1) beside the gate"))
    parts.append(Text(_axes_ci(axes)))
    claims = claims_line(rca)
    if claims is not None:
        parts.append(Text(claims))
    compat = compat_line(rca)
    if compat is not None:
        parts.append(Text(compat))
    return parts


def _section_table(section: Section, title: str) -> list[RenderableType]:
    table = _table()
    table.add_row("all", *_counts(section))
    for level in _levels(section):
        table.add_row(level, *_counts(section.by_difficulty[level]))
    return [Text(title, style="bold"), table]


def _pack_of(result: TestResult) -> str:
    # An RCA result's file is its pack (its id is `pack/folder#axis`).
    return result.file or result.id.split("/", 1)[0]


def _titled(parts: list[RenderableType], prefix: str) -> list[RenderableType]:
    """An RCA table's parts with its title (the first part) prefixed."""
    title, *rest = parts
    return [Text(f"{prefix}{title.plain if isinstance(title, Text) else title}", style="bold"), *rest]


def _by_pack(results: Sequence[TestResult]) -> dict[str, RcaSummary]:
    """Each scenario pack's own RCA summary, in the order the run played them."""
    rca = [r for r in results if r.kind == ResultKind.RCA]
    out: dict[str, RcaSummary] = {}
    for pack in dict.fromkeys(map(_pack_of, rca)):
        section = summarize([r for r in rca if _pack_of(r) == pack]).rca
        if section is not None:
            out[pack] = section
    return out


def _packs_table(every: RcaSummary, packs: dict[str, RcaSummary]) -> list[RenderableType]:
    """Several packs' RCA results side by side: per pack and axis its counts, pass rate and gap, then `all`, every
    pack's together (the run summary's RCA section, in the rows a run of one pack shows as `all`)."""
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("pack")
    table.add_column("axis", justify="right")
    # No score column: at a terminal's 80 columns it would cut the pack names; each pack's own table has it.
    for name in (*_COUNTS, "pass@1", "gap"):
        table.add_column(name, justify="right", no_wrap=True)
    for name, rca in (*packs.items(), ("all", every)):
        axes = [a for a in (rca.axis1, rca.axis2) if a is not None]
        for i, axis in enumerate(axes):
            gap = points(rca.gap.overall) if rca.gap is not None and axis is rca.axis2 else ""
            table.add_row(name if i == 0 else "", str(axis.axis), *_counts(axis, ci_shown=False), gap)
    axes = [a for a in (every.axis1, every.axis2) if a is not None]
    evidence = "; ".join(f"axis {a.axis}: {a.mode or 'mixed'} evidence" for a in axes)
    # The legend is a paragraph of its own: the table's block holds only its rows.
    parts: list[RenderableType] = [Text(f"RCA scenarios by pack ({evidence}; all: every pack)", style="bold"), table]
    parts += [Text(""), Text("pass@1: the first attempt's pass rate"), Text(f"{_axes_ci(axes)} (every pack)")]
    claims = claims_line(every)
    if claims is not None:
        parts.append(Text(f"{claims} (every pack)"))
    return parts


def scoreboard(summary: Summary, results: Sequence[TestResult] = ()) -> list[RenderableType]:
    """The scoreboard: the totals line, then one table per kind of result (RCA with Axis 1, Axis 2 and the gap
    labelled; incident episodes; tests), each titled with what it counts.

    Given the run's `results`, a run of several scenario packs (RDS and Kubernetes) shows them side by side
    instead of one RCA table: each pack's counts per axis and gap, every pack's together, then each pack's own
    table per difficulty (a domain's difficulty scale is its own)."""
    parts: list[RenderableType] = [Text(totals_line(summary)), Text(f"  ({summary.counts})", style="dim")]
    spent = usage_line(summary.usage, results=summary.usage_results, of=summary.total)
    if spent is not None:
        parts.append(Text(spent))
    if summary.rca is not None:
        packs = _by_pack(results)
        if len(packs) < 2:
            parts += [Text(""), *_rca_table(summary.rca)]
        else:
            parts += [Text(""), *_packs_table(summary.rca, packs)]
            for pack, rca in packs.items():
                parts += [Text(""), *_titled(_rca_table(rca), f"pack {pack}: ")]
    if summary.incident is not None:
        incident = summary.incident
        grade = "" if incident.mean_grade is None else f" · mean grade {incident.mean_grade:.2f}"
        parts += [Text(""), *_section_table(incident, incident.counts + grade)]
    if summary.test is not None:
        parts += [Text(""), *_section_table(summary.test, summary.test.counts)]
    extra = []
    if summary.pass_at_k:
        extra.append("  ".join(f"pass@{k} {percent(v)}" for k, v in summary.pass_at_k.items()))
    if summary.pass_hat_k:
        extra.append("  ".join(f"pass^{k} {percent(v)}" for k, v in summary.pass_hat_k.items()))
    if summary.pass_k_counts:
        extra.append(f"  ({summary.pass_k_counts})")
    if summary.pass_at_k or summary.flaky:
        extra.append(f"flaky: {summary.flaky}")
    if extra:
        parts += [Text(""), *(Text(line) for line in extra)]
    return parts


def _short(key: str) -> str:
    return {"rca.axis1": "RCA axis 1", "rca.axis2": "RCA axis 2", "incident": "incidents", "test": "tests"}[key]


def section_rates(summary: Summary | None) -> str:
    """Each section's pass rate and its interval in a few words (`RCA axis 1 27.8% (95% CI 12–51%) · incidents
    16.7% (95% CI 3–56%)`)."""
    if summary is None:
        return "—"
    return (
        " · ".join(f"{_short(key)} {percent_ci(s.pass_rate, s.pass_rate_ci)}" for key, s in summary.sections()) or "—"
    )


def runs_table(records: Sequence[Any]) -> list[RenderableType]:
    """`sredrill runs list`: one row per stored run (a `store.RunRecord`), its counts over every result (a
    running run's progress so far) and each section's pass rate."""
    table = Table("run", "kind", "agent", "started", "results", "passed", "failed", "errored", "pass@1",
                  "95% CI", "by kind", "status")  # fmt: skip
    for r in records:
        c = r.counts
        done = r.summary is not None
        table.add_row(
            r.run_id, r.kind, r.agent or "—", f"{r.started_at:%Y-%m-%d %H:%M:%S}",
            *(str(x) for x in (c.total, c.passed, c.failed, c.errored)),
            percent(r.summary.pass_rate if done else c.pass_rate),
            interval(r.summary.pass_rate_ci if done else c.pass_rate_ci),
            section_rates(r.summary), r.status.value,
        )  # fmt: skip
    note = Text(
        "results and pass@1 (the first attempt's pass rate): every result of the run, each counted once; "
        f"{_CI_WORDS}; by kind: each section's own"
    )
    return [table, note]


_GROUPS = (
    ("regressed", "passed in A, failed or errored in B"),
    ("fixed", "failed or errored in A, passed in B"),
    ("changed_status", "failed in one run, errored in the other"),
    ("new", "only in B"),
    ("gone", "only in A"),
)


def p_value(p: float) -> str:
    """A p-value in two significant digits (`0.38`, `0.031`, `1`)."""
    return f"{p:.2g}"


def paired_line(cmp: RunComparison) -> str:
    """`paired (McNemar, 31 shared tests): 4 fixed, 1 regressed, p = 0.38: within noise (p ≥ 0.05)`."""
    t = cmp.paired
    if not t.shared:
        return "paired (McNemar): no test is in both runs, nothing to pair"
    verdict = "more than noise (p < 0.05)" if t.significant else "within noise (p ≥ 0.05)"
    counts = f"{t.b} fixed, {t.c} regressed, p = {p_value(t.p_value)}"
    return f"paired (McNemar, {t.shared} shared tests): {counts}: {verdict}"


def compare_lines(cmp: RunComparison) -> list[str]:
    """`sredrill runs compare A B`: the tests grouped by direction (regressions first), each with its pages in
    the web UI for both runs; the count of unchanged ones; each pass rate of A → B with its interval and what it
    counts; McNemar's paired test; then the counts on one line."""
    lines = [f"A {cmp.run_a} → B {cmp.run_b}"]
    by_id = {t.test_id: t for t in cmp.tests}
    for group, words in _GROUPS:
        ids = getattr(cmp, group)
        if not ids:
            continue
        lines.append(f"{group.replace('_status', '')}: {len(ids)} ({words})")
        for test_id in ids:
            t = by_id[test_id]
            lines.append(f"  {test_id}  {t.status_a or '—'} → {t.status_b or '—'}")
            lines += [f"    {run} {url}" for run, url in (("A", t.url_a), ("B", t.url_b)) if url is not None]
    lines.append(f"unchanged: {cmp.unchanged}")
    for rate in cmp.rates:
        name = "pass@1" if rate.key == "all" else f"{_short(rate.key)} pass@1"
        lines.append(
            f"{name} {percent_ci(rate.pass_rate_a, rate.pass_rate_ci_a)} → "
            f"{percent_ci(rate.pass_rate_b, rate.pass_rate_ci_b)} ({rate.counts})"
        )
    lines.append(paired_line(cmp))
    spent = usage_change_line(cmp.usage)
    if spent is not None:
        lines.append(spent)
    lines.append(
        f"{len(cmp.regressed)} regressed, {len(cmp.fixed)} fixed, {len(cmp.changed_status)} changed, "
        f"{len(cmp.new)} new, {len(cmp.gone)} gone, {cmp.unchanged} unchanged"
    )
    if any(getattr(cmp, group) for group, _ in _GROUPS):
        lines.append(
            "test pages (A, B): open a path under `sredrill serve --db DB` (http://127.0.0.1:7860 + path); "
            "or `sredrill runs show RUN` for a run's failures"
        )
    return lines


# -- sredrill baselines: the discrimination table, one per scenario pack ------------------------------------------

_INCIDENTS = "incidents"
"""The group of incident episodes in the baselines' tables (RCA results are grouped by their pack)."""

_DEV_LABEL = "reference (dev)"


def _axis1(result: TestResult) -> bool:
    # Baselines run Axis 1 only; an errored result may carry no axis, its id still ends in `#N`.
    return result.axis == 1 if result.axis is not None else not result.id.endswith("#2")


def _group_results(report: RunReport, group: str) -> list[TestResult]:
    """A report's results of one group: a pack's RCA results on Axis 1, or every incident episode."""
    if group == _INCIDENTS:
        return [r for r in report.results if r.kind == ResultKind.INCIDENT]
    return [r for r in report.results if r.kind == ResultKind.RCA and _axis1(r) and _pack_of(r) == group]


def _groups(reports: Sequence[RunReport]) -> list[str]:
    """The RCA packs in the order the runs played them, then the incident episodes when any ran."""
    results = [r for report in reports for r in report.results]
    packs = dict.fromkeys(_pack_of(r) for r in results if r.kind == ResultKind.RCA and _axis1(r))
    incidents = [_INCIDENTS] if any(r.kind == ResultKind.INCIDENT for r in results) else []
    return [*packs, *incidents]


def _rca_section(results: Sequence[TestResult]) -> Section | None:
    rca = summarize(results).rca
    return rca.axis1 if rca is not None else None


def _group_section(results: Sequence[TestResult], group: str) -> Section | None:
    return summarize(results).incident if group == _INCIDENTS else _rca_section(results)


def _modes_right(result: TestResult) -> bool:
    check = (result.checks or {}).get(CheckId.FAILURE_MODES)
    return check is not None and check.passed


def _modes_rate(results: Sequence[TestResult]) -> Rate:
    """The failure-mode accuracy of RCA results: `passed` counts those whose failure_modes check passed, whatever
    its role (compat mode observes it); errored results are counted and excluded from the rate, as a pass rate."""
    graded = [r for r in results if r.status != TestStatus.ERRORED]
    right = sum(map(_modes_right, graded))
    return Rate(
        total=len(results), passed=right, failed=len(graded) - right, errored=len(results) - len(graded),
        pass_rate=right / len(graded) if graded else None, pass_rate_ci=rate_ci(right, len(graded)),
    )  # fmt: skip


def _modes_by_difficulty(results: Sequence[TestResult]) -> dict[str, Rate]:
    levels = sorted({r.difficulty for r in results if r.difficulty is not None})
    return {str(d): _modes_rate([r for r in results if r.difficulty == d]) for d in levels}


_MODES_COUNTS = "RCA results whose failure_modes check passed (whatever its role), errored excluded from the rate"


def _rate_dict(section: Section) -> dict[str, Any]:
    return {
        "counts": section.counts,
        "passed": section.passed,
        "total": section.total,
        "pass_rate": section.pass_rate,
        "pass_rate_ci": section.pass_rate_ci,
        "by_difficulty": {d: c.pass_rate for d, c in section.by_difficulty.items()},
    }


def _rca_dict(results: Sequence[TestResult]) -> dict[str, Any] | None:
    """RCA results' pass rate and failure-mode accuracy, overall and per difficulty."""
    section = _rca_section(results)
    if section is None:
        return None
    modes = _modes_rate(results)
    return {
        **_rate_dict(section),
        "failure_modes": {
            "counts": _MODES_COUNTS,
            "passed": modes.passed,
            "total": modes.total,
            "rate": modes.pass_rate,
            "rate_ci": modes.pass_rate_ci,
            "by_difficulty": {d: rate.pass_rate for d, rate in _modes_by_difficulty(results).items()},
        },
    }


def _development(report: RunReport, group: str, builtin: Collection[str]) -> bool:
    # The reference agent was built against the built-in packs: there its figure is not a measurement.
    return report.agent == "reference" and group in builtin and group != _INCIDENTS


def baselines_rows(reports: Sequence[RunReport | NotRun], builtin: Collection[str] = ()) -> list[dict[str, Any]]:
    """`sredrill baselines --json`: per agent, its run's totals (every result, each once), its RCA Axis 1 results
    of every pack together (`rca`: counts, pass rate and failure-mode accuracy, each per difficulty), the same per
    pack (`packs`: each pack's own difficulty scale; `development_figure` on the reference agent's row of a
    built-in pack), its incident episodes (`incident`) and the packs it did not run on (`not_run`: pack -> why;
    an agent that ran on none has only `agent`, `run_id: null` and `not_run`).

    Args:
        reports: one run per agent, on the same packs, and what did not run (`engine.api.NotRun`).
        builtin: the names of the built-in scenario packs among them (given by name, not as a folder).
    """
    rows: list[dict[str, Any]] = []
    by_agent: dict[str, dict[str, Any]] = {}
    for r in reports:
        if not isinstance(r, RunReport):
            if r.agent not in by_agent:
                by_agent[r.agent] = {"agent": r.agent, "run_id": None}
                rows.append(by_agent[r.agent])
            by_agent[r.agent].setdefault("not_run", {}).update(dict.fromkeys(r.packs, r.reason))
            continue
        s = r.summary
        row: dict[str, Any] = {
            "agent": r.agent,
            "run_id": r.run_id,
            "counts": s.counts,
            "passed": s.passed,
            "total": s.total,
            "pass_rate": s.pass_rate,
            "pass_rate_ci": s.pass_rate_ci,
        }
        rca = _rca_dict([x for x in r.results if x.kind == ResultKind.RCA and _axis1(x)])
        if rca is not None:
            row["rca"] = rca
        packs = {}
        for group in _groups([r]):
            if group == _INCIDENTS:
                continue
            packs[group] = {
                "builtin": group in builtin,
                "development_figure": _development(r, group, builtin),
                "rca": _rca_dict(_group_results(r, group)),
            }
        if packs:
            row["packs"] = packs
        if s.incident is not None:
            row["incident"] = _rate_dict(s.incident)
        rows.append(row)
        by_agent.setdefault(r.agent or "?", row)
    return rows


def _cell(rate: Rate | None, *, ci_shown: bool = False) -> str:
    if rate is None:
        return "—"
    ci = f", 95% CI {interval(rate.pass_rate_ci)}" if ci_shown and rate.pass_rate_ci is not None else ""
    return f"{rate.passed}/{rate.total} ({percent(rate.pass_rate)}{ci})"


def _cells(rates: Sequence[Rate | None]) -> list[str]:
    """A row's cells: `all` (the first) with its interval, each difficulty without (the table stays readable)."""
    return [_cell(rate, ci_shown=i == 0) for i, rate in enumerate(rates)]


def _group_table(
    reports: Sequence[RunReport], skipped: Sequence[NotRun], group: str, builtin: Collection[str]
) -> list[RenderableType]:
    """One pack's (or the incident episodes') table: per agent, passed/total and pass rate overall and per
    difficulty; for RCA a second row, the failure-mode accuracy; an agent that did not run on the pack, a row
    saying so (and why, below the table)."""
    rca = group != _INCIDENTS
    not_run = {n.agent: n.reason for n in skipped if group in n.packs}
    # An agent refused on this pack may have run on others: its run holds nothing here, its refusal says why.
    reports = [r for r in reports if (r.agent or "?") not in not_run or _group_results(r, group)]
    results = {r.run_id: _group_results(r, group) for r in reports}
    sections = {r.run_id: _group_section(results[r.run_id], group) for r in reports}
    present = [s for s in sections.values() if s is not None]
    levels = _levels(*present)
    table = Table("agent", "", "all", *(f"d{d}" for d in levels), "run", header_style="bold")
    dev = False
    shown: set[str] = set()
    for r in reports:
        section = sections[r.run_id]
        label = r.agent or "?"
        shown.add(label)
        if _development(r, group, builtin):
            label, dev = _DEV_LABEL, True
        passed = [section, *(section.by_difficulty.get(d) if section else None for d in levels)]
        table.add_row(label, "passed", *_cells(passed), r.run_id, end_section=not rca)
        if rca:
            mine = results[r.run_id]
            by_level = _modes_by_difficulty(mine)
            modes = [_modes_rate(mine) if section else None, *(by_level.get(d) for d in levels)]
            table.add_row("", "modes", *_cells(modes), "", end_section=True)
    for agent in not_run:
        if agent not in shown:
            table.add_row(agent, "not run", *(["—"] * (1 + len(levels))), "", end_section=True)
    counts = present[0].counts if present else ""
    title = f"pack {group}: {counts}" if rca else counts
    legend = "passed: results that passed"
    if rca:
        legend += "; modes: results whose failure_modes check passed (failure-mode accuracy, whatever the check's role)"
    parts: list[RenderableType] = [
        Text(title, style="bold"),
        table,
        Text(f"{legend}; dN: difficulty N; n/total (rate, errored excluded; all: with its 95% Wilson interval)"),
    ]
    parts += [Text(f"{agent}: not run: {reason}") for agent, reason in not_run.items() if agent not in shown]
    played = [r for r in reports if results[r.run_id]]
    compat = compat_line(summarize(results[played[0].run_id]).rca) if rca and played else None
    if compat is not None:
        parts.append(Text(compat))
    if dev:
        parts.append(
            Text(
                f"{_DEV_LABEL}: a development figure on the built-in pack {group} (the agent was built against these "
                "scenarios); measure it on scenarios it has not seen"
            )
        )
    return parts


def baselines_table(reports: Sequence[RunReport | NotRun], builtin: Collection[str] = ()) -> list[RenderableType]:
    """`sredrill baselines`: one table per scenario pack (a domain's difficulty scale is its own, so RDS and
    Kubernetes figures never mix), then one for the incident episodes; per agent, passed/total and pass rate per
    difficulty, and for RCA the failure-mode accuracy beside it. A naive baseline scoring near the reference agent
    means the pack does not discriminate; the reference agent's row of a built-in pack (named in `builtin`) is
    labelled a development figure. An agent that did not run on a pack (`engine.api.NotRun`: `majority` where no
    training split is declared) has a `not run` row there, and why below it.
    """
    runs = [r for r in reports if isinstance(r, RunReport)]
    skipped = [r for r in reports if not isinstance(r, RunReport)]
    groups = _groups(runs)
    groups += [p for n in skipped for p in n.packs if p not in groups]
    parts: list[RenderableType] = []
    for group in dict.fromkeys(groups):
        if parts:
            parts.append(Text(""))
        parts += _group_table(runs, skipped, group, builtin)
    return parts
