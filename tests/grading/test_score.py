"""The score beside the gate (grading/score.py): each component's rule, the weights, and the score of real grades."""

from __future__ import annotations

from typing import Any

import pytest

from sredrill.diagnosis import Category, Diagnosis
from sredrill.grading import Grade, grade_diagnosis
from sredrill.grading.grade import ScoreComponent
from sredrill.grading.score import WEIGHTS, combine, modes_score, score_parts
from sredrill.scenarios import Pack
from tests.grading.agent_output import cite, diagnosis, trajectory
from tests.grading.served import BACKUP, CONNECTIONS, DEFAULT, SQL
from tests.support.scenario_builder import PackWriter, only

ANSWER: dict[str, Any] = {
    "failure_mode": "replication_lag",
    "failure_modes": ["replication_lag"],
    "root_cause_category": "resource_exhaustion",
    "required_keywords": ["replication lag"],
    "required_evidence_sources": ["aws_performance_insights"],
    "ruled_out": ["connection_exhaustion", "cpu_saturation"],
    "max_investigation_loops": 2,
}


def parts(**changes: Any) -> dict[str, float]:
    """The components of an answer that got everything right, with `changes` to score_parts' arguments."""
    args: dict[str, Any] = {
        "expected": {"replication_lag"},
        "predicted": {"replication_lag"},
        "location_ok": True,
        "citations_ok": True,
        "supported": {"replication_lag"},
        "ruled_out": ["connection_exhaustion", "cpu_saturation"],
        "refuted": {"connection_exhaustion", "cpu_saturation"},
        "ruling_out_ok": True,
        "efficiency": 1.0,
    }
    args.update(changes)
    return dict(score_parts(**args).components)


def test_the_weights_sum_to_one_and_a_perfect_answer_scores_one() -> None:
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)
    assert list(WEIGHTS) == [c.value for c in ScoreComponent]
    perfect = combine(dict.fromkeys(ScoreComponent, 1.0))
    assert perfect.value == 1.0 and set(perfect.components.values()) == {1.0}
    assert combine(dict.fromkeys(ScoreComponent, 0.0)).value == 0.0


def test_the_score_is_the_weighted_mean_of_its_components() -> None:
    s = combine({"modes": 1.0, "location": 0.0, "evidence": 0.5, "ruling_out": 1.0, "efficiency": 0.5})
    assert s.value == pytest.approx(0.35 + 0.25 * 0.5 + 0.15 + 0.10 * 0.5)


def test_a_missing_component_is_refused() -> None:
    with pytest.raises(ValueError, match="score components missing: efficiency"):
        combine({"modes": 1.0, "location": 1.0, "evidence": 1.0, "ruling_out": 1.0})


def test_modes_is_the_jaccard_of_predicted_and_expected() -> None:
    assert modes_score({"a", "b"}, {"a", "b"}) == 1.0
    assert modes_score({"a", "b"}, {"a"}) == 0.5  # half of a compositional fault
    assert modes_score({"a"}, {"a", "c"}) == 0.5  # one extra mode
    assert modes_score({"a"}, {"c"}) == 0.0
    assert modes_score({"a"}, {"a"}, unknown=1) == 0.5  # a name the vocabulary does not know counts
    assert modes_score({"a"}, ()) == 0.0


def test_a_mode_both_diagnosed_and_ruled_out_scores_zero_on_modes() -> None:
    assert modes_score({"a", "b"}, {"a", "b"}, dismissed={"b"}) == 0.0
    assert modes_score({"a"}, {"a"}, dismissed={"z"}) == 1.0  # dismissing another mode is fine


def test_location_is_one_or_zero() -> None:
    assert parts()["location"] == 1.0
    assert parts(location_ok=False)["location"] == 0.0


