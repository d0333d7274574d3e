"""Tool arguments: one pydantic model per tool, and their validation errors as `ToolError`s an agent can act on.

Arguments cross a boundary (an agent's JSON), so they are validated once, here (STYLE #7), with
`extra="forbid"`: a misspelt argument is an error naming it, never silently ignored. Every error message
says which argument is wrong, what was given, and what is allowed, so the agent can correct its next call.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Self, TypeVar

from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationError, WithJsonSchema, model_validator

from sredrill.errors import did_you_mean
from sredrill.trajectory import ToolError, without_nulls

__all__ = ["NoArgs", "Time", "TimeRange", "ToolArgs", "bad_arguments", "parse_arguments", "time_text"]

A = TypeVar("A", bound=BaseModel)

_TIME_EXAMPLE = "2024-05-01T10:00:00Z"


def _parse_time(value: object) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"must be an ISO-8601 time string such as {_TIME_EXAMPLE}, got {type(value).__name__}")
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO-8601 time: use e.g. {_TIME_EXAMPLE}") from None
    # Agents often drop the zone; every fixture time is UTC, so a naive time means UTC.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def time_text(moment: datetime) -> str:
    """A time as agents write it (ISO-8601 UTC with `Z`), for messages."""
    return _z(moment)


def _z(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


Time = Annotated[
    datetime,
    PlainValidator(_parse_time),
    WithJsonSchema({"type": "string", "format": "date-time", "examples": [_TIME_EXAMPLE]}),
]


class ToolArgs(BaseModel):
    """Base of the argument models: unknown arguments are errors, values are read-only."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, use_attribute_docstrings=True)


class NoArgs(ToolArgs):
    """A tool that takes no arguments (`get_alert`)."""


class TimeRange(ToolArgs):
    """Arguments with an optional `start`/`end` pair: `start` must come before `end`."""

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        start, end = getattr(self, "start", None), getattr(self, "end", None)
        if start is not None and end is not None and start >= end:
            raise ValueError(f"start ({_z(start)}) must be before end ({_z(end)})")
        return self


def parse_arguments(tool: str, model: type[A], args: object) -> A:
    """Validate a tool's arguments against its model.

    Args:
        tool: the tool's name, for the message.
        model: the argument model (or `Diagnosis` for `submit_diagnosis`).
        args: what the agent sent; `None` counts as no arguments, and a null optional argument as not given.

    Returns:
        The validated arguments.

    Raises:
        ToolError: `bad_arguments`, naming every wrong argument, what is allowed, and how to call the tool.
    """
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ToolError(
            "bad_arguments",
            f"{tool}: arguments must be a JSON object of named arguments, got {type(args).__name__}; "
            f"{_usage(tool, model)}",
        )
    try:
        return model.model_validate(without_nulls(model, args))
    except ValidationError as exc:
        raise bad_arguments(tool, model, exc) from None


def bad_arguments(tool: str, model: type[BaseModel], exc: ValidationError) -> ToolError:
    """One `ToolError` for a pydantic `ValidationError`: one clause per wrong argument, then the tool's usage."""
    problems = [_describe(model, err) for err in exc.errors(include_url=False)]
    return ToolError("bad_arguments", f"{tool}: {'; '.join(problems)}; {_usage(tool, model)}")


def _describe(model: type[BaseModel], err: Any) -> str:
    kind, loc, given = err["type"], err["loc"], err.get("input")
    where = _location(loc)
    if kind == "extra_forbidden":
        known = _known_fields(model, loc[:-1])
        hint = did_you_mean(str(loc[-1]), known)
        return f"unknown argument {where!r}" + (f" ({hint})" if hint else "")
    if kind == "missing":
        return f"missing required argument {where!r}"
    if kind in {"literal_error", "enum"}:
        allowed = re.findall(r"'([^']*)'", err.get("ctx", {}).get("expected", ""))
        hint = did_you_mean(str(given), allowed)
        return f"{where}: {given!r} is not allowed; allowed: {', '.join(allowed)}" + (f" ({hint})" if hint else "")
    message = str(err["msg"]).removeprefix("Value error, ")
    if kind.endswith("_type"):
        message += f", got {_json_type(given)}"
    return f"{where}: {message}" if loc else message


def _usage(tool: str, model: type[BaseModel]) -> str:
    fields = model.model_fields
    if not fields:
        return f"{tool} takes no arguments"
    parts = [f"{name} ({'required' if f.is_required() else 'optional'})" for name, f in fields.items()]
    return f"{tool} takes: {', '.join(parts)}"


def _location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(arguments)"


def _known_fields(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The field names of the (nested) model at `loc`, for a "did you mean"."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        info = current.model_fields.get(str(part)) if _is_model(current) else None
        current = _model_inside(info.annotation) if info is not None else None
    return list(current.model_fields) if _is_model(current) else []


def _is_model(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _model_inside(annotation: Any) -> Any:
    """The model in `Model`, `list[Model]` or `Model | None`, else None."""
    if _is_model(annotation):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_inside(arg)
        if found is not None:
            return found
    return None


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
