"""TRL environments: incident tasks, task families and RCA scenarios as tool-calling environments for TRL's
`GRPOTrainer(environment_factory=…)` (docs/training.md).

TRL makes one environment per generation with a no-argument constructor, calls `reset(**row)` with the dataset
row's columns when a rollout starts (its text follows the prompt), turns every other public method into a tool
(the schema comes from the type hints and the docstring's `Args:`), and passes the environments to the reward
functions, which read their state. `IncidentToolEnv` plays the classic incident tasks and the task families;
`RcaToolEnv` the RCA scenarios of every domain (RDS and Kubernetes). Both drive a `sredrill.env.Env` in the
trainer's process; nothing here imports TRL or torch.

A tool answers what an operator sees after acting, as JSON text: `{observation, done, step, message}`, the
`agent_view` that `sredrill run`'s incidents pack returns too, so a policy trained here meets the same results
when it is evaluated. No reward, grade or task id ever reaches the model (a classic task's id names its fault;
a step reward would let a policy grade its guesses). A call the episode cannot take is answered, never raised:
`error: <code>: <what is wrong>`, with the allowed values; the episode is unchanged.

Examples:
    >>> env = IncidentToolEnv()
    >>> first = env.reset(task_id="hard_mixed", seed=0, prompt="ignored")
    >>> reply = env.inspect_logs(target="database")
    >>> env.done, env.reward
    (False, 0.0)
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from numbers import Integral
from typing import ClassVar, Literal

from sredrill.diagnosis import ITEM_ID, Category, Diagnosis, FactKind, parse_citation, parse_diagnosis_text
from sredrill.env.catalog import TaskCatalog, make
from sredrill.env.environment import Env
from sredrill.env.episode import EpisodeEnd
from sredrill.env.families import TaskFamily
from sredrill.env.rca import RCA_ACTIONS, RcaTask
from sredrill.env.toolset import agent_view
from sredrill.errors import ActionError, InputError, did_you_mean
from sredrill.incidents import MAX_REPLICAS, action_rules
from sredrill.incidents.families import ACTION_TYPES, TARGET_KINDS
from sredrill.scenarios import Domain, load_pack

__all__ = ["CategoryName", "IncidentToolEnv", "RcaToolEnv", "ToolArgs"]

CategoryName = Literal[
    "configuration_error",
    "code_defect",
    "data_quality",
    "resource_exhaustion",
    "dependency_failure",
    "infrastructure",
    "healthy",
    "unknown",
]
"""`Diagnosis.category` as a tool argument: the values of `sredrill.diagnosis.Category` (a test keeps them equal)."""
ToolArgs = dict[str, str | int | float | bool | list[str]]
"""An RCA inspection's optional arguments (its evidence tool's), by name: `{"stat": "Maximum"}`, `{"pod": "web-1"}`."""

_CLASSIC_TARGETS: dict[str, tuple[str, ...] | None] = {str(r.action_type): r.targets for r in action_rules()}
"""A classic task's actions and their targets (None: no target), the same in every episode."""
_OBSERVE = "observe"
_NO_EPISODE = "no episode has started: reset(**row) starts one (TRL calls it before any tool)"


def _error(code: str, message: str) -> str:
    """A refused call as the model reads it (the shape of `sredrill run`'s tool errors)."""
    return f"error: {code}: {message}"


def _row_task(task_id: object, seed: object, row: Mapping[str, object], kind: str) -> str:
    if task_id is None:
        columns = ", ".join(sorted([*row, *(["seed"] if seed is not None else [])])) or "none"
        raise InputError(
            f"reset needs a task_id: the dataset row has no task_id column (its columns: {columns})",
            field="task_id",
            hint=f"add a task_id column to the dataset: {kind}",
        )
    if not isinstance(task_id, str):
        raise InputError(f"a task_id is a string, got {task_id!r}", field="task_id", hint=f"use {kind}")
    return task_id


def _row_seed(seed: object, *, required: bool) -> int | None:
    if seed is None and not required:
        return None
    # A dataset column of integers may arrive as a numpy integer: any integral value but a bool is a seed.
    if seed is None or isinstance(seed, bool) or not isinstance(seed, Integral) or int(seed) < 0:
        got = "no seed column" if seed is None else f"seed {seed!r}"
        raise InputError(
            f"reset needs a seed, a non-negative integer; the dataset row has {got}",
            field="seed",
            hint="add a seed column: train on development seeds 0-999, never on evaluation seeds (docs/training.md)",
        )
    return int(seed)


