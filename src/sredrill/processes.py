"""Every process group sredrill starts, so that none outlives the run (DESIGN §10, §11.3).

Connectors that start a subprocess in a group of its own (`cmd:` agents) register the group here and
unregister it when they have reaped it. On an interruption (SIGINT, SIGTERM, SIGHUP) or a worker being
replaced, `kill_all()` ends what is left. Inside a worker process, `set_notifier` lets the worker tell its
driver about each group, so that the driver can kill them even when the worker itself is killed.

Examples:
    >>> register_group(12345); live_groups()
    {12345}
    >>> unregister_group(12345); live_groups()
    set()
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable

__all__ = ["kill_all", "kill_group", "live_groups", "register_group", "set_notifier", "unregister_group"]

_lock = threading.Lock()
_groups: set[int] = set()
_notify: Callable[[str, int], None] | None = None


def set_notifier(notify: Callable[[str, int], None] | None) -> None:
    """`notify("start" | "end", pgid)` is called on every register/unregister (a worker's link to its driver)."""
    global _notify
    _notify = notify


def register_group(pgid: int) -> None:
    with _lock:
        _groups.add(pgid)
    if _notify is not None:
        _notify("start", pgid)


def unregister_group(pgid: int) -> None:
    with _lock:
        _groups.discard(pgid)
    if _notify is not None:
        _notify("end", pgid)


def live_groups() -> set[int]:
    with _lock:
        return set(_groups)


def kill_group(pgid: int) -> None:
    """SIGKILL a whole process group; a group already gone is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_all() -> None:
    """SIGKILL every registered group (interruption or shutdown)."""
    with _lock:
        groups = list(_groups)
        _groups.clear()
    for pgid in groups:
        kill_group(pgid)
