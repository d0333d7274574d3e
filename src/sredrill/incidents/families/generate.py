"""The generator: `family_task(family, seed)` draws one topology and one fault of the library at a random
compatible location, and resolves everything the simulator needs (effects per component, log records, the
fix, responses to wrong actions) into a frozen `FamilyTask`.

Everything is drawn from `random.Random(f"{family}:{seed}")`, never the global generator: same family and
seed, same task.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass, field, replace

from sredrill.errors import InputError, did_you_mean
from sredrill.incidents.families import library as lib
from sredrill.incidents.families.actions import ACTION_TYPES, TARGET_KINDS, action_schema
from sredrill.incidents.families.alerts import ALERT_RULES, NOISY, alert_names
from sredrill.incidents.families.library import FAULTS, FaultKind
from sredrill.incidents.families.splits import SEED_LIMIT
from sredrill.incidents.families.topology import FAMILY_TEMPLATES, Kind, Topology, draw_topology

__all__ = ["FAMILIES", "FamilyCause", "FamilyTask", "FaultPlan", "family_task", "max_components"]

FAMILIES: tuple[str, ...] = tuple(FAMILY_TEMPLATES)
"""Family ids: each names a kind of system, never a fault."""
HISTORY_STEPS = 6
"""Steps of telemetry before the first observation (what `inspect_metrics` shows from the start)."""


@dataclass(frozen=True, slots=True)
class FamilyCause:
    """The hidden ground truth of a family task: never in an observation, an inspection or a message."""

    kind: str
    """The fault kind's id (`library.FAULTS`)."""
    location: str
    """The component where the fault is (not always where its symptoms show)."""
    summary: str
    fix: tuple[str, str | None, int | None] | None
    """The root-cause fix `(action_type, target, minimum value)`; None for a false alarm (declare healthy)."""
    terms: tuple[str, ...] = ()
    """Words that would give the cause away."""

    @property
    def is_false_alarm(self) -> bool:
        """True when nothing is wrong (the right move is to verify and declare healthy)."""
        return self.fix is None


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """The fault resolved onto one topology: what the simulator plays (hidden from agents).

    Attributes:
        onset: the step the fault began (< 0: before the first observation).
        effects: (component, metric slot, add, per_step, level) drawn per seed; with `level` the metric is
            brought to `add` (plus `per_step` per step) whatever its resting value.
        logs: (component, event, level, value, peer, once_step): `value` a number or `reading:<metric>`;
            `once_step` the step a one-off record was written, None for a record written every visible step.
        fix: (action_type, target, minimum value) that fixes it; None when nothing needs fixing.
        responses: (action_type, target, effect, relief steps, below value) for wrong actions.
        settle: steps of recovery after the fix.
        affected: components whose signals are abnormal while the fault is active.
        replicas: per component, its replica count at rest (0 for kinds without replicas).
        spike: (component, metric slot, step) of the noisy alert of a false alarm, else None.
    """

    onset: int
    effects: tuple[tuple[int, int, float, float, bool], ...]
    logs: tuple[tuple[int, str, str, float | str | None, str | None, int | None], ...]
    fix: tuple[str, str, int | None] | None
    responses: tuple[tuple[str, str, str, int, int | None], ...]
    settle: int
    affected: frozenset[int]
    replicas: tuple[int, ...]
    spike: tuple[int, int, int] | None = None


@dataclass(frozen=True, slots=True)
class FamilyTask:
    """One generated incident: a topology and a hidden fault, frozen (the simulator never changes it)."""

    family: str
    seed: int
    difficulty: int
    """1 easy … 3 hard: 3 when the symptoms show away from the fault."""
    max_steps: int
    topology: Topology
    description: str
    """Symptom level: the system's components and wiring, never the cause."""
    cause: FamilyCause
    plan: FaultPlan = field(repr=False)
    max_reward: float = 16.0

    @property
    def task_id(self) -> str:
        """`<family>/<seed>`: says which episode, never what is wrong."""
        return f"{self.family}/{self.seed}"

    @property
    def components(self) -> tuple[str, ...]:
        """Component names in a fixed order: the targets of inspections and remediations."""
        return tuple(c.name for c in self.topology.components)

    @property
    def kinds(self) -> dict[str, str]:
        """Component name -> its kind (`api`, `worker`, `queue`, `cache`, `database`, `external`)."""
        return {c.name: str(c.kind) for c in self.topology.components}

    @property
    def action_types(self) -> tuple[str, ...]:
        """The family action kinds, in a fixed order (the same for every episode and family)."""
        return ACTION_TYPES

    def targets(self, action_type: str) -> tuple[str, ...] | None:
        """The valid targets of one action type in this episode (empty: none here); None: it takes no target."""
        if action_type == "inspect_alert":
            return alert_names(self.topology)
        kinds = TARGET_KINDS.get(action_type)
        if kinds is None:
            return None
        return tuple(c.name for c in self.topology.components if c.kind in kinds)

    def action_schema(self) -> dict:
        """JSON Schema of this episode's actions: a union on `action_type`, targets enumerated per type."""
        return action_schema({t: self.targets(t) for t in ACTION_TYPES})

    def wiring(self) -> list[str]:
        """The wiring as lines: `gateway calls orders-db`, `mailer consumes mail-queue`, …"""
        names = self.components
        lines = [f"{names[a]} calls {names[b]}" for a, b in self.topology.calls]
        lines += [f"{names[w]} consumes {names[q]}" for w, q in self.topology.consumes]
        lines += [f"{names[k]} backs onto {names[d]}" for k, d in self.topology.backs]
        return lines