class _EpisodeTools:
    """What both TRL environments share: the episode, its state for reward functions, `observe`, one step."""

    def __init__(self) -> None:
        """An environment with no episode yet; TRL calls `reset(**row)` before any tool."""
        self._env: Env | None = None
        self._actions: frozenset[str] = frozenset()

    # -- state a reward function reads ------------------------------------------------------------------

    @property
    def reward(self) -> float:
        """The episode's grade so far, in [0, 1]: 0 until the episode ends well, then its final grade (an incident
        declared healthy while resolved: grade v2; an RCA diagnosis: the fraction of grading gates passed).
        0.0 before the first reset (no episode has earned anything)."""
        return self._env.score().grade if self._env is not None else 0.0

    @property
    def normalized_reward(self) -> float:
        """The episode's dense reward so far over the task's maximum, clamped to [0, 1]: partial credit for the
        relevant inspections and fixes on the way (an RCA task pays only at submission: its grade). 0.0 before
        the first reset."""
        return self._env.score().normalized_reward if self._env is not None else 0.0

    @property
    def done(self) -> bool:
        """True once the episode is over (a declaration, a submission, or the step limit)."""
        return self._env is not None and self._env.state.done

    @property
    def steps(self) -> int:
        """Actions taken in this episode (0 before the first reset)."""
        return self._env.state.step_count if self._env is not None else 0

    @property
    def outcome(self) -> EpisodeEnd | None:
        """The final score once the episode is over (`normalized_reward`, `grade`, `resolved`, `truncated`);
        None while it runs."""
        return self._env.score() if self.done and self._env is not None else None

    @property
    def grade(self) -> float | None:
        """The final grade once the episode is over; None while it runs (unknown is not zero)."""
        outcome = self.outcome
        return outcome.grade if outcome is not None else None

    # -- a tool of both ---------------------------------------------------------------------------------

    def observe(self) -> str:
        """Show the current observation again, without taking a step.

        Returns:
            The current observation as JSON text.
        """
        observation = self._env.state.observation if self._env is not None else None
        if observation is None:
            return _error("no_episode", _NO_EPISODE)
        return json.dumps(observation.model_dump(mode="json"), ensure_ascii=False)

    # -- helpers ----------------------------------------------------------------------------------------

    def _start(self, env: Env, actions: frozenset[str]) -> str:
        """Play `env`'s first episode (already reset) from now on; returns its first observation as JSON."""
        if self._env is not None:
            self._env.close()
        self._env = env
        self._actions = actions
        observation = env.state.observation
        assert observation is not None  # the env was reset
        return json.dumps(observation.model_dump(mode="json"), ensure_ascii=False)

    def _refusal(self, action_type: str) -> str | None:
        """Why a call cannot be played now (no episode, the episode is over, not an action here), or None."""
        env = self._env
        if env is None:
            return _error("no_episode", _NO_EPISODE)
        if action_type == _OBSERVE:
            return None
        state = env.state
        if state.done:
            return _error(
                "episode_over",
                f"the episode is over (it ended at step {state.step_count} of {state.max_steps}): no more actions "
                "are accepted; stop calling tools",
            )
        if action_type not in self._actions:
            return _error("not_available", self._unavailable(action_type))
        return None

    def _unavailable(self, action_type: str) -> str:
        return f"{action_type} is not an action of this task; its actions: {', '.join(sorted(self._actions))}"

    def _act(self, action_type: str, **fields: object) -> str:
        """One step: the wire action `{action_type, **fields}` (null fields left out), answered as JSON text."""
        refusal = self._refusal(action_type)
        if refusal is not None:
            return refusal
        assert self._env is not None  # `_refusal` answered otherwise
        action = {"action_type": action_type, **{k: v for k, v in fields.items() if v is not None}}
        try:
            result = self._env.step(action)
        except ActionError as exc:
            fix = f"call {action_type} again with a valid {exc.field}" if exc.field else f"call {action_type} again"
            return _error("bad_arguments", f"{exc.render()}\n  the episode is unchanged: {fix}")
        return json.dumps(agent_view(result), ensure_ascii=False)


