"""An environment episode as a toolset: each action type is a tool, so any agent connector can play it.

This is how the `incidents` pack runs on the same engine as everything else (DESIGN §6): the agent acts
through tools; each call is one `step`, recorded on the trajectory like any other tool call. The tools'
argument schemas are the actions' fields other than `action_type`, strict (`strict_schema`): every
argument required, an optional one nullable, where null means not given. The environment server's MCP
tools are these same tools (`action_tools`).

A tool result is what an operator sees after acting: `{observation, done, step, message}` (`agent_view`).
It carries no reward and no score: the step reward locates the fault (+1 for inspecting the faulty
service), so showing it would let an agent grade its guesses (issue 21). The harness reads the score from
the environment itself (`Env.score()`); the environment server, built for RL, still returns rewards.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel, JsonValue

from sredrill.errors import ActionError, StateError
from sredrill.evidence import tool_specs
from sredrill.incidents import ActionType, IncidentAction
from sredrill.scenarios.domain import Domain, every_domain
from sredrill.trajectory import ToolError, ToolSpec, no_arguments, strict_schema

from .environment import Env
from .models import StepInfo, StepResult, TaskKind
from .rca import RCA_ACTIONS, RcaAction, RcaTask

__all__ = ["OBSERVE_TOOL", "EnvToolset", "action_tools", "agent_view", "episode_tools", "schema_tools"]

OBSERVE_TOOL = "observe"
"""Reads the current observation without taking a step (the reset observation, before any action)."""


def _variants(union: Any) -> tuple[type[BaseModel], ...]:
    """The member models of a discriminated union `Annotated[A | B | …, Field(discriminator=…)]`."""
    return typing.get_args(typing.get_args(union)[0])


def _rca_options(domains: Iterable[Domain], action: str) -> dict[str, Any]:
    """An RCA inspection's `args`: the optional arguments of the domains' evidence tools it stands for."""
    props: dict[str, Any] = {}
    for domain in domains:
        specs = {s.name: s.input_schema for s in tool_specs(domain)}
        for tool in domain.tools:
            if tool.action == action:
                props.update(typing.cast(dict[str, Any], specs[tool.name]["properties"]))
                props.pop(tool.target_argument or "", None)  # the action's target fills it
    return {"type": "object", "properties": props, "required": [], "additionalProperties": False}


# The RCA inspections take a free-form `args` object on the wire; a strict schema needs its fields, which
# are the optional arguments of the evidence tools each inspection calls (env/rca.py's `_tool_call`). A task's
# tools are its domain's; the static ones (no task yet) cover every registered domain's.
_INSPECTIONS = ("inspect_metrics", "inspect_logs")


def _action_schema(model: type[BaseModel], domains: tuple[Domain, ...] = ()) -> tuple[str, str, dict[str, JsonValue]]:
    """(action type, description, strict argument schema) of one action variant; an RCA inspection's `args`
    and log targets are those of `domains`."""
    schema = model.model_json_schema()
    properties = dict(schema.get("properties", {}))
    name = properties.pop("action_type")["const"]
    # Fields a variant pins to null (`target: None`) are not arguments at all.
    properties = {k: v for k, v in properties.items() if v.get("type") != "null"}
    if domains and name in _INSPECTIONS and "args" in properties:
        properties["args"] = {
            "anyOf": [_rca_options(domains, name), {"type": "null"}],
            "description": "The evidence tool's optional arguments (each null when not wanted), or null for none.",
        }
    if domains and "enum" in properties.get("target", {}):
        targets = dict.fromkeys(t for d in domains for t in d.action_targets(name))
        properties["target"] = {**properties["target"], "enum": list(targets)}
    arguments = {
        "type": "object",
        "properties": properties,
        "required": [r for r in schema.get("required", []) if r in properties],
        "additionalProperties": False,
        "$defs": schema.get("$defs", {}),
    }
    return name, (model.__doc__ or name).strip(), strict_schema(arguments)


def _strict_arguments(variant: Mapping[str, Any], defs: Mapping[str, Any]) -> tuple[str, str, dict[str, JsonValue]]:
    """(action type, description, strict argument schema) of one variant of an action union's JSON Schema."""
    properties = dict(variant.get("properties", {}))
    name = properties.pop("action_type")["const"]
    properties = {k: v for k, v in properties.items() if v.get("type") != "null"}
    arguments = {
        "type": "object",
        "properties": properties,
        "required": [r for r in variant.get("required", []) if r in properties],
        "additionalProperties": False,
        "$defs": dict(defs),
    }
    return name, str(variant.get("description") or name).strip(), strict_schema(arguments)


