"""Workers: long-lived child processes that run user code for a driver, killed and replaced when it hangs.

User code (eval bodies, hooks, `py:` agents) runs in a worker, never in the process that holds scenarios and
answer keys (DESIGN §11.3). A worker is a Python process serving one handler, started with `subprocess` (never
`fork`: the driver has threads; and not multiprocessing's `spawn`, which re-imports the driver's `__main__`, so a
user's script calling `sredrill.run()` without a `__main__` guard would start itself again). It runs in a
session of its own (a terminal's Ctrl-C reaches the driver only), ignores SIGINT, exits when its driver dies
(a watchdog thread sees its parent change) and talks JSON over a socket pair, never fd 1: user code prints.
JSON, not pickle: a worker runs untrusted code, and unpickling its messages would run code in the driver.

This module knows nothing of tests or agents: a worker serves one handler, `"module:factory"`, whose
`factory()` returns an object with `async handle(body, ask) -> body`; `ask(body)` sends a question back to the
driver (a tool call) and awaits its answer.

The driver side: `Worker.call(body, timeout_s=…)` sends one request and awaits its reply; past the timeout, or
when the awaiting task is cancelled, the worker is killed (SIGKILL to its session and to every process group it
reported through `sredrill.processes`), since code that ignored its timeout cannot be trusted to stop. A worker
that dies during a call (`os._exit`, a segfault, the OOM killer) raises `WorkerDied` naming its exit code or
signal. `WorkerPool` keeps idle workers for reuse and starts one when none is idle.

Examples:
    >>> worker = Worker("mypkg.handlers:Echo", role="demo")
    >>> await worker.call({"ping": 1}, timeout_s=5)
    {'ping': 1}
    >>> worker.kill()
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import io
import itertools
import json
import linecache
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from sredrill import processes
from sredrill.errors import ConfigError, SredrillError
from sredrill.text import parse_json

if TYPE_CHECKING:
    from sredrill.isolation import IsolationPolicy

__all__ = [
    "CAPTURE_LIMIT_BYTES",
    "ROLE_ENV",
    "START_TIMEOUT_S",
    "Ask",
    "CapturedOutput",
    "ExceptionTrace",
    "Handler",
    "PoolWorker",
    "RemoteError",
    "TraceFrame",
    "Worker",
    "WorkerDied",
    "WorkerPool",
    "attach_trace",
    "attach_worker_data",
    "attached_trace",
    "capture_output",
    "describe_exception",
    "error_body",
    "read_capture",
    "worker_role",
]

ROLE_ENV: Final = "SREDRILL_WORKER"
"""Set in every worker's environment to its role (`body`, `agent`): code that must know where it runs reads it."""
_PATH_ENV: Final = "SREDRILL_WORKER_SYS_PATH"
_PARENT_ENV: Final = "SREDRILL_WORKER_PARENT"
_MEMORY_ENV: Final = "SREDRILL_WORKER_MEMORY_MB"
_ENTRY: Final = "import sys; from sredrill.workers import _worker_main; _worker_main(int(sys.argv[1]), sys.argv[2])"
_INTERPRETER_ENV: Final = (
    "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONHASHSEED",
    "PYTHONFAULTHANDLER", "PYTHONWARNINGS",
)  # fmt: skip
"""The driver's Python settings a worker keeps at every isolation level (none of them is a secret)."""
_WATCHDOG_S: Final = 0.5
START_TIMEOUT_S: Final = 60.0
"""A worker imports sredrill and the handler before it is ready; a loaded machine may take seconds."""
_EXIT_WAIT_S: Final = 2.0
_WHERE_WAIT_S: Final = 0.5
"""How long a worker whose call was cancelled has to say where it was, before it is killed."""
CAPTURE_LIMIT_BYTES: Final = 64 * 1024


Ask = Callable[[Any], Awaitable[Any]]
"""`await ask(body)`: a question from the worker's handler to the driver (a tool call); returns the answer."""


class Handler(Protocol):
    """What a worker serves: one request at a time."""

    async def handle(self, body: Any, ask: Ask, /) -> Any: ...


class WorkerDied(SredrillError):
    """Raised when a worker ended during a call (or before it was ready): the message names how it ended.

    Attributes:
        returncode: the exit code, or minus the signal number that killed it (as `subprocess`); None unknown.
    """

    def __init__(self, message: str, *, returncode: int | None) -> None:
        self.returncode = returncode
        super().__init__(message)


