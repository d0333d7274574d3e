"""Writing a shortcut's diagnosis with the full citation protocol: claims citing items with facts that hold,
within the limits (3 per claim, 8 distinct items in all), ruled-out modes each citing an item, a location.

Whatever fails such a diagnosis is the grading's judgement of what it concluded, not a sloppy citation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sredrill.agents.protocol import AgentReply
from sredrill.agents.reply import reply_from_diagnosis
from sredrill.diagnosis import MAX_CITATIONS_PER_CLAIM, MAX_CITED_ITEMS, Category, Citation, Claim, Diagnosis
from sredrill.scenarios import Vocabulary
from sredrill.trajectory import Recorder, ResponseStep

from .notebook import Seen
from .words import spaced

__all__ = ["cited_claims", "cited_diagnosis", "finish"]


def _say(items: Sequence[Seen]) -> str:
    facts = ", ".join(f"{s.label()} ({s.citation().fact.value})" for s in items)
    return f"Served: {facts}."


def cited_claims(
    items: Sequence[Seen],
    *,
    text: Callable[[Sequence[Seen]], str] = _say,
    per_claim: int = MAX_CITATIONS_PER_CLAIM,
    total: int = MAX_CITED_ITEMS,
    supports: Sequence[str] = (),
    cite: Callable[[Seen], Citation] = Seen.citation,
) -> list[Claim]:
    """Claims citing the first `total` items, `per_claim` each, every citation a fact that holds on the points
    served (`cite`: the item's trend where it has one); `text` says what each claim states about its items."""
    chosen = list(dict.fromkeys(s.id for s in items))[:total]
    by_id = {s.id: s for s in items}
    out = []
    for i in range(0, len(chosen), per_claim):
        group = [by_id[ref] for ref in chosen[i : i + per_claim]]
        out.append(Claim(text=text(group), evidence=[cite(s) for s in group], supports=list(supports)))
    return out


def cited_diagnosis(
    who: str,
    modes: Sequence[str],
    vocabulary: Vocabulary,
    items: Sequence[Seen],
    *,
    location: Sequence[str] = (),
    why: str = "",
    cite: Callable[[Seen], Citation] = Seen.citation,
) -> Diagnosis:
    """A plain answer of `modes`, its claims citing `items` (the first 8, with holding facts)."""
    words = " and ".join(spaced(m) for m in modes)
    category = vocabulary.category_of(modes[0]) if modes and vocabulary.is_failure_mode(modes[0]) else None
    return Diagnosis(
        root_cause=f"{who}: {words}.",
        category=category if category is not None else Category.UNKNOWN,
        failure_modes=list(modes),
        claims=cited_claims(items, cite=cite),
        location=list(location),
        report=why,
    )


def finish(diagnosis: Diagnosis, recorder: Recorder) -> AgentReply:
    """Reply with the diagnosis; its text is the run's last response step."""
    reply = reply_from_diagnosis(diagnosis)
    recorder.add(ResponseStep(content=reply.output))
    return reply
