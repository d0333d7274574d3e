"""Shortcut probes of the incident environment: policies that score only if the benchmark can be gamed.

Each probe plays an episode without understanding it (issue 21, "How we will know"); a benchmark worth its
name keeps every one of them at or below 20% resolved (`always_healthy` at or below the false-alarm rate):

- `lookup`: bins the first observation (firing alerts and statuses, component names replaced by their kind)
  and plays the fix that most often resolved that bin on training seeds (`fit_lookup`), then waits and
  declares healthy. No inspection.
- `reward_probe`: tries every remediation in a fixed order and stops at the first +5 reward; then waits and
  declares healthy. It reads no observation, only rewards.
- `inspection_probe`: inspects the logs of every component, takes the ones whose inspection paid a reward as
  the suspects, and tries the remediations on them in a fixed order until one pays +5.
- `try_everything`: every remediation on every target, budget permitting, then waits and declares healthy.
- `always_healthy`: declares healthy at once.
- `regenerate` (an oracle): the generator is public, so it regenerates the public task of each of the first
  `REGENERATE_SEEDS` evaluation seeds, finds the one with the episode's components and plays that task's fix.
  It resolves every unkeyed episode of those seeds, and nothing but false alarms of a keyed one: why
  `sredrill run` keys its episodes (`family_task(..., key=)`).

A policy is built per episode from the episode's `ActionSpace` (its action types and their targets, read from
the action schema or from the tools) and answers `choose(observation, history)`, like the reference policy,
where `history` holds each action with the observation and the reward it produced (`None` where the path
hides rewards, as `sredrill run --pack incidents` does). Drivers play a policy in process (`play_env`,
`play_episode`), over an OpenEnv server's HTTP routes (`play_http`), or as a `py:` agent of `sredrill run`
(the module-level agents: `--agent py:sredrill.agents.incident_probes:reward_probe`).

Examples:
    >>> from sredrill.env import make
    >>> played = play_env(AlwaysHealthy, make("easy_cpu_spike"), seed=0)
    >>> played.resolved, played.steps
    (False, 1)
"""

from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

import httpx

from sredrill.agents.protocol import AgentReply, Task
from sredrill.env import Action, Env, Observation
from sredrill.env.episode import Episode
from sredrill.incidents import Service
from sredrill.trajectory import Recorder, ResponseStep, ToolSpec

__all__ = [
    "FIX_REWARD",
    "PROBES",
    "REGENERATE_SEEDS",
    "ActionKind",
    "ActionSpace",
    "AlwaysHealthy",
    "InspectionProbe",
    "Lookup",
    "LookupTable",
    "Played",
    "Policy",
    "PolicyFactory",
    "Regenerate",
    "RewardProbe",
    "TryEverything",
    "Turn",
    "always_healthy",
    "first_bin",
    "fit_lookup",
    "inspection_probe",
    "lookup",
    "lookup_factory",
    "play_env",
    "play_episode",
    "play_http",
    "play_tools",
    "public_tasks",
    "regenerate",
    "reward_probe",
    "trained_lookup",
    "try_everything",
]

FIX_REWARD = 5.0
"""The step reward of a root-cause fix (the seed's table and TRACE v2): what the reward probes look for."""

_WAIT, _HEALTHY, _UNFIXABLE = "wait", "declare_healthy", "declare_unfixable"
_PASSIVE = frozenset({_WAIT, _HEALTHY, _UNFIXABLE, "observe"})
_SCALE_VALUE = 8
"""The replica count the probes ask for: above every classic task's desired count, below harm's ceiling."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One step as a policy remembers it."""

    action: Action
    observation: Observation
    """The observation the action produced."""
    reward: float | None
    """The step's reward, or None where the path hides it."""


History = Sequence[Turn]


@dataclass(frozen=True, slots=True)
class ActionKind:
    """One action type of an episode: its targets (empty: it takes none) and whether it takes a value."""

    name: str
    targets: tuple[str, ...]
    value_range: tuple[int, int] | None
    """(lowest, highest) integer value when the action needs one, else None."""

    @property
    def is_inspection(self) -> bool:
        return self.name.startswith("inspect_")

    @property
    def is_remediation(self) -> bool:
        return not self.is_inspection and self.name not in _PASSIVE