def max_components(family: str) -> int:
    """The largest number of components an episode of `family` can have (the gym adapter's target space)."""
    _check_family(family)
    return FAMILY_TEMPLATES[family].max_components


def _check_family(family: object) -> str:
    if not isinstance(family, str) or family not in FAMILY_TEMPLATES:
        hint = did_you_mean(family, FAMILIES) if isinstance(family, str) else ""
        raise InputError(f"unknown family {family!r}" + (f"; {hint}" if hint else ""), field="family", allowed=FAMILIES)
    return family


def _check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise InputError(
            f"a family seed is an integer from 0 to {SEED_LIMIT - 1}, got {seed!r}",
            field="seed",
            hint="train seeds: 0-99999, evaluation seeds: 100000-199999",
        )
    return seed


def family_task(family: str, seed: int) -> FamilyTask:
    """Generate one task of a family.

    Args:
        family: one of `FAMILIES`.
        seed: a non-negative integer below 2**31 (see `TRAIN_SEEDS`, `EVAL_SEEDS`).

    Raises:
        InputError: an unknown family (with the closest id) or a bad seed.
    """
    return _generate(_check_family(family), _check_seed(seed))


@functools.lru_cache(maxsize=4096)
def _generate(family: str, seed: int) -> FamilyTask:
    # A task is a frozen value: the same one can serve every reset of its seed.
    rng = random.Random(f"{family}:{seed}")
    topo = draw_topology(family, rng)
    replicas = tuple(rng.randint(2, 6) if c.kind in (Kind.API, Kind.WORKER) else 0 for c in topo.components)
    kind, root, roles = _draw_fault(topo, rng)
    plan = _plan(kind, topo, root, roles, replicas, rng)
    names = topo.components
    center_shift = kind.id in ("pool_exhaustion", "poisoned_message", "cache_failure") or any(
        i != root for i, *_ in plan.effects[:1]
    )
    difficulty = 1 if kind.id in ("false_alarm", "overload") else 3 if center_shift else 2
    max_steps = 8 + difficulty
    fix = plan.fix
    cause = FamilyCause(
        kind=kind.id,
        location=names[root].name,
        summary=kind.summary,
        fix=fix,
        terms=kind.terms,
    )
    task = FamilyTask(
        family=family,
        seed=seed,
        difficulty=difficulty,
        max_steps=max_steps,
        topology=topo,
        description="",
        cause=cause,
        plan=plan,
        max_reward=_max_reward(plan),
    )
    return _with_description(task)


def _with_description(task: FamilyTask) -> FamilyTask:
    summary = FAMILY_TEMPLATES[task.family].summary
    parts = ", ".join(f"{c.name} ({c.kind})" for c in task.topology.components)
    text = (
        f"An incident in {summary}. Components: {parts}. Wiring: {'; '.join(task.wiring())}. "
        "Alerts are firing or something looks wrong: find out what, fix its cause without making things worse, "
        "let the system recover, and declare it healthy (or declare it unfixable)."
    )
    return replace(task, description=text)


def _max_reward(plan: FaultPlan) -> float:
    # The optimal path: inspections of the abnormal components on the way to the fault (about two, +1 each),
    # the fix (+5, none for a false alarm), waits while it settles (0), the declaration (+10).
    return 2.0 + (5.0 if plan.fix is not None else 0.0) + 10.0


