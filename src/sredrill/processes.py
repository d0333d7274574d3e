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


def _last_pid() -> int | None:
    """The pid the kernel handed out last in this pid namespace, or None where it cannot be read."""
    try:
        with open("/proc/sys/kernel/ns_last_pid", "rb") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def _tagged(variable: str, value: str, since_pid: int | None = None) -> list[int]:
    """Processes whose environment has `variable=value` (Linux `/proc`; elsewhere none are found).

    `since_pid`: only processes forked after the one with this pid can carry the tag. Pids grow until they
    wrap at `pid_max`, so while the last pid handed out is still above `since_pid` only higher pids are read
    (on a busy machine most processes are older: this skips most of `/proc`); after a wrap, all are.
    """
    needle = f"{variable}={value}".encode()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    floor = 0
    if since_pid is not None:
        last = _last_pid()
        floor = since_pid if last is not None and last >= since_pid else 0
    own = os.getpid()
    for name in entries:
        if not name.isdigit():
            continue
        pid = int(name)
        if pid <= floor or pid == own:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue  # gone meanwhile, or another user's
        if needle in environ.split(b"\0"):
            found.append(int(name))
    return found


def end_tagged(variable: str, value: str, *, since_pid: int | None = None) -> None:
    """SIGKILL every process whose environment has `variable=value`, those it forks meanwhile included.

    It finds a process that left its group (`setsid`) but kept the environment it inherited. Limits: a process
    that replaced its environment (`env -i`, `execve` with a clean one) is not found; without `/proc`
    (macOS) nothing is. `since_pid`: the tag was first given to this process (see `_tagged`), which narrows
    the search to what was forked since.
    """
    for _ in range(SWEEP_ROUNDS):  # a process may fork while it is being found
        pids = _tagged(variable, value, since_pid)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):  # gone meanwhile
                os.kill(pid, signal.SIGKILL)
    log.warning("processes with %s=%s survived %d rounds of SIGKILL", variable, value, SWEEP_ROUNDS)
