"""Environment steps per second: in process, and over WebSocket and HTTP against openenv-core 0.3.0, in one run.

    python benchmarks/env_throughput.py                # every measurement (the peer needs envs/trace_env/.venv)
    python benchmarks/env_throughput.py --skip-peer    # sredrill only
    python benchmarks/env_throughput.py --steps 1000
    python benchmarks/env_throughput.py --quick        # 500 calls per round, 3 rounds, 20,000 simulator steps

In process: the TRACE simulator (`sredrill.incidents.Simulator.step` on typed actions; resets are timed
apart), for four workloads; the generated families' `FamilySimulator.step` on random actions of each
episode's targets (resets, generation included, timed apart); then `sredrill.env.Env.step` with the wire
models. Goal: ≥ 100,000 simulator steps/s.

Over the network: sredrill's server (`sredrill.server.create_app` with a catalog serving a trivial counter)
and openenv-core 0.3.0's `create_app` serving **the same trivial environment** (an action `{value: int}`,
an observation `{count, last}`, reward 1.0), each in its own process on a loopback port, both with uvicorn's
defaults (h11, asyncio) and the same settings (log level warning, no access log). The openenv-core server
runs in the package environment (`envs/trace_env/.venv`, where openenv-core is installed). The client is this
process: one keep-alive `http.client` connection (`POST /reset` once, then `POST /step` in a loop), and one
`websockets` sync connection (`reset`, then `step` messages). Each figure is the median of 7 rounds of N
sequential calls after a warm-up; a round measures every server and transport in turn, so a change in the
machine's load (it is shared) hits them alike. A third server, the floor, is uvicorn with the same settings
in front of a bare ASGI app answering a fixed result: what any server can reach over this transport.
Each round's ratio (sredrill ÷ openenv-core, per transport) is printed with their median, min and max.
Goals (issue 12): HTTP ≥ 2.5× and WebSocket ≥ 2× openenv-core.

Prints a table and the ratios; nothing here is asserted (speed is measured, never tested).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
PEER_PYTHON = ROOT / "envs" / "trace_env" / ".venv" / "bin" / "python"
REPEATS = 7
WARMUP = 200

# The trivial environment as sredrill's server serves it: an `EnvCatalog` with one task.
SREDRILL_SERVER = """
import sys
from pydantic import BaseModel, ConfigDict, ValidationError
from sredrill.errors import InputError
from sredrill.server import EnvDescription, create_app, serve

class BenchAction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: int

class BenchObservation(BaseModel):
    count: int
    last: int

class BenchState(BaseModel):
    episode_id: str | None
    step_count: int

class BenchResult(BaseModel):
    observation: BenchObservation
    reward: float
    done: bool

class BenchEnv:
    task_id = "count"
    def __init__(self):
        self.count = 0
    def reset_result(self, *, seed=None):
        self.count = 0
        return BenchResult(observation=BenchObservation(count=0, last=0), reward=0.0, done=False)
    def step(self, action):
        try:
            a = BenchAction.model_validate(action)
        except ValidationError as exc:
            raise InputError(str(exc)) from None
        self.count += 1
        return BenchResult(observation=BenchObservation(count=self.count, last=a.value), reward=1.0, done=False)
    @property
    def state(self):
        return BenchState(episode_id="e", step_count=self.count)
    def close(self):
        pass

class BenchCatalog:
    description = EnvDescription(
        name="bench", description="a counter", version="1",
        action_schema=BenchAction.model_json_schema(), observation_schema=BenchObservation.model_json_schema(),
        state_schema=BenchState.model_json_schema(),
    )
    def ids(self):
        return ("count",)
    def tasks(self):
        return []
    def make(self, task_id, *, seed=None):
        return BenchEnv()
    def tools(self, task_id):
        return ()
    def tool_action(self, task_id, name, arguments):
        raise InputError("no tools")
    def action_schema(self, env):
        return self.description.action_schema

serve(create_app(catalog=BenchCatalog(), max_sessions=8), port=0, on_ready=lambda url: print(url, flush=True))
"""

# The same environment as openenv-core 0.3.0 serves it (its template's shape: Environment, Action, Observation).
OPENENV_SERVER = """
import socket, sys, uvicorn
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

