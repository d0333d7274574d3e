"""The web UI's pages as HTML strings: runs list, compare, run, test, environment, session.

The HTML reporter and `sredrill serve`'s UI render with these same functions (so they live in the engine's
reporters, below the server). Every page carries its CSS and script inline, read from the package data in
`sredrill/server/ui/static/`, so a page needs no network and the reporter's run page is one self-contained file.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from functools import cache
from html import escape
from importlib import resources
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from sredrill.engine.reporters.base import (
    FailedGate,
    captured_sections,
    error_header,
    failed_gates,
    generated_note,
    isolation_note,
    shown_reason,
    traceback_tail,
)
from sredrill.engine.reporters.html_summary import sections_html, totals_html
from sredrill.engine.reporters.tables import interval, paired_line, percent, percent_ci, points
from sredrill.engine.reporters.usage import usage_card_html, usage_change_html, usage_html
from sredrill.results import GradingMode, RunReport, Signal, SignalRole, TestResult, TestStatus
from sredrill.store import RunComparison, ui_test_path
from sredrill.text import scrub

__all__ = [
    "ambiguous_run_page",
    "compare_page",
    "env_page",
    "first_failed_check",
    "not_found_page",
    "result_page",
    "run_page",
    "runs_page",
    "session_page",
]


@cache
def _asset(name: str) -> str:
    # Package data, not code: the web UI's assets, read by resource path (no import of the server layer).
    return resources.files("sredrill").joinpath("server", "ui", "static", name).read_text(encoding="utf-8")


def _e(value: object) -> str:
    # Lone surrogates (a test's name, an agent's text) cannot be encoded as UTF-8: they show as U+FFFD.
    return escape(scrub("" if value is None else str(value))[0])


def _layout(title: str, body: str, *, served: bool = True) -> str:
    """A whole page; `served=False` (the HTML reporter's file) has no links into a server and no script."""
    links = (
        '<nav><a href="/ui" class="brand">sredrill</a><a href="/ui">Runs</a><a href="/ui/env">Environment</a></nav>'
        if served
        else '<nav><span class="brand">sredrill</span></nav>'
    )
    script = f"<script>{_asset('app.js')}</script>" if served else ""
    # The server answers /favicon.svg; the reporter's file carries the icon inline (it is opened from disk).
    icon = "/favicon.svg" if served else "data:image/svg+xml," + quote(_asset("favicon.svg").strip())
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="icon" type="image/svg+xml" href="{icon}">'
        f"<title>{_e(title)}</title><style>{_asset('app.css')}</style></head>"
        f"<body>{links}<main>{body}</main>{script}</body></html>"
    )


def _pct(rate: float | None) -> str:
    # The console's format, so a rate reads the same on every surface.
    return percent(rate)


def _ms(duration_ms: float | None) -> str:
    if duration_ms is None:
        return "—"
    return f"{duration_ms:.0f} ms" if duration_ms < 1000 else f"{duration_ms / 1000:.1f} s"


def _badge(status: str | None) -> str:
    return f'<span class="badge {_e(status)}">{_e(status or "—")}</span>'


def first_failed_check(result: TestResult) -> Signal | None:
    """The first failed gate signal of a result (what the run page's table shows), or None."""
    return next((s for s in result.signals if s.role == SignalRole.GATE and s.passed is False), None)


def _test_href(run_id: str, test_id: str) -> str:
    return ui_test_path(run_id, test_id)


# -- runs list and compare ------------------------------------------------------------------------------------


