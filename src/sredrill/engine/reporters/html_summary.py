"""A run's summary as HTML: the totals line in the console's words, and one card per kind of result (RCA with
its Axis 1 / Axis 2 bars and the gap, incident episodes, tests), each titled with what it counts.

Every row carries `data-section` and `data-level`, and the totals line its counts as `data-*` attributes, so a
test (or a script) reads the same numbers a person sees.
"""

from __future__ import annotations

from html import escape

from sredrill.engine.reporters.html_charts import axis_bars
from sredrill.engine.reporters.tables import (
    claims_line,
    compat_line,
    interval,
    percent,
    points,
    progress_words,
    retry_words,
)
from sredrill.engine.reporters.tables import score as score_text
from sredrill.results import Rate, RcaSummary, Section, Summary
from sredrill.text import scrub

__all__ = ["sections_html", "totals_html"]


def _e(value: object) -> str:
    return escape(scrub("" if value is None else str(value))[0])


def _pct(rate: float | None) -> str:
    return percent(rate)


def totals_html(s: Summary, *, extra: str = "") -> str:
    """The run's totals line, in the console's words (pass@1 the headline, the retried rate labelled pass@k);
    its numbers also as data attributes."""
    data = " ".join(f'data-{k}="{getattr(s, k)}"' for k in ("total", "passed", "failed", "errored"))
    words = _e(progress_words(s.total, s.passed, s.failed, s.errored))
    retried = f'<span id="pass-at-k">{_e(retry_words(s))}</span>' if retry_words(s) else ""
    return (
        f'<p class="summary" id="totals" {data}><span id="totals-words">{words}</span> · pass@1 '
        f'<b id="pass-rate">{_pct(s.pass_rate)}</b>'
        f'{_ci(s.pass_rate_ci)}{retried}{extra} <span class="muted">({_e(s.counts)})</span></p>'
    )


def _ci(ci: tuple[float, float] | None) -> str:
    """` (95% CI 64–93%)` beside a rate, its bounds as data attributes; "" when unknown."""
    if ci is None:
        return ""
    return f' <span class="ci" id="pass-rate-ci" data-low="{ci[0]}" data-high="{ci[1]}">(95% CI {interval(ci)})</span>'


def _rate_cells(rate: Rate, *, scored: bool = False) -> str:
    cells = "".join(f'<td class="num">{getattr(rate, k)}</td>' for k in ("total", "passed", "failed", "errored"))
    mean = f'<td class="num score">{score_text(rate.mean_score)}</td>' if scored else ""
    ci = f'<td class="num ci">{interval(rate.pass_rate_ci)}</td>'
    return f'{cells}<td class="num">{_pct(rate.pass_rate)}</td>{ci}{mean}'


def _section_rows(key: str, section: Section, *, label: str = "", scored: bool = False) -> str:
    """A section's rows: `all`, then each difficulty; each row carries its section key and level."""
    rows = []
    for level, rate in [("all", section), *sorted(section.by_difficulty.items(), key=lambda kv: int(kv[0]))]:
        rows.append(
            f'<tr data-section="{_e(key)}" data-level="{_e(level)}"><td>{_e(level)}</td>'
            + (f"<td>{_e(label)}</td>" if label else "")
            + f"{_rate_cells(rate, scored=scored)}</tr>"
        )
    return "".join(rows)


_HEAD = "<th>total</th><th>passed</th><th>failed</th><th>errored</th><th>pass@1</th><th>95% CI</th>"


def _rca_card(rca: RcaSummary) -> str:
    axes = [a for a in (rca.axis1, rca.axis2) if a is not None]
    rows = "".join(
        _section_rows(f"rca.axis{a.axis}", a, label=f"{a.axis} ({a.mode or 'mixed'})", scored=True) for a in axes
    )
    gap = ""
    if rca.gap is not None:
        gap = f'<p class="gap">gap: {_e(rca.gap.counts)}: <b>{_e(points(rca.gap.overall))}</b></p>'
    claims = claims_line(rca)
    if claims is not None:
        rates = " ".join(f'data-axis{a.axis}="{a.hallucination_rate}"' for a in axes if a.claims)
        gap += f'<p class="claims" id="uncited" {rates}>{_e(claims)}</p>'
    compat = compat_line(rca)
    if compat is not None:
        gap += f'<p class="compat" id="compat" data-scenarios="{rca.compat_scenarios}">{_e(compat)}</p>'
    return (
        '<section class="card" id="rca"><h2>RCA scenarios · pass rate by difficulty</h2>'
        f'<p class="muted">{_e(" · ".join(a.counts for a in axes))}</p>{axis_bars(rca)}{gap}'
        f'<table class="grid"><thead><tr><th>difficulty</th><th>axis</th>{_HEAD}<th>score</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></section>"
    )


def _section_card(key: str, section: Section, *, title: str) -> str:
    return (
        f'<section class="card" id="{_e(key)}"><h2>{_e(title)}</h2>'
        f'<table class="grid"><thead><tr><th>difficulty</th>{_HEAD}</tr></thead>'
        f"<tbody>{_section_rows(key, section)}</tbody></table></section>"
    )


def sections_html(s: Summary) -> str:
    """One card per kind of result in the run, each titled with what it counts."""
    cards = []
    if s.rca is not None:
        cards.append(_rca_card(s.rca))
    if s.incident is not None:
        grade = "" if s.incident.mean_grade is None else f" · mean grade {s.incident.mean_grade:.2f}"
        cards.append(_section_card("incident", s.incident, title=s.incident.counts + grade))
    if s.test is not None:
        cards.append(_section_card("test", s.test, title=s.test.counts))
    return "".join(cards)