def _roles(kind: FaultKind, topo: Topology, root: int, rng: random.Random) -> dict[str, list[int]] | None:
    comps = topo.components
    roles: dict[str, list[int]] = {"root": [root]}
    if comps[root].kind is Kind.CACHE:
        roles["store"] = [d for k, d in topo.backs if k == root]
    else:
        stores = [c for c in topo.callees(root) if comps[c].kind is Kind.DATABASE]
        roles["store"] = [rng.choice(stores)] if stores else []
    consumer = topo.consumer(root) if comps[root].kind is Kind.QUEUE else None
    roles["consumer"] = [consumer] if consumer is not None else []
    roles["queue"] = topo.consumed(root)
    callees = topo.callees(root)
    roles["peer"] = [rng.choice(callees)] if callees else []
    roles["caller"] = topo.callers(root)
    roles["consumer_queue"] = [q for c in roles["consumer"] for q in topo.consumed(c) if q != root]
    roles["caller_queue"] = [q for c in roles["caller"] for q in topo.consumed(c)]
    store = roles["store"]
    roles["callers"] = sorted({*topo.callers(store[0]), *topo.callers(root)} - {root}) if store else []
    if roles["callers"] == [] and store:
        roles["callers"] = topo.callers(store[0])
    for need in kind.needs:
        if not roles.get(need):
            return None
    return roles


def _draw_fault(topo: Topology, rng: random.Random) -> tuple[FaultKind, int, dict[str, list[int]]]:
    weights = [k.weight for k in FAULTS]
    while True:
        kind = rng.choices(FAULTS, weights)[0]
        spots = topo.of_kind(*kind.locations)
        rng.shuffle(spots)
        for root in spots:
            roles = _roles(kind, topo, root, rng)
            if roles is not None:
                return kind, root, roles


def _draw(r: tuple[float, float], rng: random.Random) -> float:
    return r[0] if r[0] == r[1] else rng.uniform(*r)


def _plan(
    kind: FaultKind,
    topo: Topology,
    root: int,
    roles: dict[str, list[int]],
    replicas: tuple[int, ...],
    rng: random.Random,
) -> FaultPlan:
    onset = -rng.randint(1, 3)
    if kind.id == "false_alarm":
        rules = ALERT_RULES[topo.components[root].kind]
        metric = rng.choice([m for _, m, _, _ in rules if m in NOISY[topo.components[root].kind]])
        spike = (root, metric, 0)
        return FaultPlan(0, (), (), None, (), 0, frozenset(), replicas, spike)
    optional = ("queue", "consumer_queue", "caller_queue")
    usable = [p for p in kind.presentations if all(roles.get(e.role) for e in p.effects if e.role not in optional)]
    pres = rng.choice(usable)
    effects: list[tuple[int, int, float, float, bool]] = []
    for e in pres.effects:
        for c in roles.get(e.role, []):
            effects.append((c, e.metric, _draw(e.add, rng), _draw(e.per_step, rng), e.level))
    lat, err = _draw(pres.spread_latency, rng), _draw(pres.spread_errors, rng)
    touched = {c for c, *_ in effects}
    for center in roles[pres.center]:
        for c, hop in topo.upstream(center):
            if c in touched:
                continue
            scale = 0.55 ** (hop - 1)
            effects.append((c, lib.LAT, lat * scale, lat * scale * 0.05, False))
            effects.append((c, lib.ERR, err * scale, 0.0, False))
            touched.add(c)
    ratio = round(rng.uniform(1.8, 3.4), 2)
    params = {
        "ratio": ratio,
        "replicas_needed": math.ceil(max(replicas[root], 1) * ratio),
        "restarts": rng.randint(3, 9),
        "version": rng.randint(120, 480),
        "retries": rng.randint(12, 60),
        "pool": 100,
    }
    names = topo.components
    logs: list[tuple[int, str, str, float | str | None, str | None, int | None]] = []
    for spec in kind.logs:
        for c in roles.get(spec.role, []):
            value: float | str | None
            if isinstance(spec.value, tuple):
                value = round(_draw(spec.value, rng), 1)
            elif isinstance(spec.value, str) and spec.value.startswith("reading:"):
                value = spec.value
            elif isinstance(spec.value, str):
                value = float(params[spec.value])
            else:
                value = None
            peer = names[roles[spec.peer][0]].name if spec.peer and roles.get(spec.peer) else None
            once = onset - int(_draw(spec.lead, rng)) if spec.once else None
            logs.append((c, spec.event, spec.level, value, peer, once))
    fix = None
    if kind.fix is not None:
        target = names[roles[kind.fix.role][0]].name
        floor = int(params[kind.fix.min_value]) if kind.fix.min_value else None
        fix = (kind.fix.action, target, floor)
    responses = []
    for r in kind.responses:
        below = int(params[r.below]) if r.below else None
        for c in roles.get(r.role, []):
            relief = rng.randint(*r.relief)
            responses.append((r.action, names[c].name, r.effect, relief, below))
    settle = rng.randint(*kind.settle)
    affected = frozenset(c for c, *_ in effects)
    return FaultPlan(onset, tuple(effects), tuple(logs), fix, tuple(responses), settle, affected, replicas)