@dataclass(frozen=True, slots=True)
class ActionSpace:
    """The actions one episode accepts, in the order its schema lists them."""

    kinds: Mapping[str, ActionKind]

    @classmethod
    def from_tools(cls, tools: Iterable[ToolSpec]) -> ActionSpace:
        """From an episode's tools (`sredrill run --pack incidents`, MCP): one tool per action type."""
        return cls(_frozen(_kind(t.name, t.input_schema, {}) for t in tools if t.name != "observe"))

    @classmethod
    def from_schema(cls, schema: Mapping[str, Any]) -> ActionSpace:
        """From an episode's action schema (`TaskInfo.action_schema`, `GET /schema`): a union of variants."""
        defs = schema.get("$defs", {})
        variants = [_resolve(v, defs) for v in schema.get("oneOf", schema.get("anyOf", []))]
        kinds = []
        for variant in variants:
            name = variant.get("properties", {}).get("action_type", {}).get("const")
            if isinstance(name, str):
                kinds.append(_kind(name, variant, defs))
        return cls(_frozen(kinds))

    def remediations(self) -> list[Action]:
        """Every remediation as a concrete action (each target; a value-taking one at `_SCALE_VALUE`)."""
        out = []
        for kind in self.kinds.values():
            if not kind.is_remediation:
                continue
            for target in kind.targets or (None,):
                out.append(Action(action_type=kind.name, target=target, value=_value(kind)))
        return out

    def targets(self, name: str) -> tuple[str, ...]:
        kind = self.kinds.get(name)
        return kind.targets if kind is not None else ()

    @property
    def components(self) -> tuple[str, ...]:
        """The episode's components: the targets of `inspect_logs`."""
        return self.targets("inspect_logs")

    @property
    def is_classic(self) -> bool:
        """A classic task: its components are the three fixed services (`sredrill.incidents.Service`)."""
        names = self.components
        return bool(names) and all(n in _CLASSIC_SERVICES for n in names)

    def component_kinds(self) -> dict[str, str]:
        """Component -> its kind as the schema shows it: `pool` (api or worker), `queue`, `database`, `cache`,
        `external`, read off the remediations that target it; on a classic task each service is its own kind."""
        if self.is_classic:
            return {n: n for n in self.components}
        return {
            n: next((k for a, k in _KIND_OF_ACTION.items() if n in self.targets(a)), "unknown") for n in self.components
        }


_CLASSIC_SERVICES = frozenset(str(s) for s in Service)
# A family component's kind, read off the remediations that target it (documented action kinds, never a fault).
_KIND_OF_ACTION = {
    "restart_database": "database",
    "failover": "external",
    "drop_message": "queue",
    "clear_queue": "queue",
    "flush_cache": "cache",
    "restart_service": "pool",
    "scale_workers": "pool",
}


def _frozen(kinds: Iterable[ActionKind]) -> Mapping[str, ActionKind]:
    return MappingProxyType({k.name: k for k in kinds})


def _resolve(node: Any, defs: Mapping[str, Any]) -> Any:
    """Inline `$ref`s to `#/$defs/…` (pydantic's schemas use them for enums)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _resolve(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _resolve(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(v, defs) for v in node]
    return node


def _enum(node: Any) -> list[str]:
    if not isinstance(node, dict):
        return []
    if "enum" in node:
        return [v for v in node["enum"] if isinstance(v, str)]
    if isinstance(node.get("const"), str):
        return [node["const"]]
    # Typed, so that the outer get does not receive an Any default (whose overloads would add None).
    one_of: list[Any] = node.get("oneOf", [])
    return [v for member in node.get("anyOf", one_of) for v in _enum(member)]


_RANGE = re.compile(r"(\d+)\D+(\d+)")


def _kind(name: str, schema: Mapping[str, Any], defs: Mapping[str, Any]) -> ActionKind:
    props = _resolve(schema.get("properties", {}), defs)
    targets = tuple(_enum(props.get("target")))
    value = props.get("value")
    value_range = None
    if isinstance(value, dict) and _takes_integer(value):
        lo, hi = value.get("minimum"), value.get("maximum")
        if not (isinstance(lo, int) and isinstance(hi, int)):
            # Strict tool schemas move bounds into the description ("From 1 to 64.").
            m = _RANGE.search(str(value.get("description", "")))
            lo, hi = (int(m.group(1)), int(m.group(2))) if m else (1, _SCALE_VALUE)
        value_range = (lo, hi)
    return ActionKind(name, targets, value_range)


def _takes_integer(node: Mapping[str, Any]) -> bool:
    if node.get("type") == "integer":
        return True
    return any(isinstance(m, dict) and m.get("type") == "integer" for m in node.get("anyOf", []))


def _value(kind: ActionKind) -> int | None:
    if kind.value_range is None:
        return None
    lo, hi = kind.value_range
    return min(max(_SCALE_VALUE, lo), hi)


class Policy(Protocol):
    """A policy over one episode: the next action from the current observation and the history."""

    def choose(self, observation: Observation, history: History) -> Action: ...


PolicyFactory = Callable[[ActionSpace], Policy]
"""Builds a policy for one episode from the episode's action space."""