class RemoteError(SredrillError):
    """Raised when the worker's handler raised: its exception's type, message and traceback, as text.

    Attributes:
        type_name: the class name of the exception in the worker (`SystemExit`, `RuntimeError`).
        message: `str(exc)` in the worker.
        traceback: the worker's formatted traceback.
        data: what the handler attached (`attach_worker_data`, JSON), for errors with fields (`AgentSpecError`).
    """

    def __init__(self, type_name: str, message: str, *, traceback: str = "", data: Any = None) -> None:
        self.type_name = type_name
        self.message = message
        self.traceback = traceback
        self.data = data
        super().__init__(f"{type_name}: {message}" if message else type_name)


def worker_role() -> str | None:
    """The role of this process when it is a worker (`body`, `agent`), else None."""
    return os.environ.get(ROLE_ENV) or None


def describe_exception(exc: BaseException) -> str:
    """`Type: message`, `(no message)` when empty; an exception group lists what it holds."""
    text = f"{type(exc).__name__}: {str(exc) or '(no message)'}"
    if isinstance(exc, BaseExceptionGroup):
        text += " [" + "; ".join(describe_exception(e) for e in exc.exceptions) + "]"
    return text


_TRACE_HEAD_FRAMES: Final = 10
_TRACE_TAIL_FRAMES: Final = 40
_TRACE_DEPTH: Final = 8
_TRACE_GROUP_MEMBERS: Final = 10
_TRACE_MESSAGE_CHARS: Final = 4000
_TRACE_ATTR: Final = "__sredrill_trace__"
_DATA_ATTR: Final = "worker_data"


class TraceFrame(BaseModel):
    """One frame of a traceback: where, in which function, and its source line."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    line: int
    function: str
    source: str
    """The line's source, stripped; empty when the file cannot be read."""


class ExceptionTrace(BaseModel):
    """An exception as text and frames, with what it came from: user code's error as it crosses a worker's pipe.

    `sredrill.engine.tracebacks` trims it to the user's frames and formats it; the driver of an agent worker
    gets it from the worker, so an agent's traceback is shown with the test that ran it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type_name: str
    message: str
    frames: list[TraceFrame]
    """Outermost first, as `traceback` prints them."""
    omitted: int = 0
    """Frames left out of the middle of a very deep traceback (a recursion), between head and tail."""
    cause: ExceptionTrace | None = None
    """`raise … from cause`."""
    context: ExceptionTrace | None = None
    """The exception being handled when this one was raised (unless suppressed)."""
    exceptions: list[ExceptionTrace] = Field(default_factory=list)
    """An exception group's members."""

    @classmethod
    def of(cls, exc: BaseException) -> ExceptionTrace:
        """The trace of a live exception: its frames and its chain, bounded in depth and frame count.

        An exception that carries a trace from a worker (`attach_trace`) has that trace as its cause.
        """
        return _trace_of(exc, depth=0, seen=set())


def attach_trace(exc: BaseException, trace: ExceptionTrace) -> BaseException:
    """Attach the trace of the exception that caused `exc` in another process (an agent worker); returns `exc`."""
    setattr(exc, _TRACE_ATTR, trace)
    return exc


def attach_worker_data(exc: BaseException, data: Any) -> BaseException:
    """Attach JSON data to an exception a handler raises: the driver gets it as `RemoteError.data`; returns `exc`.

    For errors with fields (an `InputError`'s path, field, allowed values), so the driver can raise them again.
    """
    setattr(exc, _DATA_ATTR, data)
    return exc


def attached_trace(exc: BaseException) -> ExceptionTrace | None:
    """The trace `attach_trace` put on `exc`, if any."""
    trace = getattr(exc, _TRACE_ATTR, None)
    return trace if isinstance(trace, ExceptionTrace) else None