class BenchAction(Action):
    value: int

class BenchObservation(Observation):
    count: int
    last: int

class BenchEnv(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True
    def __init__(self):
        super().__init__()
        self._state = State(episode_id="e", step_count=0)
    def reset(self, seed=None, episode_id=None, **kwargs):
        self._state = State(episode_id="e", step_count=0)
        return BenchObservation(count=0, last=0, reward=0.0, done=False)
    def step(self, action, timeout_s=None, **kwargs):
        self._state.step_count += 1
        return BenchObservation(count=self._state.step_count, last=action.value, reward=1.0, done=False)
    @property
    def state(self):
        return self._state

app = create_app(BenchEnv, BenchAction, BenchObservation, env_name="bench", max_concurrent_envs=8)
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(2048)
print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])
"""


# The floor: uvicorn (same settings) in front of a bare ASGI app that answers a fixed step result and does
# nothing else. No framework can be faster over this transport; it shows how much of a call is uvicorn's.
FLOOR_SERVER = """
import json
from sredrill.server import serve

ANSWER = json.dumps({"observation": {"count": 1, "last": 1}, "reward": 1.0, "done": False}).encode()
MESSAGE = json.dumps({"type": "observation", "data": json.loads(ANSWER)})

async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
    elif scope["type"] == "http":
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(ANSWER))]})
        await send({"type": "http.response.body", "body": ANSWER})
    else:
        await receive()
        await send({"type": "websocket.accept"})
        while (await receive())["type"] == "websocket.receive":
            await send({"type": "websocket.send", "text": MESSAGE})

