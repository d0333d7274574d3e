"""The task catalog: every environment task by id (classic incident tasks, task families, the RCA scenarios of
packs), and `make`.

A `TaskCatalog` is an immutable value built once (a server builds one at start-up and keeps it); `make()` and
`list_tasks()` build the built-in one when they need it. Incident and family ids resolve without loading any pack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from sredrill.env.environment import Env, EnvTask, task_info
from sredrill.env.families import TaskFamily, family_ids
from sredrill.env.models import RewardMode, TaskInfo
from sredrill.env.rca import RcaTask
from sredrill.errors import InputError, did_you_mean
from sredrill.incidents import TASKS, IncidentTask
from sredrill.incidents.families import check_key
from sredrill.scenarios import Pack, builtin_pack_names, load_pack

__all__ = ["TaskCatalog", "list_tasks", "make"]


class TaskCatalog:
    """Environment tasks by id: classic incident tasks, then task families, then each pack's scenarios under
    opaque ids.

    Examples:
        >>> catalog = TaskCatalog.builtin()
        >>> [t.task_id for t in catalog.tasks()][:3]
        ['easy_cpu_spike', 'medium_cascade', 'hard_mixed']
        >>> env = catalog.make("hard_mixed", seed=3)
        >>> unseen = TaskCatalog.generated("rds:seed=1000000:count=20")  # RCA tasks of a generated set
    """

    def __init__(
        self,
        packs: Iterable[Pack] = (),
        *,
        incident_tasks: Mapping[str, IncidentTask] | None = None,
        families: Iterable[str] | None = None,
        episode_key: str | None = None,
    ) -> None:
        """Build a catalog.

        Args:
            packs: scenario packs whose loaded scenarios become RCA tasks (broken scenarios are skipped).
            incident_tasks: incident tasks by id; default: the built-in ones.
            families: task family ids; default: every family (`family_ids()`); `()`: none.
            episode_key: the families' episode key (see `make`); None: their public, unkeyed tasks.

        Raises:
            InputError: two tasks would share an id, an unknown family, or a key shorter than 16 characters.
        """
        key = check_key(episode_key)
        tasks: dict[str, EnvTask] = dict(incident_tasks if incident_tasks is not None else TASKS)
        for family in family_ids() if families is None else families:
            if family not in family_ids():
                raise _unknown_task(family, dict.fromkeys(family_ids()))
            if family in tasks:
                raise InputError(f"two tasks share the id {family!r}", hint="rename the incident task")
            tasks[family] = TaskFamily(family, key=key)
        for pack in packs:
            for scenario in pack.scenarios:
                rca = RcaTask.of(pack, scenario)
                if rca.task_id in tasks:
                    raise InputError(
                        f"two tasks share the id {rca.task_id!r} ({pack.name}/{scenario.folder})",
                        hint="load each pack once",
                    )
                tasks[rca.task_id] = rca
        self._tasks: Mapping[str, EnvTask] = MappingProxyType(tasks)

    @classmethod
    def builtin(cls) -> TaskCatalog:
        """The built-in incident tasks and the scenarios of every built-in pack."""
        return cls(load_pack(name) for name in builtin_pack_names())

    @classmethod
    def generated(cls, spec: str) -> TaskCatalog:
        """The scenarios of a generated set as RCA tasks (and the built-in incident tasks and families): an
        unseen set to train or evaluate on, made in memory (`rds:seed=1000000:count=50`, docs/generator.md).

        Raises:
            InputError: the spec does not parse, or names a domain without a generator.
        """
        from sredrill.generate import check_spec, generated_pack, parse_generate_spec

        parsed = parse_generate_spec(spec)
        check_spec(parsed)
        return cls([generated_pack(parsed)])

    def task(self, task_id: str) -> EnvTask:
        """A task by id.

        Raises:
            InputError: no such task; says the closest id and lists them.
        """
        task = self._tasks.get(task_id)
        if task is None:
            raise _unknown_task(task_id, self._tasks)
        return task

    def ids(self) -> tuple[str, ...]:
        return tuple(self._tasks)

    def tasks(self) -> list[TaskInfo]:
        """Every task as `GET /tasks` lists it: classic incident tasks, families, then RCA tasks."""
        return [task_info(t) for t in self._tasks.values()]

    def make(self, task_id: str, *, seed: int | None = None, reward_mode: RewardMode | str = RewardMode.DENSE) -> Env:
        """A new environment for one task (see `sredrill.env.make`)."""
        return Env(self.task(task_id), seed=seed, reward_mode=reward_mode)


def make(
    task_id: str,
    *,
    seed: int | None = None,
    reward_mode: RewardMode | str = RewardMode.DENSE,
    episode_key: str | None = None,
) -> Env:
    """A new environment for one task: an incident task or an RCA scenario of a built-in pack.

    Args:
        task_id: a classic incident task id (`easy_cpu_spike`, …), a task family (`web_api`, …: each
            episode's seed generates its task) or an RCA task's opaque id from `list_tasks()`.
        seed: the first episode's seed (see `Env`); a family's seed chooses its generated task.
        reward_mode: `dense` (every step's reward) or `sparse` (only the grade, on the last step).
        episode_key: for a family, a secret (16+ characters) that keys each seed's task, so that no one
            without it can regenerate the episode and read its cause (evaluation); None: the public task of
            the seed (training). Classic tasks and RCA tasks ignore it.

    Returns:
        The environment; call `reset()` before `step()`.

    Raises:
        InputError: unknown task id (with "did you mean" and the known ids), a bad seed, reward mode or key.
    """
    key = check_key(episode_key)
    task = TASKS.get(task_id)
    if task is not None:
        return Env(task, seed=seed, reward_mode=reward_mode)
    if task_id in family_ids():
        return Env(TaskFamily(task_id, key=key), seed=seed, reward_mode=reward_mode)
    if not task_id.startswith("rca-"):
        # Not an RCA id either: answer without loading any pack.
        raise _unknown_task(task_id, {**TASKS, **dict.fromkeys(family_ids())})
    return TaskCatalog.builtin().make(task_id, seed=seed, reward_mode=reward_mode)


def list_tasks() -> list[TaskInfo]:
    """Every built-in task: the classic incident tasks, the task families, then the RCA scenarios of the
    built-in packs."""
    return TaskCatalog.builtin().tasks()


def _unknown_task(task_id: str, known: Mapping[str, object]) -> InputError:
    hint = did_you_mean(task_id, list(known))
    return InputError(
        f"unknown task {task_id!r}" + (f"; {hint}" if hint else ""),
        field="task_id",
        allowed=[i for i in known if not i.startswith("rca-")],
        hint="RCA scenarios have opaque ids (rca-…): list every task with sredrill.env.list_tasks()",
    )
