"""Selecting what a run runs: `--scenario` over RCA scenarios and incident tasks, `--seeds` for the incidents
pack, `--last-failed`, and the "nothing selected" outcome (exit 5, as pytest's)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sredrill.errors import InputError, NothingSelected, did_you_mean
from sredrill.results import ResultKind, TestStatus

from .incident_suite import INCIDENTS_PACK, Episode, incident_episode, incident_task_ids

__all__ = [
    "MAX_SEEDS",
    "LastFailures",
    "Listed",
    "ScenarioSelection",
    "check_seeds_have_incidents",
    "last_failures",
    "nothing_selected",
    "parse_difficulties",
    "parse_seeds",
    "select_scenario_ids",
]

_DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() also accepts "²", which int() refuses
MAX_SEEDS = 10_000
"""The most seeds one `--seeds` may name: each is an episode of every selected task."""


class Listed(Protocol):
    """What `--scenario` reads of a pack or a streamed generated set: its name and its scenario folders."""

    @property
    def name(self) -> str: ...

    @property
    def folders(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class ScenarioSelection:
    """`--scenario` split by kind: RCA ids (folder or pack/folder) and incident episodes.

    Without `--scenario` both kinds run whole; with it, a kind none of the ids names does not run at all.
    """

    rca_ids: list[str] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    given: bool = False

    @property
    def runs_rca(self) -> bool:
        return not self.given or bool(self.rca_ids)

    @property
    def runs_incidents(self) -> bool:
        return not self.given or bool(self.episodes)


def _rca_names(packs: Sequence[Listed]) -> list[str]:
    return [name for p in packs for folder in p.folders for name in (folder, f"{p.name}/{folder}")]


def select_scenario_ids(
    scenario_ids: Sequence[str], *, packs: Sequence[Listed], with_incidents: bool, seeds: Sequence[int] | None = None
) -> ScenarioSelection:
    """Sort each `--scenario ID` into the RCA scenarios of `packs` (and streamed sets) or the incidents pack's tasks.

    `seeds` are the run's `--seeds` (None: the pack's defaults): an episode `TASK#seedN` must be one of them.

    Raises:
        InputError: an ID names nothing in the run's packs (with a "did you mean" over both kinds), or names
            a kind whose pack is not in the run.
    """
    selection = ScenarioSelection(given=bool(scenario_ids))
    pack_names = [p.name for p in packs] + ([INCIDENTS_PACK] if with_incidents else [])
    for sid in scenario_ids:
        episode = incident_episode(sid, seeds=seeds)
        if episode is not None:
            if not with_incidents:
                raise InputError(
                    f"--scenario {sid!r} is an incident task, and the incidents pack is not in this run",
                    hint="add --pack incidents (or leave out --pack to run every built-in pack)",
                )
            selection.episodes.append(episode)
            continue
        owner, _, folder = sid.rpartition("/")
        if owner and owner not in {p.name for p in packs}:
            raise InputError(
                f"--scenario {sid!r}: no pack {owner!r} in this run",
                allowed=pack_names or None,
                hint="name a pack of the run, or add it with --pack",
            )
        if any(folder in p.folders for p in packs if not owner or p.name == owner):
            selection.rca_ids.append(sid)
            continue
        names = _rca_names(packs) + (incident_task_ids() if with_incidents else [])
        guess = did_you_mean(sid, names)
        kinds = "scenario or incident task" if with_incidents else "scenario"
        raise InputError(
            f"--scenario {sid!r}: no {kinds} of {', '.join(pack_names) or 'the run'} has this id"
            + (f"; {guess}" if guess else ""),
            allowed=[n for n in names if "/" not in n],
            hint="list RCA scenarios with: sredrill scenarios list; incident tasks are named as above",
        )
    return selection


@dataclass(frozen=True, slots=True)
class LastFailures:
    """What `--last-failed` re-runs: the tests that failed or errored in the latest run of the same command."""

    run_id: str | None
    """The run looked at; None when the store has no earlier run of this command and agent."""
    ids: frozenset[str] = frozenset()
    """Ids of its failed and errored tests; empty = run everything (nothing to narrow to)."""
    files: frozenset[str] = frozenset()
    """Eval files that failed to load there: every test they register now is re-run (as pytest re-runs a
    module whose collection failed)."""

    def selects(self, test_id: str, file: str | None) -> bool:
        """True when the test failed, errored, or comes from a file that failed to load, in that run."""
        return test_id in self.ids or (file is not None and file in self.files)

    def note(self) -> str:
        """One line for stderr saying what `--last-failed` does this time (pytest's `run-last-failure:`)."""
        if self.run_id is None:
            return "last-failed: no earlier run of this command and agent in the store; running every selected test"
        if not self.ids:
            return f"last-failed: run {self.run_id} had no failures; running every selected test (not deselecting)"
        return f"last-failed: re-running the {len(self.ids)} test(s) that failed or errored in run {self.run_id}"

    def config(self) -> dict[str, Any] | None:
        """How the run's stored config records the selection (so `--resume` keeps it), or None."""
        if not self.ids:
            return None
        return {"run": self.run_id, "ids": sorted(self.ids), "files": sorted(self.files)}

    @classmethod
    def from_config(cls, value: Any) -> LastFailures | None:
        """The selection a stored run's config recorded (see `config`), or None."""
        if not isinstance(value, dict) or not isinstance(value.get("ids"), list):
            return None
        files = value.get("files")
        return cls(
            run_id=value.get("run"),
            ids=frozenset(str(i) for i in value["ids"]),
            files=frozenset(map(str, files if isinstance(files, list) else [])),
        )


def last_failures(store: Any, *, kind: Literal["run", "test"], agent: str | None) -> LastFailures:
    """The failed and errored tests of the newest stored run of `kind` (`sredrill run` or `sredrill test`)
    with the same agent spec: runs of another agent (the baselines' runs, a different build) fail different
    tests, so they are not the "last" run here.

    Args:
        store: the `--db` store.
        kind: the command (`run` or `test`) as the engine names it in the store.
        agent: the agent spec of the new run.
    """
    for record in store.list_runs(limit=1000):
        if record.kind != kind or record.agent != agent:
            continue
        failing = [r for r in store.results(record.run_id) if r.status in (TestStatus.FAILED, TestStatus.ERRORED)]
        # A file that failed to load is one result named by its path (no `file::test` id).
        files = {r.file for r in failing if r.kind == ResultKind.TEST and r.file and "::" not in r.id}
        return LastFailures(run_id=record.run_id, ids=frozenset(r.id for r in failing), files=frozenset(files))
    return LastFailures(run_id=None)


def parse_difficulties(text: str | Sequence[int] | None) -> list[int]:
    """`--difficulty 1,2` (or a list of levels) as levels 1-4; empty = no filter.

    Raises:
        InputError: not a comma list of levels, or a level outside 1-4.
    """
    if text is None or text == "":
        return []
    if not isinstance(text, str):
        levels = list(text)
    else:
        try:
            levels = [int(part) for part in text.split(",") if part.strip()]
        except ValueError:
            raise InputError(f"--difficulty {text!r} must be a comma list of levels 1-4, e.g. 1,2") from None
    bad = [d for d in levels if d not in (1, 2, 3, 4) or isinstance(d, bool)]
    if bad:
        raise InputError(f"--difficulty: {bad} not in 1-4", allowed=["1", "2", "3", "4"])
    return levels


def parse_seeds(text: str | Sequence[int] | None) -> tuple[int, ...] | None:
    """`--seeds A-B`, `A`, or a comma list of both (`0-4,100000-100009`) as the seeds, in order, each once.

    Returns:
        The seeds; None when none were given (each task keeps its default seeds).

    Raises:
        InputError: not a comma list of non-negative integers and inclusive ranges `A-B` with A ≤ B, or more
            than `MAX_SEEDS` seeds in all.
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    if not isinstance(text, str):
        seeds = list(text)
        bad = [s for s in seeds if isinstance(s, bool) or not isinstance(s, int) or s < 0]
        if bad:
            raise InputError(f"--seeds: {bad} are not non-negative integers")
        return tuple(dict.fromkeys(seeds))
    chosen: dict[int, None] = {}
    for part in text.split(","):
        first, dash, last = (piece.strip() for piece in part.partition("-"))
        if not (_DIGITS.fullmatch(first) and (not dash or _DIGITS.fullmatch(last))):
            raise InputError(
                f"--seeds {text!r}: {part.strip()!r} is not a seed or a range of seeds",
                hint="give non-negative integers and inclusive ranges, comma separated: --seeds 100000-100004,7",
            )
        lo, hi = int(first), int(last) if dash else int(first)
        if hi < lo:
            raise InputError(
                f"--seeds {text!r}: the range {part.strip()!r} ends before it starts",
                hint=f"write the lower seed first: --seeds {hi}-{lo}",
            )
        if hi - lo + 1 + len(chosen) > MAX_SEEDS:
            raise InputError(
                f"--seeds {text!r} names more than {MAX_SEEDS} seeds",
                hint="each seed is one episode of every selected task: split the seeds over several runs",
            )
        chosen.update(dict.fromkeys(range(lo, hi + 1)))
    return tuple(chosen)


def check_seeds_have_incidents(seeds: Sequence[int] | None, *, with_incidents: bool) -> None:
    """`--seeds` chooses incident episodes: without the incidents pack in the run it would change nothing.

    Raises:
        InputError: seeds were given and the run has no incidents pack.
    """
    if seeds is not None and not with_incidents:
        raise InputError(
            "--seeds chooses the episodes of the incidents pack, which is not in this run",
            hint="add --pack incidents (or leave out --pack to run every built-in pack)",
        )


def nothing_selected(
    what: str, filters: Sequence[str], last_failed: LastFailures | None, *, empty: str
) -> NothingSelected:
    """Why nothing was selected: the `--last-failed` tests are gone, the filters match nothing, or `empty`.

    Args:
        what: what the filters choose among, singular ("test of evals/", "scenario or incident episode of …").
        filters: the filters given, as typed (`--grep 'x'`).
        empty: the reason when no filter was given.
    """
    given = ", ".join(filters)
    if last_failed is not None and last_failed.ids:
        return NothingSelected(
            f"none of the {len(last_failed.ids)} test(s) that failed or errored in run {last_failed.run_id} is a "
            f"selected {what}" + (f" ({given})" if given else "") + "; they were renamed, removed or filtered out",
            hint="drop --last-failed to run every selected test",
        )
    if given:
        return NothingSelected(f"no {what} matches {given}", hint="loosen the filters, or check their spelling")
    return NothingSelected(empty)