class IncidentToolEnv(_EpisodeTools):
    """The incident environment for TRL: a classic incident task or a task family, one episode per reset.

    Dataset rows name the task and its seed: `reset(task_id="web_api", seed=17, prompt=…)` (other columns are
    ignored). Its tools are the union of both kinds' actions: a classic task has no `revert_config`,
    `drop_message`, `failover` or `flush_cache`, and a family's episode only the actions its system has
    targets for; any other is answered `error: not_available` with the actions this episode has. The first
    message lists the episode's actions and targets (a family's components differ by seed).

    Examples:
        >>> env = IncidentToolEnv()
        >>> first = env.reset(task_id="web_api", seed=17)
        >>> reply = env.wait()
        >>> env.steps
        1
    """

    def reset(self, task_id: str | None = None, seed: int | None = None, **row: object) -> str:
        """Start an episode of the task a dataset row names.

        Args:
            task_id: a classic incident task (`easy_cpu_spike`, …) or a task family (`web_api`, …).
            seed: the episode's seed (a family's draws its system and hidden fault); same seed, same episode.
            **row: the row's other columns (`prompt`, …): ignored.

        Returns:
            The first message: the task, its step budget, the actions and targets of this episode, and the first
            observation (JSON). It never names the task (a classic task's id names its fault).

        Raises:
            InputError: no task_id or seed in the row, an unknown task (with "did you mean"), an RCA task (that is
                `RcaToolEnv`'s), or a bad seed.
        """
        kinds = "a classic incident task (easy_cpu_spike, …) or a task family (web_api, …)"
        name = _row_task(task_id, seed, row, kinds)
        if name.startswith("rca-"):
            raise InputError(
                f"{name!r} is an RCA task", field="task_id", hint="play RCA tasks with sredrill.env.trl.RcaToolEnv"
            )
        episode_seed = _row_seed(seed, required=True)
        env = make(name, seed=episode_seed)  # an unknown id: InputError with "did you mean" and the known ids
        env.reset(seed=episode_seed)
        targets = _episode_targets(env)
        observation = self._start(env, frozenset(targets) | {_OBSERVE})
        return "\n\n".join(
            [
                env.episode_info.description,
                f"Each tool call is one step; this episode allows {env.max_steps}. It ends when you declare the "
                "incident healthy or unfixable, or when the steps run out. A wrong remediation can make things worse.",
                _incident_tools_text(targets, isinstance(env.task, TaskFamily)),
                f"What you see now (JSON):\n{observation}",
            ]
        )

    def _unavailable(self, action_type: str) -> str:
        env = self._env
        if env is not None and isinstance(env.task, TaskFamily) and action_type in TARGET_KINDS:
            kinds = " or ".join(str(k) for k in TARGET_KINDS[action_type])
            why = f"{action_type} is not available in this episode: this system has no component of kind {kinds}"
        elif action_type in TARGET_KINDS:
            why = f"{action_type} is not an action of a classic incident task (task families have it)"
        else:
            why = f"{action_type} is not an action of this task"
        actions = [a for a in (*ACTION_TYPES, _OBSERVE) if a in self._actions]
        return f"{why}; the actions of this episode: {', '.join(actions)}"

    # -- the tools: one per action type ------------------------------------------------------------------

    def inspect_logs(self, target: str) -> str:
        """Read a service's recent structured log records (a task family: a component's).

        Args:
            target: the service or component to read, one the first message lists (e.g. api_workers).

        Returns:
            The observation after the step, with the log records, as JSON text.
        """
        return self._act("inspect_logs", target=target)

    def inspect_metrics(self, target: str) -> str:
        """Read metric series, from before the incident to now.

        Args:
            target: a classic task: the metric to read (cpu, memory, error_rate, latency, queue_depth,
                request_rate, replicas, db_connections); a task family: the component whose metrics to read.

        Returns:
            The observation after the step, with the series, as JSON text.
        """
        return self._act("inspect_metrics", target=target)

    def inspect_alert(self, target: str) -> str:
        """Read an alert's rule and current state.

        Args:
            target: the alert's name, one the first message lists (the observation's alerts are the firing ones).

        Returns:
            The observation after the step, with the alert's detail, as JSON text.
        """
        return self._act("inspect_alert", target=target)

    def restart_service(self, target: str) -> str:
        """Restart a service's processes (an api or worker pool; a database has its own action).

        Args:
            target: the service to restart, one the first message lists for restart_service.

        Returns:
            The observation after the step as JSON text.
        """
        return self._act("restart_service", target=target)

    def scale_workers(self, target: str, value: int) -> str:
        """Set a service's replica count (an api or worker pool).

        Args:
            target: the service to scale, one the first message lists for scale_workers.
            value: the replica count to set, an integer from 1 to 64.

        Returns:
            The observation after the step as JSON text.
        """
        return self._act("scale_workers", target=target, value=value)

    def rollback_release(self, target: str | None = None) -> str:
        """Roll an application back to its previous release.

        Args:
            target: a task family: the api or worker pool to roll back; a classic task: leave it out.

        Returns:
            The observation after the step as JSON text.
        """
        return self._act("rollback_release", target=target)

    def revert_config(self, target: str) -> str:
        """Undo the last configuration change of an api or worker pool (task families only).

        Args:
            target: the api or worker pool, one the first message lists for revert_config.

        Returns:
            The observation after the step as JSON text.
        """
        return self._act("revert_config", target=target)

    def clear_queue(self, target: str | None = None) -> str:
        """Purge every message waiting in a queue (they are lost).

        Args:
            target: a task family: the queue to purge; a classic task: leave it out.

        Returns:
            The observation after the step as JSON text.
        """
        return self._act("clear_queue", target=target)

    def drop_message(self, target: str) -> str:
        """Quarantine the message at the head of a queue (task families only).

        Args:
            target: the queue, one the first message lists for drop_message.

        Returns:
            The observation after the step as JSON text.
        """
        return self._act("drop_message", target=target)

    def restart_database(self, target: str | None = None) -> str:
        """Restart a database: every connection is dropped.

        Args:
            target: a task family: the database to restart; a classic task: leave it out.

        Returns:
            The observation after the step as JSON text.
        """
        return self._act("restart_database", target=target)

    def failover(self, target: str) -> str:
        """Switch an external dependency to its secondary provider (task families only).

        Args:
            target: the external dependency, one the first message lists for failover.

        Returns:
            The observation after the step as JSON text.
        """
        return self._act("failover", target=target)

    def flush_cache(self, target: str) -> str:
        """Empty a cache; it refills from its database (task families only).

        Args:
            target: the cache, one the first message lists for flush_cache.

        Returns:
            The observation after the step as JSON text.
        """
        return self._act("flush_cache", target=target)

    def wait(self) -> str:
        """Do nothing for one step: time passes (a fix takes effect, a system recovers).

        Returns:
            The observation after the step as JSON text.
        """
        return self._act("wait")

    def declare_healthy(self) -> str:
        """Declare the incident resolved; the episode ends.

        Returns:
            The last observation as JSON text.
        """
        return self._act("declare_healthy")

    def declare_unfixable(self) -> str:
        """Give up: declare the incident unfixable; the episode ends.

        Returns:
            The last observation as JSON text.
        """
        return self._act("declare_unfixable")