def _act(name: str, target: str | None = None, value: int | None = None) -> Action:
    return Action(action_type=name, target=target, value=value)


def _steps_left(observation: Observation) -> int:
    return observation.max_steps - observation.step


def _finish(observation: Observation, history: History, *, fixed: bool) -> Action | None:
    """The shared ending: after a paid fix (or with the budget nearly spent) wait once, then declare healthy."""
    left = _steps_left(observation)
    if left <= 1:
        return _act(_HEALTHY)
    if fixed:
        waited = bool(history) and history[-1].action.action_type == _WAIT
        return _act(_HEALTHY) if waited or left <= 1 else _act(_WAIT)
    return None


def _paid_fix(history: History) -> bool:
    return any(t.reward is not None and t.reward >= FIX_REWARD for t in history)


def _tried(history: History) -> set[tuple[str, str | None, int | float | None]]:
    return {(t.action.action_type, t.action.target, t.action.value) for t in history}


def _key(action: Action) -> tuple[str, str | None, int | float | None]:
    return (action.action_type, action.target, action.value)


# -- the probes --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AlwaysHealthy:
    """Declares healthy at once: passes exactly the episodes with nothing to fix."""

    space: ActionSpace

    def choose(self, observation: Observation, history: History) -> Action:
        return _act(_HEALTHY)


@dataclass(frozen=True, slots=True)
class RewardProbe:
    """Remediations in a fixed order until one pays a fix's reward; blind to every observation."""

    space: ActionSpace

    def choose(self, observation: Observation, history: History) -> Action:
        ending = _finish(observation, history, fixed=_paid_fix(history))
        if ending is not None:
            return ending
        tried = _tried(history)
        for action in self.space.remediations():
            if _key(action) not in tried:
                return action
        return _act(_HEALTHY)


@dataclass(frozen=True, slots=True)
class InspectionProbe:
    """Inspects every component's logs; the ones whose inspection paid are the suspects to fix."""

    space: ActionSpace

    def choose(self, observation: Observation, history: History) -> Action:
        ending = _finish(observation, history, fixed=_paid_fix(history))
        if ending is not None:
            return ending
        tried = _tried(history)
        inspectable = self.space.targets("inspect_logs")
        # Keep enough budget for one fix, a wait and the declaration after the inspections.
        if _steps_left(observation) > 3:
            for target in inspectable:
                if ("inspect_logs", target, None) not in tried:
                    return _act("inspect_logs", target)
        paid = [
            t.action.target
            for t in history
            if t.action.action_type == "inspect_logs" and t.reward is not None and t.reward > 0
        ]
        suspects = paid or list(inspectable)
        fixes = self.space.remediations()
        ordered = [a for s in suspects for a in fixes if a.target == s] + [a for a in fixes if a.target is None]
        for action in ordered:
            if _key(action) not in tried:
                return action
        return _act(_HEALTHY)


