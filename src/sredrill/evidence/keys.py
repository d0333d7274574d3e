"""Answer-key lint against the evidence: every `decisive` and `refuting` selector names an item the scenario has.

A selector (`scenarios.answer.ItemSelector`) that matches no item of the scenario can never be cited, so the
mode it backs could never count: lint reports it as an error, naming the selector and the items nearest to it.
A selector of a time series without `shows` accepts a bare `present` citation (true of any series served), so
it is a warning; so is one accepting `above` / `below` without the bound a citation must state (`above -1`
holds for any series), a bound on a fact it does not accept, or a bound no point of its items clears. The
checks that need no evidence (conflicts, a missing `location` or `decisive`) are the core's
(`scenarios.lint.answer_key_findings`); `key_findings` gives both.

A domain lists `selector_findings` among its lint rules (`Domain.lint`): the scenarios layer cannot build a
domain's server, this layer can (`server_factory`).

Examples:
    >>> from sredrill.scenarios import load_pack
    >>> pack = load_pack("rds_postgres")
    >>> [f.render() for s in pack.scenarios for f in key_findings(s)]
    []
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Sequence

from sredrill.diagnosis import FactKind
from sredrill.evidence.items import ServedItem
from sredrill.evidence.serving import server_factory
from sredrill.scenarios import Finding, Scenario, Vocabulary
from sredrill.scenarios.answer import ItemSelector
from sredrill.scenarios.domain import get_domain
from sredrill.scenarios.findings import error, warning
from sredrill.scenarios.lint import answer_key_findings

__all__ = ["describe_item", "key_findings", "near_items", "selector_findings"]

_NEAR = 5
_TEXT = 60


def key_findings(scenario: Scenario, vocabulary: Vocabulary | None = None) -> list[Finding]:
    """Every finding about a scenario's answer key: the core's (`answer_key_findings`), then the selectors'."""
    return [*answer_key_findings(scenario, vocabulary), *selector_findings(scenario, vocabulary)]


def selector_findings(scenario: Scenario, _: Vocabulary | None = None, /) -> Iterator[Finding]:
    """Each `decisive` / `refuting` selector against the scenario's items (a `LintRule`; see the module docstring)."""
    answer = scenario.answer
    tables = (("decisive", answer.decisive), ("refuting", answer.refuting))
    if not any(table for _, table in tables):
        return
    items = server_factory(get_domain(scenario.domain))(scenario).items()
    path = scenario.files["answer.yml"]
    for name, table in tables:
        for key, selectors in table.items():
            for j, selector in enumerate(selectors):
                field = f"{name}.{key}[{j}]"
                matched = [i for i in items if selector.matches(i.kind, i.source, i.identity)]
                if not matched:
                    yield error("key_selector", path, field, _unmatched(selector, items), _fix(selector, items))
                elif not selector.shows and any(i.series for i in matched):
                    yield warning(
                        "key_shows",
                        path,
                        field,
                        f"{selector.describe()} selects a time series but names no fact it shows, so citing it as "
                        "merely present (true of any series served) counts",
                        "add shows: [rising], [falling], [flat], [above] or [below], whichever the data shows",
                    )
                else:
                    yield from _bound_findings(selector, matched, path, field)


def _bound_findings(selector: ItemSelector, matched: Sequence[ServedItem], path: str, field: str) -> Iterator[Finding]:
    """`above` / `below` without the bound that makes them say something, a bound on a fact the selector does not
    accept (none is read: an empty `shows` accepts every fact), and a bound no point of the matched items clears
    (no citation of it could count)."""
    for fact, bound in ((FactKind.ABOVE, selector.above), (FactKind.BELOW, selector.below)):
        side = fact.value
        if fact in selector.shows and bound is None:
            yield warning(
                "key_bound",
                path,
                field,
                f"{selector.describe()} accepts '{side}' with no bound, so a citation of any value counts, "
                "however little it says (restarts above -1)",
                f"add {side}: V, the least a citation must assert for the fact to show the fault (e.g. "
                "above: 90 for CPU saturation), chosen so the data clears it",
            )
        elif bound is not None and selector.shows and fact not in selector.shows:
            yield warning(
                "key_bound",
                path,
                field,
                f"{selector.describe()} sets {side}: {bound:g} but its shows does not accept '{side}', so the bound "
                "is never read",
                f"add {side} to shows, or remove {side}: {bound:g}",
            )
        elif bound is not None and not any(_clears(i, fact, bound) for i in matched):
            values = [v for i in matched for _, v in i.points]
            reach = f" (its data reaches {max(values) if fact == FactKind.ABOVE else min(values):g})" if values else ""
            yield warning(
                "key_bound",
                path,
                field,
                f"{selector.describe()}: no point of the items it selects is {side} {bound:g}{reach}, so no citation "
                "of it can count",
                f"choose a bound the data clears ({side} what the fault's points show)",
            )


def _clears(item: ServedItem, fact: FactKind, bound: float) -> bool:
    return any(v > bound if fact == FactKind.ABOVE else v < bound for _, v in item.points)


def near_items(selector: ItemSelector, items: Sequence[ServedItem], n: int = _NEAR) -> list[ServedItem]:
    """The items most like what a selector names (same kind first, then by text similarity), best first."""
    fields = selector.fields
    want = " ".join(fields.values()).casefold()

    def score(item: ServedItem) -> tuple[bool, int, float]:
        full = {**item.identity, "kind": item.kind, "source": item.source}
        shared = [k for k in fields if k in full]
        have = " ".join(full[k] for k in shared).casefold()
        same_kind = "kind" not in fields or fields["kind"].casefold() == item.kind.casefold()
        return same_kind, len(shared), difflib.SequenceMatcher(None, want, have).ratio()

    return sorted(items, key=score, reverse=True)[:n]


def describe_item(item: ServedItem) -> str:
    """`kind field=value …`, long texts cut, for a finding."""
    parts = [f"{k}={_cut(v)}" for k, v in sorted(item.identity.items())]
    return f"{item.kind} " + " ".join(parts)


def _unmatched(selector: ItemSelector, items: Sequence[ServedItem]) -> str:
    known = _identity_fields(items)
    unknown = [k for k in selector.fields if k not in known]
    why = f"; no item has the field {', '.join(map(repr, unknown))} (fields: {', '.join(sorted(known))})"
    return f"{selector.describe()} selects no evidence item of this scenario" + (why if unknown else "")


def _fix(selector: ItemSelector, items: Sequence[ServedItem]) -> str:
    near = near_items(selector, items)
    listed = "\n    ".join(describe_item(i) for i in near)
    return (
        "name an item the scenario's evidence has (fields compared case-insensitively; text, message and "
        "statement as a substring)" + (f"; the nearest:\n    {listed}" if near else "; the scenario has no items")
    )


def _identity_fields(items: Iterable[ServedItem]) -> set[str]:
    return {"kind", "source", *(k for i in items for k in i.identity)}


def _cut(text: str) -> str:
    return text if len(text) <= _TEXT else text[: _TEXT - 1] + "…"
