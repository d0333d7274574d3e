"""Prices: the user's price table (`--prices FILE`, `prices` in the config) and what a run's tokens cost by it.

sredrill ships no prices (they change, and differ by provider and contract): the user gives a TOML or JSON file
of prices per million tokens, one currency for all:

    currency = "USD"
    [models."gpt-4o-mini"]
    input = 0.15          # per million input tokens
    output = 0.60         # per million output tokens
    cached_input = 0.075  # per million input tokens read from the prompt cache (default: `input`)

A model is looked up by its exact name (the span's `gen_ai.request.model`, the `openai:MODEL` spec). Tokens of a
model the file does not list have an unknown cost, reported in `Usage.unpriced_*`, never a zero.

Examples:
    >>> prices = load_prices("prices.toml")
    >>> priced = price_report(report, prices)
    >>> priced.summary.usage.cost
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from sredrill.errors import InputError, did_you_mean
from sredrill.results import ModelUsage, RunReport, Summary, TestResult, Usage, combine_usage, run_usage
from sredrill.store import RunComparison, usage_change

__all__ = [
    "ModelPrice",
    "PriceTable",
    "Prices",
    "load_prices",
    "price_comparison",
    "price_report",
    "price_result",
    "price_summary",
    "price_usage",
    "unpriced_warnings",
]

_PER_TOKENS: Final = 1_000_000
_EXAMPLE: Final = 'e.g.\n    currency = "USD"\n    [models."gpt-4o-mini"]\n    input = 0.15\n    output = 0.60'


class ModelPrice(BaseModel):
    """One model's prices, per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    input: float = Field(ge=0, allow_inf_nan=False, strict=True)
    """Per million input (prompt) tokens."""
    output: float = Field(ge=0, allow_inf_nan=False, strict=True)
    """Per million output (completion) tokens."""
    cached_input: float | None = Field(default=None, ge=0, allow_inf_nan=False, strict=True)
    """Per million input tokens read from the provider's prompt cache; None: the `input` price."""


class PriceTable(BaseModel):
    """A prices file, as written."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    currency: str = Field(min_length=1)
    """The one currency of every price (`USD`, `EUR`): shown beside each cost."""
    models: dict[str, ModelPrice] = Field(min_length=1)
    """Model name (exactly as the spans or the `openai:` spec name it) -> its prices."""


@dataclass(frozen=True, slots=True)
class Prices:
    """A loaded price table and the file it came from (warnings name it)."""

    table: PriceTable
    path: str

    @property
    def currency(self) -> str:
        return self.table.currency

    def cost(self, part: ModelUsage) -> float | None:
        """What `part`'s tokens cost; None when its model has no price (or none is named)."""
        price = self.table.models.get(part.model) if part.model is not None else None
        if price is None:
            return None
        cached = min(part.cached_input_tokens or 0, part.input_tokens)
        cached_price = price.cached_input if price.cached_input is not None else price.input
        total = (part.input_tokens - cached) * price.input + cached * cached_price + part.output_tokens * price.output
        return round(total / _PER_TOKENS, 8)


