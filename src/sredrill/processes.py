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
import select
import signal
import threading
import time
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
SWEEP_WAIT_S: Final = 2.0
"""How long one sweep waits, in all, for the processes it killed to be gone. SIGKILL takes effect only when the
kernel next runs the process: until then it is still in /proc with its environment (measured on 2 busy cores:
most of 4 killed sleepers were still runnable after the 5 rounds, about 2 ms, of a sweep that did not wait)."""

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


def _has(pid: int, needle: bytes) -> bool:
    """Whether the process's environment holds `needle` (`NAME=value`); False once it is gone, a zombie, or another
    user's (their /proc/PID/environ cannot be opened, or reads empty)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        return False
    return needle in environ.split(b"\0")


def _tagged(variable: str, value: str, since_pid: int | None = None) -> list[int]:
    """Processes whose environment has `variable=value` (Linux `/proc`; elsewhere none are found).

    `since_pid`: only processes forked after the one with this pid can carry the tag. Pids grow until they
    wrap at `pid_max`, so while the last pid handed out is still above `since_pid` only higher pids are read
    (on a busy machine most processes are older: this skips most of `/proc`); after a wrap, all are.
    """
    needle = f"{variable}={value}".encode()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    floor = 0
    if since_pid is not None:
        last = _last_pid()
        floor = since_pid if last is not None and last >= since_pid else 0
    own = os.getpid()
    pids = (int(name) for name in entries if name.isdigit())
    return [pid for pid in pids if pid > floor and pid != own and _has(pid, needle)]


def _kill(pid: int, needle: bytes) -> int | None:
    """SIGKILL the process if it still carries `needle`; a pidfd that polls readable once it is gone, or None.

    Through a pidfd the signal reaches the process whose environment was read, never one that got its pid after
    it exited. Without pidfds (Linux before 5.3) it is `kill(2)`, and None: the sweep cannot wait for it.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return None  # gone meanwhile
    except OSError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        return None
    try:
        # Read again through the pid the pidfd now holds: the one found may have exited and its pid been reused.
        if _has(pid, needle):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            return pidfd
    except (ProcessLookupError, PermissionError):
        pass
    os.close(pidfd)
    return None


def _wait_gone(pidfds: list[int], deadline: float) -> None:
    """Until every one of these processes has exited (its pidfd polls readable; a zombie's /proc/PID/environ no
    longer opens) or `deadline` (`time.monotonic()`) has passed; closes the pidfds."""
    poller = select.poll()
    for pidfd in pidfds:
        poller.register(pidfd, select.POLLIN)
    waiting = set(pidfds)
    try:
        while waiting and (left_s := deadline - time.monotonic()) > 0:
            for pidfd, _ in poller.poll(left_s * 1000):
                poller.unregister(pidfd)
                waiting.discard(pidfd)
    finally:
        for pidfd in pidfds:
            os.close(pidfd)


def _state(pid: int) -> str:
    """The process's state letter from /proc/PID/stat (R, S, D, Z, …), or "gone"."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return "gone"
    fields = stat.rpartition(b")")[2].split()  # the command name before it may hold spaces and parentheses
    return fields[0].decode() if fields else "?"


def end_tagged(variable: str, value: str, *, since_pid: int | None = None) -> None:
    """SIGKILL every process whose environment has `variable=value`, those it forks meanwhile included.

    It finds a process that left its group (`setsid`) but kept the environment it inherited. After each round it
    waits, `SWEEP_WAIT_S` at most in all, until what it killed is gone: a killed process is still listed, with its
    environment, until the kernel runs it, so a round that came at once would find it again. When it returns
    without a warning, none is left. Limits: a process that replaced its environment (`env -i`, `execve` with a
    clean one) is not found; nor is one caught inside `execve`, after its old memory is gone and before the kernel
    has laid out the new environment (it reads empty for that moment; seen on 2 busy cores right after `fork`
    and `exec`), when no other tagged process makes the sweep look again; without `/proc` (macOS) nothing is.
    Without pidfds (Linux before 5.3) the rounds follow each other at once. `since_pid`: the tag was first given
    to this process (see `_tagged`), which narrows the search to what was forked since.
    """
    needle = f"{variable}={value}".encode()
    deadline = time.monotonic() + SWEEP_WAIT_S
    for _ in range(SWEEP_ROUNDS):  # a process may fork while it is being found
        pids = _tagged(variable, value, since_pid)
        if not pids:
            return
        pidfds = [pidfd for pidfd in (_kill(pid, needle) for pid in pids) if pidfd is not None]
        _wait_gone(pidfds, deadline)
    pids = _tagged(variable, value, since_pid)
    if not pids:
        return
    states = ", ".join(f"{pid} ({_state(pid)})" for pid in sorted(pids))
    log.warning("processes with %s=%s survived %d rounds of SIGKILL: %s", variable, value, SWEEP_ROUNDS, states)
