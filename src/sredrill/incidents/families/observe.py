"""What family inspections return: structured log records, metric series and alert details, as JSON objects.

Log records have task-independent fields `{step, component, level, event, value, peer, message}`. `event` is
an observation (`latency`, `error_rate`, `request_timeout`, `connection_refused`, `request_rate`, `replicas`,
`memory`, `restarts`, `version_changed`, `config_changed`, `message_retry`, `connections`, `slow_query`,
`hit_rate`, `health_check_ok`, and the operator's own actions); each is written by several faults or by a
healthy system, and none names a fault. `peer` is the other component a record is about (the callee a request
timed out on), or null.
"""

from __future__ import annotations

from typing import Any

from sredrill.incidents.families.alerts import ALERT_HOLD, EXTRA_LIMITS, EXTRA_METRIC, EXTRA_UNITS, UNITS
from sredrill.incidents.families.generate import HISTORY_STEPS
from sredrill.incidents.families.library import EXTRA, METRIC_NAMES
from sredrill.incidents.families.simulate import FamilySimulator

__all__ = ["EVENTS", "MAX_LOG_RECORDS", "alert_detail", "log_records", "metric_series"]

MAX_LOG_RECORDS = 12
"""An `inspect_logs` result holds the newest records, at most this many."""

_TEXT = {
    "health_check_ok": "health check passed",
    "latency": "p99 latency at {value:.0f} ms",
    "error_rate": "{value:.1f}% of requests failed",
    "request_timeout": "{value:.0f} requests to {peer} timed out in the last minute",
    "connection_refused": "{value:.0f} connections refused" + " by {peer}",
    "request_rate": "request rate at {value:.2f}x its usual level",
    "replicas": "{value:.0f} replicas running",
    "memory": "resident memory at {value:.0f}%",
    "restarts": "{value:.0f} process restarts so far",
    "version_changed": "release {value:.0f} went live",
    "config_changed": "configuration revision {value:.0f} applied",
    "message_retry": "the message at the head was delivered {value:.0f} times",
    "connections": "{value:.0f} connections in use",
    "slow_query": "a query took {value:.0f} ms",
    "hit_rate": "hit rate at {value:.1f}%",
    "restarted": "restarted by an operator",
    "replicas_changed": "replicas set to {value:.0f} by an operator",
    "release_rolled_back": "rolled back to the previous release by an operator",
    "config_reverted": "configuration change reverted by an operator",
    "queue_purged": "queue purged by an operator",
    "message_quarantined": "head message quarantined by an operator",
    "failed_over": "switched to the secondary by an operator",
    "cache_flushed": "cache flushed by an operator",
}
EVENTS: tuple[str, ...] = tuple(_TEXT)
"""Every log event, a closed vocabulary."""
_ACTION_EVENTS = {
    "restart_service": "restarted",
    "scale_workers": "replicas_changed",
    "rollback_release": "release_rolled_back",
    "revert_config": "config_reverted",
    "clear_queue": "queue_purged",
    "drop_message": "message_quarantined",
    "restart_database": "restarted",
    "failover": "failed_over",
    "flush_cache": "cache_flushed",
}
_LEVEL_OF_READING = {"latency": 3, "error_rate": 2, "memory": 1, "extra": EXTRA}


def _record(step: int, component: str, level: str, event: str, value: float | None, peer: str | None) -> dict[str, Any]:
    text = _TEXT[event]
    if peer is None:
        text = text.replace(" by {peer}", "")
    message = text.format(value=value if value is not None else 0.0, peer=peer)
    return {
        "step": step,
        "component": component,
        "level": level,
        "event": event,
        "value": None if value is None else round(float(value), 2),
        "peer": peer,
        "message": message,
    }


