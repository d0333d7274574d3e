"""Every process group sredrill starts, so that none outlives the run (DESIGN §10, §11.3).

A process that left its group (`setsid`) is found by an environment tag instead (`end_tagged`): each `cmd:`
agent run carries one of its own, and `sredrill run` / `sredrill test` set `SESSION_TAG` for the whole command.

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
import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import Final

__all__ = [
    "SESSION_TAG",
    "end_tagged",
    "kill_all",
    "kill_group",
    "live_groups",
    "register_group",
    "set_notifier",
    "unregister_group",
]

log = logging.getLogger(__name__)

SESSION_TAG: Final = "SREDRILL_SESSION_TAG"
"""Environment variable `sredrill run` / `sredrill test` set for the whole command, inherited by every process
started under it (workers, agents, theirs): on the way out it finds what a killed worker could not end."""
SWEEP_ROUNDS: Final = 5
"""A process may fork while it is being found: the sweep looks again, this many times at most."""

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


def _tagged(variable: str, value: str) -> list[int]:
    """Processes whose environment has `variable=value` (Linux `/proc`; elsewhere none are found)."""
    needle = f"{variable}={value}".encode()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue  # gone meanwhile, or another user's
        if needle in environ.split(b"\0"):
            found.append(int(name))
    return found


def end_tagged(variable: str, value: str) -> None:
    """SIGKILL every process whose environment has `variable=value`, those it forks meanwhile included.

    It finds a process that left its group (`setsid`) but kept the environment it inherited. Limits: a process
    that replaced its environment (`env -i`, `execve` with a clean one) is not found; without `/proc`
    (macOS) nothing is.
    """
    for _ in range(SWEEP_ROUNDS):  # a process may fork while it is being found
        pids = _tagged(variable, value)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):  # gone meanwhile
                os.kill(pid, signal.SIGKILL)
    log.warning("processes with %s=%s survived %d rounds of SIGKILL", variable, value, SWEEP_ROUNDS)
