"""The answer keys of every built-in pack can be passed from the evidence: each `decisive` and `refuting` selector
names an item of its scenario, and a fact it accepts (`shows`) holds on that item's data, as a `full` investigation
would be served it; every fault has a location the evidence names, every expected mode its decisive items, every
ruled-out hypothesis its refuting ones.

Generic over the built-in packs (`builtin_pack_names`): a pack added later is covered without a change here. Facts
are checked by the grader's own rules (`grading.facts.check_fact`) on the items of the domain's server
(`DomainServer.items()`: every item with all its points). A selector accepting `above` or `below` must set the bound
a citation has to state (`above: 90`): without one, "CPU above -1" would count. The bound must be met by the data,
over a sustained stretch: `SUSTAINED` consecutive points of a matched item all clear it (every point, for an item
with fewer), as a citation of that window stating the bound itself would be checked.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from sredrill.diagnosis import Citation, FactKind
from sredrill.evidence.items import ServedItem
from sredrill.evidence.serving import server_factory
from sredrill.grading.facts import check_fact
from sredrill.results import GradingMode
from sredrill.scenarios import Pack, Scenario, builtin_pack_names, load_pack
from sredrill.scenarios.answer import ItemSelector
from sredrill.scenarios.domain import get_domain

PACKS = builtin_pack_names()


@pytest.fixture(scope="module", params=PACKS)
def pack(request: pytest.FixtureRequest) -> Pack:
    loaded = load_pack(request.param)
    assert not loaded.errors, [e.message for e in loaded.errors]
    return loaded


def items_of(scenario: Scenario) -> tuple[ServedItem, ...]:
    return server_factory(get_domain(scenario.domain))(scenario).items()


SUSTAINED = 3
"""Consecutive points a bound must hold over (what a trend needs too): one sample over the line may be noise."""


def windows(item: ServedItem) -> list[tuple[datetime | None, datetime | None]]:
    """Every stretch of `SUSTAINED` consecutive points of a dated series; the whole item otherwise."""
    times = [t for t, _ in item.points if t is not None]
    if len(times) < SUSTAINED:
        return [(None, None)]
    return [(times[i], times[i + SUSTAINED - 1]) for i in range(len(times) - SUSTAINED + 1)]


def citations(selector: ItemSelector, fact: FactKind, item: ServedItem) -> list[Citation]:
    """The citations of `item` stating `fact` that the selector would accept: for `above`/`below`, its bound over
    each sustained window or over the selector's `during` (none without a bound:
    `test_every_level_selector_sets_its_bound` reports that)."""
    if fact not in (FactKind.ABOVE, FactKind.BELOW):
        return [Citation(item=item.id, fact=fact)]
    bound = selector.above if fact == FactKind.ABOVE else selector.below
    if bound is None:
        return []
    spans = [selector.during] if selector.during is not None else windows(item)  # a `during` level: over it
    return [Citation(item=item.id, fact=fact, value=bound, start=s, end=e) for s, e in spans]


def holding(selector: ItemSelector, item: ServedItem) -> list[FactKind]:
    """The facts the selector accepts that hold on the item's full data (`present` when it names none)."""
    return [
        fact
        for fact in selector.shows or [FactKind.PRESENT]
        if any(check_fact(c, item) is None and selector.accepts(c) for c in citations(selector, fact, item))
    ]


def selectors(scenario: Scenario) -> list[tuple[str, ItemSelector]]:
    a = scenario.answer
    return [
        (f"{table}.{key}[{j}]", s)
        for table, entries in (("decisive", a.decisive), ("refuting", a.refuting))
        for key, found in entries.items()
        for j, s in enumerate(found)
    ]


def test_there_are_built_in_packs_with_keys() -> None:
    assert "rds_postgres" in PACKS
    rds = load_pack("rds_postgres")
    assert all(selectors(s) for s in rds.scenarios)