def log_records(sim: FamilySimulator, component: str) -> list[dict[str, Any]]:
    """The component's newest log records (oldest first, at most `MAX_LOG_RECORDS`)."""
    task = sim.task
    c = task.components.index(component)
    now = sim.t
    out: list[tuple[int, int, dict[str, Any]]] = []
    for step, i, level, event, value, peer in sim.background:
        if i == c and step <= now:
            out.append((step, 0, _record(step, component, level, event, value, peer)))
    plan = task.plan
    visible = [s for s in range(max(plan.onset, -HISTORY_STEPS), now + 1) if sim.state_at(s) in ("active", "worse")]
    for i, event, level, drawn, peer, once in plan.logs:
        if i != c:
            continue
        if once is not None:
            if once <= now:
                out.append((once, 1, _record(once, component, level, event, _log_value(sim, c, once, drawn), peer)))
            continue
        for s in visible[-3:]:
            out.append((s, 2, _record(s, component, level, event, _log_value(sim, c, s, drawn), peer)))
    for s in range(-HISTORY_STEPS, now + 1, 2):
        if sim.shown(s)[2][c] == 0:
            out.append((s, 3, _record(s, component, "info", "health_check_ok", None, None)))
    for step, kind, target, value in sim.events:
        if target == component:
            v = float(value) if value is not None else None
            out.append((step, 4, _record(step, component, "info", _ACTION_EVENTS[kind], v, None)))
    out.sort(key=lambda r: (r[0], r[1]))
    return [r for _, _, r in out[-MAX_LOG_RECORDS:]]


def _log_value(sim: FamilySimulator, c: int, step: int, drawn: float | str | None) -> float | None:
    """A fault's log value at `step`: the number drawn for the episode, or for `reading:<metric>` the
    component's reading of that metric then (None before the history window, where nothing was measured)."""
    if not isinstance(drawn, str):
        return drawn
    if step < -HISTORY_STEPS:
        return None
    return sim.shown(step)[0][c * 6 + _LEVEL_OF_READING[drawn.split(":", 1)[1]]]


def metric_series(sim: FamilySimulator, component: str) -> list[dict[str, Any]]:
    """One series per metric of the component, from `-HISTORY_STEPS` to now."""
    task = sim.task
    c = task.components.index(component)
    kind = task.topology.components[c].kind
    steps = list(range(-HISTORY_STEPS, sim.t + 1))
    rows = [sim.shown(s)[0] for s in steps]
    out = []
    for m, name in enumerate(METRIC_NAMES):
        out.append(
            {
                "metric": name,
                "component": component,
                "unit": UNITS[m],
                "steps": steps,
                "values": [round(r[c * 6 + m], 2) for r in rows],
                "limit": 100.0 if UNITS[m] == "percent" else None,
            }
        )
    extra = EXTRA_METRIC[kind]
    if extra is not None:
        values = _replica_series(sim, c, steps) if extra == "replicas" else [round(r[c * 6 + EXTRA], 2) for r in rows]
        out.append(
            {
                "metric": extra,
                "component": component,
                "unit": EXTRA_UNITS[extra],
                "steps": steps,
                "values": values,
                "limit": EXTRA_LIMITS.get(extra),
            }
        )
    return out


def _replica_series(sim: FamilySimulator, c: int, steps: list[int]) -> list[float]:
    name = sim.task.components[c]
    current = float(sim.task.plan.replicas[c])
    changes = {
        t + 1: float(v)
        for t, kind, target, v in sim.events
        if kind == "scale_workers" and target == name and v is not None  # a scale action always has its value
    }
    out = []
    for s in steps:
        current = changes.get(s, current)
        out.append(current)
    return out


def alert_detail(sim: FamilySimulator, name: str) -> dict[str, Any]:
    """An alert's rule and its state now."""
    a = sim.alert_index(name)
    _, c, slot, threshold, summary = sim.alerts[a]
    last = sim.last_breach.get(a)
    return {
        "name": name,
        "component": sim.task.components[c],
        "metric": METRIC_NAMES[slot % 6],
        "threshold": threshold,
        "value": round(sim.shown()[0][slot], 2),
        "firing": last is not None and sim.t - last < ALERT_HOLD,
        "last_breach_step": last,
        "hold_steps": ALERT_HOLD,
        "summary": summary,
    }
