"""The score of one diagnosis: a number in [0, 1] with its components, beside the pass gate (issue 16).

The gate says whether an answer is right; the score says how far it got. Each component is in [0, 1]:

- `modes` (weight 0.35): Jaccard of the predicted and the expected failure modes, |P ∩ E| / |P ∪ E| (a name the
  vocabulary does not know counts in the union); 0 when a mode is both diagnosed and ruled out.
- `location` (0.15): 1 when the `location` check passed (it does when the answer key names no location), else 0.
- `evidence` (0.25): the share of the expected modes that a claim supporting them backs with decisive evidence
  whose fact holds; 0 when the `citations` check failed (a false fact, an item never served, too many citations).
- `ruling_out` (0.15): the share of the key's `ruled_out` hypotheses that a ruled-out entry refutes with a
  citation; a key with only ruling-out keywords (compatibility mode): 1 when the `ruling_out` check passed, else
  0; 1 when the key asks for no ruling out.
- `efficiency` (0.10): the trajectory's efficiency score (the mean of sequencing and calibration,
  `trajectory_score.TrajectoryScore.efficiency_score`).

score = Σ weight · component (the weights sum to 1). No diagnosis scores 0 on every component. The score is
reported (`TestResult.score`, `score_components`), never gated: pass@1 stays the headline.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from sredrill.grading.grade import CheckId, CheckOutcome, Score, ScoreComponent

if TYPE_CHECKING:
    from sredrill.grading.grader import Grader

__all__ = ["WEIGHTS", "combine", "modes_score", "score_diagnosis", "score_parts"]

WEIGHTS: Final[Mapping[str, float]] = MappingProxyType(
    {
        ScoreComponent.MODES: 0.35,
        ScoreComponent.LOCATION: 0.15,
        ScoreComponent.EVIDENCE: 0.25,
        ScoreComponent.RULING_OUT: 0.15,
        ScoreComponent.EFFICIENCY: 0.10,
    }
)
"""Each component's weight in the score (see the module docstring's table)."""


def combine(components: Mapping[str, float]) -> Score:
    """The weighted mean of the components (every `ScoreComponent` must be given), each rounded to 4 places."""
    missing = [c.value for c in ScoreComponent if c not in components]
    if missing:
        raise ValueError(f"score components missing: {', '.join(missing)}")
    parts = {c.value: round(min(1.0, max(0.0, float(components[c]))), 4) for c in ScoreComponent}
    value = sum(WEIGHTS[name] * v for name, v in parts.items())
    return Score(value=round(value, 4), components=MappingProxyType(parts))


def modes_score(
    expected: Collection[str], predicted: Collection[str], *, unknown: int = 0, dismissed: Collection[str] = ()
) -> float:
    """Jaccard of the predicted and expected modes; `unknown` names add to the union; 0 when a predicted mode
    is also dismissed (diagnosed and ruled out at once) or nothing is predicted."""
    p, e = set(predicted), set(expected)
    if p & set(dismissed):
        return 0.0
    union = len(p | e) + unknown
    return len(p & e) / union if union else 0.0


def score_parts(
    *,
    expected: Collection[str],
    predicted: Collection[str],
    unknown: int = 0,
    dismissed: Collection[str] = (),
    location_ok: bool,
    citations_ok: bool,
    supported: Collection[str],
    ruled_out: Collection[str],
    refuted: Collection[str],
    ruling_out_ok: bool | None,
    efficiency: float,
) -> Score:
    """The score from what grading established (the module docstring defines each component).

    Args:
        expected: the expected failure modes (canonical).
        predicted: the predicted ones the vocabulary knows (canonical, sets expanded).
        unknown: how many predicted names the vocabulary does not know.
        dismissed: the modes the diagnosis's ruled-out entries name.
        location_ok: the `location` check passed.
        citations_ok: the `citations` check passed.
        supported: expected modes a supporting claim backs with decisive evidence whose fact holds.
        ruled_out: the answer key's `ruled_out` hypotheses.
        refuted: those a ruled-out entry refutes with a citation.
        ruling_out_ok: the `ruling_out` check's outcome, None when the key defines no ruling out.
        efficiency: the trajectory's efficiency score.
    """
    e = set(expected)
    evidence = len(set(supported) & e) / len(e) if citations_ok and e else 0.0
    if ruled_out:
        ruling = len(set(refuted) & set(ruled_out)) / len(set(ruled_out))
    else:
        ruling = 1.0 if ruling_out_ok is None else float(ruling_out_ok)
    return combine(
        {
            ScoreComponent.MODES: modes_score(expected, predicted, unknown=unknown, dismissed=dismissed),
            ScoreComponent.LOCATION: float(location_ok),
            ScoreComponent.EVIDENCE: evidence,
            ScoreComponent.RULING_OUT: ruling,
            ScoreComponent.EFFICIENCY: efficiency,
        }
    )


def score_diagnosis(grader: Grader, checks: Mapping[str, CheckOutcome], efficiency: float) -> Score:
    """The score of the diagnosis `grader` graded, given its checks' outcomes (`Grader.run`) and the trajectory's
    efficiency score; 0 on every component when there is no diagnosis."""
    if grader.diagnosis is None:
        return combine(dict.fromkeys(ScoreComponent, 0.0))
    location = checks.get(CheckId.LOCATION)
    citations = checks.get(CheckId.CITATIONS)
    ruling = checks.get(CheckId.RULING_OUT)
    g = grader.grounding
    return score_parts(
        expected=grader.expected_modes,
        predicted=grader.predicted.modes,
        unknown=len(grader.predicted.unknown),
        dismissed=grader.dismissed_modes(),
        location_ok=location is None or location.passed,
        citations_ok=citations is None or citations.passed,
        supported=g.supported,
        ruled_out=grader.scenario.answer.ruled_out,
        refuted=g.refuted,
        ruling_out_ok=ruling.passed if ruling is not None else None,
        efficiency=efficiency,
    )
