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

from sredrill.env import Action, Env, EnvState, Observation, TaskCatalog, TaskInfo, TaskKind
from sredrill.env.toolset import action_tools, episode_tools
from sredrill.errors import InputError, did_you_mean
from sredrill.scenarios import Pack, builtin_pack_names, load_pack
from sredrill.trajectory import ToolSpec

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

    def reset_result(self, *, seed: int | None = None) -> BaseModel:
        """Start an episode. sredrill's `Env` also takes `reward_mode=`; it is passed only when a reset asks."""
        ...

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

    def tools(self, env: SessionEnv | str | None) -> Sequence[McpTool]:
        """The actions of `env`'s episode as MCP tools (`tools/list`); a task id: that task's before any
        episode; None: the default task's."""
        ...

    def tool_action(self, env: SessionEnv | str, name: str, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """The action a `tools/call` stands for in `env`'s episode; an unknown tool raises `InputError` with
        the tool names."""
        ...

    def action_schema(self, env: SessionEnv) -> dict[str, Any]:
        """`GET /schema`'s `action` for a session: the JSON Schema of the actions its episode accepts."""
        ...


def _mcp_tool(tool: ToolSpec) -> McpTool:
    return McpTool(name=tool.name, description=tool.description, inputSchema=tool.input_schema)


# One source for what an agent may call: the MCP tools are the episode toolset's action tools (strict schemas).
# A family's tools name its episode's targets and an RCA task's its domain's, so they are built per episode
# (`episode_tools`; an RCA domain's are made once and kept).
_TOOLS: dict[TaskKind, tuple[McpTool, ...]] = {
    kind: tuple(_mcp_tool(t) for t in action_tools(kind)) for kind in (TaskKind.INCIDENT, TaskKind.RCA)
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
    def load(
        cls, *, packs: Sequence[str | os.PathLike[str] | Pack] | None = None, episode_key: str | None = None
    ) -> TraceCatalog:
        """The incident tasks plus the scenarios of `packs` (None: every built-in pack; `()`: none).

        `episode_key` keys the families' episodes (an evaluation server: see `sredrill.env.make`); None serves
        their public tasks (training).
        """
        return cls(TaskCatalog(load_packs(packs), episode_key=episode_key))

    def ids(self) -> tuple[str, ...]:
        return self._ids

    def tasks(self) -> list[TaskInfo]:
        return self._infos

    def make(self, task_id: str, *, seed: int | None = None) -> SessionEnv:
        return self._catalog.make(task_id, seed=seed)

    def tools(self, env: SessionEnv | str | None) -> tuple[McpTool, ...]:
        """The MCP tools of a session's episode, of a task by id (before any episode), or of the default task.

        A family's name its episode's targets; an RCA task's, its domain's (`inspect_logs`' targets and the
        inspections' arguments)."""
        if isinstance(env, Env) and env.kind in (TaskKind.FAMILY, TaskKind.RCA):
            return tuple(_mcp_tool(t) for t in episode_tools(env))
        task_id = self._ids[0] if env is None else env if isinstance(env, str) else env.task_id
        kind = self._kind(task_id)
        if kind in (TaskKind.FAMILY, TaskKind.RCA):
            return tuple(_mcp_tool(t) for t in episode_tools(self._catalog.make(task_id)))
        return _TOOLS[kind]

    def tool_action(self, env: SessionEnv | str, name: str, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        names = [t.name for t in self.tools(env)]
        if name not in names:
            hint = did_you_mean(name, names)
            raise InputError(f"unknown tool {name!r}" + (f"; {hint}" if hint else ""), field="name", allowed=names)
        if "action_type" in arguments:
            raise InputError(
                "the tool's name is the action type: leave action_type out of the arguments",
                field="arguments.action_type",
            )
        return {"action_type": name, **arguments}

    def action_schema(self, env: SessionEnv) -> dict[str, Any]:
        if not isinstance(env, Env):
            return self.description.action_schema
        return env.action_schema

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


def schemas_json(description: EnvDescription, *, action: Mapping[str, Any] | None = None) -> bytes:
    """`GET /schema`'s body: OpenEnv's `{action, observation, state}`; `action` replaces the generic envelope
    (a session's episode)."""
    return json.dumps(
        {
            "action": description.action_schema if action is None else action,
            "observation": description.observation_schema,
            "state": description.state_schema,
        }
    ).encode()
