"""The RCA suite: every scenario of a pack as a generated SDK test, run by the same `run_test`.

A generated test is a `ScenarioCase`, what `sredrill.scenario(ID)` gives an SDK test: it builds the scenario's
toolset for its backend, runs the agent once, and grades the diagnosis; each grading check becomes a `check`
signal, so statuses come from the one engine rule (DESIGN §5, §7).

A pack's tests close over its loaded scenarios; a streamed generated set's (`streamed_rca_tests`) make their
scenario when they start and let go of it when they end, so a run of any count holds a few at once.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sredrill.errors import InputError
from sredrill.evidence import BackendMode, ScenarioEvidence
from sredrill.grading import Grade
from sredrill.harness import Scope, TestDef, current_context
from sredrill.results import ResultKind, TestResult, TestStatus
from sredrill.scenarios import Pack, Scenario, get_domain
from sredrill.sdk import RCA_PROMPT, ScenarioCase

from .generated import GeneratedEntry, StreamedSet
from .selection import Listed

__all__ = [
    "RCA_PROMPT",
    "Axis",
    "RcaCase",
    "StreamedCase",
    "axes_for",
    "pack_error_results",
    "rca_tests",
    "select_scenarios",
    "streamed_rca_tests",
]

DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class Axis:
    """One way to run a scenario: the axis it is graded on and the backend that serves its evidence."""

    number: int
    mode: BackendMode


def axes_for(mode: str | None, axis2: bool) -> list[Axis]:
    """`--axis2`: Axis 1 on `full` and Axis 2 on `selective`; `--mode` alone picks the backend of Axis 1."""
    try:
        backend = BackendMode(mode or "full")
    except ValueError:
        raise InputError(
            f"--mode {mode!r} is not a backend", allowed=[m.value for m in BackendMode], hint="e.g. --mode selective"
        ) from None
    if axis2:
        if mode not in (None, "full"):
            raise InputError("--axis2 runs both axes (full, then selective): leave out --mode, or drop --axis2")
        return [Axis(1, BackendMode.FULL), Axis(2, BackendMode.SELECTIVE)]
    return [Axis(1, backend)]


def select_scenarios(
    pack: Pack, *, scenario_ids: Sequence[str] = (), difficulties: Sequence[int] = ()
) -> list[Scenario]:
    """The pack's scenarios named by `--scenario` (folder or pack/folder) and of the given difficulties.

    A named scenario that does not load is left out here: `pack_error_results` reports it `errored`.
    """
    chosen = list(pack.scenarios)
    if scenario_ids:
        chosen = []
        for sid in scenario_ids:
            if not _names(pack, sid):
                continue
            if sid.rpartition("/")[2] not in pack.broken:
                chosen.append(pack.scenario(sid))
    if difficulties:
        chosen = [s for s in chosen if s.difficulty in difficulties]
    return chosen


def _names(pack: Listed, scenario_id: str) -> bool:
    """True when `--scenario ID` is about this pack: `pack/folder` names its pack; a bare folder belongs to
    whichever pack has it."""
    owner, _, folder = scenario_id.rpartition("/")
    return owner == pack.name if owner else folder in pack.folders


@dataclass(frozen=True, slots=True)
class RcaCase:
    """An RCA scenario on one axis, as its generated test carries it (a `harness.GeneratedCase` whose outcome
    is the diagnosis's `Grade`)."""

    scenario: Scenario
    axis: Axis

    @property
    def kind(self) -> ResultKind:
        return ResultKind.RCA

    @property
    def difficulty(self) -> int:
        return self.scenario.difficulty

    def decorate(self, result: TestResult, outcome: Grade | None) -> TestResult:
        """Add the RCA fields of the RunReport (axis, mode, expected/actual, checks, trajectory, reasoning, the
        score and its components, the claim counts); without a grade (the agent failed, the test timed out) the
        engine's verdict stands."""
        return _decorated(result, outcome, self.axis, self.difficulty)


@dataclass(frozen=True, slots=True)
class StreamedCase:
    """An RCA scenario of a streamed generated set on one axis: its difficulty is known before it is made, and
    the case holds nothing of it (`RcaCase` holds a loaded scenario)."""

    axis: Axis
    difficulty: int

    @property
    def kind(self) -> ResultKind:
        return ResultKind.RCA

    def decorate(self, result: TestResult, outcome: Grade | None) -> TestResult:
        """As `RcaCase.decorate`."""
        return _decorated(result, outcome, self.axis, self.difficulty)


def _decorated(result: TestResult, outcome: Grade | None, axis: Axis, difficulty: int) -> TestResult:
    update: dict[str, Any] = {
        "kind": ResultKind.RCA,
        "axis": axis.number,
        "mode": axis.mode.value,
        "difficulty": difficulty,
        "prompt": None,
    }
    if outcome is not None:
        score, grounding = outcome.score, outcome.grounding
        update.update(
            expected=outcome.expected,
            actual=outcome.actual,
            checks=outcome.report_checks(),
            trajectory=outcome.trajectory,
            reasoning=dict(outcome.reasoning) if outcome.reasoning is not None else None,
            score=score.value if score is not None else None,
            score_components=dict(score.components) if score is not None else None,
            claims=grounding.claims if grounding is not None else None,
            uncited_claims=grounding.uncited if grounding is not None else None,
            grading=outcome.grading,
        )
        if result.status == TestStatus.FAILED and outcome.failure_reason:
            update["failure_reason"] = outcome.failure_reason
    return result.model_copy(update=update)


def _body(pack: Pack, scenario: Scenario, axis: Axis, blind: bool, evidence: ScenarioEvidence) -> Callable[..., Any]:
    # The same case an SDK test gets from `scenario(ID)`: one way to serve and grade a scenario.
    case = ScenarioCase(pack, scenario, mode=axis.mode, axis=axis.number, blind=blind, evidence=evidence)

    async def body(agent: Any) -> Grade:
        return await _graded(case, agent)

    return body


def _streamed_body(streamed: StreamedSet, entry: GeneratedEntry, axis: Axis, blind: bool) -> Callable[..., Any]:
    async def body(agent: Any) -> Grade:
        # Made for this test alone (each axis makes its own) and let go when it ends. Off the event loop, so the
        # other tests' agents keep being served meanwhile; a scenario that does not load raises its PackError,
        # which makes this test `errored` with the load error.
        scenario = await asyncio.to_thread(streamed.load, entry)
        case = ScenarioCase(streamed.pack, scenario, mode=axis.mode, axis=axis.number, blind=blind)
        return await _graded(case, agent)

    return body


async def _graded(case: ScenarioCase, agent: Any) -> Grade:
    result = await agent.run(case.prompt, tools=case.tools)
    grade = case.grade_diagnosis(result)
    ctx = current_context()
    for signal in grade.signals:
        ctx.record(signal)
    return grade


def rca_tests(
    packs: Sequence[Pack],
    axes: Sequence[Axis],
    *,
    blind: bool = True,
    scenario_ids: Sequence[str] = (),
    difficulties: Sequence[int] = (),
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> list[TestDef]:
    """One TestDef per (scenario, axis), ids `pack/NNN-slug#axis`, ordered by pack, axis, scenario."""
    tests = []
    for pack in packs:
        scope = Scope(name=pack.name)
        scenarios = select_scenarios(pack, scenario_ids=scenario_ids, difficulties=difficulties)
        # Prepared on first use, once per scenario: every axis serves the same evidence and alert.
        evidence = [ScenarioEvidence(s, pack.vocabulary) for s in scenarios]
        for axis in axes:
            for scenario, prepared in zip(scenarios, evidence, strict=True):
                body = _body(pack, scenario, axis, blind, prepared)
                name = f"{scenario.qualified_id}#{axis.number}"
                digest = hashlib.sha256(f"{name}\0{axis.mode}\0{sorted(scenario.files.items())}".encode())
                tests.append(
                    TestDef(
                        id=name,
                        name=name,
                        file=pack.name,
                        line=0,
                        describe_path=(),
                        labels=(f"difficulty:{scenario.difficulty}", f"axis:{axis.number}", f"mode:{axis.mode}"),
                        timeout_s=timeout_s,
                        prompt=get_domain(scenario.domain).task_prompt(pack.vocabulary),
                        context=(),
                        skip_judge=True,
                        description=None,
                        body=body,
                        fixtures={},
                        scope=scope,
                        content_hash=digest.hexdigest()[:16],
                        case=RcaCase(scenario, axis),
                    )
                )
    return tests


def streamed_rca_tests(
    streamed: StreamedSet,
    axes: Sequence[Axis],
    *,
    blind: bool = True,
    scenario_ids: Sequence[str] = (),
    difficulties: Sequence[int] = (),
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> list[TestDef]:
    """`rca_tests` of a streamed generated set: the same ids, labels and order, each test making its scenario
    when it starts (a scenario that does not load is that test's error, not a preset result)."""
    by_folder = {e.folder: e for e in streamed.entries}
    entries = list(streamed.entries)
    if scenario_ids:
        entries = [by_folder[sid.rpartition("/")[2]] for sid in scenario_ids if _names(streamed, sid)]
    if difficulties:
        entries = [e for e in entries if e.difficulty in difficulties]
    scope = Scope(name=streamed.name)
    prompt = get_domain(streamed.pack.domain).task_prompt(streamed.vocabulary)
    tests = []
    for axis in axes:
        for entry in entries:
            name = f"{streamed.name}/{entry.folder}#{axis.number}"
            # The spec (in the name) and the generator's version decide every byte of the scenario.
            digest = hashlib.sha256(f"{name}\0{axis.mode}\0{streamed.version}".encode())
            tests.append(
                TestDef(
                    id=name,
                    name=name,
                    file=streamed.name,
                    line=0,
                    describe_path=(),
                    labels=(f"difficulty:{entry.difficulty}", f"axis:{axis.number}", f"mode:{axis.mode}"),
                    timeout_s=timeout_s,
                    prompt=prompt,
                    context=(),
                    skip_judge=True,
                    description=None,
                    body=_streamed_body(streamed, entry, axis, blind),
                    fixtures={},
                    scope=scope,
                    content_hash=digest.hexdigest()[:16],
                    case=StreamedCase(axis, entry.difficulty),
                )
            )
    return tests


def pack_error_results(
    packs: Sequence[Pack], axes: Sequence[Axis], *, scenario_ids: Sequence[str] = ()
) -> list[TestResult]:
    """A broken scenario is `errored` on every axis with its load error, never graded; the rest still runs.

    With `scenario_ids` (`--scenario`), only the broken scenarios they name; a broken scenario has no
    difficulty to filter on, so `--difficulty` keeps it.
    """
    out = []
    for pack in packs:
        for folder, error in sorted(pack.broken.items()):
            if scenario_ids and not any(_names(pack, sid) and sid.rpartition("/")[2] == folder for sid in scenario_ids):
                continue
            for axis in axes:
                out.append(
                    TestResult(
                        id=f"{pack.name}/{folder}#{axis.number}",
                        name=f"{pack.name}/{folder}#{axis.number}",
                        kind=ResultKind.RCA,
                        file=pack.name,
                        status=TestStatus.ERRORED,
                        failure_reason=error.render(),
                        axis=axis.number,
                        mode=axis.mode.value,
                        duration_ms=0.0,
                    )
                )
    return out
