"""The Ray executor: a run's attempts played by Ray actors (`--executor ray[:ADDRESS]`, the `ray` extra).

The driver side is the body workers' (`BodyWorkers`: scheduling, timeouts, lost tests, `after_all` hooks and
spans); only where a worker lives changes. Each worker is one actor (`ActorHost`, one CPU) serving the same
handler as a local worker process (`PackHandler` for a pack run, `BodyHandler` for eval files) and the same JSON
requests, one at a time. An actor that overruns its attempt's timeout, or dies, is killed and replaced, as a
worker process is.

`ray` alone starts a Ray instance on this machine for the run (stopped when the run ends) or joins the one
`RAY_ADDRESS` names; `ray:HOST:PORT` joins a running cluster (`ray start --head`). Every node needs this
sredrill installed (the actors import it), and eval files at the same paths as on the driver. An actor grades:
it holds scenarios and answer keys as a local worker does, so the cluster must be the run's own, never an
agent's; the agents an actor starts run under the run's isolation, on its node.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import sredrill
from sredrill import processes
from sredrill.errors import InputError, MissingExtra, SredrillError
from sredrill.workers import ROLE_ENV, START_TIMEOUT_S, RemoteError, WorkerDied, attach_worker_data, error_body

__all__ = ["ActorHost", "RayCluster", "RayWorker", "is_ray", "local_cpus", "parse_executor", "ray_cluster"]

LOCAL: Final = "local"
RAY: Final = "ray"
_CONNECT_TIMEOUT_S: Final = 5.0
"""How long the address may take to accept a connection: Ray itself retries an unreachable one for minutes."""


def parse_executor(text: str) -> str:
    """`local`, `ray` or `ray:HOST:PORT`, in one spelling.

    Raises:
        InputError: anything else (the flag and the allowed forms named).
    """
    value = text.strip()
    if value in (LOCAL, RAY):
        return value
    kind, _, address = value.partition(":")
    host, _, port = address.rpartition(":")
    if kind == RAY and host and port.isdigit() and 0 < int(port) < 65536:
        return f"{RAY}:{host}:{port}"
    raise InputError(
        f"must be 'local', 'ray' or 'ray:HOST:PORT', got {text!r}",
        field="--executor",
        allowed=["local", "ray", "ray:HOST:PORT"],
        hint="ray:127.0.0.1:6379 joins the cluster `ray start --head --port 6379` started",
    )


def is_ray(executor: str) -> bool:
    return executor == RAY or executor.startswith(f"{RAY}:")


def local_cpus() -> int:
    """The CPUs this process may use (`--executor local`); a Ray cluster's: `RayCluster.cpus`."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingExtra("--executor ray", "ray") from exc
    return ray


def _reachable(address: str) -> None:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=_CONNECT_TIMEOUT_S):
            return
    except OSError as exc:
        raise InputError(
            f"no Ray cluster answers at {address}: {exc.strerror or exc}",
            field="--executor",
            hint=f"start one with `ray start --head --port {port}` (the ray extra), or use --executor ray for a "
            "Ray instance on this machine",
        ) from None


