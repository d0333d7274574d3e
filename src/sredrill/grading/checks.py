"""RCA checks: grade one diagnosis of one scenario against its answer key (DESIGN §5).

`grade_diagnosis` runs every check of DESIGN §5's table, in its order, and returns a `Grade`: one outcome
per check (passed, role, and a detail that says exactly why it failed), the same as `Signal`s, and the
`expected` / `actual` / `trajectory` / `reasoning` fields of the RunReport (DESIGN §8). Grading is pure:
no I/O, no clock, nothing about particular scenarios (STYLE #39): everything comes from the answer key,
the pack's vocabulary and what the agent did, as the harness served it (a tool call the agent only reported,
`verified` not True, satisfies no check).

A scenario whose answer key is in the upstream format (`Scenario.grading` is `compat`) is graded by
`compat.CompatGrader`, as the upstream scorer defines each field with sredrill's fixes; the grade says so
(`Grade.grading`). The checks themselves are `grader.Grader`'s methods.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from types import MappingProxyType

from pydantic import JsonValue

from sredrill.diagnosis import Diagnosis
from sredrill.errors import InputError, PackError
from sredrill.evidence import ScenarioEvidence
from sredrill.evidence.budget import DataBudget, served_points
from sredrill.evidence.items import ServedItem
from sredrill.grading.compat import CompatGrader
from sredrill.grading.grade import CheckId, CheckOutcome, Grade
from sredrill.grading.grader import Grader, predicted_modes
from sredrill.grading.grounding import ground
from sredrill.grading.keywords import KeywordAliases
from sredrill.grading.score import score_diagnosis
from sredrill.grading.sources import queried_sources, reported_sources
from sredrill.grading.trajectory_score import score_trajectory
from sredrill.results import Actual, Expected, GradingMode, Signal, SignalKind, SignalRole, TrajectorySummary
from sredrill.scenarios import Scenario, Vocabulary, get_domain
from sredrill.trajectory import Trajectory

__all__ = ["NO_DIAGNOSIS", "AnswerKeyConflict", "grade_diagnosis", "refuse_conflicts"]

NO_DIAGNOSIS = "no diagnosis: the agent returned nothing usable (neither a Diagnosis nor ROOT_CAUSE: text)"


class AnswerKeyConflict(PackError):
    """Raised when a scenario's answer key contradicts itself (`AnswerKey.conflicts()`): no diagnosis can pass it,
    so grading refuses it and the engine records the scenario's results as errored, not failed."""


def refuse_conflicts(scenario: Scenario) -> None:
    """Refuse a scenario whose answer key (sredrill format) contradicts itself: no diagnosis could pass it.

    Raises:
        AnswerKeyConflict: naming every conflict and the fix.
    """
    # An upstream key may name its own mode among forbidden categories (upstream compares coarse categories
    # there, so it never fires): compat mode reads it so. A key in sredrill's format means what it says.
    conflicts = scenario.answer.conflicts() if scenario.grading == GradingMode.SREDRILL else []
    if conflicts:
        raise AnswerKeyConflict(
            f"the answer key contradicts itself, so no diagnosis can pass it: {'; '.join(conflicts)}",
            path=f"{scenario.qualified_id}/answer.yml",
            hint="fix answer.yml (a failure mode is never also ruled out or forbidden; decisive names only "
            "failure_modes, refuting only ruled_out), then check with: sredrill scenarios lint --pack PATH",
        )


