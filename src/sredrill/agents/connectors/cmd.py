"""The `cmd:` connector: an agent as a subprocess speaking JSON lines, `cmd:COMMAND` (DESIGN §4.1).

The command is split with `shlex` and started without a shell, in a process group of its own. It reads the
Task as one JSON document on stdin, finds its run in the environment (`SREDRILL_RUN_ID`,
`SREDRILL_TOOLS_URL`, `SREDRILL_MCP_URL`, `SREDRILL_RUN_TOKEN`, `TRACEPARENT`) and prints steps as JSON
lines on stdout (see `sredrill.agents.transcript`); stderr is its log. When the run is cancelled (the
engine's timeout) or the command exits, its whole process group is killed: nothing it started outlives it.

Examples:
    >>> from sredrill.agents import resolve_agent
    >>> agent = resolve_agent("cmd:python examples/agents/script_agent.py")
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Final

from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.spec import AgentSpec, ConnectOptions
from sredrill.agents.transcript import Transcript
from sredrill.errors import AgentError, AgentSpecError
from sredrill.trajectory import Recorder

__all__ = ["RUN_VARIABLES", "CmdAgent", "connect"]

logger = logging.getLogger(__name__)

RUN_VARIABLES: Final = (
    "SREDRILL_RUN_ID",
    "SREDRILL_TOOLS_URL",
    "SREDRILL_MCP_URL",
    "SREDRILL_RUN_TOKEN",
    "TRACEPARENT",
)
LOG_LIMIT_BYTES: Final = 1 << 20
"""The agent's stderr is kept up to this size: the last bytes, where a crash explains itself."""
MAX_LINE_BYTES: Final = 16 << 20
"""A stdout line longer than this is cut into pieces rather than held in memory without bound."""
_CHUNK_BYTES: Final = 1 << 16
_STDERR_TAIL_LINES: Final = 20
_EXIT_POLL_S: Final = 0.05
_REAP_TIMEOUT_S: Final = 5.0


def _environment(task: Task) -> dict[str, str]:
    # A value inherited from an outer sredrill run would point the agent at another run's tools: the run
    # variables come from this task only (its `env`, then the protocol's own values).
    env = {k: v for k, v in os.environ.items() if k not in RUN_VARIABLES}
    env.update(task.env)
    own = {
        "SREDRILL_RUN_ID": task.run_id,
        "SREDRILL_TOOLS_URL": task.tools_url,
        "SREDRILL_MCP_URL": task.mcp_url,
        "SREDRILL_RUN_TOKEN": task.token,
        "TRACEPARENT": task.traceparent(),
    }
    env.update({k: v for k, v in own.items() if v})
    return env


class _Tail:
    """The last `limit` bytes of a stream."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = False

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > self.limit:
            del self.data[: len(self.data) - self.limit]
            self.dropped = True

    def text(self) -> str:
        body = self.data.decode("utf-8", errors="replace")
        return f"[sredrill] earlier output dropped; last {self.limit} bytes kept\n{body}" if self.dropped else body


async def _feed(stdin: asyncio.StreamWriter, payload: bytes) -> None:
    try:
        stdin.write(payload)
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        # The agent exited or closed stdin before reading the task: its choice (a plain script may ignore
        # stdin); how it exited is what decides the run.
        logger.debug("the agent closed stdin before reading the task")
    finally:
        stdin.close()


async def _read_lines(stream: asyncio.StreamReader, on_line: Callable[[str], None]) -> None:
    # Our own splitting rather than readline(): readline drops the buffer on an over-long line.
    pending = bytearray()
    while chunk := await stream.read(_CHUNK_BYTES):
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", start)) != -1:
            on_line(pending[start:end].decode("utf-8", errors="replace").rstrip("\r"))
            start = end + 1
        del pending[:start]
        if len(pending) > MAX_LINE_BYTES:
            on_line(pending.decode("utf-8", errors="replace"))
            pending.clear()
    if pending:
        on_line(pending.decode("utf-8", errors="replace").rstrip("\r"))


async def _read_chunks(stream: asyncio.StreamReader, tail: _Tail) -> None:
    while chunk := await stream.read(_CHUNK_BYTES):
        tail.add(chunk)


async def _exited(proc: asyncio.subprocess.Process) -> int:
    # Process.wait() also waits for stdout and stderr to close, which a leftover grandchild may hold open
    # forever; `returncode` is set as soon as the command itself has exited and been reaped.
    while proc.returncode is None:
        await asyncio.sleep(_EXIT_POLL_S)
    return proc.returncode


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the group is already empty
    except PermissionError:
        pass  # macOS refuses to signal a group whose members are all zombies: nothing left to kill


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Wait until the killed group's pipes close and the command is reaped, for at most a few seconds."""
    try:
        async with asyncio.timeout(_REAP_TIMEOUT_S):
            # communicate() drains what the cancelled readers left, so the pipe transports see EOF and close.
            await proc.communicate()
    except TimeoutError:
        # Only a process that left the group (setsid) can still hold a pipe; it is not ours to kill.
        logger.warning("agent pid %s: a process outside its group still holds its output open", proc.pid)


