"""The family simulator: one seeded episode of one generated task, stepped by `(action_type, target, value)`.

At reset it draws the resting system (baselines and per-step noise, noisy alert spikes) and precomputes
every telemetry row the episode can show in each state of its fault (active, worsened, settling after the
fix, absent), with each row's breached alerts and statuses. A step is then a few lookups: which row
the fault's state selects, plus the alerts' hold. Disruptions an action causes are the one thing computed on
the fly. Everything is drawn from `random.Random(f"{family}:{seed}:sim")`, never the global generator.
"""

from __future__ import annotations

import random

import sredrill.incidents.scoring as scoring
from sredrill.errors import ActionError, InputError, StateError, did_you_mean
from sredrill.incidents.families.alerts import (
    ALERT_HOLD,
    ALERT_RULES,
    BASELINES,
    LATENCY_LIMIT,
    NOISY,
    alert_table,
)
from sredrill.incidents.families.generate import HISTORY_STEPS, FamilyTask
from sredrill.incidents.families.library import CPU, ERR, EXTRA, LAT, MEM
from sredrill.incidents.families.topology import Kind
from sredrill.incidents.scoring import EpisodeScore, grade_episode, normalize_reward

__all__ = ["REWARD_MODES", "FamilySimulator"]

REWARD_MODES = ("dense", "sparse")
_SLOTS = 6
_PERCENT = (CPU, MEM, ERR)
_DISRUPTION_STEPS = 2
_INSPECTION_REWARD = {
    "inspect_logs": scoring.INSPECTION,
    "inspect_metrics": scoring.INSPECTION,
    "inspect_alert": scoring.ALERT_INSPECTION,
}
# What a harmful action that is harmful in any episode does (on top of any fault-specific response).
_ALWAYS_HARMFUL = {
    "rollback_release": "disrupt",
    "clear_queue": "irreversible",
    "drop_message": "irreversible",
    "restart_database": "disrupt",
    "failover": "disrupt",
    "flush_cache": "disrupt",
}
_DISRUPTING = frozenset({"rollback_release", "restart_database", "failover", "flush_cache"})
MAX_HARMS = 2
"""The second harmful remediation of an episode makes it unresolvable: the outage has spread too far."""
_DONE_MESSAGES = {
    "restart_service": "restarted {target}",
    "scale_workers": "scaled {target} to {value} replicas",
    "rollback_release": "rolled {target} back to its previous release",
    "revert_config": "reverted the last configuration change of {target}",
    "clear_queue": "purged every message waiting in {target}",
    "drop_message": "quarantined the message at the head of {target}",
    "restart_database": "restarted {target}: every connection was dropped",
    "failover": "switched {target} to its secondary",
    "flush_cache": "flushed {target}",
}


