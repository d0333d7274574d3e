"""Baseline inference for TRACE: a model behind an OpenAI-compatible API plays incident tasks.

    API_BASE_URL   the model's endpoint (default https://router.huggingface.co/v1)
    MODEL_NAME     the model (default Qwen/Qwen2.5-72B-Instruct)
    HF_TOKEN       the API key (API_KEY is read when HF_TOKEN is unset)
    ENV_BASE_URL   a running TRACE server (default: one is started in this process, on a free loopback port)
    TASKS          comma-separated task ids (default easy_cpu_spike,medium_cascade,hard_mixed): classic tasks,
                   task families (`web_api`, `event_pipeline`, `data_platform`: each seed generates its own
                   system and fault), each optionally with its own seed as `TASK#seedN` (`web_api#seed100017`)
    SEED           the seed of every task that names none (default 0; a family's evaluation seeds are
                   100000-199999)

For each task, stdout carries exactly these lines and nothing else:

    [START] task=<task> env=trace model=<model>
    [STEP] step=<n> action=<compact JSON> reward=<0.00> done=<true|false> error=<one line|null>
    [END] success=<true|false> steps=<n> score=<0.000> rewards=<r1,r2,…>

one [STEP] per action sent (an action the environment rejects is a step with its error and reward 0.00; a
reply that is no action is a step with `action=null`), and [END] always, even on error. `score` is the
environment's grade of the episode (0 to 1; 0 when the incident was not resolved and declared), `success`
whether it was. When the model cannot be reached at the first call, the reference policy of sredrill plays
every task instead and [START] says `model=fallback:reference`. Diagnostics go to stderr; the exit code is 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

DEFAULT_TASKS = ("easy_cpu_spike", "medium_cascade", "hard_mixed")
FALLBACK_LABEL = "fallback:reference"
MAX_EXTRA_ATTEMPTS = 3
"""Rejected or unreadable actions allowed per episode beyond its step limit, so a confused model still ends."""
MAX_OBSERVATION_CHARS = 6000

SYSTEM_PROMPT = """You are an on-call SRE agent in TRACE, a simulated production incident.
Each turn you get the current observation (service statuses, telemetry, firing alerts, and the result of your
last inspection) and choose ONE action. Inspect logs, metrics and alerts to find the cause, remediate what the
evidence shows, wait for fixes to settle, then declare: declare_healthy once everything is healthy, or
declare_unfixable. Repeated and irrelevant actions cost reward; declaring healthy too early costs more.

Task: {description}
Steps allowed: {max_steps}

Actions (the arguments each takes):
{actions}