def runs_page(runs: Sequence[dict[str, Any]], *, packs: Sequence[str]) -> str:
    """Every stored run (rows of `GET /api/runs`), a form to start one, and a compare picker.

    Args:
        runs: rows with run_id, kind, agent, mode, started_at, status, counts (total, passed, failed, errored,
            pass_rate: every result of the run, each once, as its run page shows them), sections,
            duration_ms.
        packs: the packs the server can run (the form's choices).
    """
    rows = []
    for r in runs:
        counts = r["counts"]
        rid = _e(r["run_id"])
        rows.append(
            f'<tr data-run-id="{rid}"><td><input type="radio" name="a" value="{rid}" aria-label="compare A"></td>'
            f'<td><input type="radio" name="b" value="{rid}" aria-label="compare B"></td>'
            f'<td><a href="/ui/runs/{quote(r["run_id"])}">{rid}</a></td><td>{_e(r["kind"])}</td>'
            f"<td>{_e(r['agent'])}</td><td>{_e(r['mode'])}</td><td>{_badge(r['status'])}</td>"
            f'<td class="num pass-rate">{_pct(counts["pass_rate"])}</td>'
            f'<td class="num ci">{interval(counts.get("pass_rate_ci"))}</td>'
            f'<td class="num results">{counts["passed"]}/{counts["total"]}</td>'
            f'<td class="num">{counts["failed"]}</td><td class="num">{counts["errored"]}</td>'
            f'<td>{_e(r.get("sections") or "—")}</td><td class="num">{_ms(r["duration_ms"])}</td>'
            f"<td>{_e(r['started_at'][:19].replace('T', ' '))}</td></tr>"
        )
    pack_options = "".join(f'<option value="{_e(p)}">{_e(p)}</option>' for p in packs)
    form = f"""
<section class="card"><h2>Start a run</h2>
<form id="start-run" class="row">
  <label>Pack <select name="pack"><option value="">every pack</option>{pack_options}</select></label>
  <label>Agent <input name="agent" value="reference" size="18"></label>
  <label>Mode <select name="mode"><option value="">full</option><option>selective</option>
    <option>temporal</option></select></label>
  <label><input type="checkbox" name="axis2"> Axis 2 (and the gap)</label>
  <label>Jobs <input name="jobs" type="number" min="1" max="32" value="1" size="3"></label>
  <button type="submit">Start</button>
  <span id="start-error" class="error" role="alert"></span>
</form></section>"""
    table = (
        '<form action="/ui/compare" method="get" id="compare-form"><table class="grid"><thead><tr>'
        "<th>A</th><th>B</th><th>run</th><th>kind</th><th>agent</th><th>mode</th><th>status</th>"
        "<th>pass@1</th><th>95% CI</th><th>passed / results</th><th>failed</th><th>errored</th><th>by kind</th>"
        "<th>duration</th><th>started (UTC)</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        '<p class="muted">pass@1 (the first attempt\'s pass rate), passed / results, failed, errored: every result '
        "of the run, each counted once (as on its run page); 95% CI: pass@1's Wilson interval; by kind: the pass@1 "
        "of each section (RCA per axis, incidents, tests)</p>"
        '<p><button type="submit" id="compare-button">Compare A → B</button></p></form>'
        if rows
        else '<p class="muted">No run stored yet: start one above, or run <code>sredrill run</code> '
        "with the same <code>--db</code>.</p>"
    )
    return _layout("sredrill · runs", f"<h1>Runs</h1>{form}<section>{table}</section>")


_DIRECTIONS = ("regressed", "fixed", "changed", "new", "gone", "unchanged")


def _link(url: str | None, text: str) -> str:
    return "—" if url is None else f'<a href="{_e(url)}">{_e(text)}</a>'