@dataclass(frozen=True, slots=True)
class TryEverything:
    """Every remediation on every target, leaving two steps to wait and declare."""

    space: ActionSpace

    def choose(self, observation: Observation, history: History) -> Action:
        left = _steps_left(observation)
        if left <= 1:
            return _act(_HEALTHY)
        if left == 2:
            return _act(_WAIT)
        tried = _tried(history)
        for action in self.space.remediations():
            if _key(action) not in tried:
                return action
        return _act(_WAIT) if history and history[-1].action.action_type != _WAIT else _act(_HEALTHY)


# -- the regenerating oracle -------------------------------------------------------------------------------

REGENERATE_SEEDS = 2000
"""Evaluation seeds per family the oracle indexes: the first ones of `EVAL_SEEDS`, where the pack's are."""


@functools.cache
def public_tasks() -> Mapping[tuple[str, ...], Any]:
    """Every public (unkeyed) family task of the first `REGENERATE_SEEDS` evaluation seeds, by its components:
    what anyone can build from the open generator."""
    from sredrill.incidents.families import EVAL_SEEDS, FAMILIES, family_task

    index: dict[tuple[str, ...], Any] = {}
    for family in FAMILIES:
        for seed in EVAL_SEEDS[:REGENERATE_SEEDS]:
            task = family_task(family, seed=seed)
            index.setdefault(task.components, task)
    return MappingProxyType(index)


@dataclass(frozen=True, slots=True)
class Regenerate:
    """The oracle: regenerates the public task whose components match the episode's and plays its known fix,
    without reading an inspection. It resolves every unkeyed episode of the seeds it indexes; on a keyed
    episode (`sredrill run`, an evaluation server) no public task matches and it declares healthy."""

    space: ActionSpace

    def choose(self, observation: Observation, history: History) -> Action:
        task = public_tasks().get(tuple(observation.services))
        if task is None or task.cause.fix is None:
            return _act(_HEALTHY)
        if not history:
            action, target, floor = task.cause.fix
            kind = self.space.kinds.get(action)
            value = floor
            if kind is not None and kind.value_range is not None:
                value = max(floor or 0, _value(kind) or 0)
            return _act(action, target, value)
        # The task says how long the system takes to settle after the fix: wait that long, then declare.
        waited = sum(t.action.action_type == _WAIT for t in history)
        return _act(_HEALTHY) if waited > task.plan.settle or _steps_left(observation) <= 1 else _act(_WAIT)


# -- the first-observation lookup --------------------------------------------------------------------------

Bin = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]
"""(the firing alert rules by kind, the (kind, status) of every unhealthy component), each a sorted set."""


def first_bin(observation: Observation, space: ActionSpace) -> Bin:
    """The lookup's bin of a first observation: what fires, and which kinds of component look unwell.

    Component names are replaced by their kind (`ActionSpace.component_kinds`): an alert `latency_high:gateway`
    bins as `latency_high:pool`; repeats are dropped (two degraded pools bin as one). This bin was chosen on
    training seeds: fitted on the first 200 seeds of each family and checked on seeds 1000-1199, it resolved
    24% there, against 19% for a bin of every component's (kind, status) with repeats and 23% for the alerts alone.
    """
    kinds = space.component_kinds()
    alerts = tuple(sorted({_alert_kind(a, kinds) for a in observation.alerts}))
    unwell = tuple(
        sorted({(kinds.get(n, n), str(v.status)) for n, v in observation.services.items() if v.status.rank > 0})
    )
    return alerts, unwell


def _alert_kind(alert: str, kinds: Mapping[str, str]) -> str:
    rule, sep, component = alert.rpartition(":")
    return f"{rule}:{kinds.get(component, component)}" if sep else alert


@dataclass(frozen=True, slots=True)
class _Role:
    """A fix as the lookup remembers it: an action type on the k-th worst component of a kind (or none)."""

    action_type: str
    kind: str | None
    rank: int
    value: int | None

    def realise(self, observation: Observation, space: ActionSpace) -> Action | None:
        if self.kind is None:
            return _act(self.action_type, None, self.value)
        kinds = space.component_kinds()
        targets = [t for t in space.targets(self.action_type) if kinds.get(t) == self.kind]
        ranked = sorted(targets, key=lambda t: (-_status_rank(observation, t), targets.index(t)))
        if self.rank >= len(ranked):
            return None
        return _act(self.action_type, ranked[self.rank], self.value)