def test_evidence_is_the_share_of_backed_modes_and_zero_when_a_citation_is_invalid() -> None:
    two = {"cpu_saturation", "storage_full"}
    assert parts(expected=two, predicted=two, supported={"cpu_saturation"})["evidence"] == 0.5
    assert parts(expected=two, predicted=two, supported=two)["evidence"] == 1.0
    assert parts(citations_ok=False)["evidence"] == 0.0  # one false fact voids the evidence
    assert parts(supported=set())["evidence"] == 0.0


def test_ruling_out_is_the_share_refuted_and_one_when_none_is_asked() -> None:
    assert parts(refuted={"cpu_saturation"})["ruling_out"] == 0.5
    assert parts(refuted=set())["ruling_out"] == 0.0
    assert parts(ruled_out=[], refuted=set(), ruling_out_ok=None)["ruling_out"] == 1.0
    # Keywords only (compatibility mode): the ruling_out check's outcome.
    assert parts(ruled_out=[], refuted=set(), ruling_out_ok=False)["ruling_out"] == 0.0


def test_efficiency_is_the_trajectory_score() -> None:
    assert parts(efficiency=0.5)["efficiency"] == 0.5


# -- the score of real grades (grade_diagnosis over a one-scenario pack) ----------------------------------------


@pytest.fixture
def pack(write_pack: PackWriter) -> Pack:
    return write_pack(**ANSWER)


def grade(pack: Pack, d: Diagnosis | None) -> Grade:
    t = trajectory("get_alert", "query_metrics", "get_events", "get_performance_insights")
    return grade_diagnosis(only(pack), d, t, axis=1, returned_metrics=set(), vocabulary=pack.vocabulary, served=DEFAULT)


def answer(**changes: Any) -> Diagnosis:
    fields: dict[str, Any] = {
        "category": Category.RESOURCE_EXHAUSTION,
        "failure_modes": ("replication_lag",),
        "claims": (
            ("The top statement carries the load", (cite(SQL, "above", 0.5),)),
            ("A backup ran in the window", (cite(BACKUP),)),
        ),
        "ruled_out": (
            ("connection_exhaustion", "connections stay level", (cite(CONNECTIONS, "flat"),)),
            ("cpu_saturation", "no CPU wait dominates", (cite(SQL),)),
        ),
    }
    fields.update(changes)
    return diagnosis("Replication lag: the replica cannot replay WAL fast enough.", **fields)


def test_a_grounded_right_answer_scores_high(pack: Pack) -> None:
    g = grade(pack, answer())
    assert g.score is not None and g.grounding is not None, "grading/checks.py must set Grade.score and grounding"
    assert dict(g.score.components) == {
        "modes": 1.0, "location": 1.0, "evidence": 1.0, "ruling_out": 1.0, "efficiency": 1.0,
    }  # fmt: skip
    assert g.score.value == 1.0
    assert (g.grounding.claims, g.grounding.uncited) == (2, 0)


def test_a_wrong_or_ungrounded_answer_loses_the_components_it_misses(pack: Pack) -> None:
    wrong = grade(pack, answer(failure_modes=("cpu_saturation",), claims=(("CPU is busy", ()),)))
    assert wrong.score is not None
    c = wrong.score.components
    assert (c["modes"], c["evidence"]) == (0.0, 0.0)
    assert wrong.grounding is not None and wrong.grounding.uncited == 1
    # A false fact fails `citations`: evidence is 0 even though the mode is right.
    false_fact = grade(pack, answer(claims=(("The load falls", (cite(SQL, "below", 0.1),)),)))
    assert false_fact.score is not None and false_fact.score.components["evidence"] == 0.0
    assert false_fact.score.components["modes"] == 1.0
    # Diagnosed and ruled out at once.
    both = grade(pack, answer(ruled_out=(("replication_lag", "no", (cite(SQL),)),)))
    assert both.score is not None and both.score.components["modes"] == 0.0


def test_no_diagnosis_scores_zero(pack: Pack) -> None:
    g = grade(pack, None)
    assert g.score is not None and g.score.value == 0.0 and set(g.score.components.values()) == {0.0}
