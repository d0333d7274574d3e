"""The correct diagnosis of a scenario, grounded in what a run served, for tests that need one that passes.

Built here from the answer key (never in library code or an agent): a claim per expected failure mode citing a
decisive item the run served with a fact that holds and that the key accepts, a claim citing an item of each
required source no such claim covers, a ruled-out entry per hypothesis the key expects dismissed citing a
refuting item, the ruling-out keywords in those entries, and the key's first location name. The items come
from the tool results themselves (the ids they carry), as an agent would read them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from sredrill.diagnosis import ITEM_ID, Citation, Claim, Diagnosis, FactKind, RuledOut, parse_diagnosis_text
from sredrill.evidence import RcaToolset
from sredrill.evidence.items import ServedItem
from sredrill.evidence.serving import server_factory
from sredrill.grading.facts import check_fact
from sredrill.scenarios import Scenario, Vocabulary, get_domain
from sredrill.scenarios.answer import ItemSelector

__all__ = ["grounded_diagnosis", "ids_in", "metrics_named", "served_by", "served_in"]


def ids_in(result: Any) -> set[str]:
    """Every item id a tool result (or any JSON holding results) names: its `"id"` fields and `"ids"` lists."""
    found: set[str] = set()
    if isinstance(result, dict):
        for key, value in result.items():
            if key == "id" and isinstance(value, str) and ITEM_ID.match(value):
                found.add(value)
            elif key == "ids" and isinstance(value, list):
                found |= {v for v in value if isinstance(v, str) and ITEM_ID.match(v)}
            else:
                found |= ids_in(value)
    elif isinstance(result, list):
        for value in result:
            found |= ids_in(value)
    return found


def served_in(scenario: Scenario, results: Iterable[Any]) -> dict[str, ServedItem]:
    """The scenario's items that these tool results named, with all their points (right for a run without a
    clock, whose results serve every point of what they name)."""
    named = set().union(*(ids_in(r) for r in results))
    items = server_factory(get_domain(scenario.domain))(scenario).items()
    return {i.id: i for i in items if i.id in named}


def metrics_named(scenario: Scenario) -> list[str]:
    """The metrics the key's decisive and refuting selectors name (what a run must query to cite them)."""
    key = scenario.answer
    selectors = [s for group in (*key.decisive.values(), *key.refuting.values()) for s in group]
    return list(dict.fromkeys(s.fields["metric"] for s in selectors if "metric" in s.fields))


def served_by(
    scenario: Scenario, calls: Iterable[tuple[str, dict[str, Any]]], vocabulary: Vocabulary, mode: str = "full"
) -> dict[str, ServedItem]:
    """What a real toolset serves for these calls (the ids and points the harness would hand an agent)."""
    tools = RcaToolset(scenario, mode, vocabulary=vocabulary)
    for name, args in calls:
        asyncio.run(tools.call(name, args))
    return tools.served_items()


def _windows(item: ServedItem) -> list[tuple[Any, Any]]:
    """The whole item, then every later start to its end (a change that comes after a steady stretch)."""
    times = [t for t, _ in item.points if t is not None]
    return [(None, None)] + [(t, None) for t in times[1:-2]]


def _candidates(fact: FactKind, item: ServedItem, selector: ItemSelector | None) -> list[Citation]:
    values = [v for _, v in item.points]
    if fact in (FactKind.ABOVE, FactKind.BELOW):
        if not values:
            return []
        bound = selector.above if selector and fact == FactKind.ABOVE else selector.below if selector else None
        loose = min(values) - 0.5 if fact == FactKind.ABOVE else max(values) + 0.5
        value = bound if bound is not None else loose
        return [Citation(item=item.id, fact=fact, value=value, start=s, end=e) for s, e in _windows(item)]
    if fact in (FactKind.RISING, FactKind.FALLING, FactKind.FLAT):
        return [Citation(item=item.id, fact=fact, start=s, end=e) for s, e in _windows(item)]
    return [Citation(item=item.id, fact=fact)]


def citation_of(item: ServedItem, selector: ItemSelector | None = None) -> Citation | None:
    """A citation of the item stating a fact that holds on its served points and that the selector accepts."""
    facts = selector.shows if selector and selector.shows else [FactKind.PRESENT]
    for fact in facts:
        for c in _candidates(fact, item, selector):
            if check_fact(c, item) is None and (selector is None or selector.accepts(c)):
                return c
    return None


def cite(selectors: list[ItemSelector], served: Mapping[str, ServedItem], prefer: Iterable[str] = ()) -> list[Citation]:
    """One holding citation of the first served item a selector names (any served item when there are no
    selectors, of a preferred source first)."""
    if not selectors:
        ranked = sorted(served.values(), key=lambda i: (i.source not in set(prefer), i.id))
        return [c for c in (citation_of(i) for i in ranked[:1]) if c is not None]
    for selector in selectors:
        for item in served.values():
            if selector.matches(item.kind, item.source, item.identity) and (c := citation_of(item, selector)):
                return [c]
    return []


def grounded_diagnosis(scenario: Scenario, served: Mapping[str, ServedItem]) -> Diagnosis:
    """The key's correct diagnosis, citing the items `served` holds (as `served_in` or a toolset gives them)."""
    key = scenario.answer
    reference = parse_diagnosis_text(key.model_response)
    assert reference is not None, f"{scenario.folder}: the reference answer does not parse"
    sources = [str(s) for s in key.required_evidence_sources]
    claims = [
        Claim(text=f"the evidence of {mode}", evidence=list(cite(key.decisive.get(mode, []), served, sources)),
              supports=[mode])
        for mode in scenario.failure_modes
    ]  # fmt: skip
    cited = {served[c.item].source for claim in claims for c in claim.citations}
    for source in sources:
        if source not in cited:
            of_source = {k: i for k, i in served.items() if i.source == source}
            evidence: list[Citation | str] = [*cite([], of_source)] or [source]  # a source name, for compat keys
            claims.append(Claim(text=f"what {source} shows", evidence=evidence))
    keywords = " ".join(key.ruling_out_keywords or ())
    ruled_out = [
        RuledOut(hypothesis=h, reason=f"the evidence refutes it {keywords}".strip(),
                 evidence=list(cite(key.refuting.get(h, []), served)))
        for h in key.ruled_out
    ]  # fmt: skip
    if keywords and not ruled_out:
        ruled_out.append(RuledOut(hypothesis="the other causes", reason=keywords))
    return reference.model_copy(
        update={
            "failure_modes": list(scenario.failure_modes),
            "claims": [*claims, *reference.claims],
            "ruled_out": ruled_out,
            "location": list(key.location[:1]),
        }
    )