def _message_of(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # a user's __str__ that raises: the type still says what it was
        text = "(its message could not be read)"
    return text if len(text) <= _TRACE_MESSAGE_CHARS else text[:_TRACE_MESSAGE_CHARS] + "…"


def _trace_of(exc: BaseException, *, depth: int, seen: set[int]) -> ExceptionTrace:
    seen.add(id(exc))
    walked = list(traceback.walk_tb(exc.__traceback__))
    omitted = 0
    if len(walked) > _TRACE_HEAD_FRAMES + _TRACE_TAIL_FRAMES:
        omitted = len(walked) - _TRACE_HEAD_FRAMES - _TRACE_TAIL_FRAMES
        walked = walked[:_TRACE_HEAD_FRAMES] + walked[-_TRACE_TAIL_FRAMES:]
    frames = [
        TraceFrame(path=f.filename, line=f.lineno or 0, function=f.name, source=(f.line or "").strip())
        for f in traceback.StackSummary.extract(iter(walked), capture_locals=False)
    ]

    def linked(other: BaseException | None) -> ExceptionTrace | None:
        if other is None or id(other) in seen or depth >= _TRACE_DEPTH:
            return None
        return _trace_of(other, depth=depth + 1, seen=seen)

    remote = attached_trace(exc)
    members = exc.exceptions[:_TRACE_GROUP_MEMBERS] if isinstance(exc, BaseExceptionGroup) else ()
    return ExceptionTrace(
        type_name=type(exc).__name__,
        message=_message_of(exc),
        frames=frames,
        omitted=omitted,
        cause=remote if remote is not None else linked(exc.__cause__),
        context=None if exc.__suppress_context__ or remote is not None else linked(exc.__context__),
        exceptions=[t for t in (linked(e) for e in members) if t is not None],
    )


def _awaiting_frames(task: asyncio.Task[Any]) -> list[TraceFrame]:
    """Where a suspended task is, outermost first: its coroutine's frame and those of what each one awaits.

    `Task.get_stack()` gives only the outermost frame of a suspended coroutine; the chain of `cr_await` reaches
    the innermost one (an agent's `await asyncio.sleep(60)`), which is what a timeout's "stopped here" shows.
    """
    frames: list[TraceFrame] = []
    awaited: Any = task.get_coro()
    while awaited is not None and len(frames) < _TRACE_HEAD_FRAMES + _TRACE_TAIL_FRAMES:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is None:
            break
        path, line = frame.f_code.co_filename, frame.f_lineno or 0
        source = linecache.getline(path, line).strip()
        frames.append(TraceFrame(path=path, line=line, function=frame.f_code.co_name, source=source))
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    return frames


def _how_it_ended(returncode: int | None) -> str:
    if returncode is None:
        return "closed its connection"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}" + (" (out of memory?)" if -returncode == signal.SIGKILL else "")
    return f"exited with code {returncode}"


# -- output capture (in the worker) ---------------------------------------------------------------------------


@dataclass(slots=True)
class CapturedOutput:
    """What fds 1 and 2 received during a `capture_output` block, each cut at the limit."""

    stdout: str = ""
    stderr: str = ""
    truncated: list[str] = field(default_factory=list)
    """`"stdout"`, `"stderr"`: the streams that were cut."""


def _read_capped(path: str, limit: int) -> tuple[str, bool]:
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            data = f.read(limit)
    except FileNotFoundError:
        return "", False
    text = data.decode("utf-8", "replace")
    if size > limit:
        return text + f"\n[… {size - limit} more bytes cut: output is kept up to {limit // 1024} KiB]", True
    return text, False


def read_capture(directory: str, limit_bytes: int = CAPTURE_LIMIT_BYTES) -> CapturedOutput:
    """What a `capture_output(directory)` block wrote so far, each stream cut at the limit.

    The driver reads it too, after killing a worker mid-test: what a hung or crashed test printed is kept.
    """
    out, cut_out = _read_capped(os.path.join(directory, "stdout"), limit_bytes)
    err, cut_err = _read_capped(os.path.join(directory, "stderr"), limit_bytes)
    truncated = [name for name, cut in (("stdout", cut_out), ("stderr", cut_err)) if cut]
    return CapturedOutput(stdout=out, stderr=err, truncated=truncated)


