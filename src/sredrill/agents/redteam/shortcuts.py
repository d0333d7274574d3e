"""Two shortcuts a grading must not reward: the alert's words alone, and the most anomalous number.

- `AlertOnlyAgent`: maps the alert's words to a failure mode (as the keyword baseline does, over every text of
  the alert), calls each tool once, cites the first item of each result as present, and names the resource the
  alert and the evidence both name.
- `ZScoreAgent`: a statistical shortcut. Each served series gets z = |peak − mean of its first third| / the
  first third's standard deviation; a record with a count (a Kubernetes event's) gets its count's z against
  the others of its kind. The top item whose signal name (a metric, an event reason) shares words with a mode's
  names decides; it is cited with its true trend beside the next two items of that mode, and its resource is
  the location. The vocabulary is its only table: no domain's or scenario's names are written here.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean, pstdev
from typing import Any

from sredrill.agents.protocol import AgentReply, Task
from sredrill.diagnosis import Citation
from sredrill.scenarios import Vocabulary
from sredrill.trajectory import Recorder

from .notebook import Notebook, Seen, investigate
from .words import best_mode, packs_vocabulary, task_domain
from .writing import cited_diagnosis, finish

__all__ = ["AlertOnlyAgent", "ZScoreAgent", "signal_mode"]


def _signal(seen: Seen) -> str:
    """The name of the signal an item measures: a series' metric, a record's reason, else its kind."""
    for key in ("metric_name", "reason"):
        value = seen.fields.get(key)
        if isinstance(value, str) and value:
            return value
    return seen.kind


def signal_mode(seen: Seen, vocabulary: Vocabulary) -> str | None:
    """The failure mode whose names share the most words with the item's signal name (`ReplicaLag`: replica,
    lag), or None when none does: the vocabulary is the only table."""
    mode, score = best_mode(_signal(seen), vocabulary, exclude=("unknown", "healthy"))
    return mode if score else None


def _count(seen: Seen) -> float | None:
    value = seen.fields.get("count")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _scores(notebook: Notebook) -> dict[str, float]:
    """Item id -> z: a series' anomaly, or a counted record's count against the others of its kind."""
    out = {s.id: s.anomaly() for s in notebook.in_order() if s.series}
    by_kind: dict[str, list[Seen]] = {}
    for s in notebook.in_order():
        if not s.series and _count(s) is not None:
            by_kind.setdefault(s.kind, []).append(s)
    for group in by_kind.values():
        counts = [c for s in group if (c := _count(s)) is not None]
        mean, spread = fmean(counts), pstdev(counts)
        for s in group:
            count = _count(s)
            if count is not None:
                out[s.id] = (count - mean) / spread if spread > 0 else 0.0
    return out


class ZScoreAgent:
    """The mode of the most anomalous signal, cited with true facts, located at its resource."""

    __slots__ = ("packs", "spec")

    def __init__(self, *, packs: Sequence[Any] = (), spec: str = "redteam:zscore") -> None:
        self.packs = tuple(packs)
        self.spec = spec

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        vocabulary = packs_vocabulary(self.packs, task_domain(t.name for t in task.tools))
        notebook = await investigate(task, targets=EVERY_SERIES)
        scores = _scores(notebook)
        ranked = sorted((notebook.items[i] for i in scores), key=lambda s: -scores[s.id])
        mapped = [(s, m) for s in ranked if (m := signal_mode(s, vocabulary))]
        if not mapped:
            diagnosis = cited_diagnosis(
                "Z-score shortcut", ["healthy"], vocabulary, notebook.ranked()[:3],
                location=notebook.likely_location(), why="No signal of a known mode stands out.",
            )  # fmt: skip
            return finish(diagnosis, recorder)
        top, mode = mapped[0]
        same = [s for s, m in mapped if m == mode][:3]
        location = top.resources()[:1] or notebook.likely_location()
        why = ", ".join(f"{s.label()} z={scores[s.id]:.1f}" for s in same)
        diagnosis = cited_diagnosis("Z-score shortcut", [mode], vocabulary, same, location=location, why=why)
        return finish(diagnosis, recorder)


EVERY_SERIES = 40
"""The most metric names (or other targets) the z-score agent queries one by one."""


class AlertOnlyAgent:
    """The mode the alert's words name, one call per tool, the first item of each result cited as present."""

    __slots__ = ("packs", "spec")

    def __init__(self, *, packs: Sequence[Any] = (), spec: str = "redteam:alert-only") -> None:
        self.packs = tuple(packs)
        self.spec = spec

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        vocabulary = packs_vocabulary(self.packs, task_domain(t.name for t in task.tools))
        notebook = await investigate(task, targets=1)
        mode, score = best_mode(notebook.alert_text(), vocabulary)
        diagnosis = cited_diagnosis(
            "Alert-only shortcut", [mode], vocabulary, notebook.firsts(), location=notebook.likely_location(),
            why=f"{score} word(s) of the alert name {mode}.", cite=lambda s: Citation(item=s.id),
        )  # fmt: skip
        return finish(diagnosis, recorder)