def test_every_selector_matches_an_item_on_which_a_fact_it_accepts_holds(pack: Pack) -> None:
    bad = []
    for scenario in pack.scenarios:
        items = items_of(scenario)
        for where, selector in selectors(scenario):
            matched = [i for i in items if selector.matches(i.kind, i.source, i.identity)]
            if not matched:
                bad.append(f"{scenario.folder}: {where}: {selector.describe()} matches no item")
            elif not any(holding(selector, i) for i in matched):
                bad.append(
                    f"{scenario.folder}: {where}: {selector.describe()}: no fact it accepts holds on "
                    + ", ".join(i.id for i in matched)
                )
    assert not bad, "\n".join(bad)


def test_every_level_selector_sets_its_bound(pack: Pack) -> None:
    bad = [
        f"{scenario.folder}: {where}: {selector.describe()} accepts {fact.value} with no {fact.value}: bound"
        for scenario in pack.scenarios
        for where, selector in selectors(scenario)
        for fact, bound in ((FactKind.ABOVE, selector.above), (FactKind.BELOW, selector.below))
        if fact in selector.shows and bound is None
    ]
    assert not bad, "\n".join(bad)


def test_every_key_is_in_the_sredrill_format_and_complete(pack: Pack) -> None:
    bad = []
    for scenario in pack.scenarios:
        a, where = scenario.answer, scenario.folder
        if scenario.grading is not GradingMode.SREDRILL:
            bad.append(f"{where}: graded in compat mode")
        assert not a.conflicts(), (where, a.conflicts())
        faulty = [m for m in a.expected_failure_modes if m != "healthy"]
        if faulty and not a.location:
            bad.append(f"{where}: no location")
        bad += [f"{where}: {m} has no decisive items" for m in a.expected_failure_modes if not a.decisive.get(m)]
        bad += [f"{where}: ruled-out {h} has no refuting items" for h in a.ruled_out if not a.refuting.get(h)]
    assert not bad, "\n".join(bad)


def test_every_location_is_named_by_the_evidence(pack: Pack) -> None:
    # A location no item names is one an agent could only guess (or read from the key).
    bad = []
    for scenario in pack.scenarios:
        named = " ".join(v.casefold() for i in items_of(scenario) for v in i.identity.values())
        bad += [f"{scenario.folder}: {loc}" for loc in scenario.answer.location if loc.casefold() not in named]
    assert not bad, "locations no evidence item names:\n" + "\n".join(bad)


def test_the_check_sees_a_fact_that_does_not_hold() -> None:
    # Guard for the test above: a falling selector on a rising series is caught.
    scenario = load_pack("rds_postgres").scenario("001-replication-lag")
    (lag,) = [i for i in items_of(scenario) if i.identity.get("metric") == "ReplicaLag"]
    assert holding(ItemSelector.model_validate({"metric": "ReplicaLag", "shows": ["falling"]}), lag) == []
    assert holding(ItemSelector.model_validate({"metric": "ReplicaLag", "shows": ["rising"]}), lag) == ["rising"]


def test_the_check_sees_a_bound_the_data_does_not_sustain_and_a_missing_one() -> None:
    # Lag on 001 climbs from about a second to about 16 minutes (959 s at the last point).
    scenario = load_pack("rds_postgres").scenario("001-replication-lag")
    (lag,) = [i for i in items_of(scenario) if i.identity.get("metric") == "ReplicaLag"]
    level = {"metric": "ReplicaLag", "shows": ["above"]}
    assert holding(ItemSelector.model_validate({**level, "above": 300}), lag) == ["above"]
    assert holding(ItemSelector.model_validate({**level, "above": 950}), lag) == []  # one point: not sustained
    assert holding(ItemSelector.model_validate(level), lag) == []  # no bound: nothing to check it against
    low = {"metric": "ReplicaLag", "shows": ["below"], "below": 2}
    assert holding(ItemSelector.model_validate(low), lag) == ["below"]  # the first minutes, before the backfill
