"""The `cmd:` connector: an agent as a subprocess speaking JSON lines, `cmd:COMMAND` (DESIGN §4.1).

The command is split with `shlex` and started without a shell, in a process group of its own. It reads the
Task as one JSON document on stdin, finds its run in the environment (`SREDRILL_RUN_ID`,
`SREDRILL_TOOLS_URL`, `SREDRILL_MCP_URL`, `SREDRILL_RUN_TOKEN`, `TRACEPARENT`) and prints steps as JSON
lines on stdout (see `sredrill.agents.transcript`); stderr is its log. When the run is cancelled (the
engine's timeout) or the command exits, its whole process group is killed, and so is every process that still
carries the run's `SREDRILL_PROCESS_TAG` in its environment (a grandchild that left the group with `setsid`):
nothing it started outlives it. The group is registered with `sredrill.processes`, so an interrupted sredrill
(SIGINT, SIGTERM, SIGHUP) kills it too.

Output is bounded: the first `OUTPUT_LIMIT_BYTES` (or `OUTPUT_LIMIT_LINES` lines) of stdout become steps; the
rest is still read, so the agent never blocks on a full pipe, and dropped, except the last short `response` or
`diagnosis` line, which still answers. The reply then ends with `… [truncated: N bytes]` and says so in its
notes. Once the command has exited, what its pipes still hold is read for at most `DRAIN_GRACE_S`.

Isolation (`ConnectOptions.isolation`, DESIGN §11.3): at process and sandbox level the command's environment
is the allow-list (`sredrill.isolation.agent_environment`: no sredrill secret, no store pointer; `--agent-env`
names pass). At sandbox level it runs under bubblewrap (`sredrill.isolation.Sandbox`) in a fresh working
directory of its own, removed after the run; with `--agent-network none` the run's tool server also listens on
a Unix socket the agent chose (`tools_socket`), bound into the sandbox and served there on the same
127.0.0.1 port as `SREDRILL_TOOLS_URL` names.

Examples:
    >>> from sredrill.agents import resolve_agent
    >>> agent = resolve_agent("cmd:python examples/agents/script_agent.py")
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shlex
import shutil
import signal
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Final
from urllib.parse import urlsplit

from sredrill import processes
from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reply import OUTPUT_LIMIT_BYTES, truncated_note, with_agent_log
from sredrill.agents.spec import AgentSpec, ConnectOptions
from sredrill.agents.transcript import Transcript
from sredrill.errors import AgentError, AgentSpecError
from sredrill.text import parse_json
from sredrill.trajectory import Recorder

if TYPE_CHECKING:
    from sredrill.isolation import IsolationPolicy, ToolsBridge

__all__ = [
    "OUTPUT_LIMIT_BYTES",
    "OUTPUT_LIMIT_LINES",
    "PROCESS_TAG",
    "RUN_VARIABLES",
    "CmdAgent",
    "connect",
    "sandbox_interpreter",
]

logger = logging.getLogger(__name__)

RUN_VARIABLES: Final = (
    "SREDRILL_RUN_ID",
    "SREDRILL_TOOLS_URL",
    "SREDRILL_MCP_URL",
    "SREDRILL_RUN_TOKEN",
    "TRACEPARENT",
)
PROCESS_TAG: Final = "SREDRILL_PROCESS_TAG"
"""Environment variable, unique per agent run, by which sredrill finds the run's processes that left its group."""
LOG_LIMIT_BYTES: Final = 1 << 20
"""The agent's stderr is kept up to this size: the last bytes, where a crash explains itself."""
OUTPUT_LIMIT_LINES: Final = 20_000
"""Stdout lines kept as steps (each line is a step, and a step costs far more memory than its bytes)."""
ANSWER_LINE_BYTES: Final = 64 << 10
"""Past the output limit, a `response` or `diagnosis` line up to this size is still read as the answer."""
DRAIN_GRACE_S: Final = 2.0
"""After the command exits, how long its pipes are still read (a process outside sredrill's reach may hold them)."""
_STDOUT_LIMIT_BYTES: Final = OUTPUT_LIMIT_BYTES - 64
"""Room for the marker line, so that text joined from the lines kept stays within OUTPUT_LIMIT_BYTES."""
_CHUNK_BYTES: Final = 1 << 16
_STDERR_TAIL_LINES: Final = 20
_REAP_TIMEOUT_S: Final = 5.0