serve(app, port=0, on_ready=lambda url: print(url, flush=True))
"""


def timed_rate(calls: Callable[[], None], n: int) -> float:
    """Calls per second of `n` calls."""
    start = time.perf_counter()
    for _ in range(n):
        calls()
    return n / (time.perf_counter() - start)


# -- in process -------------------------------------------------------------------------------------------


def in_process(n: int) -> list[tuple[str, float]]:
    from sredrill.env import make
    from sredrill.incidents import TASKS, Simulator, action_rules, parse_action

    typed = []
    for rule in action_rules():
        targets = rule.targets if rule.targets is not None else (None,)
        for target in targets:
            fields = {"action_type": str(rule.action_type), "target": target}
            if rule.value_range is not None:
                fields["value"] = 4
            typed.append(parse_action({k: v for k, v in fields.items() if v is not None}))
    declares = {"declare_healthy", "declare_unfixable"}
    workloads = {
        "waits only": [a for a in typed if a.action_type == "wait"],
        "remediations and waits": [
            a for a in typed if not a.action_type.startswith("inspect") and a.action_type not in declares
        ],
        "every action type, at random": [a for a in typed if a.action_type not in declares],
        "inspections only": [a for a in typed if a.action_type.startswith("inspect")],
    }
    tasks = list(TASKS.values())
    rows = []
    for name, pool in workloads.items():
        rng = random.Random(0)
        steps, spent, resets, reset_s = 0, 0.0, 0, 0.0
        while steps < n:
            start = time.perf_counter()
            sim = Simulator(tasks[resets % len(tasks)], resets)
            reset_s += time.perf_counter() - start
            resets += 1
            plan = [rng.choice(pool) for _ in range(sim.task.max_steps)]
            start = time.perf_counter()
            for action in plan:
                sim.step(action)
            spent += time.perf_counter() - start
            steps += len(plan)
        rows.append((f"Simulator.step, {name}", steps / spent))
    rows.append(("Simulator reset (episodes/s)", resets / reset_s))
    rows += families(n)
    env = make("hard_mixed", seed=0)
    env.reset()
    wait = {"action_type": "wait"}
    steps, spent = 0, 0.0
    while steps < n // 10:
        start = time.perf_counter()
        for _ in range(env.max_steps):
            env.step(wait)
        spent += time.perf_counter() - start
        steps += env.max_steps
        env.reset()
    rows.append(("Env.step (wire models), waits", steps / spent))
    return rows


def families(n: int) -> list[tuple[str, float]]:
    """The generated families (TRACE v2): `FamilySimulator.step` on random actions of each episode's own
    targets, over evaluation seeds of every family; resets (generation included) timed apart."""
    from sredrill.incidents.families import EVAL_SEEDS, FAMILIES, FamilySimulator, family_task

    rng = random.Random(0)
    steps, spent, resets, reset_s = 0, 0.0, 0, 0.0
    while steps < n:
        family, seed = FAMILIES[resets % len(FAMILIES)], EVAL_SEEDS[resets]
        start = time.perf_counter()
        task = family_task(family, seed)
        sim = FamilySimulator(task)
        reset_s += time.perf_counter() - start
        resets += 1
        keys = [
            (kind, target, 4 if kind == "scale_workers" else None)
            for kind in task.action_types
            if not kind.startswith("declare")
            for target in (task.targets(kind) if task.targets(kind) is not None else (None,))
        ]
        plan = [rng.choice(keys) for _ in range(task.max_steps)]
        start = time.perf_counter()
        for key in plan:
            if sim.done:
                break
            sim.step(key)
            steps += 1
        spent += time.perf_counter() - start
    return [
        ("FamilySimulator.step, every action at random", steps / spent),
        ("FamilySimulator reset, generation included (episodes/s)", resets / reset_s),
    ]


# -- over the network -------------------------------------------------------------------------------------


def start(cmd: list[str], *, quiet: bool) -> tuple[subprocess.Popen[str], str]:
    # openenv-core logs a traceback whenever a WebSocket client disconnects: its stderr is dropped (quiet).
    stderr = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http://"):
        proc.kill()
        raise SystemExit(f"the server did not start: {cmd[0]} printed {url!r}")
    deadline = time.monotonic() + 60
    while True:  # openenv-core imports gradio: allow it time to come up
        try:
            conn = http.client.HTTPConnection(urlsplit(url).hostname, urlsplit(url).port, timeout=2)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return proc, url
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise SystemExit(f"{url} did not answer /health within 60 s") from None
            time.sleep(0.1)


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class HttpClient:
    """One keep-alive connection: `POST /reset` once (keeping the session it names, if any), then steps."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port)
        self.headers = {"Content-Type": "application/json"}
        self.conn.request("POST", "/reset", body="{}", headers=self.headers)
        reply = self.conn.getresponse()
        reply.read()
        session = reply.getheader("X-Session-Id")
        if session is not None:
            self.headers["X-Session-Id"] = session
        self.body = json.dumps({"action": {"value": 1}})

    def step(self) -> None:
        try:
            self.conn.request("POST", "/step", body=self.body, headers=self.headers)
            answer = self.conn.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # uvicorn closes a keep-alive connection idle for 5 s (while the other servers are measured).
            self.conn.close()
            self.conn.request("POST", "/step", body=self.body, headers=self.headers)
            answer = self.conn.getresponse()
        answer.read()
        assert answer.status == 200, answer.status

    def close(self) -> None:
        self.conn.close()


class WsClient:
    """One WebSocket connection (one session): a `reset` message, then `step` messages."""

    def __init__(self, url: str) -> None:
        from websockets.sync.client import connect

        self._stack = contextlib.ExitStack()
        self.ws = self._stack.enter_context(connect(url.replace("http://", "ws://") + "/ws"))
        self.ws.send(json.dumps({"type": "reset", "data": {}}))
        self.ws.recv()
        self.message = json.dumps({"type": "step", "data": {"value": 1}})

    def step(self) -> None:
        self.ws.send(self.message)
        self.ws.recv()

    def close(self) -> None:
        self._stack.close()


