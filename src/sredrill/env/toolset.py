"""An environment episode as a toolset: each action type is a tool, so any agent connector can play it.

This is how the `incidents` pack runs on the same engine as everything else (DESIGN §6): the agent acts
through tools; each call is one `step`, recorded on the trajectory like any other tool call.
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from sredrill.errors import ActionError, StateError
from sredrill.trajectory import ToolError, ToolSpec

from .environment import Env

__all__ = ["OBSERVE_TOOL", "EnvToolset"]

OBSERVE_TOOL = "observe"
"""Reads the current observation without taking a step (the reset observation, before any action)."""


def _action_specs(env: Env) -> list[ToolSpec]:
    schema = env.info.action_schema
    defs: dict[str, Any] = schema.get("$defs", {})  # type: ignore[assignment]
    specs = []
    for definition in defs.values():
        props = dict(definition.get("properties", {}))
        action = props.pop("action_type", {}).get("const")
        if action not in env.info.actions:
            continue
        args = {k: v for k, v in props.items() if v.get("type") != "null"}
        specs.append(
            ToolSpec(
                name=action,
                description=definition.get("description", action),
                input_schema={"type": "object", "properties": args, "additionalProperties": False},
            )
        )
    order = {name: i for i, name in enumerate(env.info.actions)}
    return sorted(specs, key=lambda s: order[s.name])


class EnvToolset:
    """One episode's actions as tools. Built after `reset`; a call after the episode ended is refused."""

    def __init__(self, env: Env) -> None:
        self._env = env
        self._specs = [
            ToolSpec(name=OBSERVE_TOOL, description="The current observation (takes no step).", input_schema={}),
            *_action_specs(env),
        ]
        self.done = False

    def specs(self) -> list[ToolSpec]:
        return list(self._specs)

    async def call(self, name: str, args: dict[str, Any]) -> JsonValue:
        if name == OBSERVE_TOOL:
            return self._env.state.observation.model_dump(mode="json") if self._env.state.observation else None
        if name not in self._env.info.actions:
            raise ToolError("unknown_tool", f"no tool {name!r}; tools: {', '.join(s.name for s in self._specs)}")
        if self.done:
            raise ToolError("episode_over", "the episode has ended: no more actions are accepted")
        try:
            result = self._env.step({"action_type": name, **args})
        except ActionError as exc:
            raise ToolError("bad_arguments", exc.render()) from exc
        except StateError as exc:
            raise ToolError("episode_over", str(exc)) from exc
        self.done = result.done
        return result.model_dump(mode="json")