def _status_rank(observation: Observation, name: str) -> int:
    view = observation.services.get(name)
    return view.status.rank if view is not None else -1


def _roles(observation: Observation, space: ActionSpace) -> list[_Role]:
    """Every fix of this episode as a role (so that it transfers to an episode with other names)."""
    roles = []
    for kind in space.kinds.values():
        if not kind.is_remediation:
            continue
        value = _value(kind)
        if not kind.targets:
            roles.append(_Role(kind.name, None, 0, value))
            continue
        kinds = space.component_kinds()
        counts = Counter(kinds.get(t, t) for t in kind.targets)
        roles += [_Role(kind.name, k, r, value) for k, n in counts.items() for r in range(n)]
    return roles


@dataclass(frozen=True, slots=True)
class LookupTable:
    """Bin → the fix that most often resolved its training episodes; `default` for a bin never seen."""

    rows: Mapping[Bin, _Role]
    default: _Role | None
    episodes: int
    """How many training episodes were fitted."""


EpisodeMaker = Callable[[], tuple[Episode, ActionSpace]]
"""Makes a fresh episode (the same seed every call) with its action space."""


def fit_lookup(makers: Iterable[EpisodeMaker]) -> LookupTable:
    """Fit the lookup: on each training episode, try every fix (fix, wait, declare) and count what resolved.

    Args:
        makers: one per training episode; each call makes the same episode afresh.
    """
    wins: dict[Bin, Counter[_Role]] = defaultdict(Counter)
    overall: Counter[_Role] = Counter()
    episodes = 0
    for make in makers:
        episode, space = make()
        first = episode.observation()
        row = wins[first_bin(first, space)]
        episodes += 1
        for role in _roles(first, space):
            if _lookup_resolves(role, make):
                row[role] += 1
                overall[role] += 1
            else:
                row[role] += 0
    rows = {b: _best(c) for b, c in wins.items() if c}
    return LookupTable(MappingProxyType(rows), _best(overall) if overall else None, episodes)


def _best(counts: Counter[_Role]) -> _Role:
    # Ties go to the role seen first, so a fit is deterministic.
    return max(counts, key=lambda r: counts[r])


def _lookup_resolves(role: _Role, make: EpisodeMaker) -> bool:
    episode, space = make()
    return play_episode(lambda s: Lookup(s, LookupTable({}, role, 0)), episode, space).resolved


@dataclass(frozen=True, slots=True)
class Lookup:
    """Plays the fitted table's fix for the first observation's bin, then waits and declares healthy."""

    space: ActionSpace
    table: LookupTable

    @classmethod
    def trained(cls, space: ActionSpace) -> Lookup:
        """With the table fitted on training seeds (`trained_lookup`)."""
        return cls(space, trained_lookup())

    def choose(self, observation: Observation, history: History) -> Action:
        if not history:
            role = self.table.rows.get(first_bin(observation, self.space), self.table.default)
            fix = role.realise(observation, self.space) if role is not None else None
            return fix if fix is not None else _act(_HEALTHY)
        return _finish(observation, history, fixed=True) or _act(_HEALTHY)


def lookup_factory(table: LookupTable) -> PolicyFactory:
    """`lookup` with a fitted table."""
    return lambda space: Lookup(space, table)


CLASSIC_FIT_SEEDS = range(20)
"""Classic seeds the lookup is fitted on (each classic task)."""
FAMILY_FIT_EPISODES = 200
"""Training seeds per family the lookup is fitted on: the first ones of `TRAIN_SEEDS`."""


@functools.cache
def trained_lookup() -> LookupTable:
    """The lookup fitted on training seeds: the classic tasks' `CLASSIC_FIT_SEEDS` and the first
    `FAMILY_FIT_EPISODES` of each family's `TRAIN_SEEDS`. Memoised: a pure function of the code, costly to fit."""
    return fit_lookup(_training_makers())


def _training_makers() -> Iterator[EpisodeMaker]:
    from sredrill.env import TaskKind, list_tasks
    from sredrill.incidents.families import FAMILIES, TRAIN_SEEDS

    for info in list_tasks():
        if info.kind == TaskKind.INCIDENT:
            for seed in CLASSIC_FIT_SEEDS:
                yield functools.partial(_classic_episode, info.task_id, seed)
    for family in FAMILIES:
        for seed in TRAIN_SEEDS[:FAMILY_FIT_EPISODES]:
            yield functools.partial(_family_episode, family, seed)