def _episode_targets(env: Env) -> dict[str, tuple[str, ...] | None]:
    """The episode's actions and their targets (None: no target); a family's leave out the actions its system
    has no target for."""
    if not isinstance(env.task, TaskFamily):
        return dict(_CLASSIC_TARGETS)
    seed = env.state.seed
    assert seed is not None  # the env was reset
    task = env.task.task(seed)  # the same frozen task the episode plays (cached by seed)
    targets = {name: task.targets(name) for name in ACTION_TYPES}
    return {name: t for name, t in targets.items() if t is None or t}


def _incident_tools_text(targets: Mapping[str, tuple[str, ...] | None], family: bool) -> str:
    lines = ["Tools and what they take in this episode:"]
    for name, allowed in targets.items():
        if allowed is None:
            lines.append(f"- {name}()")
        elif name == "scale_workers":
            lines.append(f"- {name}(target, value): target one of {', '.join(allowed)}; value 1-{MAX_REPLICAS}")
        else:
            lines.append(f"- {name}(target): target one of {', '.join(allowed)}")
    lines.append(f"- {_OBSERVE}(): the current observation again (no step)")
    missing = [name for name in ACTION_TYPES if name not in targets]
    if missing:
        where = "this system has no target for them" if family else "they belong to the task families"
        lines.append(f"Not in this episode ({where}): {', '.join(missing)}.")
    return "\n".join(lines)