def _field(loc: Sequence[int | str]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif parts and parts[-1] == "models" and len(parts) == 1:
            parts.append(f'."{item}"')
        else:
            parts.append(("." if parts else "") + item)
    return "".join(parts)


_TOP_KEYS: Final = ("currency", "models")
_MODEL_KEYS: Final = ("input", "output", "cached_input")


def _problem(error: ErrorDetails) -> str:
    """One pydantic error in the words of a prices file."""
    kind, value, loc = error["type"], error.get("input"), error["loc"]
    if kind == "missing":
        return "is missing"
    if kind == "extra_forbidden":
        known = _MODEL_KEYS if len(loc) > 1 else _TOP_KEYS
        close = did_you_mean(str(loc[-1]), known)
        return f"is not a known key ({close + ' ' if close else ''}known: {', '.join(known)})"
    if kind == "greater_than_equal":
        return f"must be a number >= 0, got {value!r}"
    if kind in ("float_parsing", "float_type", "finite_number"):
        return f"must be a finite number, got {value!r}"
    if kind in ("dict_type", "model_type"):
        return "must be a table of keys (a TOML table, a JSON object)"
    if kind == "too_short":
        return "must list at least one model"
    return error["msg"][:1].lower() + error["msg"][1:]


def load_prices(path: str | Path) -> Prices:
    """Read and check a prices file (`.json` is JSON; anything else TOML).

    Raises:
        InputError: the file is missing, not valid TOML/JSON, or a field is wrong (named, with the fix).
    """
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"cannot read the prices file: {exc.strerror or exc}",
            path=where,
            hint="give a TOML or JSON file of prices per million tokens, " + _EXAMPLE,
        ) from exc
    except UnicodeDecodeError as exc:
        raise InputError("the prices file is not UTF-8 text", path=where, hint=_EXAMPLE) from exc
    try:
        data = json.loads(text) if where.endswith(".json") else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if where.endswith(".json") else "TOML"
        raise InputError(f"the prices file is not valid {kind}: {exc}", path=where, hint=_EXAMPLE) from exc
    try:
        table = PriceTable.model_validate(data)
    except ValidationError as exc:
        lines = [f"{_field(e['loc']) or 'the file'} {_problem(e)}" for e in exc.errors()]
        raise InputError(
            "the prices file is wrong: " + "; ".join(lines),
            path=where,
            hint="prices are numbers >= 0 per million tokens, one currency for all: " + _EXAMPLE,
        ) from exc
    return Prices(table=table, path=where)


def price_usage(usage: Usage, prices: Prices) -> Usage:
    """`usage` with each model's cost by `prices` (a model they do not list: unknown cost)."""
    parts = [m.model_copy(update={"cost": prices.cost(m)}) for m in usage.by_model]
    priced = combine_usage(parts, currency=prices.currency)
    assert priced is not None  # a Usage has at least one model
    return priced


def price_result(result: TestResult, prices: Prices) -> TestResult:
    """`result` with its usage priced (unchanged when it has none)."""
    if result.usage is None:
        return result
    return result.model_copy(update={"usage": price_usage(result.usage, prices)})


def price_report(report: RunReport, prices: Prices) -> RunReport:
    """The report with every result's cost by `prices`, and the run's in its summary (a stored run, after the
    fact: `sredrill runs show --prices FILE`)."""
    results = [price_result(r, prices) for r in report.results]
    summary = report.summary.model_copy(update={"usage": run_usage(results)})
    return report.model_copy(update={"results": results, "summary": summary})


def price_summary(summary: Summary, prices: Prices) -> Summary:
    """The summary with the run's tokens priced by `prices`, its results unread (a stored run's row in a list)."""
    if summary.usage is None:
        return summary
    return summary.model_copy(update={"usage": price_usage(summary.usage, prices)})


def price_comparison(cmp: RunComparison, prices: Prices) -> RunComparison:
    """The comparison with both runs' tokens priced by `prices` (`sredrill runs compare --prices FILE`)."""
    if cmp.usage is None:
        return cmp
    a, b = (price_usage(u, prices) if u is not None else None for u in (cmp.usage.usage_a, cmp.usage.usage_b))
    return cmp.model_copy(update={"usage": usage_change(a, b)})


def unpriced_warnings(usage: Usage | None, prices_path: str) -> list[str]:
    """One warning per model of a priced `usage` that the prices file lacks, and one for tokens no model named."""
    if usage is None or usage.currency is None:
        return []
    warnings = []
    for part in usage.by_model:
        if part.cost is not None:
            continue
        if part.model is None:
            warnings.append(
                f"{part.total_tokens} token(s) name no model, so their cost is unknown: have the agent set "
                "gen_ai.request.model on its LLM spans"
            )
        else:
            warnings.append(
                f"no price for model {part.model!r} ({part.total_tokens} token(s)), so their cost is unknown: add "
                f'[models."{part.model}"] with input = … and output = … (per million tokens) to {prices_path}'
            )
    return warnings
