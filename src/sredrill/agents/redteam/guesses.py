"""Answers that ignore the evidence they cite: one constant mode, and a fresh random mode each attempt.

Both call each tool once and cite the first item of each result with a fact that holds, so only the mode is a
guess. `sredrill audit` runs `ConstantAgent` once per mode of the vocabulary and reports the best, and
`GuesserAgent` with `--retries 5`: its headline is its first attempt (pass@1), whatever the retries forgive.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from sredrill.agents.protocol import AgentReply, Task
from sredrill.trajectory import Recorder

from .notebook import investigate
from .words import packs_vocabulary, task_domain
from .writing import cited_diagnosis, finish

__all__ = ["ConstantAgent", "GuesserAgent"]


class ConstantAgent:
    """The same failure mode for every alert, with what it saw cited."""

    __slots__ = ("mode", "packs", "spec")

    def __init__(self, mode: str, *, packs: Sequence[Any] = (), spec: str | None = None) -> None:
        self.mode = mode
        self.packs = tuple(packs)
        self.spec = spec or f"redteam:constant={mode}"

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        vocabulary = packs_vocabulary(self.packs, task_domain(t.name for t in task.tools))
        notebook = await investigate(task, targets=1)
        diagnosis = cited_diagnosis(
            "Constant answer", [self.mode], vocabulary, notebook.firsts(), location=notebook.likely_location(),
            why="The same answer for every alert.",
        )  # fmt: skip
        return finish(diagnosis, recorder)


class GuesserAgent:
    """A random failure mode each attempt (seeded): retried often enough, it hits the label."""

    __slots__ = ("_attempts", "packs", "seed", "spec")

    def __init__(self, seed: int = 0, *, packs: Sequence[Any] = (), spec: str = "redteam:guesser") -> None:
        self.seed = seed
        self.packs = tuple(packs)
        self.spec = spec
        # Per alert, how many times it was asked: a retry of the same scenario draws again. The agent object
        # lives for one run, so this is that run's state (attempts of one test run one after the other).
        self._attempts: dict[str, int] = {}

    def draw(self, task: Task) -> str:
        """This attempt's mode: seeded by the seed, the alert and the attempt number, so runs reproduce."""
        vocabulary = packs_vocabulary(self.packs, task_domain(t.name for t in task.tools))
        key = json.dumps(task.alert, sort_keys=True) + "\0" + task.prompt
        attempt = self._attempts.get(key, 0)
        self._attempts[key] = attempt + 1
        rng = random.Random(f"{self.seed}\0{key}\0{attempt}")
        return rng.choice([m for m in vocabulary.names if m != "unknown"])

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        mode = self.draw(task)
        vocabulary = packs_vocabulary(self.packs, task_domain(t.name for t in task.tools))
        notebook = await investigate(task, targets=1)
        diagnosis = cited_diagnosis(
            "Retry guesser", [mode], vocabulary, notebook.firsts(), location=notebook.likely_location(),
            why=f"A random draw (seed {self.seed}).",
        )  # fmt: skip
        return finish(diagnosis, recorder)