def compare(urls: dict[str, str], n: int, rounds: int) -> dict[tuple[str, str], list[float]]:
    """Calls/s per (server, transport), one per round; each round measures every pair in turn, so a change in
    the machine's load affects both servers alike."""
    clients = {}
    for server, url in urls.items():
        clients[(server, "WebSocket")] = WsClient(url)
        clients[(server, "HTTP")] = HttpClient(url)
    try:
        for client in clients.values():
            for _ in range(WARMUP):
                client.step()
        rates: dict[tuple[str, str], list[float]] = {key: [] for key in clients}
        for _ in range(rounds):
            for key, client in clients.items():
                for _ in range(WARMUP // 10):  # reconnects, if the server closed an idle connection
                    client.step()
                rates[key].append(timed_rate(client.step, n))
        return rates
    finally:
        for client in clients.values():
            client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="calls per timed run over the network")
    parser.add_argument("--sim-steps", type=int, default=200_000, help="simulator steps per in-process workload")
    parser.add_argument("--skip-peer", action="store_true", help="do not measure openenv-core")
    parser.add_argument("--rounds", type=int, default=REPEATS, help="interleaved rounds (the median is reported)")
    parser.add_argument("--quick", action="store_true", help="500 calls per round, 3 rounds, 20,000 sim steps")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.rounds, args.sim_steps = 500, 3, 20_000

    print("in process (target: ≥ 100,000 simulator steps/s)")
    for name, rate in in_process(args.sim_steps):
        print(f"  {name:<52}{rate:>12,.0f}")

    servers = {"sredrill": [sys.executable, "-c", SREDRILL_SERVER], "floor": [sys.executable, "-c", FLOOR_SERVER]}
    if not args.skip_peer:
        if PEER_PYTHON.exists():
            servers["openenv-core"] = [str(PEER_PYTHON), "-c", OPENENV_SERVER]
        else:
            print(f"\nopenenv-core skipped: {PEER_PYTHON} is missing; create it with: "
                  "cd envs/trace_env && ../../.tools/bin/uv sync --frozen", file=sys.stderr)  # fmt: skip
    started = {name: start(cmd, quiet=name == "openenv-core") for name, cmd in servers.items()}
    try:
        per_round = compare({name: url for name, (_, url) in started.items()}, args.steps, args.rounds)
    finally:
        for proc, _ in started.values():
            stop(proc)
    rates = {key: statistics.median(values) for key, values in per_round.items()}
    print(f"\nover the network, one trivial environment: {args.steps} calls per round, median of {args.rounds} rounds")
    print(f"  {'transport':<12}{'sredrill':>12}{'openenv-core':>15}{'ratio':>9}{'goal':>9}{'floor':>10}")
    ratios: dict[str, list[float]] = {}
    for name, target in (("WebSocket", 2.0), ("HTTP", 2.5)):
        ours, theirs = rates[("sredrill", name)], rates.get(("openenv-core", name))
        floor = rates[("floor", name)]
        other = f"{theirs:>15,.0f}" if theirs else f"{'—':>15}"
        if theirs:
            pairs = zip(per_round[("sredrill", name)], per_round[("openenv-core", name)], strict=True)
            ratios[name] = [a / b for a, b in pairs]
        ratio = f"{statistics.median(ratios[name]):>8.2f}x" if theirs else f"{'—':>9}"
        print(f"  {name:<12}{ours:>12,.0f}{other}{ratio}{'≥ ' + format(target, '.1f') + 'x':>9}{floor:>10,.0f}")
    for name, values in ratios.items():
        shown = ", ".join(f"{v:.2f}" for v in values)
        print(f"  {name} ratio per round: {shown} (median {statistics.median(values):.2f},"
              f" min {min(values):.2f}, max {max(values):.2f})")  # fmt: skip
    print(
        "  floor: uvicorn, same settings, in front of a bare ASGI app answering a fixed result (no framework, no"
        " environment):\n  the most any server can do over this transport and client."
    )
    print(
        "  note: openenv-core's HTTP routes are stateless (each /reset and /step builds a new environment and closes"
        " it,\n  so its /step does not continue the episode); sredrill's HTTP steps run in the session /reset opened"
        " (X-Session-Id)."
    )
    print(f"  machine: {os.cpu_count()} CPUs; client and servers share them; Python {sys.version.split()[0]};"
          f" load average {os.getloadavg()[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
