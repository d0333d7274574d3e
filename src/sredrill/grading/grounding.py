"""Grounded claims: a diagnosis's citations checked against what the harness served this agent (DESIGN §11.2).

`ground` reads every citation of a diagnosis once and says: which are invalid (an item never served in this
run, a fact the served points contradict, more than `MAX_CITATIONS_PER_CLAIM` in a claim, more than
`MAX_CITED_ITEMS` in all, a malformed citation), which expected failure modes a supporting claim backs with a
decisive item whose fact holds, which ruled-out hypotheses a cited item refutes, and how many claims cite
nothing. The checks of `grader.Grader` turn that into outcomes; nothing here reads text for keywords.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sredrill.diagnosis import (
    ITEM_ID,
    MAX_CITATIONS_PER_CLAIM,
    MAX_CITED_ITEMS,
    Citation,
    Diagnosis,
    FactKind,
    parse_citation,
)
from sredrill.evidence.items import ServedItem
from sredrill.grading.facts import check_fact
from sredrill.scenarios import AnswerKey, Vocabulary, normalize_name
from sredrill.scenarios.answer import ItemSelector

__all__ = ["Grounding", "ground", "hypothesis_name", "selector_matches"]


@dataclass(frozen=True, slots=True)
class Grounding:
    """What a diagnosis's citations establish."""

    problems: tuple[str, ...]
    """One phrase per invalid citation (`claims[1]: metric-… was never served in this run`), in order."""
    supported: frozenset[str]
    """Expected failure modes that a claim supporting them backs with a decisive item whose fact holds."""
    refuted: frozenset[str]
    """The key's `ruled_out` hypotheses that a ruled-out entry dismisses with an item whose fact refutes it."""
    claims: int
    """Claims in the diagnosis."""
    uncited: int
    """Claims that cite no evidence item (a source name is not an item): the hallucination count."""
    cited_items: frozenset[str]
    """Every item id cited by a claim or a ruled-out entry."""
    valid: Mapping[str, tuple[Citation, ...]]
    """Per cited item id, the citations of it whose fact holds (what decisive and refuting checks read)."""


def selector_matches(selector: ItemSelector, item: ServedItem) -> bool:
    return selector.matches(item.kind, item.source, item.identity)


def ground(
    diagnosis: Diagnosis | None,
    answer: AnswerKey,
    served: Mapping[str, ServedItem],
    vocabulary: Vocabulary,
    expected_modes: frozenset[str],
) -> Grounding:
    """Check every citation of `diagnosis` against the items `served` this run (see the module docstring)."""
    if diagnosis is None:
        return Grounding((), frozenset(), frozenset(), 0, 0, frozenset(), {})
    problems: list[str] = []
    holding: list[tuple[int, Citation]] = []  # (claim index, citation), -1 for a ruled-out entry's
    cited_by_claims: dict[str, None] = {}

    def read(where: str, entries: Iterable[Citation | str], claim: int) -> list[Citation]:
        good: list[Citation] = []
        citations = [_citation(e) for e in entries]
        items = [c for c in citations if c is not None]
        if len(items) > MAX_CITATIONS_PER_CLAIM:
            problems.append(f"{where} cites {len(items)} items; at most {MAX_CITATIONS_PER_CLAIM} per entry")
            return []
        for c in citations:
            if isinstance(c, str):
                problems.append(f"{where}: {c}")
                continue
            if c is None:
                continue
            item = served.get(c.item)
            if item is None:
                problems.append(f"{where}: {c.item} was never served in this run (cite ids from tool results)")
                continue
            if claim >= 0:
                cited_by_claims[c.item] = None
            why = check_fact(c, item)
            if why is not None:
                problems.append(f"{where}: {c.describe()}: {why}")
                continue
            good.append(c)
            holding.append((claim, c))
        return good

    claim_support: list[tuple[frozenset[str], list[Citation]]] = []
    uncited = 0
    predicted = _modes(diagnosis.failure_modes, vocabulary)
    for i, claim in enumerate(diagnosis.claims):
        good = read(f"claims[{i}]", claim.evidence, i)
        if not any(_citation(e) for e in claim.evidence):
            uncited += 1
        supports = _modes(claim.supports, vocabulary) if claim.supports else predicted
        claim_support.append((supports, good))
    if len(cited_by_claims) > MAX_CITED_ITEMS:
        problems.append(f"the claims cite {len(cited_by_claims)} distinct items; at most {MAX_CITED_ITEMS} in all")
        claim_support = []

    supported: set[str] = set()
    for mode in expected_modes & predicted:
        selectors = answer.decisive.get(mode)
        for supports, good in claim_support:
            if mode in supports and any(_decisive(c, served[c.item], selectors) for c in good):
                supported.add(mode)
                break

    refuted: set[str] = set()
    dismissed: set[str] = set()
    for j, entry in enumerate(diagnosis.ruled_out):
        good = read(f"ruled_out[{j}]", entry.evidence, -1)
        hypothesis = hypothesis_name(entry.hypothesis, vocabulary)
        # One entry per hypothesis: dismissing it again and again with other items is a shotgun, not a reason.
        first = hypothesis not in dismissed
        dismissed.add(hypothesis)
        if (
            first
            and hypothesis in answer.ruled_out
            and any(_decisive(c, served[c.item], answer.refuting.get(hypothesis)) for c in good)
        ):
            refuted.add(hypothesis)

    valid: dict[str, list[Citation]] = {}
    for _, c in holding:
        valid.setdefault(c.item, []).append(c)
    return Grounding(
        problems=tuple(problems),
        supported=frozenset(supported),
        refuted=frozenset(refuted),
        claims=len(diagnosis.claims),
        uncited=uncited,
        cited_items=frozenset(
            c.item
            for e in (*diagnosis.claims, *diagnosis.ruled_out)
            for c in e.citations  # type: ignore[attr-defined]
        ),
        valid={k: tuple(v) for k, v in valid.items()},
    )