class RcaToolEnv(_EpisodeTools):
    """The RCA environment for TRL: one scenario of a pack (RDS or Kubernetes) per reset, investigated through
    inspections and ended by a diagnosis.

    Dataset rows name the task by its opaque id: `reset(task_id="rca-…", prompt=…)` (a `seed` column is
    accepted; the evidence is fixed data, so it changes nothing). By default the tasks are every built-in
    pack's scenarios; a subclass sets `packs` or `generate` to play others:

        class TrainRca(RcaToolEnv):
            generate = "rds:seed=0:count=200"   # a generated development set

    The catalog is built on the first reset and shared by every instance of the class (it is immutable).

    Examples:
        >>> class Rds(RcaToolEnv):
        ...     packs = ("rds_postgres",)
        >>> env = Rds()
        >>> task_id = next(t.task_id for t in TaskCatalog([load_pack("rds_postgres")]).tasks() if t.kind == "rca")
        >>> first = env.reset(task_id=task_id)
        >>> reply = env.inspect_alert()
    """

    packs: ClassVar[tuple[str, ...] | None] = None
    """The packs whose scenarios this environment plays: built-in pack names or pack folders; None: every built-in
    pack (RDS's and Kubernetes')."""
    generate: ClassVar[str | None] = None
    """A generated set to play instead of packs (`rds:seed=0:count=200`, docs/generator.md): develop on seeds
    0-999, never train on evaluation seeds (1,000,000 and up)."""

    def reset(self, task_id: str | None = None, seed: int | None = None, **row: object) -> str:
        """Start an episode of the RCA task a dataset row names.

        Args:
            task_id: the task's opaque id (`rca-` and 12 hex digits, from the catalog's `tasks()`).
            seed: kept in the state only (an RCA episode's evidence is fixed data); None: drawn by the env.
            **row: the row's other columns (`prompt`, …): ignored.

        Returns:
            The first message: what the task is and what each inspection reads, the domain's published
            vocabulary, the tools and their optional arguments, how to cite evidence, and the first observation
            (JSON). It never names the scenario.

        Raises:
            InputError: no task_id in the row, an unknown id, an incident task's id (that is `IncidentToolEnv`'s),
                a bad seed, or a subclass that sets both `packs` and `generate`.
        """
        name = _row_task(task_id, seed, row, "an RCA task's opaque id (rca-…)")
        episode_seed = _row_seed(seed, required=False)
        cls = type(self)
        # Normalised to a tuple, the catalog's cache key: a subclass may well write a list or a single name.
        packs = (cls.packs,) if isinstance(cls.packs, str) else None if cls.packs is None else tuple(cls.packs)
        catalog = _rca_catalog(packs, cls.generate)
        task = catalog.task(name) if name in catalog.ids() else None
        if task is not None and not isinstance(task, RcaTask):
            raise InputError(
                f"{name!r} is an incident task", field="task_id", hint="play it with sredrill.env.trl.IncidentToolEnv"
            )
        if task is None:
            rca = [i for i in catalog.ids() if isinstance(catalog.task(i), RcaTask)]
            hint = did_you_mean(name, rca)
            raise InputError(
                f"unknown RCA task {name!r} in {cls.__name__}'s catalog" + (f"; {hint}" if hint else ""),
                field="task_id",
                hint="list the ids: [t.task_id for t in catalog.tasks() if t.kind == 'rca'] over the catalog of "
                "the packs (or generated set) this class plays",
            )
        env = catalog.make(name, seed=episode_seed)
        env.reset(seed=episode_seed)
        observation = self._start(env, frozenset(RCA_ACTIONS) | {_OBSERVE})
        return "\n\n".join(
            [
                env.episode_info.description,
                f"Each tool call is one step; this episode allows {env.max_steps}. It ends when you submit a "
                "diagnosis (with no submission when the steps run out, it grades 0).",
                _rca_tools_text(task.domain),
                f"What you see now (JSON):\n{observation}",
            ]
        )

    # -- the tools: one per action type ------------------------------------------------------------------

    def inspect_alert(self) -> str:
        """Read the alert that fired (blinded: it never names the cause).

        Returns:
            The observation after the step, with the alert, as JSON text.
        """
        return self._act("inspect_alert")

    def inspect_metrics(self, target: str | None = None, args: ToolArgs | None = None) -> str:
        """Read the metric series whose name contains target; without a target, list what there is.

        Args:
            target: part of a metric's name (RDS: a CloudWatch metric such as CPUUtilization; Kubernetes: text of
                a monitor's name, query or tags); leave it out to list them.
            args: optional arguments of the metrics tool by name, as the first message lists them (e.g.
                {"stat": "Maximum"}).

        Returns:
            The observation after the step, with the evidence (each item with its id), as JSON text.
        """
        return self._act("inspect_metrics", target=target, args=args)

    def inspect_logs(self, target: str, args: ToolArgs | None = None) -> str:
        """Read one of the system's log sources: events, logs, profiles, pods, as the first message lists them.

        Args:
            target: the source to read, one the first message lists (e.g. events).
            args: optional arguments of that source's tool by name, as the first message lists them (e.g.
                {"pod": "web-7f9c-abcde"} for pod_logs).

        Returns:
            The observation after the step, with the evidence (each item with its id), as JSON text.
        """
        return self._act("inspect_logs", target=target, args=args)

    def submit_diagnosis(
        self,
        root_cause: str,
        failure_modes: list[str],
        claims: list[str],
        category: CategoryName | None = None,
        causal_chain: list[str] | None = None,
        ruled_out: list[str] | None = None,
        location: list[str] | None = None,
    ) -> str:
        """Submit the diagnosis; the episode ends and is graded.

        Args:
            root_cause: the root cause in one or two sentences.
            failure_modes: the failure modes at fault, from the vocabulary the first message lists (several for
                a compositional fault; ["healthy"] when nothing is wrong).
            claims: what the evidence shows, each citing the items it rests on by the ids inspections returned:
                "<claim> [evidence: <id> <fact> [<value>] [from <time>] [to <time>]; …]", where fact is one of
                rising, falling, flat, above, below, absent, present (above and below take a value).
            category: the coarse category: configuration_error, code_defect, data_quality, resource_exhaustion,
                dependency_failure, infrastructure, healthy or unknown.
            causal_chain: cause-to-effect steps, in order.
            ruled_out: the hypotheses you dismissed, each "<hypothesis>: <reason> [evidence: <id> <fact> …]".
            location: the resources at fault (an instance, a replica, a pod, a node), as the evidence names them.

        Returns:
            The last observation as JSON text.
        """
        refusal = self._refusal("submit_diagnosis")
        if refusal is not None:
            return refusal
        try:
            diagnosis = _diagnosis(root_cause, failure_modes, claims, category, causal_chain, ruled_out, location)
        except ActionError as exc:
            return _error("bad_arguments", exc.render() + "\n  nothing was submitted: call submit_diagnosis again")
        return self._act("submit_diagnosis", args=diagnosis.model_dump(mode="json"))


