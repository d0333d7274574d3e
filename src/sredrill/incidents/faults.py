"""A fault during one episode: its drawn magnitudes and timings, and its state (active, settling, fixed).

```
            fix                       settle steps pass
 active ───────────► settling ───────────────────────► fixed
   ▲  │ mitigation                                       │ relapse (unless prevented)
   │  ▼                                                   │
 suppressed (relief steps)                                ▼
                                                       active again (growth restarts)
 transient faults: active ──(ends steps)──► over
```
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping

from sredrill.incidents.actions import ActionKey
from sredrill.incidents.model import Fault, FloatRange, Impact, LogLine, Param, Reading, Stage
from sredrill.incidents.system import slot
from sredrill.incidents.vocabulary import LogLevel, Service, Signal

__all__ = ["CompiledImpact", "CompiledStage", "FaultState", "compile_impacts", "compile_stages"]

CompiledImpact = tuple[int, float, float, int, float | None]
"""(slot, add, per_step, after, cap) with the ranges drawn."""
CompiledStage = tuple[int, int, int]
"""(service index, status rank, after) with the offset drawn."""

_SERVICE_INDEX = {s: i for i, s in enumerate(Service)}
_NEVER = -(10**9)
# While a fix settles, symptoms are half as strong and no status is worse than degraded.
_SETTLING_FACTOR = 0.5


def compile_impacts(impacts: Iterable[Impact], rng: random.Random, *, shift: int = 0) -> list[CompiledImpact]:
    """Draw each impact's magnitudes and start; `shift` is added to every `after`."""
    return [
        (slot(i.service, i.metric), i.add.draw(rng), i.per_step.draw(rng), i.after.draw(rng) + shift, i.cap)
        for i in impacts
    ]


def compile_stages(stages: Iterable[Stage], rng: random.Random, *, shift: int = 0) -> list[CompiledStage]:
    """Draw each stage's start; `shift` is added to every `after`."""
    return [(_SERVICE_INDEX[s.service], s.status.rank, s.after.draw(rng) + shift) for s in stages]


