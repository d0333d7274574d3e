"""OpenEnv conformance of the TRACE package, run in the package's own environment (openenv-core 0.3.0).

    cd envs/trace_env && ../../.tools/bin/uv sync --frozen && .venv/bin/python tests/conformance.py

0. The package's uv.lock is current with its pyproject and sredrill's (`uv lock --check`).
1. `openenv validate envs/trace_env` (the static checks) passes.
2. The Dockerfile's command (`server`, on the PATH the image sets) serves outside Docker, on a free loopback port.
3. `openenv validate --url` against that server passes.
4. openenv-core's `GenericEnvClient` plays a whole episode over WebSocket, a task family's episode (a family
   id and a seed), and a Kubernetes RCA task (every `inspect_logs` target its schema lists, then a diagnosis);
   the package's `TraceEnv` plays another.
5. `inference.py` against that server, without a model, prints its lines for a classic task and a family
   episode (`TASKS=easy_cpu_spike,web_api#seed100001`) and exits 0.

Each check prints one line; the first failure stops the script with exit code 1. `.ci/run` runs it after
`make test`.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parents[1]
ROOT = PACKAGE.parents[1]
BIN = Path(sys.executable).parent
TIMEOUT_S = 120


class Failed(Exception):
    pass


def check(name: str, fn: Callable[[], str]) -> None:
    started = time.monotonic()
    try:
        detail = fn()
    except Exception as exc:
        print(f"FAIL {name}: {type(exc).__name__}: {exc}", flush=True)
        raise Failed(name) from exc
    print(f"ok   {name} ({time.monotonic() - started:.1f} s){': ' + detail if detail else ''}", flush=True)


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, **kwargs)


# -- 0, 1. the static checks ------------------------------------------------------------------------------------


def lock_is_current() -> str:
    # sredrill's metadata is part of this lock: a change to the repository's pyproject needs a new lock here.
    uv = ROOT / ".tools" / "bin" / "uv"
    done = run([str(uv), "lock", "--check"], cwd=PACKAGE)
    if done.returncode != 0:
        raise AssertionError(f"{done.stderr.strip()}\nrun: cd envs/trace_env && ../../.tools/bin/uv lock")
    return ""


def validate_local() -> str:
    done = run([str(BIN / "openenv"), "validate", str(PACKAGE.relative_to(ROOT)), "--verbose"], cwd=ROOT)
    if done.returncode != 0 or "[OK] trace: Ready for multi-mode deployment" not in done.stdout:
        raise AssertionError(f"exit {done.returncode}\n{done.stdout}{done.stderr}")
    print(done.stdout.rstrip(), flush=True)
    return ""


# -- 2. the Dockerfile's command, outside Docker ------------------------------------------------------------------


def dockerfile_command() -> list[str]:
    cmd = [line[4:].strip() for line in (PACKAGE / "Dockerfile").read_text().splitlines() if line.startswith("CMD ")]
    if len(cmd) != 1:
        raise AssertionError(f"expected one CMD in the Dockerfile, found {cmd}")
    return json.loads(cmd[0])


class Server:
    """The Dockerfile's CMD, run with the image's PATH (the package's .venv/bin first), HOST and a free PORT."""

    def __init__(self) -> None:
        command = dockerfile_command()
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HOST": "127.0.0.1",
               "PORT": "0"}  # fmt: skip
        self.proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lines: queue.Queue[str | None] = queue.Queue()
        self.log: list[str] = []

        def pump() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log.append(line)
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        while True:
            line = lines.get(timeout=TIMEOUT_S)
            if line is None:
                raise AssertionError(f"{command} exited ({self.proc.wait()}):\n{''.join(self.log)}")
            if m := re.search(r"http://127\.0\.0\.1:\d+", line):
                self.url = m.group(0)
                break
        with urllib.request.urlopen(f"{self.url}/health", timeout=30) as answer:
            if json.load(answer) != {"status": "healthy"}:
                raise AssertionError("GET /health is not healthy")

    def stop(self) -> int:
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


