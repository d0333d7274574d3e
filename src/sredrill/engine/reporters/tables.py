"""Tables of summaries: the run's scoreboard, `runs list`, `runs compare` and the baselines' discrimination table.

Every number comes from a run's one summary (`results.summarize`), and every table says what it counts, so the
console, the CLI's history commands and the web UI show the same numbers under the same words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from sredrill.results import Rate, RcaSummary, ResultKind, RunReport, Section, Summary, TestResult, summarize

__all__ = [
    "baselines_rows",
    "baselines_table",
    "compare_lines",
    "compat_line",
    "percent",
    "points",
    "progress_words",
    "runs_table",
    "scoreboard",
    "section_rates",
    "totals_line",
]

_COUNTS = ("total", "passed", "failed", "errored")


def percent(rate: float | None) -> str:
    """A pass rate as `27.8%`; `n/a` when nothing was graded (unknown is not zero)."""
    return "n/a" if rate is None else f"{rate * 100:.1f}%"


def points(value: float | None) -> str:
    """A gap as `+27.8 pp`; `n/a` when one side graded nothing."""
    return "n/a" if value is None else f"{value:+.1f} pp"


def progress_words(total: int, passed: int, failed: int, errored: int) -> str:
    """The counts in the words of the totals line: `66 results · 10 passed · 56 failed · 0 errored`."""
    return f"{total} results · {passed} passed · {failed} failed · {errored} errored"


def totals_line(summary: Summary) -> str:
    """The run's first line: every result counted once, and its pass rate."""
    words = progress_words(summary.total, summary.passed, summary.failed, summary.errored)
    return f"{words} · pass rate {percent(summary.pass_rate)}"


def compat_line(rca: RcaSummary | None) -> str | None:
    """`14 scenarios graded in compatibility mode (upstream answer keys)`, when any was; else None."""
    n = rca.compat_scenarios if rca is not None else 0
    if not n:
        return None
    return (
        f"{n} scenario{'s' if n != 1 else ''} graded in compatibility mode (upstream answer key{'s' if n != 1 else ''})"
    )


def _counts(rate: Rate) -> list[str]:
    return [str(getattr(rate, name)) for name in _COUNTS] + [percent(rate.pass_rate)]


def _levels(*sections: Section | None) -> list[str]:
    return sorted({d for s in sections if s is not None for d in s.by_difficulty}, key=int)


def _table(*extra: str) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("difficulty")
    for name in extra:
        table.add_column(name, justify="right")
    for name in (*_COUNTS, "pass rate"):
        table.add_column(name, justify="right")
    return table


def _rca_table(rca: RcaSummary) -> list[RenderableType]:
    axes = [s for s in (rca.axis1, rca.axis2) if s is not None]
    table = _table("axis")
    if rca.gap is not None:
        table.add_column("gap", justify="right")
    for level in ["all", *_levels(*axes)]:
        first = True
        for axis in axes:
            rate = axis if level == "all" else axis.by_difficulty.get(level)
            if rate is None:
                continue
            cells = [level if first else "", str(axis.axis), *_counts(rate)]
            if rca.gap is not None:
                gap = rca.gap.overall if level == "all" else rca.gap.by_difficulty.get(level)
                cells.append(points(gap) if axis is rca.axis2 else "")
            table.add_row(*cells)
            first = False
    evidence = "; ".join(f"axis {a.axis}: {a.mode or 'mixed'} evidence" for a in axes)
    parts: list[RenderableType] = [Text(f"RCA scenarios ({evidence})", style="bold"), table]
    if rca.gap is not None:
        parts.append(Text(f"gap: {rca.gap.counts}"))
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
    """Several packs' RCA results side by side: per pack and axis its counts, pass rate and gap, then every
    pack's together (the run summary's RCA section)."""
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("pack")
    table.add_column("axis", justify="right")
    for name in (*_COUNTS, "pass rate", "gap"):
        table.add_column(name, justify="right")
    for name, rca in (*packs.items(), ("every pack", every)):
        axes = [a for a in (rca.axis1, rca.axis2) if a is not None]
        for i, axis in enumerate(axes):
            gap = points(rca.gap.overall) if rca.gap is not None and axis is rca.axis2 else ""
            table.add_row(name if i == 0 else "", str(axis.axis), *_counts(axis), gap)
    axes = [a for a in (every.axis1, every.axis2) if a is not None]
    evidence = "; ".join(f"axis {a.axis}: {a.mode or 'mixed'} evidence" for a in axes)
    return [Text(f"RCA scenarios by pack ({evidence})", style="bold"), table]


def scoreboard(summary: Summary, results: Sequence[TestResult] = ()) -> list[RenderableType]:
    """The scoreboard: the totals line, then one table per kind of result (RCA with Axis 1, Axis 2 and the gap
    labelled; incident episodes; tests), each titled with what it counts.

    Given the run's `results`, a run of several scenario packs (RDS and Kubernetes) shows them side by side
    instead of one RCA table: each pack's counts per axis and gap, every pack's together, then each pack's own
    table per difficulty (a domain's difficulty scale is its own)."""
    parts: list[RenderableType] = [Text(totals_line(summary)), Text(f"  ({summary.counts})", style="dim")]
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
    if summary.pass_at_k or summary.flaky:
        extra.append(f"flaky: {summary.flaky}")
    if extra:
        parts += [Text(""), *(Text(line) for line in extra)]
    return parts