def schema_tools(schema: Mapping[str, Any]) -> list[ToolSpec]:
    """Each variant of an action union's JSON Schema (`oneOf`/`anyOf` of `$ref`s, pydantic's shape) as a tool.

    This is how a family episode's actions become tools: its schema enumerates that episode's targets.
    """
    defs = schema.get("$defs", {})
    variants = schema.get("oneOf") or schema.get("anyOf") or [schema]
    tools = []
    for member in variants:
        ref = member.get("$ref")
        variant = defs[ref.rsplit("/", 1)[-1]] if isinstance(ref, str) else member
        name, description, arguments = _strict_arguments(variant, defs)
        tools.append(ToolSpec(name=name, description=description, input_schema=arguments))
    return tools


def episode_tools(env: Env) -> list[ToolSpec]:
    """The actions of `env`'s current episode as tools (a family's name its episode's targets; an RCA task's,
    its domain's)."""
    if env.kind is TaskKind.FAMILY:
        return schema_tools(env.action_schema)
    if isinstance(env.task, RcaTask):
        return action_tools(env.kind, env.task.domain)
    return action_tools(env.kind)


def _tools_json(union: Any, order: tuple[str, ...], domains: tuple[Domain, ...] = ()) -> str:
    found = {
        name: (description, schema)
        for name, description, schema in (_action_schema(m, domains) for m in _variants(union))
    }
    return json.dumps([{"name": n, "description": found[n][0], "input_schema": found[n][1]} for n in order])


@cache
def _rca_tools(domain: Domain | None) -> str:
    # Generating JSON Schemas takes milliseconds: done once per domain, kept as immutable text.
    return _tools_json(RcaAction, RCA_ACTIONS, every_domain() if domain is None else (domain,))


_INCIDENT_TOOLS = _tools_json(IncidentAction, tuple(str(t) for t in ActionType))


def action_tools(kind: TaskKind, domain: Domain | None = None) -> list[ToolSpec]:
    """Each action type of a task kind as a tool, in the task's action order.

    Args:
        kind: `incident` or `rca` (a family's tools are its episode's: `episode_tools`).
        domain: an RCA task's domain, whose targets and tool arguments the inspections take; None: every
            registered domain's.

    Returns:
        Fresh `ToolSpec`s (new dicts on every call); a call's arguments plus `action_type` are the action.
    """
    text = _INCIDENT_TOOLS if kind is TaskKind.INCIDENT else _rca_tools(domain)
    return [ToolSpec.model_validate(t) for t in json.loads(text)]


class EnvToolset:
    """One episode's actions as tools. Built after `reset` (a family episode's tools name its own targets); a
    call after the episode ended is refused."""

    def __init__(self, env: Env) -> None:
        self._env = env
        allowed = set(env.episode_info.actions)
        self._specs = [
            ToolSpec(
                name=OBSERVE_TOOL,
                description="The current observation (takes no step).",
                input_schema=no_arguments(),
            ),
            *(t for t in episode_tools(env) if t.name in allowed),
        ]
        self._actions = frozenset(s.name for s in self._specs[1:])
        self.done = False

    def specs(self) -> list[ToolSpec]:
        return list(self._specs)

    async def call(self, name: str, args: dict[str, Any]) -> JsonValue:
        if name == OBSERVE_TOOL:
            return self._env.state.observation.model_dump(mode="json") if self._env.state.observation else None
        if name not in self._actions:
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
        return agent_view(result)


_ENDED = "the episode is over"


def agent_view(result: StepResult) -> dict[str, JsonValue]:
    """A step as a tool result: the observation, whether the episode is over, the step count and a message.

    No reward, no episode reward, no grade: nothing that scores the action. The last step's message is
    replaced too, since a declaration's message says whether the incident was resolved.
    """
    info = result.info
    step = info.step if isinstance(info, StepInfo) else 0
    message = info.message if isinstance(info, StepInfo) else ""
    return {
        "observation": result.observation.model_dump(mode="json"),
        "done": result.done,
        "step": step,
        "message": _ENDED if result.done else message,
    }