def grade_diagnosis(
    scenario: Scenario,
    diagnosis: Diagnosis | None,
    trajectory: Trajectory,
    *,
    axis: int,
    returned_metrics: Collection[str],
    vocabulary: Vocabulary,
    loops: int | None = None,
    no_diagnosis: str | None = None,
    served: Mapping[str, ServedItem] | None = None,
    budget: DataBudget | None = None,
) -> Grade:
    """Grade one diagnosis of one scenario.

    Args:
        scenario: the scenario, loaded by `load_pack` (so its answer's names are canonical).
        diagnosis: what the agent concluded; None when it returned nothing usable (every diagnosis check
            then fails with `NO_DIAGNOSIS`; the checks on the trajectory still say what the agent did).
        trajectory: every step of the run; only the tool calls the harness served (`verified`) count as
            queries or executed actions (a call the agent only reported is named in details, nothing more).
        axis: 1 (`full` backend) or 2 (`selective`); in Axis 2, `ruling_out` and `required_queries` gate.
        returned_metrics: metric names the toolset actually returned to the agent (the selective
            backend's audit log); `required_queries` checks against it.
        vocabulary: the pack's vocabulary (failure modes, aliases, `pack.yml` keyword aliases).
        loops: investigation loops as the connector reported them; None to count them from thinking steps.
        no_diagnosis: why `diagnosis` is None, when known (the agent's answer line was rejected:
            `RunResult.rejected_answer`); the diagnosis checks then say so instead of "returned nothing usable".
        served: every evidence item the run's toolset served, by id (`RcaToolset.served_items()`): what the
            diagnosis's citations are checked against; None = nothing was served.
        budget: the scenario's data budget (`RcaToolset.data_budget`), which the Axis 2 `data_budget` gate
            holds the distinct series points of `served` to; default: derived here from the scenario.

    Returns:
        The grade; `grade.passed` is True when every gate passed.

    Raises:
        InputError: `axis` is not 1 or 2.
        AnswerKeyConflict: the scenario's answer key (sredrill format) contradicts itself.
    """
    if axis not in (1, 2):
        raise InputError(f"axis must be 1 or 2, got {axis!r}", field="axis", allowed=["1", "2"])
    answer = scenario.answer
    refuse_conflicts(scenario)
    expected_modes = scenario.failure_modes or vocabulary.resolve_all([scenario.metadata.failure_mode])
    domain = get_domain(scenario.domain)
    trajectory_score = score_trajectory(
        trajectory,
        optimal=answer.optimal_trajectory,
        max_loops=answer.max_investigation_loops,
        loops=loops,
        legacy=domain.legacy_actions,
    )
    compat = scenario.grading == GradingMode.COMPAT
    served = served if served is not None else MappingProxyType({})
    grader = (CompatGrader if compat else Grader)(
        scenario=scenario,
        domain=domain,
        diagnosis=diagnosis,
        no_diagnosis=f"no diagnosis: {no_diagnosis}" if diagnosis is None and no_diagnosis else NO_DIAGNOSIS,
        vocabulary=vocabulary,
        aliases=KeywordAliases.of(vocabulary.keyword_aliases),
        expected_modes=frozenset(expected_modes),
        predicted=predicted_modes(diagnosis.failure_modes if diagnosis else (), vocabulary),
        queried=queried_sources(trajectory, domain),
        reported=reported_sources(trajectory, domain),
        returned=frozenset(returned_metrics),
        axis2_role=SignalRole.GATE if axis == 2 else SignalRole.OBSERVE,
        served=served,
        grounding=ground(diagnosis, answer, served, vocabulary, frozenset(expected_modes)),
    )
    # Each Axis 2 list is None when the answer does not define that check (the check is then absent).
    missing_ruling = grader.missing_ruling_out() if answer.ruling_out_keywords or answer.ruled_out else None
    missing_queries = grader.missing_queries() if answer.required_queries else None
    checks = grader.run(trajectory_score, missing_ruling, missing_queries)
    if axis == 2:
        # Axis 2 measures choosing: an agent served more than the scenario's budget did not choose. (On Axis 1
        # every query serves everything, so the count would say nothing there.)
        checks = _with_budget(checks, budget or ScenarioEvidence(scenario, vocabulary).data_budget, served)
    reasoning = _reasoning(checks, missing_ruling, missing_queries)
    return Grade(
        checks=MappingProxyType(checks),
        signals=tuple(
            Signal(
                kind=SignalKind.CHECK,
                name=check_id,
                role=outcome.role,
                passed=outcome.passed,
                message="" if outcome.passed else outcome.detail,
            )
            for check_id, outcome in checks.items()
        ),
        expected=Expected(category=answer.root_cause_category.value, failure_modes=sorted(expected_modes)),
        actual=Actual(
            category=diagnosis.category.value if diagnosis and diagnosis.category else None,
            failure_modes=list(grader.predicted.shown),
            root_cause=diagnosis.root_cause if diagnosis else None,
            diagnosis=diagnosis.model_dump(mode="json") if diagnosis else None,
        ),
        trajectory=TrajectorySummary(
            tool_calls=list(trajectory_score.tool_calls),
            sequencing_ok=trajectory_score.sequencing_ok,
            calibration_ok=trajectory_score.calibration_ok,
            efficiency_score=trajectory_score.efficiency_score,
            loops=trajectory_score.loops,
        ),
        reasoning=reasoning,
        redundant_calls=trajectory_score.redundant_calls,
        grading=scenario.grading,
        grounding=grader.grounding,
        score=score_diagnosis(grader, checks, trajectory_score.efficiency_score),
    )


def _with_budget(
    checks: dict[str, CheckOutcome], budget: DataBudget, served: Mapping[str, ServedItem]
) -> dict[str, CheckOutcome]:
    """The checks with the `data_budget` gate after the other Axis 2 gates (before the observed trajectory
    checks), so `failure_reason` keeps DESIGN §5's order."""
    used = served_points(served)
    detail = budget.describe(used)
    outcome = CheckOutcome(
        passed=used <= budget.points,
        role=SignalRole.GATE,
        detail=detail
        if used <= budget.points
        else f"over the data budget: {detail}; an agent that reads everything has not chosen: list what there is, "
        "then query the series that can decide (one instance, one statistic, a window) instead of all of them",
    )
    out: dict[str, CheckOutcome] = {}
    for check_id, check in checks.items():
        if check_id == CheckId.TRAJECTORY_SEQUENCING or (
            check_id == CheckId.TRAJECTORY_CALIBRATION and CheckId.DATA_BUDGET not in out
        ):
            out.setdefault(CheckId.DATA_BUDGET, outcome)
        out[check_id] = check
    out.setdefault(CheckId.DATA_BUDGET, outcome)
    return out


def _reasoning(
    checks: Mapping[str, CheckOutcome], missing_ruling: list[str] | None, missing_queries: list[str] | None
) -> Mapping[str, JsonValue] | None:
    """The seed's ReasoningScore from the two Axis 2 checks; None when the answer defines neither."""
    ruling = checks.get(CheckId.RULING_OUT)
    queries = checks.get(CheckId.REQUIRED_QUERIES)
    if ruling is None and queries is None:
        return None
    known = [c.passed for c in (ruling, queries) if c is not None]
    return MappingProxyType(
        {
            "ruling_out_ok": ruling.passed if ruling else None,
            "queries_ok": queries.passed if queries else None,
            "missing_ruling_out": list(missing_ruling or ()),
            "missing_queries": list(missing_queries or ()),
            "reasoning_score": sum(known) / len(known),
        }
    )