def _short(key: str) -> str:
    return {"rca.axis1": "RCA axis 1", "rca.axis2": "RCA axis 2", "incident": "incidents", "test": "tests"}[key]


def section_rates(summary: Summary | None) -> str:
    """Each section's pass rate in a few words (`RCA axis 1 27.8% · RCA axis 2 0.0% · incidents 16.7%`)."""
    if summary is None:
        return "—"
    return " · ".join(f"{_short(key)} {percent(s.pass_rate)}" for key, s in summary.sections()) or "—"


def runs_table(records: Sequence[Any]) -> list[RenderableType]:
    """`sredrill runs list`: one row per stored run (a `store.RunRecord`), its counts over every result (a
    running run's progress so far) and each section's pass rate."""
    table = Table("run", "kind", "agent", "started", "results", "passed", "failed", "errored", "pass rate",
                  "by kind", "status")  # fmt: skip
    for r in records:
        c = r.counts
        table.add_row(
            r.run_id, r.kind, r.agent or "—", f"{r.started_at:%Y-%m-%d %H:%M:%S}",
            *(str(x) for x in (c.total, c.passed, c.failed, c.errored)), percent(c.pass_rate),
            section_rates(r.summary), "finished" if r.finished else "interrupted",
        )  # fmt: skip
    note = Text("results and pass rate: every result of the run, each counted once; by kind: each section's own")
    return [table, note]


def compare_lines(cmp: Any) -> list[str]:
    """`sredrill runs compare A B` (a `store.RunComparison`): what changed, test by test, then each pass rate
    of A → B with what it counts."""
    lines = []
    for label, ids in (("fixed", cmp.fixed), ("broke", cmp.broke), ("added", cmp.added), ("removed", cmp.removed)):
        lines += [f"{label:8} {test_id}" for test_id in ids]
    for rate in cmp.rates:
        name = "pass rate" if rate.key == "all" else f"{_short(rate.key)} pass rate"
        lines.append(f"{name} {percent(rate.pass_rate_a)} → {percent(rate.pass_rate_b)} ({rate.counts})")
    lines.append(f"{len(cmp.fixed)} fixed, {len(cmp.broke)} broke, {len(cmp.added)} added, {len(cmp.removed)} removed")
    return lines


def _baseline_sections(report: RunReport) -> list[tuple[str, Section]]:
    # The discrimination table compares agents on Axis 1 (baselines run no Axis 2) and on incident episodes.
    return [(key, s) for key, s in report.summary.sections() if key in ("rca.axis1", "incident")]


def _rate_dict(section: Section) -> dict[str, Any]:
    return {
        "counts": section.counts,
        "passed": section.passed,
        "total": section.total,
        "pass_rate": section.pass_rate,
        "by_difficulty": {d: c.pass_rate for d, c in section.by_difficulty.items()},
    }


def baselines_rows(reports: Sequence[RunReport]) -> list[dict[str, Any]]:
    """`sredrill baselines --json`: per agent, its run's totals (every result, each once), then its RCA Axis 1
    and incident sections (counts, pass rate, pass rate per difficulty), each with what it counts."""
    rows = []
    for r in reports:
        s = r.summary
        row: dict[str, Any] = {
            "agent": r.agent,
            "run_id": r.run_id,
            "counts": s.counts,
            "passed": s.passed,
            "total": s.total,
            "pass_rate": s.pass_rate,
        }
        for key, section in _baseline_sections(r):
            row[key.split(".")[0]] = _rate_dict(section)
        rows.append(row)
    return rows


def baselines_table(reports: Sequence[RunReport]) -> list[RenderableType]:
    """`sredrill baselines`: per agent, passed/total and pass rate per difficulty of each section (RCA Axis 1,
    incident episodes); a naive baseline scoring near the reference agent means the pack does not discriminate."""
    columns: list[tuple[str, str, str | None]] = []  # (section key, header, difficulty or None for "all")
    labels: dict[str, str] = {}
    for key in ("rca.axis1", "incident"):
        found = [dict(_baseline_sections(r)).get(key) for r in reports]
        present = [s for s in found if s is not None]
        if not present:
            continue
        labels[key] = present[0].counts
        name = "RCA" if key == "rca.axis1" else "incidents"
        columns.append((key, name, None))
        columns += [(key, f"{name} d{d}", d) for d in _levels(*present)]
    table = Table("agent", *(header for _, header, _ in columns), "run")
    for r in reports:
        sections = dict(_baseline_sections(r))
        cells = []
        for key, _, level in columns:
            section = sections.get(key)
            rate = None if section is None else section if level is None else section.by_difficulty.get(level)
            cells.append("—" if rate is None else f"{rate.passed}/{rate.total} ({percent(rate.pass_rate)})")
        table.add_row(r.agent or "?", *cells, r.run_id)
    legend = "; ".join(f"{'RCA' if key == 'rca.axis1' else 'incidents'}: {label}" for key, label in labels.items())
    return [table, Text(f"{legend}; dN: difficulty N; passed/total (pass rate, errored excluded)")]
