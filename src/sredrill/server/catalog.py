"""What the environment server serves: the `EnvCatalog` protocol, and `TraceCatalog`, sredrill's own.

The server never constructs an environment itself: it asks its catalog for a new one per session (STYLE §6,
"env classes passed as factories"), so sessions are isolated by construction. A catalog also describes the
environment (`/metadata`, `/schema`, `/tasks`) and turns MCP tool calls into actions.

`TraceCatalog` serves the incident tasks and the RCA scenarios of the packs given; any object with the same
methods can be served instead (`benchmarks/env_throughput.py` serves a trivial counter that way).

Examples:
    >>> catalog = TraceCatalog.load(packs=None)          # incident tasks + every built-in pack
    >>> catalog.ids()[:2]
    ('easy_cpu_spike', 'medium_cascade')
    >>> env = catalog.make("hard_mixed", seed=0)
    >>> env.reset_result().info.max_steps
    8
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, JsonValue

from sredrill.env import Action, EnvState, Observation, TaskCatalog, TaskInfo, TaskKind
from sredrill.env.toolset import action_tools
from sredrill.errors import InputError, did_you_mean
from sredrill.scenarios import Pack, builtin_pack_names, load_pack

__all__ = ["EnvCatalog", "EnvDescription", "McpTool", "SessionEnv", "TraceCatalog", "load_packs"]

INCIDENT_PACK = "incidents"
"""The built-in incident pack of `sredrill run`: its tasks are always served, so `--pack incidents` adds nothing."""


class SessionEnv(Protocol):
    """One session's environment; `sredrill.env.Env` is one.

    `reset_result` and `step` return a pydantic model shaped `{observation, reward, done, info}`; they raise
    `InputError` (an invalid action, a bad seed: HTTP 400 with the allowed values) or `StateError` (wrong call
    order: HTTP 400 naming the call to make first).
    """

    @property
    def task_id(self) -> str: ...

    def reset_result(self, *, seed: int | None = None) -> BaseModel: ...

    def step(self, action: Mapping[str, Any]) -> BaseModel: ...

    @property
    def state(self) -> BaseModel: ...

    def close(self) -> None: ...


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class McpTool(_Wire):
    """One action type as an MCP tool (`tools/list`)."""

    name: str
    description: str
    inputSchema: dict[str, JsonValue]  # MCP spells it so
    """Strict JSON Schema of the tool's arguments: the action's fields other than `action_type` (null: not given)."""


@dataclass(frozen=True, slots=True)
class EnvDescription:
    """`/metadata` and `/schema`: what the environment is, and its wire models."""

    name: str
    description: str
    version: str
    action_schema: dict[str, Any]
    observation_schema: dict[str, Any]
    state_schema: dict[str, Any]
    readme: str | None = None
    documentation_url: str | None = None


class EnvCatalog(Protocol):
    """Everything a server needs to serve an environment: tasks, a factory, a description, MCP tools."""

    description: EnvDescription

    def ids(self) -> tuple[str, ...]:
        """Every task id; the first is the default task (a reset without `task_id` on a new session)."""
        ...

    def tasks(self) -> Sequence[BaseModel]:
        """`GET /tasks`: how each task is listed."""
        ...

    def make(self, task_id: str, *, seed: int | None = None) -> SessionEnv:
        """A new environment for one task; an unknown id raises `InputError` with the allowed ids."""
        ...

    def tools(self, task_id: str) -> Sequence[McpTool]:
        """The task's actions as MCP tools (`tools/list`)."""
        ...

    def tool_action(self, task_id: str, name: str, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """The action a `tools/call` stands for; an unknown tool raises `InputError` with the tool names."""
        ...


# One source for what an agent may call: the MCP tools are the episode toolset's action tools (strict schemas).
_TOOLS: dict[TaskKind, tuple[McpTool, ...]] = {
    kind: tuple(McpTool(name=t.name, description=t.description, inputSchema=t.input_schema) for t in action_tools(kind))
    for kind in TaskKind
}


def load_packs(packs: Sequence[str | os.PathLike[str] | Pack] | None) -> list[Pack]:
    """The scenario packs whose scenarios become RCA tasks.

    Args:
        packs: built-in names or folders (`--pack`), or loaded packs; None: every built-in pack.

    Raises:
        PackError: a pack cannot be loaded.
    """
    chosen: Sequence[str | os.PathLike[str] | Pack] = builtin_pack_names() if packs is None else packs
    return [p if isinstance(p, Pack) else load_pack(p) for p in chosen if p != INCIDENT_PACK]


class TraceCatalog:
    """sredrill's environment: the incident tasks (TRACE) and the RCA scenarios of some packs, by task id.

    Built once per server from a `TaskCatalog`; immutable afterwards, so sessions share it safely.
    """

    def __init__(self, tasks: TaskCatalog) -> None:
        self._catalog = tasks
        self._ids = tasks.ids()
        self._infos = tasks.tasks()
        self._kinds: dict[str, TaskKind] = {t.task_id: t.kind for t in self._infos}
        self.description = EnvDescription(
            name="trace",
            description=(
                "TRACE: a seeded, partially observable production incident. Inspect logs, metrics and alerts, "
                "remediate what the evidence shows, verify, then declare. RCA scenarios of sredrill's packs are "
                "tasks too (opaque ids, GET /tasks)."
            ),
            version=_version(),
            action_schema=Action.model_json_schema(),
            observation_schema=Observation.model_json_schema(),
            state_schema=EnvState.model_json_schema(),
        )

    @classmethod
    def load(cls, *, packs: Sequence[str | os.PathLike[str] | Pack] | None = None) -> TraceCatalog:
        """The incident tasks plus the scenarios of `packs` (None: every built-in pack; `()`: none)."""
        return cls(TaskCatalog(load_packs(packs)))

    def ids(self) -> tuple[str, ...]:
        return self._ids

    def tasks(self) -> list[TaskInfo]:
        return self._infos

    def make(self, task_id: str, *, seed: int | None = None) -> SessionEnv:
        return self._catalog.make(task_id, seed=seed)

    def tools(self, task_id: str) -> tuple[McpTool, ...]:
        return _TOOLS[self._kind(task_id)]

    def tool_action(self, task_id: str, name: str, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        names = [t.name for t in self.tools(task_id)]
        if name not in names:
            hint = did_you_mean(name, names)
            raise InputError(f"unknown tool {name!r}" + (f"; {hint}" if hint else ""), field="name", allowed=names)
        if "action_type" in arguments:
            raise InputError(
                "the tool's name is the action type: leave action_type out of the arguments",
                field="arguments.action_type",
            )
        return {"action_type": name, **arguments}

    def _kind(self, task_id: str) -> TaskKind:
        kind = self._kinds.get(task_id)
        if kind is None:
            self._catalog.task(task_id)  # raises the unknown-task InputError with the allowed ids
            raise AssertionError(task_id)  # pragma: no cover - task() knows every id of _kinds
        return kind


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sredrill")
    except PackageNotFoundError:  # a source checkout that was never installed
        return "0+unknown"


def schemas_json(description: EnvDescription) -> bytes:
    """`GET /schema`'s body: OpenEnv's `{action, observation, state}`."""
    return json.dumps(
        {
            "action": description.action_schema,
            "observation": description.observation_schema,
            "state": description.state_schema,
        }
    ).encode()