def _classic_episode(task_id: str, seed: int) -> tuple[Episode, ActionSpace]:
    from sredrill.env import make
    from sredrill.env.episode import IncidentEpisode
    from sredrill.incidents import incident_task

    return IncidentEpisode(incident_task(task_id), seed), ActionSpace.from_schema(make(task_id).info.action_schema)


def _family_episode(family: str, seed: int) -> tuple[Episode, ActionSpace]:
    from sredrill.env.family_episode import FamilyEpisode
    from sredrill.incidents.families import family_task

    task = family_task(family, seed=seed)
    return FamilyEpisode(task, reward_mode="dense"), ActionSpace.from_schema(task.action_schema())


PROBES: Mapping[str, PolicyFactory] = MappingProxyType(
    {
        "lookup": Lookup.trained,
        "reward_probe": RewardProbe,
        "inspection_probe": InspectionProbe,
        "try_everything": TryEverything,
        "always_healthy": AlwaysHealthy,
        "regenerate": Regenerate,
    }
)
"""Every probe by name."""


# -- drivers -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Played:
    """How an episode a policy played ended."""

    resolved: bool
    grade: float
    steps: int
    episode_reward: float
    actions: tuple[Action, ...]


_Step = Callable[[Action], tuple[Observation, float | None, bool]]


def _drive(policy: Policy, first: Observation, step: _Step, *, show_rewards: bool) -> list[Turn]:
    history: list[Turn] = []
    observation, done = first, False
    while not done:
        action = policy.choose(observation, history)
        observation, reward, done = step(action)
        history.append(Turn(action, observation, reward if show_rewards else None))
    return history


def play_episode(factory: PolicyFactory, episode: Episode, space: ActionSpace, *, show_rewards: bool = True) -> Played:
    """Play one episode in process (`sredrill.env.episode.Episode`: a classic task's or a family's)."""

    def step(action: Action) -> tuple[Observation, float | None, bool]:
        t = episode.step(action)
        return t.observation, t.reward, t.done

    history = _drive(factory(space), episode.observation(), step, show_rewards=show_rewards)
    end = episode.end()
    return Played(end.resolved, end.grade, episode.steps, episode.episode_reward, tuple(t.action for t in history))


def play_env(factory: PolicyFactory, env: Env, *, seed: int | None = None, show_rewards: bool = True) -> Played:
    """Play one episode of `env` in process; its action space comes from the env's task listing."""
    space = ActionSpace.from_schema(env.info.action_schema)
    first = env.reset(seed=seed)

    def step(action: Action) -> tuple[Observation, float | None, bool]:
        r = env.step(action)
        return r.observation, r.reward, r.done

    history = _drive(factory(space), first, step, show_rewards=show_rewards)
    end, state = env.score(), env.state
    return Played(end.resolved, end.grade, state.step_count, state.episode_reward, tuple(t.action for t in history))


def play_http(factory: PolicyFactory, client: httpx.Client, reset: Mapping[str, Any]) -> Played:
    """Play one episode over an OpenEnv server's HTTP routes, with the dense rewards it returns.

    Args:
        factory: the policy.
        client: an `httpx.Client` whose base URL is the server (`http://127.0.0.1:PORT`); it keeps the
            episode's session (`X-Session-Id`) for the next episode.
        reset: the body of `POST /reset` (`{"task_id": …, "seed": …}`, or a family and a seed).
    """
    response = client.post("/reset", json=dict(reset))
    response.raise_for_status()
    # The client keeps its session, so a series of episodes holds one of the server's sessions, not one each.
    client.headers["X-Session-Id"] = response.headers["X-Session-Id"]
    headers = {"X-Session-Id": response.headers["X-Session-Id"]}
    first = Observation.model_validate(response.json()["observation"])
    space = _http_space(client, headers, response.json()["info"])
    last: dict[str, Any] = {}

    def step(action: Action) -> tuple[Observation, float | None, bool]:
        r = client.post("/step", json={"action": action.model_dump(mode="json")}, headers=headers)
        r.raise_for_status()
        last.update(r.json())
        return Observation.model_validate(last["observation"]), last["reward"], bool(last["done"])

    history = _drive(factory(space), first, step, show_rewards=True)
    info = last["info"]
    return Played(
        bool(info["resolved"]), float(info["grade"]), int(info["step"]), float(info["episode_reward"]),
        tuple(t.action for t in history),
    )  # fmt: skip


