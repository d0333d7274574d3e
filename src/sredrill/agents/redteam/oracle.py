"""The label-oracle stuffer: told the true failure modes, it stuffs everything else a grader might count.

It is an oracle by construction: the harness gives it the answer (`redteam:stuffer=MODE+MODE`, a spec only
`sredrill audit` writes, one per group of scenarios sharing their modes), never through the task. It is as
strong as a cheap agent can be: it calls every tool with every target earlier results named; its claims cite
the 8 items whose words best match the true modes' names (then the top item of each tool, then the most
anomalous series), each with every strong fact that holds (a series' trend, `above` just under its peak and
`below` just over its trough at that moment, a single value bounded from both sides); it rules out every other
mode several times, each entry citing an item that mode's words point to; its location is where the matched
items are (nothing for a healthy answer); and it writes every vocabulary word in every field. A grading it
passes on difficulty ≥ 2 rewards the label and the stuffing, not an investigation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sredrill.agents.protocol import AgentReply, Task
from sredrill.diagnosis import MAX_CITED_ITEMS, Claim, Diagnosis, RuledOut
from sredrill.scenarios import Vocabulary
from sredrill.trajectory import Recorder

from .notebook import Notebook, Seen, investigate
from .words import mode_score, packs_vocabulary, spaced, task_domain, tokens, vocabulary_words
from .writing import finish

__all__ = ["EVERY_TARGET", "RULE_OUTS_PER_MODE", "StufferAgent", "by_words"]

EVERY_TARGET = 25
"""The most values a stuffer tries per required argument (every metric of a fleet, every pod)."""
RULE_OUTS_PER_MODE = 3
"""Ruled-out entries per other mode, each citing another item (nothing limits them but good sense)."""


def by_words(items: Sequence[Seen], modes: Sequence[str], vocabulary: Vocabulary) -> list[tuple[Seen, int]]:
    """The items with how many words of the modes' names their record holds, best first (ties keep the order
    given)."""
    scored = [(s, max((mode_score(tokens(f"{s.label()} {s.text}"), m, vocabulary) for m in modes), default=0))
              for s in items]  # fmt: skip
    return sorted(scored, key=lambda pair: -pair[1])


def _covering(scored: Sequence[tuple[Seen, int]], limit: int) -> list[tuple[Seen, int]]:
    """The first `limit` of the scored items, keeping the best of each tool among them (so every source the
    run read is cited), in the order given."""
    best = {s.tool: i for i, (s, _) in reversed(list(enumerate(scored)))}
    keep = set(sorted(best.values())[:limit])
    keep |= set([i for i in range(len(scored)) if i not in keep][: limit - len(keep)])
    return [pair for i, pair in enumerate(scored) if i in keep]


def _location(matched: Sequence[tuple[Seen, int]], notebook: Notebook) -> list[str]:
    """A cheap guess at where the fault is: of the resources the matched items name, one the alert names too
    (the longest: a replica's name holds its primary's), else the one they name most (weighted by their words),
    else the notebook's guess."""
    weights: Counter[str] = Counter()
    for s, score in matched:
        for r in dict.fromkeys(s.resources()):
            weights[r] += score
    named = {r: w for r, w in weights.items() if w}
    alert = notebook.alert_text()
    in_alert = sorted((r for r in named if r in alert), key=len, reverse=True)
    if in_alert:
        return in_alert[:1]
    return [max(named, key=lambda r: named[r])] if named else notebook.likely_location()


class StufferAgent:
    """Answers the modes it was given, with every tool called, every citation slot filled and every word."""

    __slots__ = ("modes", "packs", "spec")

    def __init__(self, modes: Sequence[str], *, packs: Sequence[Any] = (), spec: str = "redteam:stuffer") -> None:
        self.modes = tuple(modes)
        self.packs = tuple(packs)
        self.spec = spec

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        notebook = await investigate(task, targets=EVERY_TARGET)
        vocabulary = packs_vocabulary(self.packs, task_domain(t.name for t in task.tools))
        soup = vocabulary_words(vocabulary)
        ranked = notebook.spread()
        matched = _covering(by_words(ranked, self.modes, vocabulary), MAX_CITED_ITEMS)
        # One claim per item (up to 8 distinct in all), each citing that item's strongest facts.
        claims = [Claim(text=f"{s.label()}: {soup}", evidence=list(s.facts())) for s, _ in matched]
        others = [m for m in vocabulary.names if m not in self.modes and m != "unknown"]
        ruled_out = [
            RuledOut(hypothesis=m, reason=f"not {spaced(m)}: {soup}", evidence=list(s.facts()))
            for m in others
            for s, _ in by_words(ranked, [m], vocabulary)[:RULE_OUTS_PER_MODE]
        ]
        words = " and ".join(spaced(m) for m in self.modes)
        healthy = set(self.modes) <= {"healthy"}
        diagnosis = Diagnosis(
            root_cause=f"The root cause is {words}. {soup}",
            category=vocabulary.category_of(self.modes[0]) if self.modes else None,
            failure_modes=list(self.modes),
            causal_chain=[f"{words}: {soup}"],
            claims=claims,
            ruled_out=ruled_out,
            location=[] if healthy else _location(matched, notebook),
            report=soup,
        )
        return finish(diagnosis, recorder)