Reply with exactly one JSON object and nothing else, e.g.
{{"action_type": "inspect_logs", "target": "api_workers"}}"""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Config:
    api_base_url: str
    model: str
    api_key: str
    env_base_url: str | None
    tasks: tuple[str, ...]
    seed: int

    @classmethod
    def from_env(cls) -> Config:
        tasks = tuple(t.strip() for t in os.environ.get("TASKS", "").split(",") if t.strip())
        return cls(
            api_base_url=os.environ.get("API_BASE_URL") or "https://router.huggingface.co/v1",
            model=os.environ.get("MODEL_NAME") or "Qwen/Qwen2.5-72B-Instruct",
            # The client needs some key; a server that wants a real one answers 401, and the reference plays.
            api_key=os.environ.get("HF_TOKEN") or os.environ.get("API_KEY") or "missing-HF_TOKEN",
            env_base_url=os.environ.get("ENV_BASE_URL") or None,
            tasks=tasks or DEFAULT_TASKS,
            seed=_seed(os.environ.get("SEED")),
        )


def split_task(entry: str, default_seed: int) -> tuple[str, int]:
    """A TASKS entry as (task id, seed): `web_api#seed100017` → ("web_api", 100017); `hard_mixed` → its seed
    is `default_seed`. A malformed seed suffix is reported on stderr and the default seed is used."""
    task_id, hashed, seed_text = entry.partition("#")
    if not hashed:
        return task_id, default_seed
    digits = seed_text.removeprefix("seed")
    if not digits.isascii() or not digits.isdigit():
        log(f"inference: TASKS entry {entry!r}: the seed is written TASK#seedN (e.g. web_api#seed100017); "
            f"using SEED={default_seed}")  # fmt: skip
        return task_id, default_seed
    return task_id, int(digits)


def _seed(text: str | None) -> int:
    try:
        return max(0, int(text or 0))
    except ValueError:
        log(f"inference: SEED={text!r} is not an integer; using 0")
        return 0


# -- the environment, over HTTP ------------------------------------------------------------------------------


class EnvError(Exception):
    """The environment refused a request (its message is the error line of the step)."""


class Episode:
    """One session of the TRACE server over its stateful HTTP routes (`X-Session-Id`)."""

    def __init__(self, http: httpx.Client, task_id: str, seed: int) -> None:
        self.http = http
        answer = http.post("/reset", json={"task_id": task_id, "seed": seed})
        self.first = _json(answer)
        self.headers = {"X-Session-Id": answer.headers["X-Session-Id"]}
        self.task_id = task_id

    def step(self, action: dict[str, Any]) -> dict[str, Any]:
        return _json(self.http.post("/step", json={"action": action}, headers=self.headers))

    def tools(self) -> list[dict[str, Any]]:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        return _json(self.http.post("/mcp", json=body, headers=self.headers))["result"]["tools"]

    def schema(self) -> dict[str, Any]:
        """`GET /schema` of this session: its episode's action schema (a family's names its own targets)."""
        return _json(self.http.get("/schema", headers=self.headers))

    def task(self) -> dict[str, Any]:
        tasks = _json(self.http.get("/tasks"))["tasks"]
        return next(t for t in tasks if t["task_id"] == self.task_id)


def _json(answer: httpx.Response) -> dict[str, Any]:
    if answer.status_code != 200:
        try:
            error = answer.json()
            message = "; ".join(
                f"{'.'.join(str(p) for p in d.get('loc', [])[1:])}: {d['msg']}".lstrip(": ") for d in error["detail"]
            )
            if error.get("allowed"):
                message += f" (allowed: {', '.join(error['allowed'])})"
        except (ValueError, KeyError, TypeError):
            message = f"HTTP {answer.status_code}: {answer.text[:200]}"
        raise EnvError(one_line(message))
    return answer.json()


@contextlib.contextmanager
def environment(base_url: str | None) -> Iterator[str]:
    """The server to play on: ENV_BASE_URL, or one started in this process."""
    if base_url is not None:
        yield base_url.rstrip("/")
        return
    from sredrill.server import ServerThread, create_app

    with ServerThread(create_app()) as server:
        log(f"inference: started a TRACE server in process at {server.url}")
        yield server.url


# -- the players ---------------------------------------------------------------------------------------------


class ModelUnavailable(Exception):
    """The model could not be reached (network, authentication, server errors)."""


@dataclass
class ModelPlayer:
    """The model, prompted with the observation each turn, replying with one JSON action."""

    client: Any
    model: str
    messages: list[dict[str, str]] = field(default_factory=list)

    def start(self, episode: Episode, observation: dict[str, Any]) -> None:
        info = episode.first["info"]
        # A family episode's reset says which system it generated; a classic task's listing describes it.
        description = info.get("description") or episode.task()["description"]
        actions = "\n".join(_describe_tool(t) for t in episode.tools())
        prompt = SYSTEM_PROMPT.format(description=description, max_steps=info["max_steps"], actions=actions)
        self.messages = [
            {"role": "system", "content": prompt},
            {"role": "user", "content": "Observation after reset:\n" + _observation_text(observation)},
        ]

    def choose(self) -> tuple[dict[str, Any] | None, str | None]:
        """The next action, or None and why the reply was not one."""
        import openai

        try:
            reply = self.client.chat.completions.create(
                model=self.model, messages=self.messages, temperature=0, max_tokens=300
            )
        except openai.OpenAIError as exc:
            raise ModelUnavailable(one_line(f"{type(exc).__name__}: {exc}")) from exc
        message = reply.choices[0].message if reply.choices else None
        text = (message.content if message is not None else None) or ""
        calls = (message.tool_calls if message is not None else None) or []
        said = text or compact([{"name": c.function.name, "arguments": c.function.arguments} for c in calls])
        self.messages.append({"role": "assistant", "content": said})
        if calls:
            call = calls[0].function
            arguments: Any = call.arguments or "{}"
            if isinstance(arguments, str):  # the usual form; some servers send an object instead
                try:
                    arguments = json.loads(arguments)
                except ValueError:
                    return None, f"the tool call's arguments are not JSON: {one_line(arguments)[:120]}"
            if not isinstance(arguments, dict):
                return None, "the tool call's arguments are not an object"
            return {"action_type": call.name, **arguments}, None
        return parse_action(text)

    def observe(self, action: dict[str, Any] | None, result: dict[str, Any] | None, error: str | None) -> None:
        if error is not None:
            self.messages.append({"role": "user", "content": f"That was not accepted: {error}\nChoose again."})
            return
        assert result is not None
        info = result.get("info", {})
        self.messages.append(
            {
                "role": "user",
                "content": f"Reward {result['reward']:.2f}. {info.get('message', '')}\nObservation:\n"
                + _observation_text(result["observation"]),
            }
        )


class ReferencePlayer:
    """sredrill's reference incident policy: inspect, remediate what the evidence shows, verify, declare.

    It is built per episode from the session's action schema (`GET /schema`), so on a task family it knows
    that episode's components; on a classic task it is the classic policy.
    """

    def __init__(self) -> None:
        from sredrill.agents.incident_probes import ActionSpace, Turn
        from sredrill.agents.reference.family_policy import ReferencePolicy
        from sredrill.env import Action, Observation

        self._space, self._policy_of, self._turn = ActionSpace, ReferencePolicy, Turn
        self._action, self._observation = Action, Observation
        self.policy: Any = None
        self.history: list[Any] = []
        self.current: Any = None

    def start(self, episode: Episode, observation: dict[str, Any]) -> None:
        self.policy = self._policy_of(self._space.from_schema(episode.schema()["action"]))
        self.history = []
        self.current = self._observation.model_validate(observation)

    def choose(self) -> tuple[dict[str, Any] | None, str | None]:
        action = self.policy.choose(self.current, self.history)
        return action.model_dump(mode="json", exclude_none=True), None

    def observe(self, action: dict[str, Any] | None, result: dict[str, Any] | None, error: str | None) -> None:
        if result is not None and action is not None:
            self.current = self._observation.model_validate(result["observation"])
            self.history.append(self._turn(self._action.model_validate(action), self.current, None))


def parse_action(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The first JSON object in a reply (code fences and prose around it are ignored)."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match is None:
        return None, f"the reply holds no JSON object: {one_line(text)[:120] or '(empty)'}"
    try:
        action = json.loads(match.group(0))
    except ValueError as exc:
        return None, f"the reply's JSON does not parse ({exc}): {one_line(match.group(0))[:120]}"
    if not isinstance(action, dict):
        return None, "the reply's JSON is not an object"
    if isinstance(action.get("action"), dict):  # {"action": {...}} is accepted too
        action = action["action"]
    return action, None


def _describe_tool(tool: dict[str, Any]) -> str:
    schema = tool.get("inputSchema", {})
    defs = schema.get("$defs", {})
    parts = []
    for name, prop in schema.get("properties", {}).items():
        if "$ref" in prop:
            prop = defs.get(prop["$ref"].rsplit("/", 1)[-1], prop)
        # An optional argument is `anyOf [its schema, null]` (strict schemas); describe its schema.
        prop = next((m for m in prop.get("anyOf", []) if m.get("type") != "null"), prop)
        if "enum" in prop:
            parts.append(f"{name}: one of {', '.join(map(str, prop['enum']))}")
        elif prop.get("type") == "integer":
            parts.append(f"{name}: integer {prop.get('minimum', '')}–{prop.get('maximum', '')}")
        else:
            parts.append(f"{name}: {prop.get('type', 'object')}")
    return f"- {tool['name']}({'; '.join(parts)}): {one_line(tool.get('description', ''))}"


def _observation_text(observation: dict[str, Any]) -> str:
    text = compact(observation)
    return text if len(text) <= MAX_OBSERVATION_CHARS else text[:MAX_OBSERVATION_CHARS] + "…(truncated)"


# -- one task ------------------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    steps: int = 0
    rewards: list[float] = field(default_factory=list)
    score: float = 0.0
    success: bool = False


class Runner:
    """Plays the tasks, printing the [START]/[STEP]/[END] lines."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.reported: list[str] = []
        """Tasks whose [END] line was printed."""
        self.player: ModelPlayer | ReferencePlayer | None = None
        try:
            from openai import OpenAI

            client = OpenAI(base_url=config.api_base_url, api_key=config.api_key, max_retries=1, timeout=60)
            self.model_player: ModelPlayer | None = ModelPlayer(client, config.model)
        except Exception as exc:  # no usable client at all: the reference plays (said on stderr)
            log(f"inference: cannot create the OpenAI client ({one_line(str(exc))}); the reference policy plays")
            self.model_player = None

    @property
    def label(self) -> str:
        return (
            FALLBACK_LABEL
            if isinstance(self.player, ReferencePlayer) or self.model_player is None
            else self.config.model
        )

    def fall_back(self, why: str) -> None:
        log(f"inference: model {self.config.model} at {self.config.api_base_url} is unreachable ({why}); "
            "the reference policy plays every task (model=fallback:reference)")  # fmt: skip
        self.player = ReferencePlayer()

    def run_task(self, http: httpx.Client | None, task_id: str) -> None:
        outcome = Outcome()
        started = False
        try:
            if http is None:
                raise EnvError("no environment server")
            episode = Episode(http, *split_task(task_id, self.config.seed))
            observation = episode.first["observation"]
            max_attempts = int(episode.first["info"]["max_steps"]) + MAX_EXTRA_ATTEMPTS
            action, problem = self.first_action(episode, observation)
            print(f"[START] task={task_id} env=trace model={self.label}", flush=True)
            started = True
            done = False
            while not done and outcome.steps < max_attempts:
                result, error = None, problem
                if action is not None:
                    try:
                        result = episode.step(action)
                    except EnvError as exc:
                        error = str(exc)
                reward = float(result["reward"]) if result is not None else 0.0
                done = bool(result["done"]) if result is not None else False
                outcome.steps += 1
                outcome.rewards.append(reward)
                print(
                    f"[STEP] step={outcome.steps} action={compact(action) if action is not None else 'null'} "
                    f"reward={reward:.2f} done={str(done).lower()} error={one_line(error) if error else 'null'}",
                    flush=True,
                )
                assert self.player is not None
                self.player.observe(action, result, error)
                if done:
                    info = result["info"] if result is not None else {}
                    outcome.score = float(info.get("grade") or 0.0)
                    outcome.success = bool(info.get("resolved"))
                    break
                action, problem = self.next_action()
        except Exception as exc:  # one task's failure ends that task only; the reason goes to stderr
            log(f"inference: task {task_id} stopped: {type(exc).__name__}: {one_line(str(exc))}")
            if not isinstance(exc, EnvError | httpx.HTTPError):
                traceback.print_exc(file=sys.stderr)
        finally:
            if not started:
                print(f"[START] task={task_id} env=trace model={self.label}", flush=True)
            rewards = ",".join(f"{r:.2f}" for r in outcome.rewards)
            print(
                f"[END] success={str(outcome.success).lower()} steps={outcome.steps} score={outcome.score:.3f} "
                f"rewards={rewards}",
                flush=True,
            )
            self.reported.append(task_id)

    def first_action(self, episode: Episode, observation: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """The episode's first action; the run's very first model call decides between the model and the fallback."""
        if self.player is None:
            if self.model_player is None:
                self.player = ReferencePlayer()
            else:
                self.player = self.model_player
                self.player.start(episode, observation)
                try:
                    return self.player.choose()
                except ModelUnavailable as exc:
                    self.fall_back(str(exc))
        self.player.start(episode, observation)
        return self.next_action()

    def next_action(self) -> tuple[dict[str, Any] | None, str | None]:
        assert self.player is not None
        try:
            return self.player.choose()
        except ModelUnavailable as exc:
            return None, f"model unavailable: {exc}"


def main() -> int:
    config = Config.from_env()
    runner = Runner(config)
    try:
        with environment(config.env_base_url) as url, httpx.Client(base_url=url, timeout=60) as http:
            for task_id in config.tasks:
                runner.run_task(http, task_id)
    except Exception as exc:  # the environment could not be started: every task still reports
        log(f"inference: no environment ({type(exc).__name__}: {one_line(str(exc))})")
        for task_id in config.tasks[len(runner.reported) :]:
            runner.run_task(None, task_id)
    return 0


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # the format promises exit 0, whatever happened
        traceback.print_exc(file=sys.stderr)
    sys.exit(0)
