"""`sredrill runs regrade RUN`: grade a stored run's trajectories again under the current rules, as a new run.

Nothing of the agent runs again. Each RCA result's stored trajectory is replayed through a fresh toolset over the
same scenario and backend: every call the harness served is served again, in order (so the temporal clock and
the audit are as they were), which rebuilds what the agent was served, the items its citations are checked
against. The diagnosis is the one stored with the result (`Actual.diagnosis`), else the last one the agent
submitted with `submit_diagnosis`, else its final text parsed. Results that cannot be regraded (incident
episodes, SDK tests, errored results, a scenario no longer in its pack) are copied as they were, with a note.
The new run records the old one (`RunPlan.regraded_from`); the old run is not touched.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from sredrill.diagnosis import Diagnosis, parse_diagnosis_text
from sredrill.errors import InputError
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.grading import grade_diagnosis
from sredrill.results import ResultKind, RunReport, SignalKind, TestResult, TestStatus, summarize
from sredrill.scenarios import Pack, Scenario, load_pack
from sredrill.scenarios.domain import SUBMIT_TOOL
from sredrill.trajectory import ResponseStep, ToolCallStep, ToolError, Trajectory, step_adapter

from .execute import new_run_id
from .generated import StreamedSet
from .launch import generated_set, streamed_set_of
from .plan import PackSelection, stored_plan
from .rca import Axis, RcaCase

__all__ = ["regrade_run"]

NOT_REGRADED = "not regraded: {why}; copied from run {run}"


async def regrade_run(store: Any, ref: str, *, run_id: str | None = None) -> RunReport:
    """Grade the stored run `ref` (an id, a prefix or `latest`) again, store it as a new run, and return its report.

    Raises:
        InputError: no such run, it is still going on, or it is not a `sredrill run` of scenario packs.
    """
    old_id = store.resolve_run(ref)
    plan, record = stored_plan(store, old_id)
    if not record.finished:
        raise InputError(f"run {old_id!r} has not finished", hint="regrade it once it has ended (or resume it first)")
    if not isinstance(plan.selection, PackSelection):
        raise InputError(
            f"run {old_id!r} ran eval files (`sredrill test`): only runs of scenario packs can be regraded",
            hint="rerun the eval files instead: their own code does the grading",
        )
    packs: dict[str, Pack | StreamedSet] = dict(_packs(plan.selection.packs))
    if plan.selection.generated is not None:
        # Made again from its spec, with the generator version the run recorded (refused when it changed): one
        # scenario at a time, each result's own, so regrading a large set holds one scenario.
        generated = streamed_set_of(plan.selection.generated)
        packs[generated.name] = generated
    old = store.results(old_id)
    started = datetime.now().astimezone()
    new_id = run_id or new_run_id()
    results = [await _regrade(r, store, old_id, packs, blind=plan.selection.blind) for r in old]
    regraded = plan.model_copy(update={"regraded_from": old_id})
    store.begin_run(
        new_id, kind=plan.kind, agent=record.agent, mode=record.mode, started_at=started, config=regraded.stored()
    )
    for result in results:
        steps = store.trajectory(old_id, result.id)
        store.write_result(new_id, result, steps)
    duration_ms = (datetime.now().astimezone() - started).total_seconds() * 1000
    report = RunReport(
        run_id=new_id,
        agent=record.agent,
        mode=record.mode,
        started_at=started,
        duration_ms=duration_ms,
        summary=summarize(results, repeat=plan.repeat),
        results=results,
        generated=generated_set(plan),
    )
    store.finish_run(new_id, report, stored={r.id for r in results})
    return report


def _packs(names: Sequence[str]) -> Mapping[str, Pack]:
    out: dict[str, Pack] = {}
    for name in names:
        if name == "incidents":
            continue
        pack = load_pack(name)
        out[pack.name] = pack
    return out


async def _regrade(
    result: TestResult, store: Any, old_id: str, packs: Mapping[str, Pack | StreamedSet], *, blind: bool
) -> TestResult:
    if result.kind != ResultKind.RCA:
        return _copied(result, old_id, "only RCA results are graded from their trajectory")
    if result.status == TestStatus.ERRORED:
        return _copied(result, old_id, "the test errored, so there is no diagnosis to grade")
    located = _scenario(result, packs)
    if located is None:
        return _copied(result, old_id, "its scenario is no longer in the pack")
    pack, scenario = located
    axis = Axis(result.axis or 1, BackendMode(result.mode or "full"))
    raw = store.trajectory(old_id, result.id) or []
    trajectory = Trajectory([step_adapter.validate_python(s) for s in raw])
    toolset = RcaToolset(scenario, axis.mode, blind=blind, vocabulary=pack.vocabulary)
    for step in trajectory:
        if isinstance(step, ToolCallStep) and step.verified is True:
            # A call that failed then fails again; the clock advances as it did then.
            with contextlib.suppress(ToolError):
                await toolset.call(step.name, dict(step.args))
    grade = grade_diagnosis(
        scenario,
        _diagnosis(result, trajectory),
        trajectory,
        axis=axis.number,
        returned_metrics=toolset.returned_metrics(),
        vocabulary=pack.vocabulary,
        served=toolset.served_items(),
        budget=toolset.data_budget,
    )
    checks = [s for s in result.signals if s.kind != SignalKind.CHECK]
    regraded = result.model_copy(
        update={
            "status": TestStatus.PASSED if grade.passed else TestStatus.FAILED,
            "failure_reason": None,
            "signals": [*checks, *grade.signals],
            "notes": [*result.notes, f"regraded from run {old_id}"],
        }
    )
    return RcaCase(scenario, axis).decorate(regraded, grade)


def _scenario(result: TestResult, packs: Mapping[str, Pack | StreamedSet]) -> tuple[Pack, Scenario] | None:
    """The result's pack (a streamed set's: its pack without scenarios) and its scenario, or None when gone."""
    pack_name, _, rest = result.id.partition("/")
    folder = rest.rsplit("#", 1)[0]
    pack = packs.get(pack_name)
    if pack is None:
        return None
    try:
        scenario = pack.scenario(folder)  # a folder the pack does not have, or a broken one: a PackError
    except (KeyError, InputError):
        return None
    return (pack.pack if isinstance(pack, StreamedSet) else pack), scenario


def _diagnosis(result: TestResult, trajectory: Trajectory) -> Diagnosis | None:
    """The diagnosis the result was graded on: stored with it, else the last one submitted, else the answer text."""
    stored = result.actual.diagnosis if result.actual is not None else None
    if stored is not None:
        try:
            return Diagnosis.model_validate(stored)
        except ValidationError:
            pass
    submitted = [s for s in trajectory if isinstance(s, ToolCallStep) and s.name == SUBMIT_TOOL and s.verified]
    for step in reversed(submitted):
        try:
            return Diagnosis.model_validate(step.args)
        except ValidationError:
            continue
    answers = [s.content for s in trajectory if isinstance(s, ResponseStep)]
    return parse_diagnosis_text(answers[-1]) if answers else None


def _copied(result: TestResult, old_id: str, why: str) -> TestResult:
    return result.model_copy(update={"notes": [*result.notes, NOT_REGRADED.format(why=why, run=old_id)]})