# -- 3. the runtime checks ----------------------------------------------------------------------------------------


def validate_url(url: str) -> str:
    done = run([str(BIN / "openenv"), "validate", "--url", url])
    print(done.stdout.rstrip(), flush=True)
    report = json.loads(done.stdout)
    if done.returncode != 0 or report.get("passed") is not True:
        raise AssertionError(f"exit {done.returncode}: {done.stderr}")
    return f"{report.get('summary', {}).get('passed_count', '?')} criteria passed, mode {report.get('mode')}"


# -- 4. openenv-core's clients ------------------------------------------------------------------------------------


def play(env: Any, task_id: str, *, typed: bool) -> str:
    """A whole episode with sredrill's reference policy, through an openenv-core client (sync wrapper)."""
    from sredrill.agents.reference.incident_policy import choose
    from sredrill.env import Action, Observation

    result = env.reset(task_id=task_id, seed=0)
    observation = result.observation if typed else Observation.model_validate(result.observation)
    history: list[tuple[Action, Observation]] = []
    rewards = []
    while not result.done:
        action = choose(observation, history)
        result = env.step(action if typed else action.model_dump(mode="json", exclude_none=True))
        observation = result.observation if typed else Observation.model_validate(result.observation)
        history.append((action, observation))
        rewards.append(result.reward)
    state = env.state()
    state = state if isinstance(state, dict) else state.model_dump(mode="json")
    if not (state["done"] and state["step_count"] == len(history) and state["task_id"] == task_id):
        raise AssertionError(f"unexpected final state {state}")
    return f"{task_id}: {len(history)} steps, rewards {rewards}, episode reward {state['episode_reward']}"


def generic_client(url: str) -> str:
    from openenv.core import GenericEnvClient

    with GenericEnvClient(base_url=url).sync() as env:
        return play(env, "hard_mixed", typed=False)


def family_episode(url: str) -> str:
    """A task family's episode (`task_id` a family, `seed` an evaluation seed) with the reference family policy."""
    from openenv.core import GenericEnvClient

    from sredrill.agents.incident_probes import ActionSpace, Turn
    from sredrill.agents.reference.family_policy import ReferencePolicy
    from sredrill.env import Observation
    from sredrill.incidents.families import family_task

    family, seed = "web_api", 100_001
    policy = ReferencePolicy(ActionSpace.from_schema(family_task(family, seed).action_schema()))
    with GenericEnvClient(base_url=url).sync() as env:
        result = env.reset(task_id=family, seed=seed)
        observation = Observation.model_validate(result.observation)
        if list(observation.services) != list(family_task(family, seed).components):
            raise AssertionError(f"the reset played another system: {list(observation.services)}")
        history: list[Turn] = []
        while not result.done:
            action = policy.choose(observation, history)
            result = env.step(action.model_dump(mode="json", exclude_none=True))
            observation = Observation.model_validate(result.observation)
            history.append(Turn(action, observation, None))
        state = env.state()
        state = state if isinstance(state, dict) else state.model_dump(mode="json")
    if not (state["done"] and state["task_id"] == family and state["seed"] == seed):
        raise AssertionError(f"unexpected final state {state}")
    return f"{family}#seed{seed}: {len(history)} steps, episode reward {state['episode_reward']}"