def _http_space(client: httpx.Client, headers: Mapping[str, str], info: Mapping[str, Any]) -> ActionSpace:
    """The episode's action space: `GET /schema` when it follows the episode, else the task's `GET /tasks` entry."""
    schema = client.get("/schema", headers=headers)
    schema.raise_for_status()
    space = ActionSpace.from_schema(schema.json()["action"])
    if space.kinds:
        return space
    listing = client.get("/tasks", headers=headers)
    listing.raise_for_status()
    for task in listing.json()["tasks"]:
        if task["task_id"] == info.get("task_id"):
            return ActionSpace.from_schema(task["action_schema"])
    raise LookupError(f"the server lists no task {info.get('task_id')!r} and its /schema has no action variants")


async def play_policy(policy: Policy, task: Task, *, rewards: bool = True) -> list[Turn]:
    """Play an episode to its end through its tools with one policy: the turns, in order.

    `rewards=False` remembers no reward even where a tool result carries one (a policy that must not read them).
    """
    observation = Observation.model_validate(await task.call_tool("observe"))
    history: list[Turn] = []
    done = False
    while not done:
        action = policy.choose(observation, history)
        wire = action.model_dump(mode="json", exclude_none=True)
        name = wire.pop("action_type")
        result = await task.call_tool(name, **wire)
        assert isinstance(result, dict), f"{name}: a step returns an object, got {type(result).__name__}"
        observation = Observation.model_validate(result["observation"])
        reward = result.get("reward") if rewards else None
        history.append(Turn(action, observation, float(reward) if isinstance(reward, int | float) else None))
        done = bool(result["done"])
    return history


async def play_tools(factory: PolicyFactory, task: Task, recorder: Recorder | None = None) -> AgentReply:
    """Play an incident episode through its tools (`sredrill run --pack incidents`); rewards as the tools show.

    A tool result without a reward (the incidents pack hides step rewards) is remembered as None. A task that
    is not an incident episode (an RCA scenario: no `declare_healthy` tool) gets a reply saying so and no tool
    call, so the probes can run beside the baselines on any pack (they fail RCA scenarios, as they should).
    """
    if not any(t.name == _HEALTHY for t in task.tools):
        return AgentReply(output="A shortcut probe of the incident environment: it plays incident episodes only.")
    history = await play_policy(factory(ActionSpace.from_tools(task.tools)), task)
    output = "Played " + ", ".join(_describe(t.action) for t in history) + "."
    if recorder is not None:
        recorder.add(ResponseStep(content=output))
    return AgentReply(output=output)


def _describe(action: Action) -> str:
    args = [str(a) for a in (action.target, action.value) if a is not None]
    return f"{action.action_type}({', '.join(args)})"


# The `py:` agents: `sredrill run --pack incidents --agent py:sredrill.agents.incident_probes:<name>`.


async def lookup(task: Task) -> str:
    """`lookup` as a `py:` agent."""
    return (await play_tools(Lookup.trained, task)).output


async def reward_probe(task: Task) -> str:
    """`reward_probe` as a `py:` agent."""
    return (await play_tools(RewardProbe, task)).output


async def inspection_probe(task: Task) -> str:
    """`inspection_probe` as a `py:` agent."""
    return (await play_tools(InspectionProbe, task)).output


async def try_everything(task: Task) -> str:
    """`try_everything` as a `py:` agent."""
    return (await play_tools(TryEverything, task)).output


async def always_healthy(task: Task) -> str:
    """`always_healthy` as a `py:` agent."""
    return (await play_tools(AlwaysHealthy, task)).output


async def regenerate(task: Task) -> str:
    """`regenerate` (the oracle) as a `py:` agent."""
    return (await play_tools(Regenerate, task)).output
