"""Incident actions: the wire envelope `Action` and the typed variants it is validated into.

On the wire every action has one shape, `{action_type, target, value, args}` (DESIGN §6). `parse_action`
checks it against the variant its `action_type` names and returns that variant (a member of the
discriminated union `IncidentAction`), or raises an `ActionError` saying which field is wrong and what is
allowed. The simulator only ever sees typed variants.

Examples:
    >>> parse_action({"action_type": "scale_workers", "target": "api_workers", "value": 5})
    ScaleWorkers(action_type='scale_workers', target=<Service.API_WORKERS: 'api_workers'>, value=5)
    >>> parse_action({"action_type": "scale_worker"})  # doctest: +SKIP
    ActionError: action_type: unknown action 'scale_worker'; did you mean 'scale_workers'?
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictFloat, StrictInt, TypeAdapter, ValidationError

from sredrill.errors import ActionError, did_you_mean
from sredrill.incidents.vocabulary import ALERTS, ActionType, Metric, Service

__all__ = [
    "ACTION_FIELDS",
    "MAX_REPLICAS",
    "Action",
    "ActionKey",
    "ActionRule",
    "ClearQueue",
    "DeclareHealthy",
    "DeclareUnfixable",
    "IncidentAction",
    "InspectAlert",
    "InspectLogs",
    "InspectMetrics",
    "RestartDatabase",
    "RestartService",
    "RollbackRelease",
    "ScaleWorkers",
    "Wait",
    "action_rules",
    "incident_action_adapter",
    "parse_action",
    "validate_envelope",
]

MAX_REPLICAS = 64
"""The largest replica count `scale_workers` accepts."""

ACTION_FIELDS: tuple[str, ...] = ("action_type", "target", "value", "args")

ActionKey = tuple[str, str | None, int | float | None]
"""`(action_type, target, value)`: what the duplicate rule compares (DESIGN §6)."""


class Action(BaseModel):
    """An action as it crosses the wire, for incident tasks and RCA tasks alike.

    `action_type` is a plain string here so an unknown one gets a "did you mean" from `parse_action`
    instead of a bare enum error; each task kind checks the rest.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    action_type: str
    """What to do: `inspect_logs`, `scale_workers`, `declare_healthy`, … (see the task's allowed actions)."""
    target: str | None = None
    """A service, metric or alert name, depending on the action; null for actions without a target."""
    value: StrictInt | StrictFloat | None = None
    """A number: the replica count for `scale_workers` (an integer ≥ 1); null otherwise."""
    args: dict[str, JsonValue] | None = None
    """A JSON object of arguments: the Diagnosis for an RCA task's `submit_diagnosis`; null otherwise."""


class _Typed(BaseModel):
    # Every variant has `target` and `value` (null where the action takes none), like the wire envelope.
    model_config = ConfigDict(extra="forbid", frozen=True)

    action_type: str
    target: str | None = None
    value: int | None = None

    @property
    def key(self) -> ActionKey:
        """`(action_type, target, value)`, the identity the duplicate rule compares."""
        return (self.action_type, self.target, self.value)

    def to_action(self) -> Action:
        """This action as the wire envelope."""
        return Action(
            action_type=self.action_type,
            target=None if self.target is None else str(self.target),
            value=self.value,
        )


class InspectLogs(_Typed):
    """Read a service's recent structured log records."""

    action_type: Literal["inspect_logs"] = "inspect_logs"
    target: Service
    value: None = None


class InspectMetrics(_Typed):
    """Read a metric's series (one per service that reports it), from before the incident to now."""

    action_type: Literal["inspect_metrics"] = "inspect_metrics"
    target: Metric
    value: None = None


class InspectAlert(_Typed):
    """Read an alert's rule and state: service, metric, threshold, current value, firing or not."""

    action_type: Literal["inspect_alert"] = "inspect_alert"
    target: Literal[ALERTS]  # type: ignore[valid-type]  # the alert names, a tuple known only at run time
    value: None = None


class RestartService(_Typed):
    """Restart a stateless service (the database has its own action)."""

    action_type: Literal["restart_service"] = "restart_service"
    target: Literal[Service.API_WORKERS, Service.QUEUE_SERVICE]
    value: None = None


class ScaleWorkers(_Typed):
    """Set a service's replica count."""

    action_type: Literal["scale_workers"] = "scale_workers"
    target: Literal[Service.API_WORKERS, Service.QUEUE_SERVICE]
    value: Annotated[StrictInt, Field(ge=1, le=MAX_REPLICAS)]


class RestartDatabase(_Typed):
    """Restart the database: every connection is dropped."""

    action_type: Literal["restart_database"] = "restart_database"
    target: None = None
    value: None = None


class RollbackRelease(_Typed):
    """Roll the application back to its previous release."""

    action_type: Literal["rollback_release"] = "rollback_release"
    target: None = None
    value: None = None


class ClearQueue(_Typed):
    """Purge every message waiting in the queue."""

    action_type: Literal["clear_queue"] = "clear_queue"
    target: None = None
    value: None = None


class Wait(_Typed):
    """Do nothing for one step: time passes."""

    action_type: Literal["wait"] = "wait"
    target: None = None
    value: None = None


class DeclareHealthy(_Typed):
    """Declare the incident resolved (terminal)."""

    action_type: Literal["declare_healthy"] = "declare_healthy"
    target: None = None
    value: None = None


class DeclareUnfixable(_Typed):
    """Give up (terminal)."""

    action_type: Literal["declare_unfixable"] = "declare_unfixable"
    target: None = None
    value: None = None


