"""Tokens by model from a test's spans (each call once), and their cost by a prices file (`--prices FILE`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.engine.metrics import usage_of_test as usage_of
from sredrill.engine.prices import load_prices, price_report, price_usage, unpriced_warnings
from sredrill.errors import InputError
from sredrill.results import ModelUsage, RunReport, TestResult, TestStatus, combine_usage, summarize
from sredrill.traces import Span, SpanSource
from sredrill.trajectory import TokenUsage

TRACE = "0" * 31 + "1"
AGENT, OURS = SpanSource.AGENT, SpanSource.SREDRILL


def span(span_id: str, parent: str | None, source: SpanSource, **attrs: object) -> Span:
    return Span(
        trace_id=TRACE, span_id=span_id.rjust(16, "0"), parent_span_id=parent.rjust(16, "0") if parent else None,
        name=span_id, start_ns=0, end_ns=1, source=source, attributes=attrs,
    )  # fmt: skip


def usage(input_tokens: int, output_tokens: int, **more: object) -> dict[str, object]:
    return {"gen_ai.usage.input_tokens": input_tokens, "gen_ai.usage.output_tokens": output_tokens, **more}


@pytest.fixture
def prices(tmp_path: Path) -> Path:
    path = tmp_path / "prices.toml"
    path.write_text(
        'currency = "USD"\n[models."gpt-4o-mini"]\ninput = 0.15\noutput = 0.60\ncached_input = 0.075\n'
        '[models."big"]\ninput = 5\noutput = 15\n'
    )
    return path


def test_the_innermost_spans_count_once_each_named_by_its_model() -> None:
    spans = [
        # sredrill's agent span totals the run; the agent's own LLM spans (OTLP) nest under it.
        span("agent", None, OURS, **usage(1100, 60)),
        span("chat1", "agent", AGENT, **usage(1000, 50), **{"gen_ai.request.model": "gpt-4o-mini"}),
        # The older names, and the response model when no request model is named.
        span("chat2", "agent", AGENT, **{"gen_ai.usage.prompt_tokens": 100, "gen_ai.usage.completion_tokens": 10,
                                         "gen_ai.response.model": "big"}),
    ]  # fmt: skip
    got = usage_of(spans, reported=TokenUsage(prompt=1100, completion=60, total=1160), agent="cmd:python a.py")
    assert got is not None
    assert (got.input_tokens, got.output_tokens, got.total_tokens) == (1100, 60, 1160)
    assert [(m.model, m.total_tokens) for m in got.by_model] == [("gpt-4o-mini", 1050), ("big", 110)]


def test_the_agents_reported_usage_counts_only_without_spans_and_takes_the_openai_model() -> None:
    reported = TokenUsage(prompt=40, completion=2, total=42, cached=10)
    got = usage_of([], reported=reported, agent="openai:gpt-4o-mini")
    assert got is not None and got.total_tokens == 42 and got.cached_input_tokens == 10
    assert got.by_model[0].model == "gpt-4o-mini"
    # A span that names no model is the `openai:` agent's; another agent's stays unnamed.
    spans = [span("agent", None, OURS, **usage(5, 1))]
    assert usage_of(spans, reported=None, agent="openai:m").by_model[0].model == "m"  # type: ignore[union-attr]
    assert usage_of(spans, reported=None, agent="cmd:x").by_model[0].model is None  # type: ignore[union-attr]
    assert usage_of([span("tool", None, OURS)], reported=None, agent="openai:m") is None  # unknown, not zero


def test_the_cost_is_by_each_models_price_and_cached_input_has_its_own(prices: Path) -> None:
    table = load_prices(prices)
    parts = [
        ModelUsage(
            model="gpt-4o-mini", input_tokens=1200, output_tokens=30, total_tokens=1230, cached_input_tokens=300
        ),
        ModelUsage(model="big", input_tokens=1000, output_tokens=100, total_tokens=1100),
    ]
    priced = price_usage(combine_usage(parts), table)  # type: ignore[arg-type]
    mini = (900 * 0.15 + 300 * 0.075 + 30 * 0.60) / 1e6
    big = (1000 * 5 + 100 * 15) / 1e6
    assert [m.cost for m in priced.by_model] == [pytest.approx(mini), pytest.approx(big)]
    assert priced.cost == pytest.approx(mini + big) and priced.currency == "USD" and priced.unpriced_tokens == 0


def test_a_model_without_a_price_leaves_its_tokens_unknown_and_is_warned_about(prices: Path) -> None:
    table = load_prices(prices)
    parts = [
        ModelUsage(model="gpt-4o-mini", input_tokens=100, output_tokens=10, total_tokens=110),
        ModelUsage(model="gpt-5", input_tokens=700, output_tokens=70, total_tokens=770),
        ModelUsage(model=None, input_tokens=5, output_tokens=1, total_tokens=6),
    ]
    priced = price_usage(combine_usage(parts), table)  # type: ignore[arg-type]
    assert priced.cost == pytest.approx((100 * 0.15 + 10 * 0.60) / 1e6)  # the priced part only
    assert priced.unpriced_tokens == 776 and priced.unpriced_models == ["gpt-5"]
    warnings = unpriced_warnings(priced, str(prices))
    assert len(warnings) == 2
    assert "no price for model 'gpt-5' (770 token(s))" in warnings[0] and str(prices) in warnings[0]
    assert "6 token(s) name no model" in warnings[1] and "gen_ai.request.model" in warnings[1]


def test_a_run_sums_its_results_and_is_priced_after_the_fact(prices: Path) -> None:
    def result(name: str, tokens: int) -> TestResult:
        part = ModelUsage(model="big", input_tokens=tokens, output_tokens=0, total_tokens=tokens)
        return TestResult(id=name, name=name, status=TestStatus.PASSED, duration_ms=1.0, usage=combine_usage([part]))

    results = [result("a", 1000), result("b", 3000), TestResult(id="c", name="c", status=TestStatus.PASSED,
                                                                  duration_ms=1.0)]  # fmt: skip
    summary = summarize(results)
    assert summary.usage is not None and summary.usage.total_tokens == 4000 and summary.usage_results == 2
    assert summary.usage.cost is None and summary.usage.currency is None  # not priced: unknown, not zero
    report = RunReport(run_id="r", agent=None, started_at="2026-01-01T00:00:00Z", duration_ms=1.0,  # type: ignore[arg-type]
                       summary=summary, results=results)  # fmt: skip
    priced = price_report(report, load_prices(prices))
    assert [r.usage.cost if r.usage else None for r in priced.results] == [0.005, 0.015, None]
    assert priced.summary.usage is not None and priced.summary.usage.cost == pytest.approx(0.02)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            'currency = "USD"\n[models.m]\ninput = -0.15\noutput = 1\n',
            'models."m".input must be a number >= 0, got -0.15',
        ),
        ('currency = "USD"\n[models.m]\ninput = "cheap"\noutput = 1\n', "must be a finite number, got 'cheap'"),
        ('currency = "USD"\n[models.m]\ninput = 1\n', 'models."m".output is missing'),
        ('currency = "USD"\n[models.m]\ninput = 1\noutput = 1\ncahced_input = 1\n', "did you mean 'cached_input'?"),
        ('currency = "USD"\nmodel = 1\n[models.m]\ninput = 1\noutput = 1\n', "model is not a known key"),
        ('currency = "USD"\n', "models is missing"),
        ('currency = "USD"\nmodels = {}\n', "must list at least one model"),
        ("[models.m]\ninput = 1\noutput = 1\n", "currency is missing"),
        ("currency = ", "is not valid TOML"),
    ],
)
def test_a_malformed_prices_file_names_the_field_and_the_fix(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_prices(path)
    rendered = caught.value.render()
    assert says in rendered and str(path) in rendered and 'currency = "USD"' in rendered, rendered
