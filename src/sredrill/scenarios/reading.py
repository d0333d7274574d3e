"""Reading pack files: parse JSON or YAML, validate against a model, turn every failure into a `PackError`.

Foreign errors (JSON, YAML, pydantic) are converted here, at the edge (STYLE #15): the `PackError` names the
file relative to the pack's parent, the field, what is wrong, and the fix. A file on disk is read with
`read_document`; one held in memory (a generated scenario's, never written) with `parse_document`, which makes
the same checks.

What no model can see is checked here too, in one linear pass over the parsed document: a file over
`MAX_FILE_BYTES`, text that is not Unicode (a lone surrogate such as JSON's `"\\ud800"`: it cannot be stored,
printed or sent, so the scenario is an error rather than a scenario with replaced text), a number that is
not finite (`NaN`, `Infinity`, `.nan`, `1e999`), nesting deeper than `MAX_DEPTH`, and YAML aliases that expand
a small file into a huge one.
"""

from __future__ import annotations

import json
import math
import re
import types
import typing
from pathlib import Path
from typing import TypeAlias, TypeVar, cast

import yaml
from pydantic import BaseModel, ValidationError

from sredrill.errors import PackError, did_you_mean
from sredrill.text import scrub

# libyaml's loader when PyYAML was built with it (about 10x faster); the same safe subset either way.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

__all__ = [
    "LINT_HINT",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "parse_document",
    "read_document",
    "read_model",
    "validate_model",
]

M = TypeVar("M", bound=BaseModel)

LINT_HINT = "then check with: sredrill scenarios lint --pack PATH"
MAX_FILE_BYTES = 50 * 1024 * 1024
"""The size cap of one pack file (50 MiB; the built-in pack's largest is under 100 KB)."""
MAX_DEPTH = 64
"""Levels of nesting a pack file may have (the formats need 5; real alert payloads a few more)."""
_ALIAS_BUDGET = 1_000_000
"""Values YAML aliases may add by repeating a list or mapping (a 400-byte "billion laughs" adds 10^8)."""
_QUOTED = re.compile(r"'([^']*)'|\b(\d+)\b")
# A lone surrogate can enter a JSON document only through a \uD800–\uDFFF escape: without one, skip the search.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_NUMBERS = frozenset({int, float, bool})


def read_document(path: Path, rel: str) -> dict[str, object]:
    """The top-level mapping of a JSON (`.json`) or YAML file, checked for what no model can see.

    Raises:
        PackError: the file is missing, over `MAX_FILE_BYTES`, unreadable, not valid JSON/YAML, not a mapping,
            or holds a lone surrogate, a non-finite number, nesting deeper than `MAX_DEPTH` or runaway aliases.
    """
    if not path.is_file():
        raise PackError("file is missing", path=rel, hint=f"add {path.name} (see docs/scenarios.md), {LINT_HINT}")
    try:
        _check_size(path.stat().st_size, rel)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PackError(f"cannot read the file: {exc}", path=rel, hint="save it as UTF-8 text") from exc
    return _document(text, rel, json_file=path.suffix == ".json")


def parse_document(data: bytes, name: str, rel: str) -> dict[str, object]:
    """`read_document` for a file held in memory (a generated scenario's): the same checks, nothing on disk.

    Args:
        data: the file's bytes.
        name: its file name (`.json` is read as JSON, anything else as YAML).
        rel: where it would sit, relative to the pack's parent (for messages).

    Raises:
        PackError: as `read_document`.
    """
    _check_size(len(data), rel)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PackError(f"cannot read the file: {exc}", path=rel, hint="save it as UTF-8 text") from exc
    # Universal newlines, as `Path.read_text` reads a file: the same bytes give the same document either way.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _document(text, rel, json_file=name.endswith(".json"))


def _check_size(size: int, rel: str) -> None:
    if size > MAX_FILE_BYTES:
        raise PackError(
            f"the file is {size / 2**20:.1f} MiB, over the cap of {MAX_FILE_BYTES // 2**20} MiB per pack file",
            path=rel,
            hint="keep the incident's window only (one point per period), or split the metrics into "
            f"aws_cloudwatch_metrics_<Metric>.json files, {LINT_HINT}",
        )


def _document(text: str, rel: str, *, json_file: bool) -> dict[str, object]:
    data = _parse_json(text, rel) if json_file else _parse_yaml(text, rel)
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        raise PackError(
            f"expected a mapping of keys at the top level, found {kind}",
            path=rel,
            hint=f"write the file as `key: value` pairs (see docs/scenarios.md), {LINT_HINT}",
        )
    _check_values(data, rel, surrogates=not json_file or _SURROGATE_ESCAPE.search(text) is not None)
    return data