def compare_page(cmp: RunComparison) -> str:
    """How run B differs from run A (`store.RunComparison`, the body of `GET /api/compare`): each pass rate of
    both runs with its interval, McNemar's paired test, and every test by direction (regressions first), each row
    linking to the test's page in both runs."""
    rates = "".join(
        f'<p class="rate" data-key="{_e(r.key)}">{_e(r.counts)}: {_e(percent_ci(r.pass_rate_a, r.pass_rate_ci_a))}'
        f" → {_e(percent_ci(r.pass_rate_b, r.pass_rate_ci_b))}</p>"
        for r in cmp.rates
        if r.key != "all"
    )
    t = cmp.paired
    paired = (
        f'<p class="paired" id="paired" data-b="{t.b}" data-c="{t.c}" data-n="{t.shared}" data-p="{t.p_value}">'
        f"{_e(paired_line(cmp))}</p>"
    )
    counts = {d: sum(x.direction == d for x in cmp.tests) for d in _DIRECTIONS}
    head = (
        f'<h1>Compare</h1><p>A <a href="{_e(cmp.url_a)}">{_e(cmp.run_a)}</a> → B <a href="{_e(cmp.url_b)}">'
        f"{_e(cmp.run_b)}</a> · pass@1 {_e(percent_ci(cmp.pass_rate_a, cmp.pass_rate_ci_a))} → "
        f"{_e(percent_ci(cmp.pass_rate_b, cmp.pass_rate_ci_b))}"
        f' <span class="muted">({_e(cmp.counts)})</span></p>{rates}{paired}{usage_change_html(cmp.usage)}'
        f'<p class="summary" id="directions">{" · ".join(f"{n} {d}" for d, n in counts.items())}</p>'
    )
    rows = []
    for x in sorted(cmp.tests, key=lambda x: _DIRECTIONS.index(x.direction)):
        cls = "changed" if x.changed else ""
        rows.append(
            f'<tr class="{cls}" data-test-id="{_e(x.test_id)}" data-direction="{x.direction}">'
            f"<td>{_e(x.test_id)}</td><td>{_e(x.direction)}</td>"
            f"<td>{_badge(x.status_a)} {_link(x.url_a, 'A')}</td>"
            f"<td>{_badge(x.status_b)} {_link(x.url_b, 'B')}</td></tr>"
        )
    table = (
        '<table class="grid" id="compare-table"><thead><tr><th>test</th><th>direction</th><th>A</th><th>B</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        '<p class="muted">regressed: passed in A, failed or errored in B; fixed: the reverse; changed: failed in one '
        "run, errored in the other; new: only in B; gone: only in A. Tests are matched by id (an RCA id names its "
        "axis). 95% CI: the Wilson interval of each pass rate; McNemar's exact test pairs the tests both runs have."
        "</p>"
    )
    return _layout("sredrill · compare", head + table)


# -- run page ------------------------------------------------------------------------------------------------


def _anchor(test_id: str) -> str:
    # The HTML reporter's file links each row to its test's section in the same file.
    return "test-" + quote(test_id, safe="")


def _result_row(run_id: str, r: TestResult, *, links: bool) -> str:
    check = first_failed_check(r)
    gates = failed_gates(r)
    # The console's words: its first gate line (`expect to_be: …`), else the reason it prints.
    first = _e(gates[0].text.split("\n")[0]) if gates else _e(r.failure_reason or "")
    if check is not None:
        first = f'<span class="check" data-check="{_e(check.name)}">{first}</span>'
    href = _test_href(run_id, r.id) if links else f"#{_anchor(r.id)}"
    name = f'<a href="{href}">{_e(r.name)}</a>' if links or r.status != TestStatus.PASSED else _e(r.name)
    score = "—" if r.score is None else f"{r.score:.2f}"
    grading = f' data-grading="{_e(r.grading)}"' if r.grading else ""
    return (
        f'<tr data-test-id="{_e(r.id)}"{grading} class="{r.status.value}"><td>{name}</td>'
        f"<td>{_badge(r.status.value)}</td>"
        f'<td class="num">{score}</td><td>{_e(r.difficulty)}</td><td>{_e(r.axis)}</td>'
        f'<td class="reason">{first}</td><td class="num">{_ms(r.duration_ms)}</td></tr>'
    )


# A page holds more of the captured output than a terminal, still bounded: a run page may have many tests.
_PAGE_LINES = 500


def _captured(result: TestResult) -> str:
    """A test's traceback, notes and captured stdout/stderr (empty when it has none)."""
    parts = []
    tb = traceback_tail(result, max_lines=_PAGE_LINES)
    if tb is not None:
        parts.append(f'<h3>Traceback</h3><pre class="traceback">{_e(tb)}</pre>')
    if result.notes:
        items = "".join(f"<li>{_e(n)}</li>" for n in result.notes)
        parts.append(f'<h3>Notes</h3><ul class="notes">{items}</ul>')
    for title, text in captured_sections(result, max_lines=_PAGE_LINES):
        kind = title.split()[-1]
        parts.append(f'<h3>{_e(title)}</h3><pre class="captured {kind}">{_e(text)}</pre>')
    return "".join(parts)


