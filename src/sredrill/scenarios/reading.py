"""Reading pack files: parse JSON or YAML, validate against a model, turn every failure into a `PackError`.

Foreign errors (JSON, YAML, pydantic) are converted here, at the edge (STYLE #15): the `PackError` names the
file relative to the pack's parent, the field, what is wrong, and the fix.
"""

from __future__ import annotations

import json
import re
import types
import typing
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from sredrill.errors import PackError, did_you_mean

# libyaml's loader when PyYAML was built with it (about 10x faster); the same safe subset either way.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

__all__ = ["LINT_HINT", "read_document", "read_model", "validate_model"]

M = TypeVar("M", bound=BaseModel)

LINT_HINT = "then check with: sredrill scenarios lint --pack PATH"
_QUOTED = re.compile(r"'([^']*)'|\b(\d+)\b")


def read_document(path: Path, rel: str) -> dict[str, object]:
    """The top-level mapping of a JSON (`.json`) or YAML file.

    Raises:
        PackError: the file is missing, unreadable, not valid JSON/YAML, or not a mapping.
    """
    if not path.is_file():
        raise PackError("file is missing", path=rel, hint=f"add {path.name} (see docs/scenarios.md), {LINT_HINT}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PackError(f"cannot read the file: {exc}", path=rel, hint="save it as UTF-8 text") from exc
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PackError(
                f"invalid JSON: {exc.msg}",
                path=rel,
                field=f"line {exc.lineno}, column {exc.colno}",
                hint=f"fix the JSON syntax (a trailing comma or a missing quote is the usual cause), {LINT_HINT}",
            ) from exc
    else:
        try:
            data = yaml.load(text, Loader=_YAML_LOADER)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise PackError(
                f"invalid YAML: {problem}",
                path=rel,
                field=where,
                hint=f"fix the YAML syntax (indentation and unquoted ':' are the usual causes), {LINT_HINT}",
            ) from exc
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        raise PackError(
            f"expected a mapping of keys at the top level, found {kind}",
            path=rel,
            hint=f"write the file as `key: value` pairs (see docs/scenarios.md), {LINT_HINT}",
        )
    return data


def read_model(model: type[M], path: Path, rel: str) -> M:
    """Read a file and validate it against `model`.

    Raises:
        PackError: see `read_document` and `validate_model`.
    """
    return validate_model(model, read_document(path, rel), rel)


def validate_model(model: type[M], data: object, rel: str) -> M:
    """Validate parsed data against `model`, converting a `ValidationError` into one `PackError`.

    The error's field is the first failing location; every further pydantic error adds one line.

    Raises:
        PackError: the data does not match the model.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _pack_error(model, exc, rel) from exc


def _pack_error(model: type[BaseModel], exc: ValidationError, rel: str) -> PackError:
    errors = exc.errors(include_url=False)
    first = errors[0]
    message, allowed, hint = _describe(model, first)
    for extra in errors[1:]:
        message += f"\n  also {_field(extra['loc']) or '(top level)'}: {_describe(model, extra)[0]}"
    return PackError(
        message,
        path=rel,
        field=_field(first["loc"]) or None,
        allowed=allowed,
        hint=(hint + "\n  " if hint else "") + f"fix the value, {LINT_HINT}",
    )


def _describe(model: type[BaseModel], err: typing.Any) -> tuple[str, list[str] | None, str]:
    """(message, allowed values, did-you-mean) for one pydantic error."""
    kind, loc, given = err["type"], err["loc"], err.get("input")
    if kind == "extra_forbidden":
        known = _known_keys(model, loc[:-1])
        return f"unknown key {loc[-1]!r}", sorted(known), did_you_mean(str(loc[-1]), known)
    if kind == "missing":
        return "required key is missing", None, f"add `{loc[-1]}:` to the file"
    if kind in {"literal_error", "enum"}:
        expected = err.get("ctx", {}).get("expected", "")
        allowed = [a or b for a, b in _QUOTED.findall(expected)]
        return f"{given!r} is not allowed", allowed, did_you_mean(str(given), allowed)
    return err["msg"].removeprefix("Value error, "), None, ""


def _field(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _known_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The keys the (sub)model at `loc` accepts, for a "did you mean"."""
    annotation: object = model
    for part in loc:
        annotation = _step(annotation, part)
    inner = _unwrap(annotation)
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return [f.alias or name for name, f in inner.model_fields.items()]
    return []


def _step(annotation: object, part: int | str) -> object:
    """The annotation one location step inside `annotation` (a field, a list item or a dict value)."""
    annotation = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, set, frozenset):
        return typing.get_args(annotation)[0]
    if origin is dict:
        return typing.get_args(annotation)[1]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = annotation.model_fields
        info = fields.get(str(part)) or next((f for f in fields.values() if f.alias == part), None)
        return info.annotation if info is not None else None
    return None


def _unwrap(annotation: object) -> object:
    """`X | None` -> `X`."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation
