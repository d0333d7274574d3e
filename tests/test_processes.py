"""The tag sweep (`sredrill.processes.end_tagged`) on real processes, plain and under bubblewrap's PID namespace.

A SIGKILLed process stays in /proc, its environment readable, until the kernel next runs it. The sweep must wait
for what it killed, not find it again at once: on 2 busy cores, rounds that followed each other without waiting
ended with "survived 5 rounds of SIGKILL" for processes that were only dying (most `--jobs 2` sandboxed runs whose
agent left a child). When it returns without a warning, nothing tagged is left: each process it killed is gone, or
a zombie its parent (here, the test) has still to reap.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest

from sredrill import processes
from tests.isolation import require_sandbox

VARIABLE = "SREDRILL_TEST_SWEEP_TAG"
SLEEPERS = 6
FOUND_WITHIN_S = 10.0


@pytest.fixture
def tag() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The test's own children, killed and reaped whatever the test did."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for child in started:
        child.kill()
        child.wait()


def _until_found(tag: str, since_pid: int, count: int) -> set[int]:
    """The tagged processes, once the sweep would find `count` of them. Popen returns once the child's exec has
    replaced its memory, before the kernel has laid out the new environment: a moment longer, /proc/PID/environ
    reads empty (seen on 2 busy cores, for the child started last)."""
    deadline = time.monotonic() + FOUND_WITHIN_S
    while len(found := set(processes._tagged(VARIABLE, tag, since_pid=since_pid))) < count:
        assert time.monotonic() < deadline, f"found {sorted(found)}, expected {count}"
    return found


def _swept(tag: str, since_pid: int, caplog: pytest.LogCaptureFixture) -> None:
    """Sweep, then check that it warned of nothing and left nothing tagged."""
    with caplog.at_level(logging.WARNING, logger=processes.__name__):
        processes.end_tagged(VARIABLE, tag, since_pid=since_pid)
    assert [r.getMessage() for r in caplog.records] == []
    assert processes._tagged(VARIABLE, tag, since_pid=since_pid) == []


def test_the_sweep_returns_once_the_processes_it_killed_are_gone(
    tag: str, children: list[subprocess.Popen[bytes]], caplog: pytest.LogCaptureFixture
) -> None:
    env = {**os.environ, VARIABLE: tag}
    for _ in range(SLEEPERS):
        # Each in a session of its own, as a grandchild that left its agent's group: only the tag finds it.
        children.append(subprocess.Popen(["sleep", "1000"], env=env, start_new_session=True))
    first = children[0].pid
    assert _until_found(tag, first - 1, SLEEPERS) == {c.pid for c in children}
    _swept(tag, first - 1, caplog)
    # Dead, not dying: only the reaping by their parent is left.
    assert [processes._state(c.pid) for c in children] == ["Z"] * SLEEPERS


def test_a_sandbox_s_pid_namespace_is_gone_when_the_sweep_returns(
    tag: str, children: list[subprocess.Popen[bytes]], caplog: pytest.LogCaptureFixture
) -> None:
    require_sandbox()
    bwrap = shutil.which("bwrap")
    assert bwrap is not None  # require_sandbox checked it
    # As a sandboxed cmd: agent runs (sandbox.py): bwrap's own PID namespace, ended with its parent; inside, a
    # shell with children in its group and one that left it, all with the tag.
    script = "sleep 1000 & sleep 1000 & setsid sleep 1000 & echo ready; wait"
    argv = [bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent", "--dev", "/dev", "--proc", "/proc"]
    sandbox = subprocess.Popen(
        [*argv, "sh", "-c", script], env={**os.environ, VARIABLE: tag}, stdout=subprocess.PIPE, start_new_session=True
    )
    children.append(sandbox)
    assert sandbox.stdout is not None
    assert sandbox.stdout.readline() == b"ready\n"
    # bwrap outside, bwrap as the namespace's pid 1, the shell, its three sleepers.
    _until_found(tag, sandbox.pid - 1, 6)
    # What the cmd: connector does when an agent run ends (`_end`): its group, then the tag.
    processes.kill_group(sandbox.pid)
    _swept(tag, sandbox.pid - 1, caplog)
    assert processes._state(sandbox.pid) == "Z"


def test_a_process_s_state_is_read_from_proc() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child_pid = child.pid
    os.waitid(os.P_PID, child_pid, os.WEXITED | os.WNOWAIT)  # it has exited, and is not reaped yet
    assert processes._state(child_pid) == "Z"
    child.wait()
    assert processes._state(child_pid) == "gone"
    assert processes._state(os.getpid()) == "R"  # reading its own stat, it is running