def _exit_message(command: str, returncode: int, stderr: str) -> str:
    if returncode < 0:
        try:
            how = f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            how = f"was killed by signal {-returncode}"
    else:
        how = f"exited with code {returncode}"
    lines = stderr.rstrip("\n").splitlines()[-_STDERR_TAIL_LINES:]
    if not lines:
        return f"agent command {command!r} {how} (its stderr was empty)"
    return f"agent command {command!r} {how}; last lines of its stderr:\n" + "\n".join(f"  {line}" for line in lines)


@dataclass(frozen=True, slots=True)
class CmdAgent:
    """An agent run as a subprocess (DESIGN §4.1)."""

    spec: str
    argv: tuple[str, ...]
    """The command, already split (no shell)."""
    needs_tool_server: ClassVar[bool] = True
    """It runs outside this process: the engine serves its tools over HTTP (`SREDRILL_TOOLS_URL`)."""

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Start the command, send it the Task, record its steps as they arrive, and return its answer.

        Raises:
            AgentError: the command could not start or exited non-zero; the message has its exit status and
                the last lines of its stderr.
        """
        payload = task.model_dump_json(exclude={"env"}).encode() + b"\n"
        command = shlex.join(self.argv)
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=_environment(task),
                start_new_session=True,
            )
        except OSError as exc:
            raise AgentError(f"cannot start agent command {command!r}: {exc}") from exc
        assert proc.stdin and proc.stdout and proc.stderr  # all three are pipes, as requested above
        transcript = Transcript(recorder)
        stderr = _Tail(LOG_LIMIT_BYTES)
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(_feed(proc.stdin, payload))
                tg.create_task(_read_lines(proc.stdout, transcript.feed))
                tg.create_task(_read_chunks(proc.stderr, stderr))
                returncode = await _exited(proc)
                # The command is done; whatever it left running in its group goes too, which also closes
                # the pipes those leftovers held, so the readers reach EOF.
                _kill_group(proc.pid)
        finally:
            # start_new_session=True made the command a group leader, so its pid is the group id. When the
            # run is cancelled this kills the command and everything it started; otherwise the group is
            # already empty. (A reaped leader's pid is not reused while its group has members.)
            _kill_group(proc.pid)
            await _reap(proc)
        if returncode != 0:
            raise AgentError(_exit_message(command, returncode, stderr.text()))
        return transcript.reply(stderr.text())


def _check_executable(spec: AgentSpec, exe: str) -> None:
    def error(message: str, hint: str) -> AgentSpecError:
        return AgentSpecError(f"{spec.text!r}: {message}", field="--agent", hint=hint)

    if os.sep in exe or (os.altsep is not None and os.altsep in exe):
        path = Path(exe)
        if not path.exists():
            raise error(f"no such file: {exe}", f"check the path (relative to {Path.cwd()})")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise error(
                f"{exe} is not an executable file",
                f"make it executable (chmod +x {exe}) or run it through its interpreter: cmd:python {exe}",
            )
    elif shutil.which(exe) is None:
        raise error(f"command {exe!r} not found on PATH", "install it, or give its path (cmd:./my-agent)")


def connect(spec: AgentSpec, options: ConnectOptions) -> CmdAgent:
    """Split the command with shlex and check that its executable exists.

    Args:
        spec: a parsed `cmd:` spec; its target is the command line (`python agent.py --fast`).
        options: unused; the command brings its own configuration.

    Raises:
        AgentSpecError: the command is empty, has an unbalanced quote, or its executable is not found.
    """
    try:
        argv = shlex.split(spec.target)
    except ValueError as exc:
        raise AgentSpecError(
            f"{spec.text!r}: cannot split the command: {exc}",
            field="--agent",
            hint="balance the quotes; the command runs without a shell, split like a POSIX shell would",
        ) from exc
    if not argv:
        raise AgentSpecError(
            f"{spec.text!r}: the command is empty",
            field="--agent",
            hint="give the command after 'cmd:', e.g. cmd:python examples/agents/script_agent.py",
        )
    _check_executable(spec, argv[0])
    return CmdAgent(spec=spec.text, argv=tuple(argv))