def _citation(entry: Citation | str) -> Citation | str | None:
    """A citation; a malformed one's problem as text; None for a source name (not an item citation)."""
    if isinstance(entry, Citation):
        return entry
    text = entry.strip()
    if not text.split() or not ITEM_ID.match(text.split()[0]):
        return None
    try:
        return parse_citation(text)
    except ValueError as e:
        return str(e)


SUSTAINED = 3
"""Served points a level (`above` / `below` a series) must hold over to back or refute a mode, as a trend
needs: one sample over a bound is a blip, not the state of the system."""


def _decisive(citation: Citation, item: ServedItem, selectors: list[ItemSelector] | None) -> bool:
    """True when the citation (whose fact holds) is of an item the selectors name, stating a fact they accept.

    Without selectors (a key that names none for this mode or hypothesis) any holding fact counts.
    """
    if not selectors:
        return True
    if not _sustained(citation, item):
        return False
    return any(selector_matches(s, item) and s.accepts(citation) and _reaches(s, citation, item) for s in selectors)


def _reaches(selector: ItemSelector, citation: Citation, item: ServedItem) -> bool:
    """A level about a selector's `during` window was served some point of it (else it states nothing there)."""
    if selector.during is None or citation.fact not in (FactKind.ABOVE, FactKind.BELOW) or not item.series:
        return True
    start, end = selector.during
    return any(t is not None and start <= t <= end for t, _ in item.points)


def _sustained(citation: Citation, item: ServedItem) -> bool:
    """A level on a series holds over at least `SUSTAINED` served points of its window (all, when fewer)."""
    if citation.fact not in (FactKind.ABOVE, FactKind.BELOW) or not item.series:
        return True
    start, end = citation.start, citation.end
    inside = [t for t, _ in item.points if t is None or ((start is None or t >= start) and (end is None or t <= end))]
    return len(inside) >= min(SUSTAINED, len(item.points))


def _modes(names: Iterable[str], vocabulary: Vocabulary) -> frozenset[str]:
    """The canonical failure modes `names` give, a set's name expanded to its modes (as the grader reads them)."""
    out: set[str] = set()
    for name in names:
        n = normalize_name(name)
        if n in vocabulary.sets:
            out.update(vocabulary.sets[n])
        elif vocabulary.is_failure_mode(n):
            out.add(vocabulary.resolve(n))
    return frozenset(out)


def hypothesis_name(name: str, vocabulary: Vocabulary) -> str:
    """A ruled-out entry's hypothesis as the answer key names it: a failure mode's canonical name, else the name
    normalised (a category, `infrastructure`)."""
    n = normalize_name(name)
    return vocabulary.resolve(n) if vocabulary.is_failure_mode(n) else n
