"""Text from outside (agents, files, clients) made safe to store, print and send.

A lone surrogate (`"\\ud800"`, which JSON's `\\ud800` escape and Python strings allow) cannot be encoded as
UTF-8: SQLite, JSON output and HTTP replies all fail on it. Every edge where foreign text enters calls
`scrub` (or `scrub_json` for parsed JSON), which replaces such code points with U+FFFD and says whether it
did, so the result can say so too.

Examples:
    >>> scrub("ok")
    ('ok', False)
    >>> scrub("bad\\ud800")
    ('bad\\ufffd', True)
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import JsonValue

__all__ = ["REPLACED_NOTE", "parse_json", "scrub", "scrub_json"]

REPLACED_NOTE = "text that was not valid Unicode (lone surrogates) was replaced with U+FFFD"


def scrub(text: str) -> tuple[str, bool]:
    """`text` with every lone surrogate replaced by U+FFFD, and whether any was."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"), True
    return text, False


def scrub_json(value: Any) -> tuple[Any, bool]:
    """A parsed JSON value (keys and strings, at any depth) scrubbed; iterative, so depth costs no stack."""
    if isinstance(value, str):
        return scrub(value)
    if not isinstance(value, dict | list):
        return value, False
    changed = False
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, key, node = stack.pop()
        if isinstance(node, dict):
            new: Any = {}
            for k, v in node.items():
                if isinstance(k, str):
                    k, bad = scrub(k)
                    changed |= bad
                new[k] = v
            parent[key] = new
            for k, v in new.items():
                if isinstance(v, str):
                    new[k], bad = scrub(v)
                    changed |= bad
                elif isinstance(v, dict | list):
                    stack.append((new, k, v))
        elif isinstance(node, list):
            new = list(node)
            parent[key] = new
            for i, v in enumerate(new):
                if isinstance(v, str):
                    new[i], bad = scrub(v)
                    changed |= bad
                elif isinstance(v, dict | list):
                    stack.append((new, i, v))
    return (root[0] if changed else value), changed


def parse_json(text: str | bytes) -> tuple[JsonValue, bool]:
    """Parse JSON from outside: (value scrubbed of lone surrogates, whether any was replaced).

    Raises:
        ValueError: not JSON, or nested too deeply to parse (a `RecursionError` inside `json` becomes this,
            so deep input is a clear input error, never a crash).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to parse: flatten the document") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 JSON: {exc}") from None
    return scrub_json(value)
