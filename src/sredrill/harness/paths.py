"""Paths as users see them, and which files are sredrill's own (their frames are hidden from users)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

__all__ = ["display_path", "is_sredrill_file", "shown_path"]

_SREDRILL_DIR: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_sredrill_file(path: str) -> bool:
    """True for a file of the sredrill package itself (its frames are hidden from users)."""
    return path.startswith(_SREDRILL_DIR)


def shown_path(path: str) -> str:
    """A source file's path as users see it: relative to the working directory when inside it.

    A prefix test, not `resolve()`: it runs for every recorded signal.
    """
    cwd = os.path.join(os.getcwd(), "")
    return path[len(cwd) :] if path.startswith(cwd) else path


def display_path(path: Path | str) -> str:
    """A path as users see it: relative to the working directory when inside it (resolved: for files, once)."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()
