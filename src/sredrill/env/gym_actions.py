"""The discrete actions of a classic incident task's gym env: `ACTION_TABLE` and the index encoding.

Apart from `sredrill.env.gym` (which re-exports these) so that the env (`gym_adapter.py`) and `make` both
import it without importing each other; it needs no gymnasium.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sredrill.errors import ActionError
from sredrill.incidents import Action, IncidentAction, action_rules, parse_action

__all__ = ["ACTION_TABLE", "SCALE_LADDER", "decode_action", "encode_action"]

SCALE_LADDER: tuple[int, ...] = (1, 2, 4, 6, 8, 12)
"""The replica counts a discrete `scale_workers` action can set."""


def _action_table() -> tuple[IncidentAction, ...]:
    # Built through `parse_action`, which validates each (type, target, value) into its action class; the
    # rule's class alone types neither its target nor its value for the checker.
    table: list[IncidentAction] = []
    for rule in action_rules():
        kind = rule.action_type
        if rule.targets is None:
            table.append(parse_action({"action_type": kind}))
        elif rule.value_range is not None:
            table += [
                parse_action({"action_type": kind, "target": t, "value": v}) for t in rule.targets for v in SCALE_LADDER
            ]
        else:
            table += [parse_action({"action_type": kind, "target": t}) for t in rule.targets]
    return tuple(table)


ACTION_TABLE: tuple[IncidentAction, ...] = _action_table()
"""Every discrete action, in a fixed order: action type (`ActionType` order), then target, then value."""
_INDEX = {a.key: i for i, a in enumerate(ACTION_TABLE)}


def encode_action(action: IncidentAction | Action | Mapping[str, Any]) -> int:
    """The index of an action in `ACTION_TABLE`.

    Raises:
        ActionError: the action is invalid, or (for `scale_workers`) its value is not on `SCALE_LADDER`.
    """
    typed = action if not isinstance(action, Action | Mapping) else parse_action(action)
    index = _INDEX.get(typed.key)
    if index is None:
        raise ActionError(
            f"{typed.action_type} value {typed.value} has no discrete index",
            field="value",
            allowed=[str(v) for v in SCALE_LADDER],
        )
    return index


def decode_action(index: int) -> IncidentAction:
    """The typed action at an index of `ACTION_TABLE`."""
    return ACTION_TABLE[int(index)]