@dataclass(slots=True)
class RayCluster:
    """The run's connection to Ray: joined (or started) when opened, let go when closed if this run made it."""

    executor: str
    _started: bool = False
    _ray: Any = field(default=None, repr=False)

    def open(self) -> RayCluster:
        """Join the cluster (or start a local one).

        Raises:
            MissingExtra: the `ray` extra is not installed.
            InputError: nothing answers at the address.
        """
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline runs: nothing is reported to Ray's servers
        # Under `uv run`, Ray would run the actors with `uv run` in a copy of this folder it uploads to the cluster:
        # the actors use the sredrill each node has installed, and nothing of the run's folder is shipped. Ray reads
        # it when it is imported.
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        ray = self._ray = _import_ray()
        # `ray` alone: the cluster RAY_ADDRESS names, else a new instance on this machine (never a guess at one
        # some earlier session left behind, which Ray's own default would try).
        address = self.executor.partition(":")[2] or os.environ.get("RAY_ADDRESS") or "local"
        if address != "local" and address.rpartition(":")[2].isdigit():
            _reachable(address)
        if ray.is_initialized():  # a caller's own Ray (a notebook, a test): used as it is, and left running
            return self
        try:
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,  # an actor's output is the test's (captured); Ray's logs stay in its session
                logging_level=logging.ERROR,
                configure_logging=True,
            )
        except (ConnectionError, ray.exceptions.RayError) as exc:
            raise InputError(
                f"could not join the Ray cluster at {address}: {_first_line(exc)}",
                field="--executor",
                hint="a cluster started by `ray start --head` uses token authentication: set RAY_AUTH_MODE=token "
                "(its token is in ~/.ray/auth_token on the head node), as for the nodes that joined it",
            ) from None
        self._started = True
        return self

    def cpus(self) -> int:
        """The cluster's CPUs (every node's), which bound its actors: one CPU each."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def make(self, handler: str) -> RayWorker:
        """A new, unstarted worker for `handler`: one actor (`BodyWorkers(make_worker=…)`)."""
        return RayWorker(handler, ray=self._ray)

    def close(self) -> None:
        if self._started and self._ray is not None:
            self._ray.shutdown()
            self._started = False


@contextlib.contextmanager
def ray_cluster(executor: str) -> Iterator[RayCluster]:
    cluster = RayCluster(executor).open()
    try:
        yield cluster
    finally:
        cluster.close()


class RayWorker:
    """One actor, seen from the driver as a `PoolWorker`: started by its first call, killed on a timeout."""

    def __init__(self, handler: str, *, ray: Any) -> None:
        self._handler = handler
        self._ray = ray
        self._actor: Any = None
        self._pid: int | None = None
        self._killed = False

    def __repr__(self) -> str:
        return f"RayWorker({self._handler!r}, pid={self._pid})"

    @property
    def pid(self) -> int | None:
        """The actor's process id on its node; None until it started (0 for one killed before it did)."""
        return 0 if self._killed and self._pid is None else self._pid

    @property
    def alive(self) -> bool:
        return self._actor is not None and not self._killed

    async def _start(self) -> None:
        env = {ROLE_ENV: "body"}
        tag = os.environ.get(processes.SESSION_TAG)
        if tag:  # the command's own sweep finds what an actor on this machine started and could not end
            env[processes.SESSION_TAG] = tag
        if os.environ.get("PYTHONPATH"):  # where the driver imports `py:` agents and helpers from
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        self._actor = self._ray.remote(num_cpus=1, max_restarts=0)(ActorHost).remote()
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                reply = await self._actor.ready.remote(self._handler, sredrill.__version__, env, os.getcwd())
        except TimeoutError:
            self.kill()
            raise InputError(
                f"a Ray actor did not start within {START_TIMEOUT_S:g}s",
                field="--executor",
                hint="the cluster may have no free CPU (another job holds them), or a node cannot import sredrill: "
                "`ray status` shows the cluster's CPUs; each node needs this sredrill installed",
            ) from None
        except self._ray.exceptions.RayError as exc:
            self.kill()
            raise InputError(
                f"a Ray actor could not start: {_first_line(exc)}",
                field="--executor",
                hint="each node of the cluster needs this sredrill installed",
            ) from None
        try:
            self._pid = _reply(reply)
        except RemoteError:  # another sredrill on the node, or its handler would not import
            self.kill()
            raise

    async def call(self, body: Any, *, timeout_s: float | None) -> Any:
        """One request on the actor; the actor is killed on a timeout or a cancellation, as a worker process is.

        Raises:
            TimeoutError: no reply in time.
            WorkerDied: the actor died.
            InputError: the actor could not start (no free CPU, no sredrill on its node).
            RemoteError: the handler raised.
        """
        if self._killed:
            raise WorkerDied("the Ray actor was killed", returncode=None)
        if self._actor is None:
            await self._start()
        try:
            async with asyncio.timeout(timeout_s):
                reply = await self._actor.call.remote(body)
        except (TimeoutError, asyncio.CancelledError):
            self.kill()
            raise
        except self._ray.exceptions.RayActorError as exc:
            self._killed = True
            raise WorkerDied(f"Ray actor (pid {self._pid}) died: {_first_line(exc)}", returncode=None) from None
        except self._ray.exceptions.RayError as exc:
            raise RemoteError(type(exc).__name__, _first_line(exc)) from None
        return _reply(reply)

    def kill(self) -> None:
        if self._actor is not None and not self._killed:
            with contextlib.suppress(Exception):  # already gone, or the cluster with it
                self._ray.kill(self._actor, no_restart=True)
        self._killed = True


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _reply(reply: dict[str, Any]) -> Any:
    if "error" in reply:
        error = reply["error"]
        raise RemoteError(error["type"], error["message"], traceback=error["traceback"], data=error["data"])
    return reply["reply"]


async def _no_ask(body: Any) -> Any:
    raise SredrillError("a Ray actor's handler has no driver to ask")


class ActorHost:
    """In the actor: the handler a local worker would serve (`"module:factory"`), one request at a time.

    Replies are `{"reply": …}` or `{"error": error_body(exc)}`: JSON values, as on a worker's socket.
    """

    def __init__(self) -> None:
        self._handler: Any = None
        self._capture = tempfile.mkdtemp(prefix="sredrill-ray-")

    def ready(self, handler: str, version: str, env: dict[str, str], cwd: str) -> dict[str, Any]:
        try:
            if version != sredrill.__version__:
                raise InputError(
                    f"this Ray node has sredrill {sredrill.__version__}, the run's driver {version}",
                    hint="install the same sredrill on every node of the cluster",
                )
            if not os.path.isdir(cwd):
                raise InputError(
                    f"the run's working directory is not on this Ray node: {cwd}",
                    hint="every node needs the project at the same path (eval files, `py:` agents, pack folders)",
                )
            # As the driver: test ids name files relative to it, and `py:` agents import from it.
            os.chdir(cwd)
            os.environ.update(env)
            for path in [cwd, *reversed(env.get("PYTHONPATH", "").split(os.pathsep))]:
                if path and path not in sys.path:
                    sys.path.insert(0, path)
            module, _, factory = handler.partition(":")
            self._handler = getattr(importlib.import_module(module), factory)()
        except Exception as exc:  # the driver raises it again: an InputError with its fields, a usage error
            if isinstance(exc, InputError):
                fields: dict[str, object] = {"class": type(exc).__name__, "message": exc.message, "path": exc.path}
                attach_worker_data(exc, fields | {"field": exc.field, "allowed": exc.allowed, "hint": exc.hint})
            return {"error": error_body(exc)}
        return {"reply": os.getpid()}

    async def call(self, body: Any) -> dict[str, Any]:
        if isinstance(body, dict) and "capture_dir" in body:
            # The driver's folder is on its own machine: what a test prints is captured on this node.
            body = {**body, "capture_dir": self._capture}
        try:
            return {"reply": await self._handler.handle(body, _no_ask)}
        except Exception as exc:  # the handler's own error: the driver gets it as a RemoteError
            return {"error": error_body(exc)}
