"""The server's wire models: request bodies, error bodies, and the fixed answers of the read-only routes.

Formats we own forbid unknown keys (STYLE #8), so a typo is an error naming the key. Error bodies are shaped
like FastAPI's (`{"detail": [{"type", "loc", "msg", "input"}]}`) plus the allowed values and a hint, for
every error the server answers (400, 401, 403, 503), so a client reads `detail[0].msg` whatever happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictInt, ValidationError

from sredrill.errors import InputError, StateError

__all__ = [
    "ErrorBody",
    "ErrorItem",
    "HealthBody",
    "MetadataBody",
    "ResetRequest",
    "SchemaBody",
    "StepRequest",
    "TaskList",
    "error_body",
    "input_error_body",
    "state_error_body",
    "validation_error_body",
]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ResetRequest(_Wire):
    """`POST /reset` (and the WebSocket `reset` message's `data`); `{}` starts the default task."""

    task_id: str | None = None
    """A task id of `GET /tasks`: a classic incident task (`easy_cpu_spike`), a task family (`web_api`: each
    seed generates its own system and fault) or an RCA task; null: the session's current task (a new
    session: the first task)."""
    seed: Annotated[StrictInt, Field(ge=0)] | None = None
    """The episode's seed (same seed and actions, same trajectory); null: the environment draws one. A
    family's seed chooses its generated task (`GET /tasks` gives its train and evaluation ranges)."""
    reward_mode: str | None = None
    """`dense` (every step's reward) or `sparse` (only the grade, on the last step); null: the session's
    current mode (a new session: `dense`)."""


class StepRequest(_Wire):
    """`POST /step`: the action, wrapped as OpenEnv wraps it."""

    action: dict[str, JsonValue]
    """`{action_type, target, value, args}`; the task's allowed values are in `GET /tasks`."""


class HealthBody(_Wire):
    """`GET /health`."""

    status: Literal["healthy"] = "healthy"


class MetadataBody(_Wire):
    """`GET /metadata`: OpenEnv's `EnvironmentMetadata`."""

    name: str
    description: str
    version: str | None = None
    readme_content: str | None = None
    author: str | None = None
    documentation_url: str | None = None


class SchemaBody(_Wire):
    """`GET /schema`: JSON Schemas of the action, the observation and the state."""

    action: dict[str, JsonValue]
    observation: dict[str, JsonValue]
    state: dict[str, JsonValue]


class TaskList(_Wire):
    """`GET /tasks`: every task the server serves; the first is the default one."""

    tasks: list[dict[str, JsonValue]]


class ErrorItem(_Wire):
    """One problem, located like FastAPI locates validation errors."""

    type: str
    """`missing`, `extra_forbidden`, `invalid_action`, `unknown_task`, `no_episode`, `capacity`, …"""
    loc: list[str | int]
    """Where: `["body", "action", "target"]`, `["header", "X-Session-Id"]`, …"""
    msg: str
    input: JsonValue = None
    """The value that was rejected, when there is one."""


class ErrorBody(_Wire):
    """Every error answer of the environment routes (4xx, 503)."""

    detail: list[ErrorItem]
    allowed: list[str] | None = None
    """The valid values, when the error is about an unknown or wrong value."""
    hint: str | None = None
    """The next step."""


def error_body(
    kind: str, loc: Sequence[str | int], msg: str, *, allowed: Sequence[str] | None = None, hint: str | None = None
) -> ErrorBody:
    """A one-problem error body."""
    return ErrorBody(
        detail=[ErrorItem(type=kind, loc=list(loc), msg=msg)],
        allowed=list(allowed) if allowed is not None else None,
        hint=hint,
    )


def validation_error_body(exc: ValidationError, loc: Sequence[str | int], allowed: Sequence[str]) -> ErrorBody:
    """A request body that failed its model: one item per pydantic error, and the body's fields as `allowed`."""
    items = [
        ErrorItem(
            type=e["type"],
            loc=[*loc, *e["loc"]],
            msg=e["msg"],
            input=e["input"] if e["type"] != "missing" and _is_json(e["input"]) else None,
        )
        for e in exc.errors(include_url=False)
    ]
    return ErrorBody(detail=items, allowed=list(allowed))


def input_error_body(exc: InputError, loc: Sequence[str | int], kind: str, *, value: JsonValue = None) -> ErrorBody:
    """An `InputError` (an invalid action, an unknown task, a bad seed) at `loc` plus its `field`."""
    where = [*loc, *exc.field.split(".")] if exc.field else list(loc)
    return ErrorBody(
        detail=[ErrorItem(type=kind, loc=where, msg=exc.message, input=value)],
        allowed=list(exc.allowed) if exc.allowed is not None else None,
        hint=exc.hint,
    )


def state_error_body(exc: StateError, *, reset: str) -> ErrorBody:
    """A call made in the wrong order (`step` before `reset`, after the episode ended): names `reset`."""
    return error_body("no_episode", ["body"], str(exc).replace("reset()", reset), hint=f"start an episode with {reset}")


def _is_json(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool | list | dict)
