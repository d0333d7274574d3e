"""The task catalog: every environment task by id (incident tasks and the RCA scenarios of packs), and `make`.

A `TaskCatalog` is an immutable value built once (a server builds one at start-up and keeps it); `make()` and
`list_tasks()` build the built-in one when they need it. Incident ids resolve without loading any pack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from sredrill.env.environment import Env, task_info
from sredrill.env.models import RewardMode, TaskInfo
from sredrill.env.rca import RcaTask
from sredrill.errors import InputError, did_you_mean
from sredrill.incidents import TASKS, IncidentTask
from sredrill.scenarios import Pack, builtin_pack_names, load_pack

__all__ = ["TaskCatalog", "list_tasks", "make"]


class TaskCatalog:
    """Environment tasks by id: incident tasks first, then each pack's scenarios under opaque ids.

    Examples:
        >>> catalog = TaskCatalog.builtin()
        >>> [t.task_id for t in catalog.tasks()][:3]
        ['easy_cpu_spike', 'medium_cascade', 'hard_mixed']
        >>> env = catalog.make("hard_mixed", seed=3)
    """

    def __init__(self, packs: Iterable[Pack] = (), *, incident_tasks: Mapping[str, IncidentTask] | None = None) -> None:
        """Build a catalog.

        Args:
            packs: scenario packs whose loaded scenarios become RCA tasks (broken scenarios are skipped).
            incident_tasks: incident tasks by id; default: the built-in ones.

        Raises:
            InputError: two tasks would share an id.
        """
        tasks: dict[str, IncidentTask | RcaTask] = dict(incident_tasks if incident_tasks is not None else TASKS)
        for pack in packs:
            for scenario in pack.scenarios:
                rca = RcaTask.of(pack, scenario)
                if rca.task_id in tasks:
                    raise InputError(
                        f"two tasks share the id {rca.task_id!r} ({pack.name}/{scenario.folder})",
                        hint="load each pack once",
                    )
                tasks[rca.task_id] = rca
        self._tasks: Mapping[str, IncidentTask | RcaTask] = MappingProxyType(tasks)

    @classmethod
    def builtin(cls) -> TaskCatalog:
        """The built-in incident tasks and the scenarios of every built-in pack."""
        return cls(load_pack(name) for name in builtin_pack_names())

    def task(self, task_id: str) -> IncidentTask | RcaTask:
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
        """Every task as `GET /tasks` lists it, incident tasks first."""
        return [task_info(t) for t in self._tasks.values()]

    def make(self, task_id: str, *, seed: int | None = None, reward_mode: RewardMode | str = RewardMode.DENSE) -> Env:
        """A new environment for one task (see `sredrill.env.make`)."""
        return Env(self.task(task_id), seed=seed, reward_mode=reward_mode)


def make(task_id: str, *, seed: int | None = None, reward_mode: RewardMode | str = RewardMode.DENSE) -> Env:
    """A new environment for one task: an incident task or an RCA scenario of a built-in pack.

    Args:
        task_id: an incident task id (`easy_cpu_spike`, …) or an RCA task's opaque id from `list_tasks()`.
        seed: the first episode's seed (see `Env`).
        reward_mode: `dense` (every step's reward) or `sparse` (only the grade, on the last step).

    Returns:
        The environment; call `reset()` before `step()`.

    Raises:
        InputError: unknown task id (with "did you mean" and the known ids), a bad seed or reward mode.
    """
    task = TASKS.get(task_id)
    if task is not None:
        return Env(task, seed=seed, reward_mode=reward_mode)
    if not task_id.startswith("rca-"):
        # Not an RCA id either: answer without loading any pack.
        raise _unknown_task(task_id, TASKS)
    return TaskCatalog.builtin().make(task_id, seed=seed, reward_mode=reward_mode)


def list_tasks() -> list[TaskInfo]:
    """Every built-in task: the incident tasks, then the RCA scenarios of the built-in packs."""
    return TaskCatalog.builtin().tasks()


def _unknown_task(task_id: str, known: Mapping[str, object]) -> InputError:
    hint = did_you_mean(task_id, list(known))
    return InputError(
        f"unknown task {task_id!r}" + (f"; {hint}" if hint else ""),
        field="task_id",
        allowed=[i for i in known if not i.startswith("rca-")],
        hint="RCA scenarios have opaque ids (rca-…): list every task with sredrill.env.list_tasks()",
    )
