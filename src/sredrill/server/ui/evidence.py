"""A scenario's evidence as HTML, from its domain's view declarations (`Domain.views`): the UI knows no domain.

Four generic kinds: `series` (line charts, the alert marked), `timeline` (events on one axis), `table` and `text`.
"""

from __future__ import annotations

from html import escape

from sredrill.engine.reporters.html_charts import event_timeline, series_chart
from sredrill.scenarios import Scenario, get_domain
from sredrill.scenarios.domain import View

__all__ = ["evidence_html", "view_html"]


def evidence_html(scenario: Scenario) -> str:
    """Every evidence view of the scenario's domain whose source the scenario has, in declaration order.

    The page's `#evidence` anchor is the first series view (the charts come first); a domain without series
    views (Kubernetes: tables, a timeline, a log) has it on the whole evidence instead.
    """
    alert_at = scenario.alert_started_at
    parts: list[str] = []
    first_series = True
    for spec in get_domain(scenario.domain).views:
        view = spec.build(scenario)
        if view.kind == "series":
            parts.append(view_html(view, alert_at=alert_at, anchor=first_series))
            first_series = False
        elif scenario.has_source(spec.source) or view.kind == "timeline":
            parts.append(view_html(view, alert_at=alert_at))
    if first_series and parts:
        return f'<div id="evidence" class="views">{"".join(parts)}</div>'
    return "".join(parts)


def view_html(view: View, *, alert_at: object = None, anchor: bool = False) -> str:
    """One view as HTML (`anchor`: the first series view carries the page's `#evidence` anchor)."""
    from datetime import datetime

    at = alert_at if isinstance(alert_at, datetime) else None
    if view.kind == "series":
        charts = "".join(
            series_chart(title, list(points), unit=unit, alert_at=at) for title, unit, points in view.series
        )
        anchor_id = ' id="evidence"' if anchor else ""
        return f'<div class="charts"{anchor_id}>{charts or "<p class=muted>no metric series</p>"}</div>'
    head = f"<h3>{escape(view.title)}</h3>"
    if view.kind == "timeline":
        return head + event_timeline(list(view.events), alert_at=at)
    if view.kind == "table":
        if not view.rows:
            return head + '<p class="muted">nothing</p>'
        th = "".join(f"<th>{escape(c)}</th>" for c in view.columns)
        trs = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in view.rows)
        return f'{head}<table class="evidence"><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>'
    return f"{head}<pre>{escape(view.text)}</pre>" if view.text else head + '<p class="muted">nothing</p>'
