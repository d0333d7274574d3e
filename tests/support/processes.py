"""Process checks for tests of subprocess agents: is a pid still alive, and waiting with a deadline."""

from __future__ import annotations

import os
import time
from collections.abc import Callable


def is_running(pid: int) -> bool:
    """True while `pid` is a live process; a zombie (exited, not yet reaped) counts as gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            # The state follows the parenthesised command name, which may itself contain spaces.
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass  # no /proc (macOS): signal 0 checks existence, zombies included
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_until(condition: Callable[[], bool], *, deadline_s: float = 10.0, poll_s: float = 0.02) -> bool:
    """Poll `condition` until it holds or the deadline passes; returns its last value (tests assert it)."""
    end = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(poll_s)
    return True