def _parse_json(text: str, rel: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PackError(
            f"invalid JSON: {exc.msg}",
            path=rel,
            field=f"line {exc.lineno}, column {exc.colno}",
            hint=f"fix the JSON syntax (a trailing comma or a missing quote is the usual cause), {LINT_HINT}",
        ) from exc
    except RecursionError:
        raise PackError(
            f"the JSON is nested too deeply to read (more than {MAX_DEPTH} levels are never needed)",
            path=rel,
            hint=f"flatten the document, {LINT_HINT}",
        ) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise PackError(f"invalid JSON: {exc}", path=rel, hint=f"write the number in range, {LINT_HINT}") from exc


def _parse_yaml(text: str, rel: str) -> object:
    try:
        return yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        escape = "escape" in problem
        raise PackError(
            f"invalid YAML: {problem}",
            path=rel,
            field=where,
            hint=(
                "write the character itself, or a \\u escape of a real character (\\ud800-\\udfff alone are not text)"
                if escape
                else "fix the YAML syntax (indentation and unquoted ':' are the usual causes)"
            )
            + f", {LINT_HINT}",
        ) from exc
    except RecursionError:
        raise PackError(
            "the YAML is nested too deeply to read", path=rel, hint=f"flatten the document, {LINT_HINT}"
        ) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise PackError(f"invalid YAML: {exc}", path=rel, hint=f"write the number in range, {LINT_HINT}") from exc


_Where: TypeAlias = "tuple[_Where, int | str] | None"
"""A location as a linked list (parent, key): O(1) per value; spelled out only for an error."""


def _spell(where: _Where) -> str:
    parts: list[int | str] = []
    while where is not None:
        where, key = where
        parts.append(key if isinstance(key, int) else scrub(str(key))[0])
    return _field(tuple(reversed(parts)))


def _check_values(data: object, rel: str, *, surrogates: bool) -> None:
    """One pass over a parsed document: lone surrogates, non-finite numbers, depth, alias expansion.

    Iterative, so depth costs no stack; aliases (a YAML list or mapping that appears twice) are walked again
    each time, against `_ALIAS_BUDGET`, since everything after this (validation, blinding) walks them again.
    """
    seen: set[int] = set()
    added = 0
    stack: list[tuple[object, _Where, int, bool]] = [(data, None, 0, False)]
    while stack:
        node, where, depth, repeated = stack.pop()
        if isinstance(node, str):
            if surrogates and scrub(node)[1]:
                raise _surrogate_error(rel, _spell(where), "value")
            continue
        if isinstance(node, float):
            if not math.isfinite(node):
                raise PackError(
                    f"{node!r} is not a finite number",
                    path=rel,
                    field=_spell(where) or None,
                    hint="NaN and infinity are not measurements: leave the point out (with its timestamp) or "
                    f"write the number, {LINT_HINT}",
                )
            continue
        if not isinstance(node, dict | list):
            continue
        if depth >= MAX_DEPTH:
            raise PackError(
                f"nested more than {MAX_DEPTH} levels deep",
                path=rel,
                field=_spell(where) or None,
                hint=f"flatten the value: no pack file format needs more than a few levels, {LINT_HINT}",
            )
        if id(node) in seen:
            repeated = True
        seen.add(id(node))
        if repeated:
            added += len(node)
            if added > _ALIAS_BUDGET:
                raise PackError(
                    f"YAML aliases expand the file to more than {_ALIAS_BUDGET:,} values",
                    path=rel,
                    field=_spell(where) or None,
                    hint=f"write the values out instead of repeating anchors (&name / *name), {LINT_HINT}",
                )
        if isinstance(node, list):
            if _is_plain(node, surrogates):
                continue
            items: list[tuple[int | str, object]] = list(enumerate(node))
        else:
            items = []
            for key, value in node.items():
                if surrogates and isinstance(key, str) and scrub(key)[1]:
                    raise _surrogate_error(rel, _spell((where, key)), "key")
                items.append((key, value))
        for key, value in reversed(items):  # reversed: the first bad value in document order is the one named
            kind = type(value)
            if kind is int or kind is bool or value is None or (kind is str and not surrogates):
                continue  # nothing to check: skip the push (most values of a pack file are such)
            if isinstance(value, float) and math.isfinite(value):
                continue
            stack.append((value, (where, key), depth + 1, repeated))


def _is_plain(items: list[object], surrogates: bool) -> bool:
    """True for a list with nothing to check one by one: finite numbers, or strings when none can be bad.

    The series of a metrics file are such lists; checking them in C keeps a 50 MB file fast.
    """
    kinds = set(map(type, items))
    if kinds <= {str}:
        return not surrogates
    if kinds <= _NUMBERS:
        try:
            return math.isfinite(math.fsum(cast("list[float]", items)))  # every item is an int, float or bool
        except OverflowError:
            return False
    return False


def _surrogate_error(rel: str, field: str, what: str) -> PackError:
    return PackError(
        f"the {what} holds a lone surrogate (a \\ud800-\\udfff escape that is half a character): it is not text, "
        "and cannot be stored, printed or sent",
        path=rel,
        field=field or None,
        hint="write the character itself, or its full surrogate pair (\\ud83d\\ude00 is one character), or "
        f"remove the escape, {LINT_HINT}",
    )


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
    if kind == "finite_number":
        return f"{given!r} is not a finite number", None, "NaN and infinity are not measurements: leave the point out"
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