def _gate_list(gates: Sequence[FailedGate]) -> str:
    """Each failed gate once, with where it was recorded."""
    if not gates:
        return ""
    items = "".join(
        f"<li>{_e(g.text)}" + (f'<br><code class="where">at {_e(g.where)}</code>' if g.where else "") + "</li>"
        for g in gates
    )
    return f'<ul class="gates">{items}</ul>'


def _failures(results: Sequence[TestResult]) -> str:
    """For the HTML reporter's file (it has no test pages): each test that did not pass, whole."""
    items = []
    for r in results:
        if r.status == TestStatus.PASSED:
            continue
        gates = failed_gates(r)
        reason = shown_reason(r, gates)
        shown = f'<p class="failure">{_e(reason)}</p>' if reason else ""
        where = f' <span class="muted">{_e(error_header(r).lower())}</span>' if r.error_where else ""
        items.append(
            f'<section class="card failure-detail" id="{_anchor(r.id)}" data-test-id="{_e(r.id)}"><h3>{_e(r.name)} '
            f"{_badge(r.status.value)}{where}</h3>{shown}{_gate_list(gates)}{_captured(r)}"
            '<p><a href="#tests">↑ all tests</a></p></section>'
        )
    return f'<section id="failures"><h2>Failures</h2>{"".join(items)}</section>' if items else ""


def run_page(report: RunReport, *, status: str, standalone: bool = False) -> str:
    """A run: live progress while it runs, its totals (every result once), one card per kind of result (RCA with
    per-difficulty Axis 1 / Axis 2 bars and the gap, incident episodes, tests), every test.

    Args:
        report: the run's report (rebuilt from the stored results while it runs).
        status: `running`, `finished`, `cancelled`, `interrupted`, …
        standalone: for the HTML reporter: no links to the server, no live progress.
    """
    s = report.summary
    live = status in ("running", "starting") and not standalone
    rid = report.run_id
    gap = s.rca.gap if s.rca is not None else None
    gap_text = "" if gap is None else f" · RCA gap (axis 1 − axis 2) <b id='gap'>{_e(points(gap.overall))}</b>"
    done = len(report.results)
    cancel = '<button id="cancel-run" type="button">Cancel</button>' if live else ""
    level = isolation_note(report.isolation)
    isolation = "" if level is None else f" · isolation <b id='isolation'>{_e(level)}</b>"
    if report.generated is not None:
        isolation += f" · generated <b id='generated'>{_e(generated_note(report.generated))}</b>"
    head = (
        f'<h1>Run <code>{_e(rid)}</code></h1><p class="meta">agent <b>{_e(report.agent)}</b> · mode '
        f"<b>{_e(report.mode)}</b>{isolation} · started {_e(report.started_at.isoformat()[:19].replace('T', ' '))} · "
        f"{_ms(report.duration_ms)} · status <b id='run-status'>{_e(status)}</b> {cancel}</p>"
        f'<div class="progress" id="progress" data-live="{str(live).lower()}" data-run-id="{_e(rid)}" '
        f'data-done="{done}"><div class="bar" style="width:{100 if not live else 0}%"></div>'
        f'<span id="progress-text">{done} results done</span></div>'
        f"{totals_html(s, extra=gap_text)}{usage_html(s.usage, results=s.usage_results, of=s.total)}"
    )
    # One wrapper, so a live page swaps in the cards (their charts) rebuilt from the results stored so far.
    bars = f'<div id="sections">{sections_html(s)}</div>'
    insights = ""
    if report.insights is not None:
        insights = f'<section class="card"><h2>Insights</h2>{_insights(report.insights)}</section>'
    rows = "".join(_result_row(rid, r, links=not standalone) for r in report.results)
    table = (
        '<section><h2>Tests</h2><table class="grid" id="tests"><thead><tr><th>test</th><th>status</th>'
        "<th>score</th><th>difficulty</th><th>axis</th><th>first failed check</th><th>duration</th></tr>"
        f"</thead><tbody>{rows}</tbody></table></section>"
    )
    failures = _failures(report.results) if standalone else ""
    return _layout(f"sredrill · run {rid}", head + bars + insights + table + failures, served=not standalone)


# -- test page -------------------------------------------------------------------------------------------


def _insights(insights: BaseModel) -> str:
    data = insights.model_dump()
    why = "".join(f"<li>{_e(w)}</li>" for w in data.get("why", []))
    recs = "".join(f"<li>{_e(w)}</li>" for w in data.get("recommendations", []))
    return (
        f'<p>{_e(data.get("summary"))} <span class="muted">({_e(data.get("source"))})</span></p>'
        + (f"<h3>Why</h3><ul>{why}</ul>" if why else "")
        + (f"<h3>Recommendations</h3><ol>{recs}</ol>" if recs else "")
    )


def _json_block(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if len(text) > 4000:
        text = text[:4000] + f"\n… ({len(text) - 4000} more characters)"
    return f"<pre>{_e(text)}</pre>"


def _signals(result: TestResult) -> str:
    rows = []
    for s in result.signals:
        state = "neutral" if s.passed is None else ("passed" if s.passed else "failed")
        soft = ' <span class="badge soft" title="expect.soft: the test went on after it">soft</span>' if s.soft else ""
        detail = [_e(s.message)] if s.message else []
        if s.expected is not None or s.actual is not None:
            detail.append(f"expected <code>{_e(s.expected)}</code> · actual <code>{_e(s.actual)}</code>")
        if s.reasoning:
            detail.append(f'<span class="reasoning">judge: {_e(s.reasoning)}</span>')
        if s.value is not None:
            detail.append(f"value {s.value:g}")
        if s.where:
            detail.append(f'<code class="where">at {_e(s.where)}</code>')
        rows.append(
            f'<tr class="signal {state}" data-signal="{_e(s.name)}"><td>{_badge(state)}</td><td>{_e(s.role.value)}</td>'
            f"<td>{_e(s.kind.value)}</td><td><b>{_e(s.name)}</b>{soft}</td><td>{'<br>'.join(detail)}</td>"
            f'<td class="num">{"" if s.score is None else f"{s.score:.2f}"}</td></tr>'
        )
    if not rows:
        return '<p class="muted">no signals</p>'
    return (
        '<table class="grid" id="signals"><thead><tr><th></th><th>role</th><th>kind</th><th>name</th>'
        f"<th>expected vs actual · message</th><th>score</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _timeline(steps: Sequence[dict[str, Any]] | None) -> str:
    if not steps:
        return '<p class="muted">no trajectory stored for this test</p>'
    items = []
    for step in steps:
        kind = str(step.get("kind"))
        t = step.get("t_ms")
        when = f'<span class="t">{t:.0f} ms</span>' if isinstance(t, int | float) else ""
        if kind == "tool_call":
            body = f"<b>{_e(step.get('name'))}</b>{_json_block(step.get('args', {}))}"
        elif kind == "tool_result":
            error = step.get("error")
            body = f"<b>{_e(step.get('name'))}</b>" + (
                f' <span class="error">error: {_e(error)}</span>' if error else _json_block(step.get("result"))
            )
        else:
            body = f'<div class="text">{_e(step.get("content"))}</div>'
        items.append(f'<li class="step {_e(kind)}"><span class="kind">{_e(kind)}</span>{when}{body}</li>')
    return f'<ol class="timeline" id="trajectory">{"".join(items)}</ol>'


def _metrics(result: TestResult) -> str:
    m = result.metrics
    if m is None:
        return '<p class="muted">no derived metrics</p>'
    tokens = "unknown" if m.tokens is None else f"{m.tokens.total} ({m.tokens.prompt} in, {m.tokens.completion} out)"
    cells = [
        ("steps", m.steps),
        ("tool calls", m.tool_calls),
        ("redundant calls", m.redundant_calls),
        ("tool errors", m.tool_errors),
        ("ignored tool errors", m.ignored_tool_errors),
        ("latency", _ms(m.latency_ms)),
        ("tokens", tokens),
    ]
    hist = ", ".join(f"{_e(k)} × {v}" for k, v in m.tool_histogram.items()) or "none"
    dl = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in cells)
    return f'<dl class="metrics" id="metrics">{dl}<dt>tools used</dt><dd>{hist}</dd></dl>'


def result_page(run_id: str, result: TestResult, steps: Sequence[dict[str, Any]] | None, *, evidence: str) -> str:
    """One test: signals, trajectory, derived metrics, insights, captured output and the scenario's evidence.

    Args:
        evidence: the HTML of the test's scenario's evidence views (`server.ui.evidence`), or "" when it has none.
    """
    reason = ""
    if result.status != TestStatus.PASSED:
        gates = failed_gates(result)
        shown = shown_reason(result, gates)
        where = f'<p class="muted">{_e(error_header(result).lower())}</p>' if result.error_where else ""
        text = f"<p>{_e(shown)}</p>" if shown else ""
        reason = f'<div class="failure" id="failure">{where}{text}{_gate_list(gates)}</div>'
    expected = ""
    if result.expected is not None or result.actual is not None:
        expected = (
            '<section class="card"><h2>Expected vs actual</h2><dl class="metrics">'
            f"<dt>expected</dt><dd>{_e(result.expected.model_dump_json() if result.expected else '—')}</dd>"
            f"<dt>actual</dt><dd>{_e(result.actual.model_dump_json() if result.actual else '—')}</dd>"
            f"{_grading(result)}</dl></section>"
        )
    output = f'<section class="card"><h2>Output</h2>{_json_block(result.output)}</section>' if result.output else ""
    scored = _score(result)
    if scored:
        expected += f'<section class="card" id="score-card"><h2>Score</h2><dl class="metrics">{scored}</dl></section>'
    captured = _captured(result)
    insights = (
        f'<section class="card" id="insights"><h2>Insights</h2>{_insights(result.insights)}</section>'
        if result.insights is not None
        else ""
    )
    body = (
        f'<p><a href="/ui/runs/{quote(run_id)}">← run {_e(run_id)}</a></p>'
        f"<h1>{_e(result.name)} {_badge(result.status.value)}</h1>{reason}"
        f'<section class="card"><h2>Signals</h2>{_signals(result)}</section>{expected}{insights}'
        f'<section class="card"><h2>Derived metrics</h2>{_metrics(result)}</section>{usage_card_html(result.usage)}'
        f'<section class="card"><h2>Trajectory</h2>{_timeline(steps)}</section>{output}'
        + (f'<section class="card" id="captured"><h2>Captured output</h2>{captured}</section>' if captured else "")
        + (f'<section class="card"><h2>Evidence</h2>{evidence}</section>' if evidence else "")
    )
    return _layout(f"sredrill · {result.name}", body)


def _score(result: TestResult) -> str:
    """An RCA result's score, its components and claim counts, when it was graded."""
    parts = []
    if result.score_components is not None and result.score is not None:
        components = ", ".join(f"{k} {v:.2f}" for k, v in result.score_components.items())
        value = f"{result.score:.2f} ({_e(components)})"
        parts.append(f'<dt>score</dt><dd id="score" data-score="{result.score}">{value}</dd>')
    if result.claims is not None:
        parts.append(
            f'<dt>claims</dt><dd id="claims" data-claims="{result.claims}" data-uncited="{result.uncited_claims}">'
            f"{result.claims} claim(s), {result.uncited_claims} citing no evidence item</dd>"
        )
    return "".join(parts)


def _grading(result: TestResult) -> str:
    """How the result was graded, when it was: compatibility mode says so in words."""
    if result.grading is None:
        return ""
    words = (
        "compat: an upstream-format answer key, graded as the upstream scorer defines each field, with sredrill's fixes"
        if result.grading == GradingMode.COMPAT
        else "sredrill"
    )
    return f'<dt>graded</dt><dd id="grading" data-grading="{_e(result.grading)}">{_e(words)}</dd>'


# -- environment -------------------------------------------------------------------------------------------


def _shared_descriptions(tasks: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Each kind's description that several of its tasks share (a family's tasks differ by seed, not by text)."""
    by_kind: dict[str, Counter[str]] = {}
    for t in tasks:
        by_kind.setdefault(str(t["kind"]), Counter())[str(t["description"])] += 1
    shared = {}
    for kind, texts in by_kind.items():
        text, n = texts.most_common(1)[0]
        if n > 1:
            shared[kind] = text
    return shared


def env_page(tasks: Sequence[dict[str, Any]]) -> str:
    """The environment's tasks; each can start an episode whose session opens live. A description several tasks
    of a kind share is shown once above the table; a row shows only a description of its own."""
    shared = _shared_descriptions(tasks)
    notes = "".join(
        f'<p class="shared-description" data-kind="{_e(k)}"><b>{_e(k)}</b>: {_e(text)}</p>'
        for k, text in shared.items()
    )

    def own(t: dict[str, Any]) -> str:
        text = str(t["description"])
        return '<span class="muted">as above</span>' if shared.get(str(t["kind"])) == text else _e(text)

    rows = "".join(
        f"<tr><td><code>{_e(t['task_id'])}</code></td><td>{_e(t['kind'])}</td><td>{_e(t['difficulty'])}</td>"
        f"<td>{_e(t['max_steps'])}</td><td>{own(t)}</td>"
        f'<td><button type="button" class="start-episode" data-task="{_e(t["task_id"])}">Start episode</button></td>'
        "</tr>"
        for t in tasks
    )
    body = (
        "<h1>Environment</h1>"
        '<form id="open-session" class="row"><label>Session id <input name="sid" size="36"></label>'
        '<button type="submit">Watch</button></form>'
        + (f'<section class="card" id="descriptions">{notes}</section>' if notes else "")
        + '<table class="grid" id="tasks"><thead><tr><th>task</th><th>kind</th><th>difficulty</th><th>max steps</th>'
        f"<th>description</th><th></th></tr></thead><tbody>{rows}</tbody></table>"
    )
    return _layout("sredrill · environment", body)


def session_page(session_id: str) -> str:
    """A live view of one session's episode: its state, refreshed, and a form to send an action."""
    body = (
        f'<p><a href="/ui/env">← environment</a></p><h1>Session <code id="session-id">{_e(session_id)}</code></h1>'
        '<form id="step-form" class="row"><label>Action <input name="action" size="60" '
        'value=\'{"action_type": "wait"}\'></label><button type="submit">Step</button>'
        '<span id="step-error" class="error" role="alert"></span></form>'
        '<section class="card"><h2>Episode <span class="muted" id="state-age"></span></h2>'
        '<p id="episode-summary" class="summary">loading…</p>'
        '<ol class="timeline" id="episode"></ol>'
        '<details><summary>last observation (JSON)</summary><pre id="observation">—</pre></details>'
        "<details><summary>state (JSON)</summary>"
        f'<pre id="session-state" data-session="{_e(session_id)}">loading…</pre></details></section>'
    )
    return _layout(f"sredrill · session {session_id}", body)


def not_found_page(what: str) -> str:
    """A 404 page saying what was not found."""
    return _layout("sredrill · not found", f'<h1>Not found</h1><p>{_e(what)}</p><p><a href="/ui">all runs</a></p>')


def ambiguous_run_page(what: str, choices: Sequence[tuple[str, str]]) -> str:
    """The 409 page of a run prefix several runs start with: what was typed, then a link per run it may mean.

    Args:
        what: the store's message (`run '2025' is ambiguous: 2 runs start with it`).
        choices: (run id, the page's address with that id in place of the prefix), newest first.
    """
    links = "".join(f'<li><a href="{_e(href)}">{_e(run_id)}</a></li>' for run_id, href in choices)
    body = (
        f"<h1>Which run?</h1><p>{_e(what)}; pick one, or type more characters of the run id.</p>"
        f'<ul id="choices">{links}</ul><p><a href="/ui">all runs</a></p>'
    )
    return _layout("sredrill · which run?", body)