def _environment(task: Task, tag: str, policy: IsolationPolicy | None = None) -> dict[str, str]:
    from sredrill.isolation import agent_environment

    # A value inherited from an outer sredrill run would point the agent at another run's tools: the run
    # variables come from this task only (its `env`, then the protocol's own values).
    base = {k: v for k, v in os.environ.items() if k not in RUN_VARIABLES}
    run = {
        "SREDRILL_RUN_ID": task.run_id,
        "SREDRILL_TOOLS_URL": task.tools_url,
        "SREDRILL_MCP_URL": task.mcp_url,
        "SREDRILL_RUN_TOKEN": task.token,
        "TRACEPARENT": task.traceparent(),
    }
    own = {**task.env, **{k: v for k, v in run.items() if v}, PROCESS_TAG: tag}
    return agent_environment(policy, base, own)


def _tools_port(task: Task) -> int | None:
    """The loopback port the agent's tool URLs name (the forwarder serves it inside the sandbox)."""
    for url in (task.tools_url, task.mcp_url, task.env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")):
        if url:
            port = urlsplit(url).port
            if port is not None:
                return port
    return None


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


class _Stdout:
    """An agent's stdout cut into lines for the transcript, within the output limits.

    Within the limits every line is passed on (a line longer than what is left: its head). Beyond them lines
    are read and counted but dropped, except the last `response` or `diagnosis` line of at most
    `ANSWER_LINE_BYTES`, kept for `finish`. Memory stays bounded whatever the agent prints.
    """

    def __init__(self, on_line: Callable[[str], None]) -> None:
        self.on_line = on_line
        self.total_bytes = 0
        self.kept_bytes = 0
        self.kept_lines = 0
        self.invalid_utf8 = False
        self.answer: bytes | None = None
        self._pending = bytearray()
        self._skipping = False
        """Inside a line that is being dropped: ignore bytes up to its newline."""

    @property
    def full(self) -> bool:
        return self.kept_bytes >= _STDOUT_LIMIT_BYTES or self.kept_lines >= OUTPUT_LIMIT_LINES

    @property
    def truncated(self) -> bool:
        return self.total_bytes > self.kept_bytes + (len(self.answer) + 1 if self.answer is not None else 0)

    def _decode(self, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            self.invalid_utf8 = True
            return data.decode("utf-8", errors="replace")

    def _pass_on(self, data: bytes) -> None:
        self.kept_bytes += len(data) + 1
        self.kept_lines += 1
        self.on_line(self._decode(data).rstrip("\r"))

    def _part(self, part: bytes) -> None:
        if self._skipping:
            return
        self._pending += part
        if not self.full:
            room = _STDOUT_LIMIT_BYTES - self.kept_bytes
            if len(self._pending) > room:
                cut = room
                while cut > 0 and self._pending[cut] & 0xC0 == 0x80:  # a continuation byte: never split a character
                    cut -= 1
                self._pass_on(bytes(self._pending[:cut]))
                self.kept_bytes = _STDOUT_LIMIT_BYTES
                self._pending.clear()
                self._skipping = True
        elif len(self._pending) > ANSWER_LINE_BYTES:
            self._pending.clear()
            self._skipping = True

    def _line_end(self) -> None:
        if self._skipping:
            self._skipping = False
            return
        line = bytes(self._pending)
        self._pending.clear()
        if not self.full:
            self._pass_on(line)
        elif line.lstrip().startswith(b"{") and _is_answer(line):
            self.answer = line

    def add(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        start = 0
        while not self.full and (end := chunk.find(b"\n", start)) != -1:
            self._part(chunk[start:end])
            self._line_end()
            start = end + 1
        rest = chunk[start:]
        first = rest.find(b"\n") if self.full else -1
        if first == -1:
            self._part(rest)
            return
        # Past the limits, whole lines are only searched for an answer, in bulk: a line at a time would cost
        # a minute for 100 MB of short lines.
        self._part(rest[:first])
        self._line_end()
        last = rest.rfind(b"\n")
        if last > first:
            self._scan(rest[first + 1 : last])
        self._part(rest[last + 1 :])

    def _scan(self, block: bytes) -> None:
        """Keep the last answer line among these whole lines, if any."""
        end = len(block)
        while (at := block.rfind(b'"kind"', 0, end)) != -1:
            start = block.rfind(b"\n", 0, at) + 1
            stop = block.find(b"\n", at)
            line = block[start : stop if stop != -1 else len(block)]
            if len(line) <= ANSWER_LINE_BYTES and line.lstrip().startswith(b"{") and _is_answer(line):
                self.answer = line
                return
            end = start

    def finish(self) -> None:
        """The last line (without a newline), then, when output was dropped, the marker and the late answer."""
        if self._pending or self._skipping:
            self._line_end()
        if self.truncated:
            kept = self.kept_bytes + (len(self.answer) + 1 if self.answer is not None else 0)
            self.on_line(f"… [truncated: {max(self.total_bytes - kept, 0)} bytes]")
            if self.answer is not None:
                self.on_line(self._decode(self.answer).rstrip("\r"))

    def notes(self) -> list[str]:
        notes = [truncated_note("the agent's stdout", self.total_bytes)] if self.truncated else []
        if self.invalid_utf8:
            notes.append("the agent's stdout was not valid UTF-8; the invalid bytes were replaced with U+FFFD")
        return notes


def _is_answer(line: bytes) -> bool:
    try:
        obj, _ = parse_json(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("kind") in ("response", "diagnosis")


async def _read_stdout(stream: asyncio.StreamReader, stdout: _Stdout) -> None:
    # Our own splitting rather than readline(): readline drops the buffer on an over-long line.
    while chunk := await stream.read(_CHUNK_BYTES):
        stdout.add(chunk)


async def _read_chunks(stream: asyncio.StreamReader, tail: _Tail) -> None:
    while chunk := await stream.read(_CHUNK_BYTES):
        tail.add(chunk)


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's stream protocol for the command's pipes, which also says when the command itself exited.

    `Process.wait()` also waits for stdout and stderr to close, which a leftover grandchild may hold open
    forever. `exited` is resolved by the loop's child watcher as soon as the command has been reaped (a pidfd
    the loop watches where Python and the kernel support it, 3.12+ on Linux ≥ 5.3; a thread blocked in
    `waitpid` otherwise): no polling, so a short agent costs no more than its own run time.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=_CHUNK_BYTES, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def _spawn(argv: tuple[str, ...], env: dict[str, str]) -> tuple[asyncio.subprocess.Process, _Protocol]:
    """Start the command with its three pipes, in a new session; the process and its exit notification.

    What `asyncio.create_subprocess_exec` does, with `_Protocol` in place of the stream protocol it builds.
    """
    loop = asyncio.get_running_loop()
    pipe = asyncio.subprocess.PIPE
    transport, protocol = await loop.subprocess_exec(
        lambda: _Protocol(loop), *argv, stdin=pipe, stdout=pipe, stderr=pipe, env=env, start_new_session=True
    )
    return asyncio.subprocess.Process(transport, protocol, loop), protocol


def _end(pgid: int, tag: str) -> None:
    """Kill the agent's process group, then whatever of the run left it (setsid) but kept its environment."""
    processes.kill_group(pgid)
    # The tag was set in the agent's own environment, so only what was forked after it can carry it.
    processes.end_tagged(PROCESS_TAG, tag, since_pid=pgid - 1)


async def _reap(proc: asyncio.subprocess.Process, *, held_open: bool = False) -> None:
    """Wait until the killed group's pipes close and the command is reaped, for at most a few seconds.

    `held_open`: the pipes are known to be held by a process sredrill could not find (it left the group and
    cleared its environment), so they are closed on our side at once rather than waited for.
    """
    if not held_open:
        try:
            async with asyncio.timeout(_REAP_TIMEOUT_S):
                # communicate() drains what the cancelled readers left, so the pipe transports see EOF and close.
                await proc.communicate()
            return
        except TimeoutError:
            pass
    logger.warning("agent pid %s: a process outside its group still holds its output open", proc.pid)
    # Closing our ends frees the pipes and our file descriptors; asyncio.subprocess.Process has no public way.
    proc._transport.close()  # type: ignore[attr-defined]  # private, so typeshed does not declare it


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
    isolation: IsolationPolicy | None = field(default=None, repr=False)
    """The run's isolation policy; None: level none (the whole environment, no sandbox)."""
    tools_socket: Path | None = None
    """Sandboxed without a network: the Unix socket the run's tool server also listens on (the engine reads
    it when it starts the server), bound into the sandbox."""
    needs_tool_server: ClassVar[bool] = True
    """It runs outside this process: the engine serves its tools over HTTP (`SREDRILL_TOOLS_URL`)."""

    def _command(self, task: Task, workdir: Path | None) -> tuple[str, ...]:
        """The argv to start: the command, wrapped by bubblewrap at sandbox level."""
        if workdir is None or self.isolation is None:
            return self.argv
        from sredrill.isolation import Sandbox, ToolsBridge

        port = _tools_port(task)
        bridge: ToolsBridge | None = None
        if self.tools_socket is not None and port is not None:
            bridge = ToolsBridge(socket=self.tools_socket, port=port)
        return tuple(Sandbox(self.isolation).command(self.argv, workdir=workdir, tools=bridge))

    def _workdir(self) -> Path | None:
        """A fresh working directory for one sandboxed run (None: not sandboxed)."""
        from sredrill.isolation import Isolation

        if self.isolation is None or self.isolation.level is not Isolation.SANDBOX:
            return None
        return Path(tempfile.mkdtemp(prefix="sredrill-agent-"))

    async def aclose(self) -> None:
        """Remove the folder of the tools' Unix socket (the run ended; the server removed the socket)."""
        if self.tools_socket is not None:
            shutil.rmtree(self.tools_socket.parent, ignore_errors=True)

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Start the command, send it the Task, record its steps as they arrive, and return its answer.

        Raises:
            AgentError: the command could not start or exited non-zero; the message has its exit status and
                the last lines of its stderr.
        """
        payload = task.model_dump_json(exclude={"env"}).encode() + b"\n"
        command = shlex.join(self.argv)
        tag = uuid.uuid4().hex
        workdir = self._workdir()
        try:
            proc, protocol = await _spawn(self._command(task, workdir), _environment(task, tag, self.isolation))
        except OSError as exc:
            _remove(workdir)
            raise AgentError(f"cannot start agent command {command!r}: {exc}") from exc
        except BaseException:
            _remove(workdir)
            raise
        # start_new_session=True made the command a group leader, so its pid is the group id. (A reaped
        # leader's pid is not reused while its group has members.)
        processes.register_group(proc.pid)
        assert proc.stdin and proc.stdout and proc.stderr  # all three are pipes, as requested above
        transcript = Transcript(recorder)
        stdout = _Stdout(transcript.feed)
        stderr = _Tail(LOG_LIMIT_BYTES)
        held_open = swept = False
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(_feed(proc.stdin, payload))
                readers = [
                    tg.create_task(_read_stdout(proc.stdout, stdout)),
                    tg.create_task(_read_chunks(proc.stderr, stderr)),
                ]
                await protocol.exited
                returncode = proc.returncode
                assert returncode is not None  # set by the child watcher before it notifies the protocol
                # The command is done; whatever it left running goes too, which also closes the pipes those
                # leftovers held, so the readers reach EOF once they have read what the pipes still hold.
                # In a thread: the sweep reads /proc (a few ms on a busy machine) and would stall the other runs.
                await asyncio.to_thread(_end, proc.pid, tag)
                swept = True
                _, still_reading = await asyncio.wait(readers, timeout=DRAIN_GRACE_S)
                for reader in still_reading:
                    held_open = True
                    reader.cancel()
        except asyncio.CancelledError as exc:  # a timeout: what the agent logged so far explains where it was
            with_agent_log(exc, transcript.log(stderr.text()))
            raise
        finally:
            # When the run is cancelled this kills the command and everything it started. Otherwise the group
            # is already empty, and the sweep of /proc for tagged processes (a few ms each on a busy machine)
            # already ran until it found none: a killed process forks no more.
            if swept:
                processes.kill_group(proc.pid)
            else:
                _end(proc.pid, tag)
            await _reap(proc, held_open=held_open)
            processes.unregister_group(proc.pid)
            _remove(workdir)
        stdout.finish()
        if returncode != 0:
            error = AgentError(_exit_message(command, returncode, stderr.text()))
            raise with_agent_log(error, transcript.log(stderr.text()))
        notes = stdout.notes()
        if held_open:
            notes.append(
                f"a process the agent started still held its output open {DRAIN_GRACE_S:g}s after it exited "
                "(it left the process group and its environment); sredrill stopped reading there"
            )
        reply = transcript.reply(stderr.text())
        return replace(reply, notes=[*reply.notes, *notes])


def _remove(workdir: Path | None) -> None:
    if workdir is not None:
        shutil.rmtree(workdir, ignore_errors=True)


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
        options: `isolation`, the run's policy (the command's environment, and at sandbox level bubblewrap);
            the rest is unused: the command brings its own configuration.

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
    from sredrill.isolation import AgentNetwork, Isolation

    policy = options.isolation
    socket_path = None
    if policy is not None and policy.level is Isolation.SANDBOX:
        argv[0] = sandbox_interpreter(argv[0])
        policy = _with_script_dir(policy, argv)
        if policy.network is AgentNetwork.NONE:
            # Short, in a folder of its own (a Unix socket path has ~100 bytes at most); bound into the sandbox.
            socket_path = Path(tempfile.mkdtemp(prefix="sredrill-tools-")) / "tools.sock"
    return CmdAgent(spec=spec.text, argv=tuple(argv), isolation=policy, tools_socket=socket_path)


def _with_script_dir(policy: IsolationPolicy, argv: list[str]) -> IsolationPolicy:
    """The policy whose code directory is the agent script's folder, when the script lives outside the launch
    directory and no `--agent-dir` was given (`cmd:python /elsewhere/agent.py` runs as it does unsandboxed)."""
    if policy.agent_dir is not None:
        return policy
    for arg in argv[1:]:
        path = Path(arg) if os.path.isabs(arg) else policy.launch_dir / arg
        if arg.startswith("-") or not path.is_file():
            continue
        folder = path.resolve().parent
        if not folder.is_relative_to(policy.launch_dir):
            return replace(policy, agent_dir=folder)
        return policy
    return policy


_PYTHON: Final = re.compile(r"python(\d+(\.\d+)?)?")


def sandbox_interpreter(exe: str) -> str:
    """`python` as the sandbox must start it: the interpreter a bare `python` on PATH runs, by its own path.

    A launcher on PATH (a pyenv or asdf shim: a script reading its own folders) does not work in the sandbox,
    which binds the interpreters but not the launchers' folders; asking it once for `sys.executable` gives the
    interpreter it would run. Anything else is left as written.
    """
    if os.sep in exe or not _PYTHON.fullmatch(exe):
        return exe
    import subprocess

    try:
        found = subprocess.run(
            [exe, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return exe
    return found if found and os.path.isabs(found) else exe
