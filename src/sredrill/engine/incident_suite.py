"""The `incidents` pack: every incident task × its seeds as a generated SDK test on the same engine.

The classic tasks play seeds 0–4 and each task family the first five evaluation seeds (`FAMILY_SEEDS`);
`--seeds` replaces both. The agent plays one seeded episode through the environment's actions as tools; the
tool results carry no reward or score (`env.toolset.agent_view`); the test passes when the incident is
resolved and declared (DESIGN §6). Difficulty easy/medium/hard → 1/2/3 (a family's: its seed's).

Grading reads only the environment's own state after the episode (`env.score()`), i.e. the actions the harness
executed; an action an agent merely reports (a `cmd:` agent's `tool_call` line) changes nothing there, and the
result's notes count it (`Trajectory.unverified_note`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sredrill.env import EpisodeEnd, TaskCatalog, TaskInfo, TaskKind, make
from sredrill.env.families import DEFAULT_FAMILY_SEEDS, TaskFamily, episode_info
from sredrill.env.toolset import EnvToolset
from sredrill.errors import InputError, did_you_mean
from sredrill.harness import Scope, TestDef, current_context
from sredrill.results import ResultKind, Signal, SignalKind, SignalRole, TestResult

__all__ = [
    "FAMILY_PROMPT",
    "FAMILY_SEEDS",
    "INCIDENTS_PACK",
    "INCIDENT_PROMPT",
    "SEEDS",
    "Episode",
    "IncidentCase",
    "incident_episode",
    "incident_task_ids",
    "incident_tests",
]

INCIDENTS_PACK = "incidents"
SEEDS = (0, 1, 2, 3, 4)
"""The seeds the classic tasks play by default."""
FAMILY_SEEDS = DEFAULT_FAMILY_SEEDS
"""The seeds each task family plays by default: the first five evaluation seeds (never used for training)."""
INCIDENT_PROMPT = (
    "You are on call for a small production system (API workers, a queue service, a database). Alerts are "
    "firing. Use the tools: inspect logs, metrics and alerts; remediate what the evidence shows; wait and verify; "
    "then declare the incident healthy, or unfixable if it is. Every tool call is one step of a limited budget."
)
FAMILY_PROMPT = (
    "You are on call for a production system. {description} Use the tools: inspect logs, metrics and alerts of "
    "its components; remediate the cause the evidence shows (a wrong fix can make things worse); wait and "
    "verify; then declare the incident healthy, or unfixable if it is. Every tool call is one step of a limited "
    "budget."
)


@dataclass(frozen=True, slots=True)
class IncidentCase:
    """An incident episode (a task, one seed), as its generated test carries it (a `harness.GeneratedCase`
    whose outcome is the episode's end)."""

    task: TaskInfo
    """The task played (a family's: its seed's task under the run's key, so its difficulty is that task's)."""
    seed: int

    @property
    def kind(self) -> ResultKind:
        return ResultKind.INCIDENT

    @property
    def difficulty(self) -> int:
        return self.task.difficulty

    def decorate(self, result: TestResult, outcome: EpisodeEnd | None) -> TestResult:
        """The incident fields of the RunReport: kind, difficulty, score = the episode's grade."""
        update: dict[str, Any] = {"kind": self.kind, "difficulty": self.difficulty, "prompt": None}
        if outcome is not None and outcome.grade is not None:
            update["score"] = round(outcome.grade, 4)
        return result.model_copy(update=update)


def _body(task: TaskInfo, seed: int, prompt: str, key: str | None) -> Callable[..., Any]:
    async def body(agent: Any) -> EpisodeEnd:
        env = make(task.task_id, seed=seed, episode_key=key)
        env.reset(seed=seed)
        toolset = EnvToolset(env)
        try:
            await agent.run(prompt, tools=toolset)
            end = env.score()
            state = env.state
        finally:
            env.close()
        declared = state.done and not end.truncated
        ctx = current_context()
        for name, passed, detail in (
            ("resolved", end.resolved, "the incident was not resolved" if not end.resolved else ""),
            ("declared", declared, "the episode ended without a declaration (step limit)" if not declared else ""),
        ):
            ctx.record(Signal(kind=SignalKind.CHECK, name=name, role=SignalRole.GATE, passed=passed, message=detail))
        ctx.record(Signal(kind=SignalKind.METRIC, name="grade", role=SignalRole.OBSERVE, passed=None, value=end.grade))
        ctx.record(
            Signal(
                kind=SignalKind.METRIC,
                name="normalized_reward",
                role=SignalRole.OBSERVE,
                passed=None,
                value=end.normalized_reward,
            )
        )
        return end

    return body


@dataclass(frozen=True, slots=True)
class Episode:
    """What one `--scenario ID` names in the incidents pack: a task, and one seed of it or all (None)."""

    task_id: str
    seed: int | None = None


def _incident_tasks() -> list[TaskInfo]:
    """The classic incident tasks, then the task families (no pack is loaded for them)."""
    return [t for t in TaskCatalog().tasks() if t.kind in (TaskKind.INCIDENT, TaskKind.FAMILY)]


def incident_task_ids() -> list[str]:
    """The incident tasks' names (`easy_cpu_spike`, …, then the families `web_api`, …), as `--scenario` takes them."""
    return [t.task_id for t in _incident_tasks()]


def _default_seeds(task: TaskInfo) -> tuple[int, ...]:
    return FAMILY_SEEDS if task.kind is TaskKind.FAMILY else SEEDS


def _episode(task: TaskInfo, seed: int, key: str | None) -> tuple[TaskInfo, str]:
    """One episode as the pack lists it (a family's: its seed's task under the key) and the prompt the agent gets."""
    if task.kind is not TaskKind.FAMILY:
        return task, INCIDENT_PROMPT
    played = episode_info(TaskFamily(task.task_id, key=key).task(seed))
    return played, FAMILY_PROMPT.format(description=played.description)


def incident_episode(scenario_id: str, *, seeds: Sequence[int] | None = None) -> Episode | None:
    """The episodes `--scenario ID` names: `TASK`, `incidents/TASK`, or one seed, `TASK#seedN`.

    Args:
        seeds: the run's `--seeds`; None: the pack's default seeds.

    Returns:
        None when ID names no incident task (it may be an RCA scenario).

    Raises:
        InputError: ID is `incidents/…` with an unknown task, or names a seed the run does not play.
    """
    owner, _, rest = scenario_id.rpartition("/")
    if owner not in ("", INCIDENTS_PACK):
        return None
    task_id, hashed, seed_text = rest.partition("#")
    known = incident_task_ids()
    if task_id not in known:
        if owner == INCIDENTS_PACK:
            hint = did_you_mean(task_id, known)
            raise InputError(
                f"--scenario {scenario_id!r}: no incident task {task_id!r}" + (f"; {hint}" if hint else ""),
                allowed=known,
            )
        return None
    if not hashed:
        return Episode(task_id)
    played = (
        tuple(seeds)
        if seeds is not None
        else _default_seeds(next(t for t in _incident_tasks() if t.task_id == task_id))
    )
    names = {f"seed{n}": n for n in played}
    if seed_text not in names:
        raise InputError(
            f"--scenario {scenario_id!r}: this run plays {task_id} with seeds {_spans(played)}",
            allowed=[f"{task_id}#seed{n}" for n in played[:20]],
            hint="choose the seeds with --seeds A-B (e.g. --seeds 0-9), then name one of them",
        )
    return Episode(task_id, names[seed_text])


def _spans(seeds: Sequence[int]) -> str:
    """Seeds as `--seeds` writes them: `0-4`, `0-2,7`."""
    parts: list[str] = []
    ordered = sorted(seeds)
    start = prev = ordered[0]
    for n in [*ordered[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ",".join(parts)


def incident_tests(
    *,
    episodes: Sequence[Episode] = (),
    difficulties: Sequence[int] = (),
    seeds: Sequence[int] | None = None,
    episode_key: str | None = None,
    timeout_s: float = 120.0,
) -> list[TestDef]:
    """One TestDef per (incident task, seed), ids `incidents/<task>#seed<N>`.

    Args:
        episodes: only these (`--scenario`); empty = every task and seed.
        difficulties: only tasks of these difficulties (1 easy … 3 hard); empty = all.
        seeds: `--seeds`: the seeds every task plays; None = the pack's defaults (`SEEDS` for the classic
            tasks, `FAMILY_SEEDS` for the families).
        episode_key: the run's secret episode key: each family seed plays the keyed task (`sredrill run` makes
            a fresh key per run), so no agent can regenerate an episode from the public generator and read
            its cause; None: the public tasks (listing, training, examples). A family's difficulty, step
            budget and components are its keyed task's.

    Raises:
        InputError: a family seed outside [0, 2**31), or a key shorter than 16 characters.
    """
    scope = Scope(name=INCIDENTS_PACK)
    tests = []
    for family_or_task in _incident_tasks():
        played_seeds = tuple(seeds) if seeds is not None else _default_seeds(family_or_task)
        if episodes:
            named = {e.seed for e in episodes if e.task_id == family_or_task.task_id}
            if not named:
                continue
            task_seeds = list(played_seeds) if None in named else [n for n in played_seeds if n in named]
        else:
            task_seeds = list(played_seeds)
        for seed in task_seeds:
            task, prompt = _episode(family_or_task, seed, episode_key)
            if difficulties and task.difficulty not in difficulties:
                continue
            name = f"{INCIDENTS_PACK}/{task.task_id}#seed{seed}"
            tests.append(
                TestDef(
                    id=name,
                    name=name,
                    file=INCIDENTS_PACK,
                    line=0,
                    describe_path=(),
                    labels=(f"difficulty:{task.difficulty}", f"seed:{seed}"),
                    timeout_s=timeout_s,
                    prompt=prompt,
                    context=(),
                    skip_judge=True,
                    description=task.description,
                    body=_body(task, seed, prompt, episode_key),
                    fixtures={},
                    scope=scope,
                    content_hash=hashlib.sha256(name.encode()).hexdigest()[:16],
                    case=IncidentCase(task, seed),
                )
            )
    return tests