@contextlib.contextmanager
def capture_output(directory: str | None = None, limit_bytes: int = CAPTURE_LIMIT_BYTES) -> Iterator[CapturedOutput]:
    """Point fds 1 and 2 at files `stdout` and `stderr` in `directory` for the block (a temporary one if None).

    At fd level, so what C code and subprocesses write is caught too; only for a process that runs one thing
    at a time (a worker): fds are process-wide. The yielded value is filled in when the block ends.
    """
    out = CapturedOutput()
    with contextlib.ExitStack() as stack:
        if directory is None:
            directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="sredrill-capture-"))
        saved: dict[int, int] = {}
        for fd, name in ((1, "stdout"), (2, "stderr")):
            with contextlib.suppress(ValueError, OSError):
                (sys.stdout if fd == 1 else sys.stderr).flush()
            saved[fd] = os.dup(fd)
            target = os.open(os.path.join(directory, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        try:
            yield out
        finally:
            for fd in (1, 2):
                with contextlib.suppress(ValueError, OSError):
                    (sys.stdout if fd == 1 else sys.stderr).flush()
                os.dup2(saved[fd], fd)
                os.close(saved[fd])
            done = read_capture(directory, limit_bytes)
            out.stdout, out.stderr, out.truncated = done.stdout, done.stderr, done.truncated


# -- the worker process ---------------------------------------------------------------------------------------


def _encode(message: dict[str, Any]) -> bytes:
    # ensure_ascii: a lone surrogate in user text travels as an escape instead of failing to encode.
    return json.dumps(message).encode("ascii")


def _decode(data: bytes) -> dict[str, Any]:
    text = data.decode("utf-8", "replace")
    if b"\\ud" in data or b"\\uD" in data:
        value, _ = parse_json(text)  # maybe a lone surrogate: replaced, as everywhere foreign text enters
    else:
        try:
            value = json.loads(text)  # the common case, without a second walk over the message
        except RecursionError:
            value, _ = parse_json(text)  # raises ValueError: too deep
    if not isinstance(value, dict):
        raise ValueError(f"a worker message must be a JSON object, got {type(value).__name__}")
    return value


def error_body(exc: BaseException) -> dict[str, Any]:
    """What a handler's exception becomes on the wire (`RemoteError` on the driver): its type, message, traceback
    and attached data."""
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "traceback": "".join(traceback.format_exception(exc))[-20_000:],
        "data": getattr(exc, _DATA_ATTR, None),
    }


def _die_with_parent(parent: int) -> None:
    """A worker outlives no driver, even one killed with SIGKILL while user code blocks this worker's loop."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_WATCHDOG_S)
        os._exit(71)

    threading.Thread(target=watch, name="sredrill-worker-watchdog", daemon=True).start()


def memory_limit_from_env() -> int | None:
    """`SREDRILL_WORKER_MEMORY_MB`: an address-space cap for every worker (a blow-up is a MemoryError there).

    Raises:
        ConfigError: the value is not a positive whole number of megabytes.
    """
    text = os.environ.get(_MEMORY_ENV, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) <= 0:
        raise ConfigError(
            f"{_MEMORY_ENV}={text!r} is not a positive whole number of megabytes",
            field=_MEMORY_ENV,
            hint=f"for example {_MEMORY_ENV}=4096, or unset it for no cap",
        )
    return int(text)


def _limit_memory(megabytes: str | None) -> None:
    if megabytes:
        import resource

        limit = int(megabytes) << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class _WorkerSide:
    """The worker's end of the connection: requests in, replies and questions out."""

    def __init__(self, conn: Connection, handler: Handler) -> None:
        self.conn = conn
        self.handler = handler
        self.requests: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.answers: dict[int, asyncio.Future[Any]] = {}
        self.ids = itertools.count(1)
        self.serving: asyncio.Task[Any] | None = None
        self.handling = False
        """A request is in the handler (`where` then names its frames)."""

    def send(self, message: dict[str, Any]) -> None:
        self.conn.send_bytes(_encode(message))

    def on_readable(self) -> None:
        try:
            message = _decode(self.conn.recv_bytes())
        except (EOFError, OSError):
            asyncio.get_running_loop().remove_reader(self.conn.fileno())
            self.requests.put_nowait(None)  # the driver is gone: so is this worker
            return
        if message.get("t") == "call":
            self.requests.put_nowait(message)
        elif message.get("t") == "where":
            frames = _awaiting_frames(self.serving) if self.serving is not None and self.handling else []
            self.send({"t": "where", "id": message.get("id"), "frames": [f.model_dump() for f in frames]})
        elif message.get("t") == "answer":
            future = self.answers.pop(message.get("id", -1), None)
            if future is not None and not future.done():
                if message.get("ok"):
                    future.set_result(message.get("body"))
                else:
                    error = message.get("error") or {}
                    future.set_exception(RemoteError(error.get("type", "Error"), error.get("message", "")))

    async def ask(self, body: Any) -> Any:
        ask_id = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.answers[ask_id] = future
        self.send({"t": "ask", "id": ask_id, "body": body})
        return await future

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        loop.add_reader(self.conn.fileno(), self.on_readable)
        self.serving = asyncio.current_task()
        self.send({"t": "ready", "pid": os.getpid()})
        while (request := await self.requests.get()) is not None:
            self.handling = True
            try:
                body = await self.handler.handle(request["body"], self.ask)
                data = _encode({"t": "result", "id": request["id"], "ok": True, "body": body})
            except BaseException as exc:  # the worker's boundary: whatever user code raised goes back, named
                task = asyncio.current_task()
                while task is not None and task.cancelling():
                    task.uncancel()  # user code cancelled the serving task: this worker still serves
                data = _encode({"t": "result", "id": request["id"], "ok": False, "error": error_body(exc)})
            finally:
                self.handling = False
            self.conn.send_bytes(data)


def _notify_driver(conn: Connection) -> Callable[[str, int], None]:
    def notify(event: str, pgid: int) -> None:
        with contextlib.suppress(OSError):
            conn.send_bytes(_encode({"t": "group", "event": event, "pgid": pgid}))

    return notify


def _worker_main(fd: int, handler_ref: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # User code printing text that is not valid Unicode (a lone surrogate) is captured escaped, not an error.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # else (None, or a stream without encodings) nothing to set
            with contextlib.suppress(ValueError):
                stream.reconfigure(errors="backslashreplace")
    _die_with_parent(int(os.environ.pop(_PARENT_ENV, "0")) or os.getppid())
    _limit_memory(os.environ.pop(_MEMORY_ENV, None))
    for entry in reversed(json.loads(os.environ.pop(_PATH_ENV, "[]"))):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    conn = Connection(fd)
    processes.set_notifier(_notify_driver(conn))
    try:
        module_name, _, attr = handler_ref.partition(":")
        handler: Handler = getattr(importlib.import_module(module_name), attr)()
        asyncio.run(_WorkerSide(conn, handler).serve())
    except BaseException as exc:  # user code broke the event loop itself (SystemExit in a task of its own)
        with contextlib.suppress(OSError):
            conn.send_bytes(_encode({"t": "fatal", "error": describe_exception(exc)}))
        os._exit(70)
    os._exit(0)


# -- the driver side ------------------------------------------------------------------------------------------


class Worker:
    """One worker process, seen from the driver. Not thread-safe: use it from one event loop.

    Args:
        handler: `"module:factory"`, imported in the worker.
        role: what the worker is for (`body`, `agent`); in its environment as `SREDRILL_WORKER`, and in messages.
        env: extra environment for the worker.
        memory_limit_mb: an address-space cap (RLIMIT_AS) for the worker; None leaves it unlimited.
        isolation: the run's isolation policy: at process and sandbox level the worker's environment is the
            allow-list (`sredrill.isolation.agent_environment`); at sandbox level it runs under bubblewrap, in a
            fresh working directory of its own (removed when it is killed). None: level none.
        workdir: the sandboxed worker's working directory, writable and seen at its own path (the caller's to
            remove: files it writes there outlive the worker); None: a fresh one.
    """

    def __init__(
        self,
        handler: str,
        *,
        role: str,
        env: Mapping[str, str] | None = None,
        memory_limit_mb: int | None = None,
        isolation: IsolationPolicy | None = None,
        workdir: Path | None = None,
    ) -> None:
        self.handler = handler
        self.role = role
        self.isolation = isolation
        self._given_workdir = workdir
        self._workdir: Path | None = None
        """The sandboxed worker's working directory, from `start` until `kill`."""
        self._env = dict(env or {})
        self._memory_limit_mb = memory_limit_mb if memory_limit_mb is not None else memory_limit_from_env()
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._ready: asyncio.Future[None] | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._wheres: dict[int, asyncio.Future[list[Any]]] = {}
        self._asks: set[asyncio.Task[None]] = set()
        self._on_ask: Callable[[Any], Awaitable[Any]] | None = None
        self._ids = itertools.count(1)
        self._reading = False
        self._is_ready = False
        self._fatal: str | None = None
        self.groups: set[int] = set()
        """Process groups the worker reported starting (a `cmd:` agent run inside it) and not yet ending."""
        self.calls = 0

    def __repr__(self) -> str:
        return f"Worker({self.role}, pid={self.pid}, alive={self.alive})"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._conn is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start the process (returns at once; the first call waits until it is ready)."""
        if self._proc is not None:
            return
        from sredrill.isolation import Isolation, Sandbox, agent_environment

        parent, child = socket.socketpair()
        sandboxed = self.isolation is not None and self.isolation.level is Isolation.SANDBOX
        path = list(sys.path)
        if sandboxed:
            assert self.isolation is not None
            # Its working directory is a fresh one: what the launch directory made importable stays so.
            path[:0] = dict.fromkeys(str(p) for p in (self.isolation.code_dir(), self.isolation.launch_dir))
        # How the driver's Python behaves (unbuffered output, the hash seed, the text encoding) is the worker's too,
        # whatever the allow-list of the agent's environment keeps: output order and text stay as without isolation.
        own = {k: os.environ[k] for k in _INTERPRETER_ENV if k in os.environ}
        own |= {**self._env, ROLE_ENV: self.role, _PATH_ENV: json.dumps(path)}
        if not sandboxed:
            # In a sandbox the worker has a PID namespace of its own, where the driver's pid means nothing: it
            # dies with bubblewrap instead (--die-with-parent).
            own[_PARENT_ENV] = str(os.getpid())
        if self._memory_limit_mb is not None:
            own[_MEMORY_ENV] = str(self._memory_limit_mb)
        env = agent_environment(self.isolation, os.environ, own)
        argv = [sys.executable, "-c", _ENTRY, str(child.fileno()), self.handler]
        if sandboxed:
            assert self.isolation is not None
            self._workdir = self._given_workdir or Path(tempfile.mkdtemp(prefix=f"sredrill-{self.role}-"))
            try:
                argv = Sandbox(self.isolation).command(argv, workdir=self._workdir)
            except BaseException:
                child.close()
                parent.close()
                self._remove_workdir()
                raise
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # fd 1 of the driver may be a --json report
                env=env,
                pass_fds=(child.fileno(),),
                start_new_session=True,  # a terminal's Ctrl-C goes to the driver's group only
            )
        finally:
            child.close()
        processes.register_group(self._proc.pid)
        self._conn = Connection(parent.detach())

    def kill(self) -> None:
        """SIGKILL the worker's session and every group it reported; pending calls fail with WorkerDied."""
        proc, conn = self._proc, self._conn
        if proc is not None:
            processes.kill_group(proc.pid)
            processes.unregister_group(proc.pid)
        for pgid in list(self.groups):
            processes.kill_group(pgid)
            processes.unregister_group(pgid)
        self.groups.clear()
        if conn is not None:
            if self._reading:
                with contextlib.suppress(RuntimeError, ValueError, OSError):
                    asyncio.get_running_loop().remove_reader(conn.fileno())
                self._reading = False
            conn.close()
            self._conn = None
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_EXIT_WAIT_S)  # SIGKILL was sent: the kernel reaps it at once
        self._remove_workdir()
        self._fail_pending(self._died(f"{self.role} worker was killed"))
        for task in self._asks:
            task.cancel()

    async def aclose(self) -> None:
        self.kill()

    def _remove_workdir(self) -> None:
        workdir, self._workdir = self._workdir, None
        if workdir is not None and workdir != self._given_workdir:
            shutil.rmtree(workdir, ignore_errors=True)

    def _died(self, what: str | None = None) -> WorkerDied:
        code = self._proc.poll() if self._proc is not None else None
        text = what or f"{self.role} worker {_how_it_ended(code)}"
        if self._fatal:
            text += f" ({self._fatal})"
        return WorkerDied(text, returncode=code)

    def _fail_pending(self, error: BaseException) -> None:
        futures = list(self._pending.values())
        if self._ready is not None:
            futures.append(self._ready)
        self._pending.clear()
        for future in futures:
            if not future.done():
                future.set_exception(error)
                future.exception()  # retrieved: nobody may be waiting any more

    # reading (async) ----------------------------------------------------------------------------------------

    def _ensure_reader(self) -> None:
        loop = asyncio.get_running_loop()
        if self._ready is None:
            self._ready = loop.create_future()
            if self._is_ready:
                self._ready.set_result(None)
        if not self._reading and self._conn is not None:
            loop.add_reader(self._conn.fileno(), self._on_readable)
            self._reading = True

    def _on_readable(self) -> None:
        conn = self._conn
        if conn is None:
            return
        try:
            while conn.poll():
                self._dispatch(_decode(conn.recv_bytes()))
        except (EOFError, OSError, ValueError):
            if self._reading:
                asyncio.get_running_loop().remove_reader(conn.fileno())
                self._reading = False
            asyncio.get_running_loop().create_task(self._ended())

    async def _ended(self) -> None:
        """The connection closed: wait briefly for the exit status (to name it), else kill; fail what waits."""
        deadline = time.monotonic() + _EXIT_WAIT_S
        while self._proc is not None and self._proc.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        error = self._died()
        self._fail_pending(error)
        self.kill()

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("t")
        if kind == "ready":
            self._is_ready = True
            if self._ready is not None and not self._ready.done():
                self._ready.set_result(None)
        elif kind == "result":
            future = self._pending.pop(message.get("id", -1), None)
            if future is not None and not future.done():
                if message.get("ok"):
                    future.set_result(message.get("body"))
                else:
                    error = message.get("error") or {}
                    future.set_exception(
                        RemoteError(
                            str(error.get("type", "Error")),
                            str(error.get("message", "")),
                            traceback=str(error.get("traceback", "")),
                            data=error.get("data"),
                        )
                    )
        elif kind == "ask":
            task = asyncio.get_running_loop().create_task(self._answer(message.get("id"), message.get("body")))
            self._asks.add(task)
            task.add_done_callback(self._asks.discard)
        elif kind == "group":
            self._group(message)
        elif kind == "where":
            where = self._wheres.pop(message.get("id", -1), None)
            if where is not None and not where.done():
                where.set_result(list(message.get("frames") or []))
        elif kind == "fatal":
            self._fatal = str(message.get("error"))

    def _group(self, message: dict[str, Any]) -> None:
        pgid = message.get("pgid")
        if not isinstance(pgid, int) or pgid <= 1:
            return
        if self._workdir is not None:
            # A sandboxed worker's pids are those of its own PID namespace, not ours: killing one here could
            # hit an unrelated process. Its groups die with the namespace when the worker is killed.
            return
        if message.get("event") == "start":
            self.groups.add(pgid)
            processes.register_group(pgid)
        else:
            self.groups.discard(pgid)
            processes.unregister_group(pgid)

    async def _answer(self, ask_id: Any, body: Any) -> None:
        try:
            if self._on_ask is None:
                raise SredrillError("this call takes no questions from its worker")
            reply = {"t": "answer", "id": ask_id, "ok": True, "body": await self._on_ask(body)}
        except Exception as exc:  # a failed answer goes back to the asking code as an error, not a crash here
            reply = {"t": "answer", "id": ask_id, "ok": False, "error": error_body(exc)}
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.send_bytes(_encode(reply))

    async def ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Start the worker if needed and wait until it serves.

        Raises:
            WorkerDied: it ended while starting (its handler failed to import).
        """
        self.start()
        self._ensure_reader()
        assert self._ready is not None
        try:
            async with asyncio.timeout(timeout_s):
                await asyncio.shield(self._ready)
        except TimeoutError:
            self.kill()
            raise WorkerDied(f"{self.role} worker did not start within {timeout_s:g}s", returncode=None) from None

    async def call(
        self, body: Any, *, timeout_s: float | None, on_ask: Callable[[Any], Awaitable[Any]] | None = None
    ) -> Any:
        """Send one request and await its reply; the worker is killed on timeout or cancellation.

        Args:
            body: the request (JSON).
            timeout_s: seconds to wait for the reply; None waits for ever.
            on_ask: answers the handler's questions during this call.

        Raises:
            TimeoutError: no reply in time; the worker was killed.
            WorkerDied: the worker ended during the call.
            RemoteError: the handler raised.
        """
        await self.ready()
        if self._conn is None:
            raise self._died()
        call_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        self._on_ask = on_ask
        self.calls += 1
        try:
            self._conn.send_bytes(_encode({"t": "call", "id": call_id, "body": body}))
            async with asyncio.timeout(timeout_s):
                return await future
        except TimeoutError:
            self.kill()
            raise
        except asyncio.CancelledError as exc:
            # The driver gave up on this call (the run's timeout, Ctrl-C); what runs there cannot be trusted to
            # stop, so the worker is killed, but first asked where it was: the timeout shows the agent's frames.
            try:
                frames = await self._where()
                if frames:
                    attach_trace(exc, ExceptionTrace(type_name="CancelledError", message="", frames=frames))
            finally:
                self.kill()
            raise
        except OSError as exc:
            self.kill()
            raise self._died() from exc
        finally:
            self._pending.pop(call_id, None)
            self._on_ask = None

    async def _where(self) -> list[TraceFrame]:
        """The frames the worker's current request is suspended in; none when it does not answer in time (a busy
        loop, a blocking call) or is gone."""
        if self._conn is None or not self.alive:
            return []
        where_id = next(self._ids)
        future: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._wheres[where_id] = future
        try:
            self._conn.send_bytes(_encode({"t": "where", "id": where_id}))
            async with asyncio.timeout(_WHERE_WAIT_S):
                raw = await future
            return [TraceFrame.model_validate(f) for f in raw]
        except (TimeoutError, OSError, ValueError):
            return []
        finally:
            self._wheres.pop(where_id, None)

    # synchronous use (before the event loop serves it: connect-time checks) ----------------------------------

    def call_sync(self, body: Any, *, timeout_s: float) -> Any:
        """`call` from synchronous code, before any `call`; questions are not answered.

        Raises:
            TimeoutError, WorkerDied, RemoteError: as `call`.
        """
        self.start()
        assert self._conn is not None
        if self._reading:
            raise SredrillError("call_sync on a worker already read by an event loop")
        deadline = time.monotonic() + START_TIMEOUT_S + timeout_s
        call_id = next(self._ids)
        self._conn.send_bytes(_encode({"t": "call", "id": call_id, "body": body}))
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0 or not self._conn.poll(remaining):
                    self.kill()
                    raise TimeoutError(f"{self.role} worker did not answer within {timeout_s:g}s")
                message = _decode(self._conn.recv_bytes())
            except (EOFError, OSError, ValueError) as exc:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    if self._proc is not None:
                        self._proc.wait(timeout=_EXIT_WAIT_S)
                error = self._died()
                self.kill()
                raise error from exc
            if message.get("t") == "ready":
                self._is_ready = True
                continue
            if message.get("t") == "result" and message.get("id") == call_id:
                if message.get("ok"):
                    return message.get("body")
                failure: dict[str, Any] = message.get("error") or {}
                raise RemoteError(
                    str(failure.get("type", "Error")),
                    str(failure.get("message", "")),
                    traceback=str(failure.get("traceback", "")),
                    data=failure.get("data"),
                )
            if message.get("t") == "group":
                self._group(message)
            elif message.get("t") == "fatal":
                self._fatal = str(message.get("error"))


class PoolWorker(Protocol):
    """What a `WorkerPool` holds: a `Worker`, or a worker elsewhere (a Ray actor, `engine.ray_executor`)."""

    @property
    def pid(self) -> int | None:
        """None until it started."""
        ...

    @property
    def alive(self) -> bool: ...

    def kill(self) -> None: ...

    async def call(self, body: Any, *, timeout_s: float | None) -> Any:
        """One request and its reply, as `Worker.call`: TimeoutError (killed), WorkerDied, RemoteError."""
        ...


W = TypeVar("W", bound=PoolWorker)


class WorkerPool(Generic[W]):
    """Idle workers kept for reuse; one started when none is idle. At most `size` exist when `size` is set.

    Args:
        make: builds a new (unstarted) worker.
        size: the most workers at once (one per `--jobs` slot); None for no bound (the caller bounds it).
    """

    def __init__(self, make: Callable[[], W], *, size: int | None = None) -> None:
        self._make = make
        self._size = size
        self._idle: list[W] = []
        self._all: list[W] = []
        self._changed: asyncio.Condition | None = None

    def __repr__(self) -> str:
        return f"WorkerPool({len(self._all)} worker(s), {len(self._idle)} idle)"

    @property
    def workers(self) -> list[W]:
        return list(self._all)

    def adopt(self, worker: W) -> None:
        """Add a worker started elsewhere (a connect-time check) as idle."""
        self._all.append(worker)
        self._idle.append(worker)

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    @contextlib.asynccontextmanager
    async def worker(self, which: W | None = None) -> AsyncIterator[W | None]:
        """Check out an idle worker (or exactly `which`, once it is idle) for the block.

        Yields None when `which` is no longer in the pool (it was killed).
        """
        changed = self._condition()
        async with changed:
            while True:
                self._all = [w for w in self._all if w.alive or w.pid is None]
                self._idle = [w for w in self._idle if w in self._all]
                if which is not None:
                    if which not in self._all:
                        chosen = None
                        break
                    if which in self._idle:
                        chosen = which
                        break
                elif self._idle:
                    chosen = self._idle.pop()
                    break
                elif self._size is None or len(self._all) < self._size:
                    chosen = self._make()
                    self._all.append(chosen)
                    break
                await changed.wait()
            if chosen is not None and chosen in self._idle:
                self._idle.remove(chosen)
        try:
            yield chosen
        finally:
            async with changed:
                if chosen is not None:
                    if chosen.alive or chosen.pid is None:
                        self._idle.append(chosen)
                    elif chosen in self._all:
                        self._all.remove(chosen)
                changed.notify_all()

    def kill_all(self) -> None:
        """Kill every worker (the run ended or was interrupted); the pool starts new ones if used again."""
        for worker in self._all:
            worker.kill()
        self._all.clear()
        self._idle.clear()
