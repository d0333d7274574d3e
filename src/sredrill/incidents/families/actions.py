"""Family actions: the seed's `(action_type, target, value)` triple over topology targets.

Inspections take any component (`inspect_logs`, `inspect_metrics`) or an alert name (`inspect_alert`);
remediations take components of the kinds they apply to. Kinds added for the fault library:
`revert_config` (undo the last configuration change of an api or worker pool), `drop_message` (quarantine the
message at the head of a queue), `failover` (switch an external dependency to its secondary), `flush_cache`
(empty a cache so it refills from its database). `restart_database` and `clear_queue` take a target here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sredrill.errors import ActionError, did_you_mean
from sredrill.incidents.actions import MAX_REPLICAS, Action, validate_envelope
from sredrill.incidents.families.topology import Kind

__all__ = [
    "ACTION_TYPES",
    "INSPECTIONS",
    "REMEDIATIONS",
    "TARGET_KINDS",
    "action_schema",
    "parse_family_action",
]

_ALL = tuple(Kind)
_POOLS = (Kind.API, Kind.WORKER)
TARGET_KINDS: dict[str, tuple[Kind, ...]] = {
    "inspect_logs": _ALL,
    "inspect_metrics": _ALL,
    "restart_service": _POOLS,
    "scale_workers": _POOLS,
    "rollback_release": _POOLS,
    "revert_config": _POOLS,
    "clear_queue": (Kind.QUEUE,),
    "drop_message": (Kind.QUEUE,),
    "restart_database": (Kind.DATABASE,),
    "failover": (Kind.EXTERNAL,),
    "flush_cache": (Kind.CACHE,),
}
"""Action type -> the component kinds it targets (`inspect_alert` targets alert names)."""

ACTION_TYPES: tuple[str, ...] = (
    "inspect_logs",
    "inspect_metrics",
    "inspect_alert",
    "restart_service",
    "scale_workers",
    "rollback_release",
    "revert_config",
    "clear_queue",
    "drop_message",
    "restart_database",
    "failover",
    "flush_cache",
    "wait",
    "declare_healthy",
    "declare_unfixable",
)
"""Every family action type, in a fixed order (the gym adapter's `Discrete` space follows it)."""
INSPECTIONS = frozenset({"inspect_logs", "inspect_metrics", "inspect_alert"})
REMEDIATIONS = frozenset(ACTION_TYPES[3:12])

_DESCRIPTIONS = {
    "inspect_logs": "Read a component's recent structured log records.",
    "inspect_metrics": "Read a component's metric series, from before the incident to now.",
    "inspect_alert": "Read an alert's rule and state.",
    "restart_service": "Restart an api or worker pool's processes.",
    "scale_workers": "Set an api or worker pool's replica count.",
    "rollback_release": "Roll an api or worker pool back to its previous release.",
    "revert_config": "Undo the last configuration change of an api or worker pool.",
    "clear_queue": "Purge every message waiting in a queue (they are lost).",
    "drop_message": "Quarantine the message at the head of a queue.",
    "restart_database": "Restart a database: every connection is dropped.",
    "failover": "Switch an external dependency to its secondary provider.",
    "flush_cache": "Empty a cache; it refills from its database.",
    "wait": "Do nothing for one step: time passes.",
    "declare_healthy": "Declare the incident resolved (terminal).",
    "declare_unfixable": "Give up (terminal).",
}


def action_schema(targets: Mapping[str, tuple[str, ...] | None]) -> dict[str, Any]:
    """JSON Schema of one episode's actions; action types with no target in the episode are left out."""
    variants = []
    for name in ACTION_TYPES:
        allowed = targets.get(name)
        if allowed is not None and not allowed:
            continue
        target: dict[str, Any] = {"type": "null"} if allowed is None else {"type": "string", "enum": list(allowed)}
        value: dict[str, Any] = (
            {"type": "integer", "minimum": 1, "maximum": MAX_REPLICAS} if name == "scale_workers" else {"type": "null"}
        )
        variants.append(
            {
                "type": "object",
                "title": name,
                "description": _DESCRIPTIONS[name],
                "properties": {"action_type": {"const": name}, "target": target, "value": value},
                "required": ["action_type", "target", "value"] if name == "scale_workers" else ["action_type"],
                "additionalProperties": False,
            }
        )
    return {"oneOf": variants, "discriminator": {"propertyName": "action_type"}}


def parse_family_action(
    data: Action | Mapping[str, Any], targets: Mapping[str, tuple[str, ...] | None]
) -> tuple[str, str | None, int | None]:
    """Validate a wire action against one episode's targets and return its `(action_type, target, value)`.

    Raises:
        ActionError: naming the wrong field, the allowed values and, for a misspelt name, the closest one.
    """
    action = validate_envelope(data)
    name = action.action_type
    if name not in ACTION_TYPES:
        hint = did_you_mean(name, ACTION_TYPES)
        raise ActionError(
            f"unknown action {name!r}" + (f"; {hint}" if hint else ""), field="action_type", allowed=ACTION_TYPES
        )
    allowed = targets.get(name)
    if allowed is None:
        if action.target is not None:
            raise ActionError(
                f"{name} takes no target, got {action.target!r}", field="target", hint="send target: null"
            )
    elif not allowed:
        kinds = ", ".join(str(k) for k in TARGET_KINDS[name])
        raise ActionError(f"{name} has no target in this system (it has no {kinds})", field="action_type")
    elif action.target is None:
        raise ActionError(f"{name} needs a target", field="target", allowed=allowed)
    elif action.target not in allowed:
        hint = did_you_mean(action.target, allowed)
        raise ActionError(
            f"{name} cannot target {action.target!r}" + (f"; {hint}" if hint else ""), field="target", allowed=allowed
        )
    value = action.value
    if name == "scale_workers":
        if value is None or (isinstance(value, float) and not value.is_integer()) or not 1 <= value <= MAX_REPLICAS:
            got = "nothing" if value is None else repr(value)
            example = allowed[0] if allowed else ""
            raise ActionError(
                f"scale_workers needs an integer value from 1 to {MAX_REPLICAS} (the replica count), got {got}",
                field="value",
                hint=f'e.g. {{"action_type": "scale_workers", "target": "{example}", "value": 4}}',
            )
        value = int(value)
    elif value is not None:
        raise ActionError(f"{name} takes no value, got {value!r}", field="value", hint="send value: null")
    if action.args is not None:
        raise ActionError(f"{name} takes no args", field="args", hint="send args: null")
    return name, action.target, value
