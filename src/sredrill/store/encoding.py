"""Store-safe JSON: every text the store writes can be encoded as UTF-8, and read back.

The store is the last line of defence behind the edges that scrub foreign text (`sredrill.text`): a lone
surrogate that slipped through would fail SQLite's UTF-8 encoding, or pydantic's JSON encoder. Escaping it
(`json.dumps(ensure_ascii=True)`) is not enough, because pydantic refuses a lone `\\ud800` escape when the
result is read back (`runs show`, `--resume`). So such text is replaced with U+FFFD, as the edges do, and the
caller is told, so the result can say so in its notes.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel

from sredrill.text import scrub, scrub_json

__all__ = ["Unstorable", "dump_json", "dump_model", "scrub_model", "scrub_text"]

M = TypeVar("M", bound=BaseModel)


class Unstorable(ValueError):
    """A value that cannot be written even after scrubbing; the message says why (for "could not store …")."""


def scrub_text(text: str | None) -> str | None:
    """`text` safe for a SQLite TEXT column (None stays None)."""
    return None if text is None else scrub(text)[0]


def dump_json(value: Any) -> tuple[str, bool]:
    """Compact JSON of a plain value, scrubbed; and whether anything was replaced.

    Raises:
        Unstorable: the value is not JSON (an object, a cycle) or is nested too deeply to encode.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:
        raise Unstorable("it is nested too deeply to encode as JSON") from None
    except (TypeError, ValueError) as exc:
        raise Unstorable(f"it is not JSON: {exc}") from None
    # A lone surrogate can only sit inside a JSON string, so replacing it keeps the document valid.
    return scrub(text)


def scrub_model(model: M) -> tuple[M, bool]:
    """`model` with every lone surrogate in its strings (and keys) replaced; and whether any was.

    Raises:
        Unstorable: the model holds a value pydantic cannot dump, or it no longer validates.
    """
    try:
        # Python mode: JSON mode would already mangle surrogate keys (three U+FFFD for one).
        data = model.model_dump()
    except (ValueError, RecursionError) as exc:  # PydanticSerializationError is a ValueError
        raise Unstorable(f"it cannot be encoded as JSON: {exc}") from None
    data, changed = scrub_json(data)
    if not changed:
        return model, False
    try:
        return type(model).model_validate(data), True
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise Unstorable(f"it no longer validates once its text is repaired: {exc}") from None


def dump_model(model: BaseModel, **kwargs: Any) -> tuple[str, bool]:
    """`model.model_dump_json(**kwargs)`, scrubbed when it holds lone surrogates; and whether it was.

    Raises:
        Unstorable: the model cannot be encoded as JSON, even with its text repaired.
    """
    try:
        return model.model_dump_json(**kwargs), False
    except (ValueError, RecursionError) as first:  # PydanticSerializationError is a ValueError
        scrubbed, changed = scrub_model(model)
        if changed:
            try:
                return scrubbed.model_dump_json(**kwargs), True
            except (ValueError, RecursionError):
                pass
        raise Unstorable(f"it cannot be encoded as JSON: {first}") from None