IncidentAction = Annotated[
    InspectLogs
    | InspectMetrics
    | InspectAlert
    | RestartService
    | ScaleWorkers
    | RestartDatabase
    | RollbackRelease
    | ClearQueue
    | Wait
    | DeclareHealthy
    | DeclareUnfixable,
    Field(discriminator="action_type"),
]
"""Any incident action, discriminated by `action_type`."""

incident_action_adapter: TypeAdapter[IncidentAction] = TypeAdapter(IncidentAction)
"""Validates a typed incident action; its `json_schema()` lists every variant with its allowed targets."""


@dataclass(frozen=True, slots=True)
class ActionRule:
    """What one action type accepts, read from its variant's fields (so messages and models cannot drift)."""

    action_type: ActionType
    model: type[IncidentAction]
    targets: tuple[str, ...] | None
    """Allowed targets; None when the action takes no target."""
    value_range: tuple[int, int] | None
    """Inclusive bounds of the integer value; None when the action takes no value."""


def _targets(model: type[_Typed]) -> tuple[str, ...] | None:
    annotation = model.model_fields["target"].annotation
    if annotation is type(None):
        return None
    if isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return tuple(str(m) for m in annotation)
    return tuple(str(a) for a in typing.get_args(annotation))


def _value_range(model: type[_Typed]) -> tuple[int, int] | None:
    field = model.model_fields["value"]
    if field.annotation is type(None):
        return None
    bounds = {type(m).__name__: m for m in field.metadata}
    return (bounds["Ge"].ge, bounds["Le"].le)


_VARIANTS: tuple[type[IncidentAction], ...] = typing.get_args(typing.get_args(IncidentAction)[0])
_RULES: Mapping[str, ActionRule] = MappingProxyType(
    {
        (t := ActionType(m.model_fields["action_type"].default)): ActionRule(t, m, _targets(m), _value_range(m))
        for m in _VARIANTS
    }
)


def action_rules() -> tuple[ActionRule, ...]:
    """One rule per incident action type, in `ActionType` order."""
    return tuple(_RULES[t] for t in ActionType)


def validate_envelope(data: Action | Mapping[str, Any]) -> Action:
    """Check the wire shape `{action_type, target, value, args}` only.

    Raises:
        ActionError: an unknown key, a missing `action_type`, or a field of the wrong JSON type.
    """
    if isinstance(data, Action):
        return data
    if not isinstance(data, Mapping):
        raise ActionError(
            f"an action is a JSON object, got {type(data).__name__}",
            allowed=ACTION_FIELDS,
            hint='e.g. {"action_type": "inspect_logs", "target": "database"}',
        )
    try:
        return Action.model_validate(data)
    except ValidationError as exc:
        # An unknown key explains a missing one (`actio` for `action_type`): report it first.
        errors = sorted(exc.errors(include_url=False), key=lambda e: e["type"] != "extra_forbidden")
        first = errors[0]
        where = ".".join(str(p) for p in first["loc"]) or "action"
        if first["type"] == "extra_forbidden":
            hint = did_you_mean(where, ACTION_FIELDS)
            raise ActionError(
                f"unknown field {where!r}" + (f"; {hint}" if hint else ""), field=where, allowed=ACTION_FIELDS
            ) from None
        raise ActionError(f"{first['msg']} (got {first.get('input')!r})", field=where.split(".")[0]) from None


def parse_action(data: IncidentAction | Action | Mapping[str, Any]) -> IncidentAction:
    """Validate an incident action and return its typed variant.

    Args:
        data: the wire envelope, as an `Action` or a JSON object (a typed action is returned as it is).

    Returns:
        The typed action (`InspectLogs`, `ScaleWorkers`, …).

    Raises:
        ActionError: naming the field that is wrong (`action_type`, `target`, `value`, `args`), with the
            allowed values and, for a misspelt name, the closest one.
    """
    if isinstance(data, _Typed):
        return data  # already validated
    action = validate_envelope(data)
    rule = _RULES.get(action.action_type)
    if rule is None:
        hint = did_you_mean(action.action_type, [str(t) for t in _RULES])
        raise ActionError(
            f"unknown action {action.action_type!r}" + (f"; {hint}" if hint else ""),
            field="action_type",
            allowed=[str(t) for t in ActionType],
        )
    name = action.action_type
    fields: dict[str, Any] = {}
    if rule.targets is None:
        if action.target is not None:
            raise ActionError(
                f"{name} takes no target, got {action.target!r}", field="target", hint="send target: null"
            )
    elif action.target is None:
        raise ActionError(f"{name} needs a target", field="target", allowed=rule.targets)
    elif action.target not in rule.targets:
        hint = did_you_mean(action.target, rule.targets)
        if name == ActionType.RESTART_SERVICE and action.target == Service.DATABASE:
            hint = "the database has its own action: restart_database (no target)"
        raise ActionError(
            f"{name} cannot target {action.target!r}" + (f"; {hint}" if hint else ""),
            field="target",
            allowed=rule.targets,
        )
    else:
        fields["target"] = action.target
    if rule.value_range is None:
        if action.value is not None:
            raise ActionError(f"{name} takes no value, got {action.value!r}", field="value", hint="send value: null")
    else:
        lo, hi = rule.value_range
        v = action.value
        if v is None or (isinstance(v, float) and not v.is_integer()) or not lo <= v <= hi:
            got = "nothing" if v is None else repr(v)
            raise ActionError(
                f"{name} needs an integer value from {lo} to {hi} (the replica count), got {got}",
                field="value",
                hint=f'e.g. {{"action_type": "{name}", "target": "{rule.targets[0] if rule.targets else ""}", '
                '"value": 4}',
            )
        fields["value"] = int(v)
    if action.args is not None:
        raise ActionError(f"{name} takes no args", field="args", hint="send args: null")
    return rule.model(**fields)
