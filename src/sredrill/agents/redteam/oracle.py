"""The label-oracle stuffer: told the true failure modes, it stuffs everything else a grader might count.

It is an oracle by construction: the harness gives it the answer (`redteam:stuffer=MODE+MODE`, a spec only
`sredrill audit` writes, one per group of scenarios sharing their modes), never through the task. It calls
every tool with every target earlier results named, cites up to the limits (3 per claim, 8 items in all: the
top item of each tool, then the most anomalous series) with facts that hold, rules out every other mode citing
an item, names every resource it saw as the location and writes every vocabulary word in every field. A
grading it passes on difficulty ≥ 2 rewards the label and the stuffing, not an investigation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sredrill.agents.protocol import AgentReply, Task
from sredrill.diagnosis import Claim, Diagnosis
from sredrill.trajectory import Recorder

from .notebook import investigate
from .words import packs_vocabulary, spaced, task_domain, vocabulary_words
from .writing import cited_claims, finish, ruled_out_citing

__all__ = ["EVERY_TARGET", "StufferAgent"]

EVERY_TARGET = 25
"""The most values a stuffer tries per required argument (every metric of a fleet, every pod)."""


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
        claims: list[Claim] = cited_claims(ranked, text=lambda _: soup)
        others = [m for m in vocabulary.names if m not in self.modes and m != "unknown"]
        rest = ranked[len({c.item for claim in claims for c in claim.citations}) :] or ranked
        words = " and ".join(spaced(m) for m in self.modes)
        diagnosis = Diagnosis(
            root_cause=f"The root cause is {words}. {soup}",
            category=vocabulary.category_of(self.modes[0]) if self.modes else None,
            failure_modes=list(self.modes),
            causal_chain=[f"{words}: {soup}"],
            claims=claims,
            ruled_out=ruled_out_citing(others, rest, lambda m: f"not {spaced(m)}: {soup}"),
            location=notebook.resources(),
            report=soup,
        )
        return finish(diagnosis, recorder)
