"""Tokens and cost in words: the one line the console, `runs show` and `runs compare` print for a Usage, and
the same words as HTML for the run page and each test's page."""

from __future__ import annotations

from html import escape

from sredrill.results import Usage
from sredrill.store import UsageChange
from sredrill.text import scrub

__all__ = [
    "cost_text",
    "money",
    "tokens_text",
    "usage_card_html",
    "usage_change_html",
    "usage_change_line",
    "usage_html",
    "usage_line",
]


def money(amount: float, currency: str | None) -> str:
    """`0.000135 USD`, `12.30 USD`: small amounts keep their digits (a test costs fractions of a cent)."""
    text = f"{amount:,.2f}" if abs(amount) >= 1 else (f"{amount:.6f}".rstrip("0").rstrip(".") or "0")
    return f"{text} {currency}" if currency else text


def tokens_text(usage: Usage) -> str:
    """`1,234 tokens (1,000 in, 200 of them cached; 234 out)`, then `; 300 of them the judge's` when an LLM
    judge graded (its tokens are in the totals: they are the run's cost too)."""
    cached = f", {usage.cached_input_tokens:,} of them cached" if usage.cached_input_tokens else ""
    judge = f"; {usage.judge_tokens:,} of them the judge's" if usage.judge_tokens else ""
    return f"{usage.total_tokens:,} tokens ({usage.input_tokens:,} in{cached}; {usage.output_tokens:,} out{judge})"


def cost_text(usage: Usage) -> str | None:
    """The cost when the usage was priced: the priced part, and what is unknown (tokens with no price)."""
    if usage.currency is None:
        return None
    unknown = ""
    if usage.unpriced_tokens:
        models = ", ".join(usage.unpriced_models) or "no model named"
        unknown = f"unknown for {usage.unpriced_tokens:,} tokens ({models}: no price)"
    if usage.cost is None:
        return unknown or "unknown"
    return money(usage.cost, usage.currency) + (f" + {unknown}" if unknown else "")


def usage_line(usage: Usage | None, *, results: int | None = None, of: int | None = None) -> str | None:
    """`tokens: 1,234 (…) · cost: 0.0012 USD`; None when nothing reported usage.

    Args:
        results: how many results reported usage, of `of`: said when some did not (their tokens are unknown).
    """
    if usage is None:
        return None
    line = f"tokens: {tokens_text(usage)}"
    if results is not None and of is not None and results < of:
        line += f" from {results} of {of} results (the others reported none)"
    cost = cost_text(usage)
    if cost is not None:
        line += f" · cost: {cost}"
    return line


def _e(value: object) -> str:
    return escape(scrub("" if value is None else str(value))[0])


def _data(usage: Usage) -> str:
    """The numbers as data attributes, so a test (or a script) reads what a person sees."""
    cost = "" if usage.cost is None else f' data-cost="{usage.cost}" data-currency="{_e(usage.currency)}"'
    return (
        f'data-total-tokens="{usage.total_tokens}" data-input-tokens="{usage.input_tokens}" '
        f'data-output-tokens="{usage.output_tokens}" data-unpriced-tokens="{usage.unpriced_tokens}"{cost}'
    )


def usage_html(usage: Usage | None, *, results: int, of: int) -> str:
    """The run page's tokens-and-cost line (the console's words); "" when no result reported usage."""
    line = usage_line(usage, results=results, of=of)
    if usage is None or line is None:
        return ""
    return f'<p class="summary" id="usage" {_data(usage)}>{_e(line)}</p>'


def usage_card_html(usage: Usage | None) -> str:
    """A test page's card: its tokens, its cost when priced, and one row per model."""
    if usage is None:
        body = '<p class="muted">the agent reported no token usage (unknown, not zero)</p>'
        return f'<section class="card" id="usage-card"><h2>Tokens and cost</h2>{body}</section>'
    rows = "".join(
        f"<tr data-role='{m.role}'><td>{_e(m.model or 'no model named')}{' (judge)' if m.role == 'judge' else ''}"
        f"</td><td class='num'>{m.input_tokens:,}</td>"
        f"<td class='num'>{'—' if m.cached_input_tokens is None else f'{m.cached_input_tokens:,}'}</td>"
        f"<td class='num'>{m.output_tokens:,}</td><td class='num'>{m.total_tokens:,}</td>"
        f"<td class='num'>{_e(_model_cost(m.cost, usage))}</td></tr>"
        for m in usage.by_model
    )
    table = (
        '<table class="grid"><thead><tr><th>model</th><th>input</th><th>cached input</th><th>output</th>'
        f"<th>total</th><th>cost</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    line = f'<p class="summary" id="usage" {_data(usage)}>{_e(usage_line(usage))}</p>'
    return f'<section class="card" id="usage-card"><h2>Tokens and cost</h2>{line}{table}</section>'


def _model_cost(cost: float | None, usage: Usage) -> str:
    if usage.currency is None:
        return "not priced"
    return "unknown (no price)" if cost is None else money(cost, usage.currency)


def usage_change_line(change: UsageChange | None) -> str | None:
    """`runs compare`: `tokens: 1,230 → 2,460 (+1,230) · cost: 0.0024 USD → 0.0048 USD (+0.0024 USD)`; None
    when neither run reported usage."""
    if change is None or (change.usage_a is None and change.usage_b is None):
        return None
    a, b = change.usage_a, change.usage_b
    tokens = " → ".join(f"{u.total_tokens:,}" if u is not None else "unknown" for u in (a, b))
    if change.total_tokens_change is not None:
        tokens += f" ({change.total_tokens_change:+,})"
    line = f"tokens: {tokens}"
    costs = [cost_text(u) if u is not None else None for u in (a, b)]
    if any(c is not None for c in costs):
        line += " · cost: " + " → ".join(c or "not priced" for c in costs)
        if change.cost_change is not None and a is not None:
            line += f" ({'+' if change.cost_change >= 0 else '-'}{money(abs(change.cost_change), a.currency)})"
    return line


def usage_change_html(change: UsageChange | None) -> str:
    """The compare page's tokens-and-cost line; "" when neither run reported usage."""
    line = usage_change_line(change)
    if change is None or line is None:
        return ""
    tokens = "" if change.total_tokens_change is None else f' data-tokens-change="{change.total_tokens_change}"'
    cost = "" if change.cost_change is None else f' data-cost-change="{change.cost_change}"'
    return f'<p class="summary" id="usage-change"{tokens}{cost}>{_e(line)}</p>'