class FamilySimulator:
    """One episode of one family task. Mutable: it is the episode's state; never shared.

    Attributes:
        task: the task.
        reward_mode: `dense` (the step rewards below) or `sparse` (every step 0, the grade on the last).
        t: steps taken so far.
        episode_reward: the sum of the step rewards returned.
        done, declared, resolved: as the classic simulator's.
        harmful, irrelevant: counts of harmful remediations and of remediations that fixed nothing.
    """

    def __init__(self, task: FamilyTask, reward_mode: str = "dense") -> None:
        if reward_mode not in REWARD_MODES:
            hint = did_you_mean(str(reward_mode), REWARD_MODES)
            raise InputError(
                f"unknown reward mode {reward_mode!r}" + (f"; {hint}" if hint else ""),
                field="reward_mode",
                allowed=REWARD_MODES,
            )
        self.task = task
        self.reward_mode = reward_mode
        self._sparse = reward_mode == "sparse"
        plan = task.plan
        topo = task.topology
        comps = topo.components
        self.n = n = len(comps)
        rng = random.Random(f"{task.family}:{task.seed}:sim")
        h, steps = HISTORY_STEPS, task.max_steps
        n_rows = h + steps + 1
        # The resting system: baseline plus noise (noise depends on the seed and the step only).
        base = [0.0] * (n * _SLOTS)
        amp = [0.0] * (n * _SLOTS)
        for i, c in enumerate(comps):
            for s, (lo, hi) in enumerate(BASELINES[c.kind]):
                v = lo if lo == hi else rng.uniform(lo, hi)
                base[i * _SLOTS + s] = v
                amp[i * _SLOTS + s] = 0.0 if v == 0.0 else 0.5 + 0.06 * v
            if c.kind in (Kind.API, Kind.WORKER):
                base[i * _SLOTS + EXTRA] = float(plan.replicas[i])
                amp[i * _SLOTS + EXTRA] = 0.0
        live = [j for j in range(n * _SLOTS) if amp[j] > 0.0]
        quiet = []
        for _ in range(n_rows):
            row = base[:]
            for j in live:
                v = base[j] + amp[j] * (2.0 * rng.random() - 1.0)
                row[j] = v if v > 0.0 else 0.0
            quiet.append(row)
        # Noise alerts: short spikes that breach a rule for one step, with or without a fault.
        spikes = [plan.spike] if plan.spike is not None else []
        for _ in range(rng.choice((0, 0, 1, 1, 2))):
            i = rng.randrange(n)
            spikes.append((i, rng.choice(NOISY[comps[i].kind]), rng.randint(-2, steps)))
        if rng.random() < 0.4:  # one more right at the page, so a first observation often has a stray alert
            i = rng.randrange(n)
            spikes.append((i, rng.choice(NOISY[comps[i].kind]), rng.randint(-1, 0)))
        self.spikes = [(i, m, s) for i, m, s in spikes]
        for i, m, s in spikes:
            threshold = next(t for _, mm, t, _ in ALERT_RULES[comps[i].kind] if mm == m)
            v = threshold * rng.uniform(1.05, 1.3)
            quiet[s + h][i * _SLOTS + m] = min(v, 99.5) if m in _PERCENT else v
        self._base = base
        self._alerts = alert_table(topo)
        self._kinds = [c.kind for c in comps]
        self._by_slot: dict[int, list[tuple[int, float]]] = {}
        for a, (_, _, slot, threshold, _) in enumerate(self._alerts):
            self._by_slot.setdefault(slot, []).append((a, threshold))
        # Rows of each state of the fault, precomputed with their breached alerts and statuses.
        # Per component: its error and latency slots, the latency that degrades it, its alert slots.
        self._rank_rules = [
            (c * _SLOTS + ERR, c * _SLOTS + LAT, 0.6 * LATENCY_LIMIT[k]) for c, k in enumerate(self._kinds)
        ]
        self._alert_owner = [c for _, c, _, _, _ in self._alerts]
        # Each effect as (slot, add, per_step, level, ceiling): percentages and pools stop at 100.
        self._effects = [
            (
                c * _SLOTS + m,
                add,
                per_step,
                level,
                100.0
                if m in _PERCENT or (m == EXTRA and self._kinds[c] in (Kind.DATABASE, Kind.CACHE))
                else float("inf"),
            )
            for c, m, add, per_step, level in plan.effects
        ]
        self._alert_slots = [(a, slot, threshold) for a, (_, _, slot, threshold, _) in enumerate(self._alerts)]
        self._quiet = [self._finish(r) for r in quiet]
        # Every row each state of the fault can show, precomputed: a step is then a lookup.
        if plan.effects:
            self._active = [self._finish(self._apply(r, k - h, 1.0, 0)) for k, r in enumerate(quiet)]
            self._worse = [self._finish(self._apply(r, k - h, 1.6, 1)) for k, r in enumerate(quiet)]
            self._settling = [self._finish(self._apply(r, k - h, 0.3, 0)) for k, r in enumerate(quiet)]
        else:
            self._active = self._worse = self._settling = self._quiet
        # Background log records (shared by every episode: deploys and config changes long before, counters).
        self.background: list[tuple[int, int, str, str, float | None, str | None]] = []
        for i, c in enumerate(comps):
            if c.kind in (Kind.API, Kind.WORKER):
                self.background.append((-h, i, "info", "replicas", float(plan.replicas[i]), None))
                if rng.random() < 0.5:
                    self.background.append(
                        (-rng.randint(12, 40), i, "info", "version_changed", rng.randint(100, 480), None)
                    )
                if rng.random() < 0.35:
                    self.background.append(
                        (-rng.randint(12, 40), i, "info", "config_changed", rng.randint(100, 480), None)
                    )
            elif c.kind is Kind.QUEUE and rng.random() < 0.5:
                self.background.append((-rng.randint(1, h), i, "info", "message_retry", float(rng.randint(1, 3)), None))
            elif c.kind is Kind.DATABASE:
                self.background.append((-h, i, "info", "connections", round(base[i * _SLOTS + EXTRA]), None))
            elif c.kind is Kind.CACHE:
                self.background.append((-h, i, "info", "hit_rate", round(base[i * _SLOTS + EXTRA], 1), None))
        self._index = {name: i for i, name in enumerate(task.components)}
        # The fault's state.
        self.has_fault = plan.fix is not None
        self.fixed_at: int | None = None
        self.settle = plan.settle
        self.suppressed_until = -1
        self.worsened_at: int | None = None
        self.lost = False
        self.disruptions: list[tuple[int, int]] = []  # (until, component)
        self.events: list[tuple[int, str, str | None, int | None]] = []
        self.replicas = list(plan.replicas)
        self._responses: dict[tuple[str, str], tuple[str, int, int | None]] = {}
        for action, target, effect, relief, below in plan.responses:
            self._responses.setdefault((action, target), (effect, relief, below))
        self._recent: list[tuple[str, str | None, int | None]] = []
        self._rewarded: set[tuple[str, str | None]] = set()
        self.t = 0
        self.episode_reward = 0.0
        self.dense_reward = 0.0
        self.done = False
        self.declared: str | None = None
        self.resolved = False
        self.harmful = 0
        self.irrelevant = 0
        # History: the state code of every step (q quiet, a active, w worse, s settling) and the row shown.
        self._shown: list[tuple[list[float], tuple[int, ...], list[int]]] = []
        for k in range(-h, 1):
            self._shown.append(self._pick(k))
        self._last_breach: dict[int, int] = {}
        for k, (_, breaches, _) in enumerate(self._shown):
            for a in breaches:
                self._last_breach[a] = k - h

    # -- precomputation -------------------------------------------------------------------------------

    def _apply(self, quiet: list[float], t: int, scale: float, faster: int) -> list[float]:
        row = quiet[:]
        d = t - self.task.plan.onset
        if d < 0:
            return row
        base = self._base
        for j, add, per_step, level, ceiling in self._effects:
            v = add + per_step * d * (1 + faster)
            if level:
                v -= base[j]
            v = row[j] + v * scale
            row[j] = 0.0 if v < 0.0 else ceiling if v > ceiling else v
        return row

    def _finish(self, row: list[float]) -> tuple[list[float], tuple[int, ...], list[int]]:
        """A row with its breached alerts and statuses (the rule of `alerts.status_rank`, inlined)."""
        breaches = tuple([a for a, slot, threshold in self._alert_slots if row[slot] > threshold])
        ranks = [
            2 if row[e] >= 30.0 else 1 if row[e] >= 3.0 or row[lat] >= slow else 0 for e, lat, slow in self._rank_rules
        ]
        owner = self._alert_owner
        for a in breaches:
            c = owner[a]
            if ranks[c] == 0:
                ranks[c] = 1
        return row, breaches, ranks

    # -- state ------------------------------------------------------------------------------------------

    def state_at(self, t: int) -> str:
        """The fault's visible state at step `t`: `quiet`, `active`, `worse` or `settling`."""
        if not self.has_fault:
            return "quiet"
        f = self.fixed_at
        if f is not None and t >= f:
            return "settling" if t < f + self.settle else "quiet"
        if t < self.suppressed_until:
            return "quiet"
        return "worse" if self.worsened_at is not None and t >= self.worsened_at else "active"

    def _pick(self, t: int) -> tuple[list[float], tuple[int, ...], list[int]]:
        state = self.state_at(t)
        k = t + HISTORY_STEPS
        table = (
            self._quiet
            if state == "quiet"
            else self._active
            if state == "active"
            else self._worse
            if state == "worse"
            else self._settling
        )
        shown = table[k]
        if self.disruptions and any(t < until for until, _ in self.disruptions):
            row = shown[0][:]
            topo = self.task.topology
            for until, c in self.disruptions:
                if t < until:
                    row[c * _SLOTS + ERR] = max(row[c * _SLOTS + ERR], 40.0)
                    row[c * _SLOTS + LAT] += LATENCY_LIMIT[self._kinds[c]]
                    for u in topo.callers(c):
                        row[u * _SLOTS + ERR] += 6.0
            shown = self._finish(row)
        return shown

    def is_settling(self, t: int) -> bool:
        """True when waiting changes something: a fix settling or a disruption wearing off."""
        if self.fixed_at is not None and t < self.fixed_at + self.settle:
            return True
        return any(t < until for until, _ in self.disruptions)

    def is_resolved(self) -> bool:
        """The fault is fixed and settled (or there was none), nothing irreversible happened, no disruption."""
        t = self.t
        if self.lost or any(t < until for until, _ in self.disruptions):
            return False
        if not self.has_fault:
            return True
        return self.fixed_at is not None and t >= self.fixed_at + self.settle

    def abnormal(self, c: int, t: int) -> bool:
        """True when component `c` shows an abnormal signal at step `t` (what pays an inspection)."""
        if self.state_at(t) != "quiet" and c in self.task.plan.affected:
            return True
        if any(t < until and d == c for until, d in self.disruptions):
            return True
        return any(sc == c and t - 1 <= s <= t for sc, _, s in self.spikes)

    # -- stepping ---------------------------------------------------------------------------------------

    def step(self, key: tuple[str, str | None, int | None]) -> tuple[float, bool, str]:
        """Apply one validated action `(action_type, target, value)`; return (reward, done, message).

        Raises:
            StateError: the episode is over.
        """
        if self.done:
            raise StateError("the episode is over: call reset() to start another one")
        t = self.t
        kind, target, value = key
        if kind in _INSPECTION_REWARD:
            if target is None:  # never from parse_family_action, which gives every inspection its target
                raise ActionError(f"{kind} needs a target", field="target")
            reward, message = self._inspect(kind, target, t)
        elif kind == "wait":
            reward, message = (scoring.NEUTRAL if self.is_settling(t) else scoring.IRRELEVANT), "waited one step"
        elif kind == "declare_healthy":
            self.declared = kind
            self.resolved = self.is_resolved()
            reward = scoring.DECLARED_RESOLVED if self.resolved else scoring.DECLARED_UNRESOLVED
            message = "declared healthy" + ("" if self.resolved else ", but the incident is not resolved")
        elif kind == "declare_unfixable":
            self.declared = kind
            reward, message = scoring.NEUTRAL, "declared unfixable: the episode ends without a resolution"
        else:
            reward, message = self._remediate(kind, target, value, t)
        # A wait while something recovers is never a mistake, however often: it is exempt from the repeat rule.
        if key in self._recent and not (kind == "wait" and reward == scoring.NEUTRAL):
            reward += scoring.DUPLICATE
            message += " (a repeat of a recent action)"
        self._recent.append(key)
        if len(self._recent) > 3:
            del self._recent[0]
        self.t = t = t + 1
        shown = self._pick(t)
        self._shown.append(shown)
        for a in shown[1]:
            self._last_breach[a] = t
        self.done = done = self.declared is not None or t >= self.task.max_steps
        self.dense_reward += reward
        if self._sparse:
            reward = self.grade() if done else 0.0
        self.episode_reward += reward
        return reward, done, message

    def _inspect(self, kind: str, target: str, t: int) -> tuple[float, str]:
        if kind == "inspect_alert":
            a = self.alert_index(target)
            normal = a not in self.firing_indices()
            what = f"alert {target}"
        else:
            normal = not self.abnormal(self._index[target], t)
            what = f"{'logs' if kind == 'inspect_logs' else 'metrics'} of {target}"
        if normal or (kind, target) in self._rewarded:
            return scoring.IRRELEVANT, f"read the {what}"
        self._rewarded.add((kind, target))
        return _INSPECTION_REWARD[kind], f"read the {what}"

    def _remediate(self, kind: str, target: str | None, value: int | None, t: int) -> tuple[float, str]:
        effective = t + 1
        message = _DONE_MESSAGES[kind].format(target=target, value=value)
        self.events.append((t, kind, target, value))
        if kind == "scale_workers" and target is not None:
            self.replicas[self._index[target]] = value or 0
        fix = self.task.plan.fix
        active = self.has_fault and self.fixed_at is None
        if (
            active
            and fix is not None
            and kind == fix[0]
            and target == fix[1]
            and (fix[2] is None or (value or 0) >= fix[2])
        ):
            self.fixed_at = effective
            if self.worsened_at is not None:
                self.settle += 2
            return scoring.RESOLVING, message
        response = self._responses.get((kind, target)) if active and target is not None else None
        if response is not None:
            effect, relief, below = response
            if below is None or (value or 0) < below:
                if effect == "mitigate":
                    self.suppressed_until = effective + relief
                    self.irrelevant += 1
                    return scoring.NEUTRAL, message
                return self._harm(effect, kind, target, effective), message
        always = _ALWAYS_HARMFUL.get(kind)
        if always is not None:
            return self._harm(always, kind, target, effective), message
        if active and self._index[target] in self.task.plan.affected:  # type: ignore[index]
            # Anything else done to a struggling component makes it struggle more.
            return self._harm("worsen", kind, target, effective), message
        self.irrelevant += 1
        return scoring.IRRELEVANT, message

    def _harm(self, effect: str, kind: str, target: str | None, effective: int) -> float:
        self.harmful += 1
        if effect == "worsen":
            if self.has_fault and self.fixed_at is None and self.worsened_at is None:
                self.worsened_at = effective
        elif effect == "irreversible":
            self.lost = True
        if kind in _DISRUPTING:
            self.disruptions.append((effective + _DISRUPTION_STEPS, self._index[target]))  # type: ignore[index]
        if self.harmful >= MAX_HARMS:
            self.lost = True  # the outage spread beyond what the episode can repair
        return scoring.HARMFUL

    # -- what an observation shows ----------------------------------------------------------------------

    def shown(self, t: int | None = None) -> tuple[list[float], tuple[int, ...], list[int]]:
        """(row, breached alerts, status ranks) shown at step `t` (default: now)."""
        return self._shown[(self.t if t is None else t) + HISTORY_STEPS]

    def firing_indices(self) -> list[int]:
        t = self.t
        return sorted(a for a, last in self._last_breach.items() if t - last < ALERT_HOLD)

    def firing(self) -> list[str]:
        """The names of the alerts firing now, in the system's alert order."""
        alerts = self._alerts
        return [alerts[a][0] for a in self.firing_indices()]

    def alert_index(self, name: str | None) -> int:
        return next(a for a, row in enumerate(self._alerts) if row[0] == name)

    @property
    def alerts(self) -> list[tuple[str, int, int, float, str]]:
        return self._alerts

    @property
    def last_breach(self) -> dict[int, int]:
        return self._last_breach

    # -- score -------------------------------------------------------------------------------------------

    def grade(self) -> float:
        return grade_episode(
            resolved=self.resolved,
            steps=self.t,
            max_steps=self.task.max_steps,
            harmful=self.harmful,
            irrelevant=self.irrelevant,
        )

    def score(self) -> EpisodeScore:
        """How the episode scores so far (final once `done`)."""
        return EpisodeScore(
            steps=self.t,
            max_steps=self.task.max_steps,
            episode_reward=self.episode_reward,
            max_reward=self.task.max_reward,
            normalized_reward=normalize_reward(self.dense_reward, self.task.max_reward),
            resolved=self.resolved,
            grade=self.grade(),
        )