@functools.lru_cache(maxsize=4)
def _rca_catalog(packs: tuple[str, ...] | None, generate: str | None) -> TaskCatalog:
    """The catalog an `RcaToolEnv` class plays, built once per process: a catalog is immutable, and loading the
    built-in packs takes seconds (every instance of a class resets against the same one).

    Raises:
        InputError: both `packs` and `generate` set, a pack that does not load, or a spec that does not parse.
    """
    if packs is not None and generate is not None:
        raise InputError("an RcaToolEnv plays packs or a generated set, not both", hint="set either packs or generate")
    if generate is not None:
        return TaskCatalog.generated(generate)
    if packs is None:
        return TaskCatalog.builtin()
    return TaskCatalog([load_pack(p) for p in packs])


def _rca_tools_text(domain: Domain) -> str:
    lines = [
        "Tools:",
        "- inspect_alert(): the alert",
        "- inspect_metrics(target=None, args=None): metric series whose name contains target; none: the listing",
        f"- inspect_logs(target, args=None): target one of {', '.join(domain.action_targets('inspect_logs'))}",
        "- submit_diagnosis(root_cause, failure_modes, claims, category=None, causal_chain=None, ruled_out=None, "
        "location=None): ends the episode",
        f"- {_OBSERVE}(): the current observation again (no step)",
        "Optional args of each inspection (a JSON object, by name):",
    ]
    for action in ("inspect_metrics", "inspect_logs"):
        tools = [t for t in domain.tools if t.action == action]
        # Without a target, an action calls its tool that takes none, else its first (`Domain.action_tool`).
        plain = any(t.target is None and not t.target_argument for t in tools)
        for tool in tools:
            if tool.target is not None:
                where = f"{action} target {tool.target}"
            elif tool.target_argument:
                where = f"{action} with a target" if plain else f"{action} with or without a target"
            else:
                where = f"{action} without a target"
            fields = {n: f for n, f in tool.arguments.model_fields.items() if n != tool.target_argument}
            names = [n + (" (required)" if f.is_required() else "") for n, f in fields.items()]
            lines.append(f"- {where}: {', '.join(names) if names else 'none'}")
    facts = ", ".join(f.value for f in FactKind)
    lines.append(
        "A claim cites the items it rests on by the ids inspections return: "
        '"<claim> [evidence: <id> <fact> [<value>] [from <time>] [to <time>]; …]", a fact one of '
        f"{facts} (above and below take a value); a ruled-out entry: "
        '"<hypothesis>: <reason> [evidence: …]".'
    )
    return "\n".join(lines)