def kubernetes_task(url: str) -> str:
    """A Kubernetes scenario of the built-in packs (`GET /tasks`: an RCA task whose description names the
    domain): every log target of its action schema, the monitors, then a diagnosis that ends the episode."""
    with urllib.request.urlopen(f"{url}/tasks", timeout=30) as answer:
        tasks = json.load(answer)["tasks"]
    k8s = [t for t in tasks if t["kind"] == "rca" and "Kubernetes" in t["description"]]
    if not k8s:
        raise AssertionError("GET /tasks lists no Kubernetes RCA task (the built-in k8s pack)")
    task = k8s[0]
    targets = task["action_schema"]["$defs"]["RcaInspectLogs"]["properties"]["target"]["enum"]
    from openenv.core import GenericEnvClient

    with GenericEnvClient(base_url=url).sync() as env:
        env.reset(task_id=task["task_id"], seed=0)
        pod = None
        for target in targets:
            args = {"pod": pod} if target == "pod_logs" and pod else None
            result = env.step({"action_type": "inspect_logs", "target": target, "args": args})
            evidence = result.observation["inspection"]["evidence"]
            pod = pod or next((p["name"] for p in evidence.get("pods", [])), None)
        env.step({"action_type": "inspect_metrics"})
        diagnosis = {"root_cause": "undetermined", "category": "unknown", "failure_modes": ["unknown"]}
        result = env.step({"action_type": "submit_diagnosis", "args": diagnosis})
        state = env.state()
        state = state if isinstance(state, dict) else state.model_dump(mode="json")
    if not (result.done and state["done"] and 0.0 <= result.reward <= 1.0 and state["step_count"] == len(targets) + 2):
        raise AssertionError(f"unexpected end: reward {result.reward}, state {state}")
    return f"{len(k8s)} Kubernetes tasks; {task['task_id']}: targets {', '.join(targets)}, reward {result.reward:.2f}"


def typed_client(url: str) -> str:
    sys.path.insert(0, str(PACKAGE.parent))
    from trace_env import TraceEnv

    with TraceEnv(base_url=url).sync() as env:
        return play(env, "medium_error_spike", typed=True)


# -- 5. inference.py ----------------------------------------------------------------------------------------------


def inference(url: str) -> str:
    tasks = "easy_cpu_spike,web_api#seed100001"  # a classic task, and a family with its seed
    env = {**os.environ, "ENV_BASE_URL": url, "API_BASE_URL": "http://127.0.0.1:9/v1", "TASKS": tasks}
    done = run([sys.executable, str(PACKAGE / "inference.py")], env=env)
    lines = done.stdout.splitlines()
    if done.returncode != 0 or not lines or not lines[0].endswith("model=fallback:reference"):
        raise AssertionError(f"exit {done.returncode}\n{done.stdout}{done.stderr}")
    ends = [line for line in lines if line.startswith("[END]")]
    starts = [line.split()[1] for line in lines if line.startswith("[START]")]
    if starts != ["task=easy_cpu_spike", "task=web_api#seed100001"] or len(ends) != 2:
        raise AssertionError(f"unexpected blocks\n{done.stdout}")
    for end in ends:
        if not re.fullmatch(r"\[END\] success=true steps=\d+ score=\d\.\d{3} rewards=[-\d.,]+", end):
            raise AssertionError(f"unexpected [END] line {end!r}")
    return " | ".join(ends)


def main() -> int:
    server: Server | None = None
    passed = True
    try:
        check("envs/trace_env/uv.lock is current (uv lock --check)", lock_is_current)
        check("openenv validate envs/trace_env", validate_local)

        def start() -> str:
            nonlocal server
            server = Server()
            return f"{' '.join(dockerfile_command())} → {server.url}"

        check("the Dockerfile's CMD serves outside Docker", start)
        assert server is not None
        url = server.url
        check("openenv validate --url", lambda: validate_url(url))
        check("GenericEnvClient plays a whole episode over WebSocket", lambda: generic_client(url))
        check("GenericEnvClient plays a task family's episode (task_id + seed)", lambda: family_episode(url))
        check("GenericEnvClient plays a Kubernetes RCA task (its targets, submit)", lambda: kubernetes_task(url))
        check("TraceEnv (client.py) plays a whole episode", lambda: typed_client(url))
        check("inference.py without a model", lambda: inference(url))
    except Failed:
        passed = False
    finally:
        if server is not None:
            code = server.stop()
            # uvicorn shuts down, then re-raises SIGTERM: the process ends "killed by SIGTERM" (-15).
            if code not in (0, -signal.SIGTERM):
                print(f"FAIL the server exited with {code}:\n{''.join(server.log)}", flush=True)
                passed = False
    if passed:
        print("conformance: every check passed", flush=True)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