class FaultState:
    """One fault's drawn values and live state; owned by one `Simulator`."""

    __slots__ = (
        "end",
        "first_onset",
        "fixed_at",
        "impacts",
        "lines",
        "origin",
        "paid",
        "prevented",
        "relapse_after",
        "relapse_at",
        "spec",
        "stages",
        "suppressed_until",
    )

    def __init__(
        self,
        spec: Fault,
        onset: int,
        end: int | None,
        impacts: list[CompiledImpact],
        stages: list[CompiledStage],
        lines: list[tuple[LogLine, float | None]],
        relapse_after: int | None,
    ) -> None:
        self.spec = spec
        self.first_onset = onset
        self.origin = onset
        """Where growth and stage offsets count from: the onset, or the step of the latest relapse."""
        self.end = end
        self.impacts = impacts
        self.stages = stages
        self.lines = lines
        self.relapse_after = relapse_after
        self.fixed_at: int | None = None
        self.relapse_at: int | None = None
        self.suppressed_until = _NEVER
        self.prevented = False
        self.paid = False

    @classmethod
    def draw(cls, spec: Fault, rng: random.Random) -> FaultState:
        """Draw everything the seed varies about this fault, in a fixed order."""
        onset = spec.onset.draw(rng)
        end = onset + spec.ends.draw(rng) if spec.ends is not None else None
        impacts = compile_impacts(spec.impacts, rng)
        stages = compile_stages(spec.stages, rng)
        lines = [(line, line.value.draw(rng) if isinstance(line.value, FloatRange) else None) for line in spec.logs]
        relapse_after = spec.relapse.after.draw(rng) if spec.relapse is not None else None
        return cls(spec, onset, end, impacts, stages, lines, relapse_after)

    # -- state ---------------------------------------------------------------------------------------

    def is_active(self, t: int) -> bool:
        """Started, not fixed, and (for a transient fault) not over: it still needs something done."""
        return self.fixed_at is None and self.origin <= t and (self.end is None or t < self.end)

    def is_settling(self, t: int) -> bool:
        """Time alone will change it: a fix settling, or a transient fault that will end."""
        if self.fixed_at is not None:
            return t < self.fixed_at + self.spec.settle
        return self.end is not None and self.origin <= t < self.end

    def is_resolved(self, t: int) -> bool:
        if self.fixed_at is not None:
            return t >= self.fixed_at + self.spec.settle
        return self.end is not None and t >= self.end

    def last_active(self, t: int) -> int | None:
        """The latest step (≤ t) the fault was active, or None if it has not begun."""
        if self.origin > t:
            return None
        if self.fixed_at is not None:
            return self.fixed_at - 1
        if self.end is not None and t >= self.end:
            return self.end - 1
        return t

    # -- transitions ---------------------------------------------------------------------------------

    def fix(self, effective: int) -> bool:
        """Fixed from step `effective`; returns True the first time (a fix is paid once per fault)."""
        self.fixed_at = effective
        self.suppressed_until = _NEVER
        if self.relapse_after is not None and not self.prevented:
            self.relapse_at = effective + self.relapse_after
        first = not self.paid
        self.paid = True
        return first

    def prevents(self, key: ActionKey, params: Mapping[str, int]) -> bool:
        """True when the action rules out this fault's relapse (and had not been done already)."""
        relapse = self.spec.relapse
        return relapse is not None and not self.prevented and any(m.matches(key, params) for m in relapse.unless)

    def reactivate(self, t: int) -> None:
        """The fault relapses at step `t`: active again, its growth counted from `t`."""
        self.fixed_at = None
        self.relapse_at = None
        self.origin = t

    def worsen(self, impacts: list[CompiledImpact], stages: list[CompiledStage], *, now: int) -> None:
        """Add (drawn) impacts and statuses from step `now` on, until the fault is fixed."""
        shift = now - self.origin
        self.impacts = [*self.impacts, *((i, a, p, after + shift, c) for i, a, p, after, c in impacts)]
        self.stages = [*self.stages, *((s, r, after + shift) for s, r, after in stages)]

    # -- effects -------------------------------------------------------------------------------------

    def contribute(self, t: int, row: list[float], ranks: list[int], touched: list[int]) -> None:
        """Add this fault's symptoms at step `t` to a telemetry row and the service status ranks."""
        if self.fixed_at is None:
            if t < self.origin or t < self.suppressed_until or (self.end is not None and t >= self.end):
                return
            factor = 1.0
            ref = t - self.origin
        elif t < self.fixed_at + self.spec.settle:
            factor = _SETTLING_FACTOR
            ref = self.fixed_at - 1 - self.origin
        else:
            return
        for i, add, per_step, after, cap in self.impacts:
            d = ref - after
            if d >= 0:
                v = add + per_step * d
                if cap is not None and v > cap:
                    v = cap
                row[i] += v * factor
                touched.append(i)
        for s, rank, after in self.stages:
            if ref >= after:
                r = rank if factor == 1.0 else min(rank, 1)
                if r > ranks[s]:
                    ranks[s] = r

    def log_records(
        self, service: Service, t: int, params: Mapping[str, int], row_at: Callable[[int], list[float]]
    ) -> list[tuple[int, LogLevel, Signal, str, float | None]]:
        """The records this fault has made `service` write by step `t`: (step, level, signal, message, value)."""
        latest = self.last_active(t)
        if latest is None:
            return []
        out = []
        for line, drawn in self.lines:
            if line.service != service:
                continue
            if line.once:
                step = self.first_onset - line.lead
            elif latest - self.origin >= line.after:
                step = latest
            else:
                continue
            if step > t:
                continue
            value: float | None
            if isinstance(line.value, Param):
                value = float(params[line.value.name])
            elif isinstance(line.value, Reading):
                value = round(row_at(step)[slot(service, line.value.metric)], 1)
            else:
                value = None if drawn is None else round(drawn, 1)
            message = line.message.format(value=value) if value is not None else line.message
            out.append((step, line.level, line.signal, message, value))
        return out