def _strings(value: object, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ActionError(f"{field} is a list of strings, got {value!r}", field=field, hint=f'e.g. {field}=["…"]')
    return value


def _diagnosis(
    root_cause: object,
    failure_modes: object,
    claims: object,
    category: object,
    causal_chain: object,
    ruled_out: object,
    location: object,
) -> Diagnosis:
    """The Diagnosis of submit_diagnosis's arguments; claims and ruled-out entries are read as the text format
    reads them (`parse_diagnosis_text`: `[evidence: …]` tags), so an agent replying in text cites the same way.

    Raises:
        ActionError: naming the argument that is wrong (a malformed citation: what is wrong with it).
    """
    if not isinstance(root_cause, str) or not root_cause.strip():
        raise ActionError("root_cause is the root cause in a sentence or two", field="root_cause")
    allowed = [c.value for c in Category]
    if category is not None and category not in allowed:
        hint = did_you_mean(category, allowed) if isinstance(category, str) else ""
        message = f"unknown category {category!r}" + (f"; {hint}" if hint else "")
        raise ActionError(message, field="category", allowed=allowed)
    claim_lines, ruled_lines = _strings(claims, "claims"), _strings(ruled_out, "ruled_out")
    # One entry per line: whitespace (newlines included) collapsed, so an entry never starts a section.
    text = "\n".join(
        [
            "ROOT_CAUSE: -",
            "VALIDATED_CLAIMS:",
            *(f"- {' '.join(c.split())}" for c in claim_lines),
            "RULED_OUT:",
            *(f"- {' '.join(r.split())}" for r in ruled_lines),
        ]
    )
    parsed = parse_diagnosis_text(text)
    assert parsed is not None  # the text has a ROOT_CAUSE section
    for field, entries in (("claims", parsed.claims), ("ruled_out", parsed.ruled_out)):
        for entry in entries:
            for cited in entry.evidence:
                # The parser keeps a malformed citation as text (the grader would only say it failed): say why now.
                if isinstance(cited, str) and cited.split() and ITEM_ID.match(cited.split()[0]):
                    try:
                        parse_citation(cited)
                    except ValueError as exc:
                        raise ActionError(f"not a citation: {exc}", field=field) from None
    return Diagnosis(
        root_cause=" ".join(root_cause.split()),
        category=Category(category) if isinstance(category, str) else None,
        failure_modes=_strings(failure_modes, "failure_modes"),
        causal_chain=_strings(causal_chain, "causal_chain"),
        claims=parsed.claims,
        ruled_out=parsed.ruled_out,
        location=_strings(location, "location"),
    )
