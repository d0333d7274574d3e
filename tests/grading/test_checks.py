"""The RCA checks of DESIGN §5: each one passing, and failing for the right reason with the right detail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from sredrill.diagnosis import Category, Diagnosis
from sredrill.errors import InputError
from sredrill.evidence.items import ServedItem
from sredrill.grading import CheckId, Grade, grade_diagnosis
from sredrill.grading.checks import NO_DIAGNOSIS
from sredrill.results import SignalKind, SignalRole, TestResult, TestStatus
from sredrill.scenarios import Pack
from sredrill.trajectory import Trajectory
from tests.grading.agent_output import cite, diagnosis, trajectory
from tests.grading.served import BACKUP, CONNECTIONS, CPU, DEFAULT, SQL, STORAGE
from tests.support.scenario_builder import PackWriter, only

# A key with sredrill's keys (`failure_modes`): graded in sredrill mode (tests/grading/test_compat.py has the other).
ANSWER: dict[str, Any] = {
    "failure_mode": "replication_lag",
    "failure_modes": ["replication_lag"],
    "root_cause_category": "resource_exhaustion",
    "required_keywords": ["replication lag", "WAL", "replica"],
    "forbidden_categories": ["cpu_saturation", "infrastructure"],
    "forbidden_keywords": ["cpu saturation", "two root causes"],
    "required_evidence_sources": ["aws_rds_events", "aws_performance_insights"],
    "optimal_trajectory": ["query_grafana_metrics", "query_grafana_logs"],
    "max_investigation_loops": 2,
}
GOOD_TRAJECTORY = ("get_alert", "query_metrics", "get_events", "get_performance_insights")


def good(**changes: Any) -> Diagnosis:
    fields: dict[str, Any] = {
        "root_cause": "Replication lag: a write-heavy batch produced WAL faster than the replica could replay it.",
        "category": Category.RESOURCE_EXHAUSTION,
        "failure_modes": ("replication_lag",),
        "causal_chain": ("batch job writes", "WAL volume grows", "replica replay falls behind"),
        "claims": (
            ("WAL generation spiked with the batch job", (cite(SQL, "above", 0.5),)),
            ("No maintenance or failover event in the window", (cite(BACKUP),)),
        ),
        # Not a mode any fixture here expects: diagnosing a mode and ruling it out fails `failure_modes`.
        "ruled_out": (("connection_exhaustion", "connections stay level", (cite(CONNECTIONS, "flat"),)),),
        "report": "The replica lags because of WAL volume.",
    }
    fields.update(changes)
    return diagnosis(fields.pop("root_cause"), **fields)


@pytest.fixture
def pack(write_pack: PackWriter) -> Pack:
    return write_pack(**ANSWER)


def grade(
    pack: Pack,
    d: Diagnosis | None,
    t: Trajectory | None = None,
    *,
    axis: int = 1,
    returned: set[str] | None = None,
    loops: int | None = None,
    served: Mapping[str, ServedItem] = DEFAULT,
) -> Grade:
    """Grade `d` as a run that called `t` (default: every tool) and was served `served` (default: everything)."""
    return grade_diagnosis(
        only(pack),
        d,
        t if t is not None else trajectory(*GOOD_TRAJECTORY),
        axis=axis,
        returned_metrics=returned or set(),
        vocabulary=pack.vocabulary,
        loops=loops,
        served=served,
    )


def test_a_correct_diagnosis_passes_every_check(pack: Pack) -> None:
    g = grade(pack, good())
    assert {k: c.passed for k, c in g.checks.items() if not c.passed} == {}
    assert g.passed and g.failure_reason is None and g.gate_fraction == 1.0
    assert list(g.checks) == [
        "root_cause_present",
        "category",
        "failure_modes",
        "citations",
        "decisive_evidence",
        "location",
        "forbidden_categories",
        "required_keywords",
        "forbidden_keywords",
        "evidence_queried",
        "evidence_cited",
        "trajectory_sequencing",
        "trajectory_calibration",
        "uncited_claims",
    ]
    assert g.checks["required_keywords"].detail == "found: replication lag, WAL, replica"
    assert g.checks["citations"].detail == "3 item(s) cited, every fact holds"
    assert g.checks["decisive_evidence"].detail == "backed by decisive evidence: replication_lag"
    assert g.checks["location"].detail == "the answer key names no location"
    assert g.checks["uncited_claims"].detail == "every claim cites"
    for observed in ("required_keywords", "forbidden_keywords", "trajectory_sequencing", "uncited_claims"):
        assert g.checks[observed].role is SignalRole.OBSERVE, observed


def test_signals_mirror_the_checks(pack: Pack) -> None:
    g = grade(pack, good(category=Category.HEALTHY))
    assert [s.name for s in g.signals] == list(g.checks)
    assert all(s.kind is SignalKind.CHECK for s in g.signals)
    by_name = {s.name: s for s in g.signals}
    assert by_name["category"].passed is False
    assert by_name["category"].message == "expected resource_exhaustion, got healthy"
    assert by_name["required_keywords"].message == ""


def test_expected_actual_and_trajectory_fields(pack: Pack) -> None:
    g = grade(pack, good(failure_modes=("replication_lag", "mystery")), loops=3)
    assert g.expected.model_dump() == {"category": "resource_exhaustion", "failure_modes": ["replication_lag"]}
    assert g.actual.category == "resource_exhaustion"
    assert g.actual.failure_modes == ["replication_lag", "mystery"]
    assert g.actual.root_cause is not None and g.actual.root_cause.startswith("Replication lag")
    assert g.trajectory.tool_calls == list(GOOD_TRAJECTORY)
    assert (g.trajectory.sequencing_ok, g.trajectory.calibration_ok, g.trajectory.loops) == (True, False, 3)
    assert g.trajectory.efficiency_score == 0.5
    assert g.reasoning is None


# root_cause_present


@pytest.mark.parametrize(
    ("root_cause", "detail"),
    [
        ("", "the root cause is empty"),
        ("   ", "the root cause is empty"),
        ("Unknown.", "the root cause says nothing: 'Unknown.'"),
        ("Unable to determine root cause", "the root cause says nothing: 'Unable to determine root cause'"),
    ],
)
def test_root_cause_present_fails_on_an_empty_or_placeholder_root_cause(
    pack: Pack, root_cause: str, detail: str
) -> None:
    g = grade(pack, good(root_cause=root_cause))
    assert not g.checks["root_cause_present"].passed
    assert g.checks["root_cause_present"].detail == detail
    assert g.failure_reason == f"root_cause_present: {detail}"


# category


def test_category_fails_on_a_wrong_category(pack: Pack) -> None:
    g = grade(pack, good(category=Category.HEALTHY))
    assert g.checks["category"].detail == "expected resource_exhaustion, got healthy"
    assert g.failure_reason == "category: expected resource_exhaustion, got healthy"


def test_category_fails_when_none_is_given(pack: Pack) -> None:
    g = grade(pack, good(category=None))
    assert not g.checks["category"].passed
    assert g.checks["category"].detail == "no category given (expected resource_exhaustion)"


# failure_modes


def test_failure_modes_fails_on_a_different_set(pack: Pack) -> None:
    g = grade(pack, good(failure_modes=("cpu_saturation",)))
    assert g.checks["failure_modes"].detail == (
        "expected replication_lag, got cpu_saturation (missing: replication_lag; unexpected: cpu_saturation)"
    )


def test_failure_modes_fails_on_an_unknown_name_with_a_suggestion(pack: Pack) -> None:
    g = grade(pack, good(failure_modes=("replicaton_lag",)))
    assert not g.checks["failure_modes"].passed
    assert g.checks["failure_modes"].detail == (
        "unknown failure mode 'replicaton_lag' (did you mean 'replication_lag'?) (expected replication_lag)"
    )


def test_failure_modes_says_when_a_category_is_given_as_a_failure_mode(pack: Pack) -> None:
    detail = grade(pack, good(failure_modes=("resource_exhaustion",))).checks["failure_modes"].detail
    assert detail.startswith("unknown failure mode 'resource_exhaustion' (a category, not a failure mode; known: ")


def test_failure_modes_fails_when_none_are_given(pack: Pack) -> None:
    g = grade(pack, good(failure_modes=()))
    assert g.checks["failure_modes"].detail == "no failure modes given (expected replication_lag)"


def test_failure_modes_accepts_spelling_variants_of_a_name(pack: Pack) -> None:
    assert grade(pack, good(failure_modes=("Replication Lag",))).checks["failure_modes"].passed
    assert grade(pack, good(failure_modes=("replication-lag", "replication_lag"))).checks["failure_modes"].passed


@pytest.fixture
def dual(write_pack: PackWriter) -> Pack:
    return write_pack(
        failure_mode="cpu_saturation",
        failure_modes=["cpu_saturation", "storage_exhaustion"],
        root_cause_category="resource_exhaustion",
        required_keywords=["CPU"],
    )


@pytest.mark.parametrize(
    "predicted",
    [
        ("cpu_saturation", "storage_full"),
        ("storage_full", "cpu_saturation"),
        ("storage_exhaustion", "cpu_saturation"),
        ("dual_resource_exhaustion",),
        ("cpu_saturation", "dual_resource_exhaustion"),
    ],
)
def test_compositional_failure_modes_are_an_order_free_set_with_aliases(dual: Pack, predicted: tuple[str]) -> None:
    assert only(dual).failure_modes == ("cpu_saturation", "storage_full")
    g = grade(dual, good(root_cause="CPU saturation and full storage", failure_modes=predicted))
    assert g.checks["failure_modes"].passed, g.checks["failure_modes"].detail
    assert g.checks["failure_modes"].detail == "cpu_saturation, storage_full"
    # a set's name backs each of its modes with the claims that support the diagnosis
    assert g.checks["decisive_evidence"].detail == "backed by decisive evidence: cpu_saturation, storage_full"


def test_one_cause_of_a_compositional_fault_is_not_enough(dual: Pack) -> None:
    g = grade(dual, good(root_cause="CPU", failure_modes=("cpu_saturation",)))
    assert g.checks["failure_modes"].detail == (
        "expected cpu_saturation, storage_full, got cpu_saturation (missing: storage_full)"
    )


def test_a_failure_mode_set_in_scenario_yml_is_the_expected_set(write_pack: PackWriter) -> None:
    p = write_pack(
        failure_mode="dual_resource_exhaustion",
        root_cause_category="resource_exhaustion",
        required_keywords=["CPU"],
        ruled_out=[],  # a sredrill key: sredrill mode, where the mode scenario.yml names gates
    )
    g = grade(p, good(root_cause="CPU and storage", failure_modes=("storage_full", "cpu_saturation")))
    assert g.expected.failure_modes == ["cpu_saturation", "storage_full"]
    assert g.checks["failure_modes"].passed


def test_failure_modes_a_pack_adds_in_pack_yml(write_pack: PackWriter) -> None:
    p = write_pack(
        failure_mode="lock_contention",
        root_cause_category="resource_exhaustion",
        required_keywords=["lock"],
        pack_yml={"failure_modes": {"lock_contention": {"category": "resource_exhaustion", "aliases": ["lock_storm"]}}},
    )
    assert grade(p, good(root_cause="A lock storm", failure_modes=("lock_storm",))).checks["failure_modes"].passed
    detail = (
        grade(p, good(root_cause="A lock storm", failure_modes=("lock_contension",))).checks["failure_modes"].detail
    )
    assert (
        detail == "unknown failure mode 'lock_contension' (did you mean 'lock_contention'?) (expected lock_contention)"
    )


# forbidden_categories


def test_forbidden_categories_fires_on_a_predicted_failure_mode(pack: Pack) -> None:
    g = grade(pack, good(failure_modes=("replication_lag", "cpu_saturation")))
    assert g.checks["forbidden_categories"].detail == "forbidden prediction: failure mode 'cpu_saturation'"


def test_forbidden_categories_fires_on_the_predicted_category(pack: Pack) -> None:
    g = grade(pack, good(category=Category.INFRASTRUCTURE))
    assert g.checks["forbidden_categories"].detail == "forbidden prediction: category 'infrastructure'"
    # and not only because the category is wrong: both checks fail, each for its own reason
    assert g.checks["category"].detail == "expected resource_exhaustion, got infrastructure"


def test_forbidden_categories_passes_when_nothing_forbidden_is_predicted(pack: Pack) -> None:
    assert grade(pack, good()).checks["forbidden_categories"].detail == "none of: cpu_saturation, infrastructure"


def test_forbidden_aliases_are_resolved_before_matching(write_pack: PackWriter) -> None:
    p = write_pack(
        failure_mode="cpu_saturation",
        root_cause_category="resource_exhaustion",
        required_keywords=["CPU"],
        forbidden_categories=["storage_exhaustion"],
        ruled_out=[],
    )
    g = grade(p, good(root_cause="CPU", failure_modes=("cpu_saturation", "storage_full")))
    assert g.checks["forbidden_categories"].detail == "forbidden prediction: failure mode 'storage_full'"


# required_keywords


def test_required_keywords_fails_with_the_missing_ones(pack: Pack) -> None:
    d = good(
        root_cause="Replication lag grew.",
        causal_chain=(),
        claims=(("x", ("aws_rds_events", "aws_performance_insights")),),
        report="",
    )
    g = grade(pack, d)
    assert g.checks["required_keywords"].detail == (
        "missing keywords: WAL, replica (looked in root_cause, causal_chain, claims, report)"
    )


@pytest.mark.parametrize("where", ["root_cause", "causal_chain", "claims", "report"])
def test_required_keywords_are_found_in_each_graded_field(pack: Pack, where: str) -> None:
    text = "Replication lag: WAL piled up on the replica."
    fields: dict[str, Any] = {"root_cause": "See below.", "causal_chain": (), "claims": (), "report": ""}
    fields[where] = {"causal_chain": (text,), "claims": ((text, ()),)}.get(where, text)
    assert grade(pack, good(**fields)).checks["required_keywords"].passed


def test_required_keywords_are_not_found_in_ruled_out(pack: Pack) -> None:
    d = good(
        root_cause="Something.", causal_chain=(), claims=(), report="", ruled_out=(("replication lag", "WAL replica"),)
    )
    assert not grade(pack, d).checks["required_keywords"].passed


# forbidden_keywords


def test_forbidden_keywords_fails_and_says_where(pack: Pack) -> None:
    d = good(
        causal_chain=("batch job writes", "CPU saturation follows"),
        claims=(
            ("There are two root causes here", ("aws_performance_insights",)),
            ("events are quiet", ("aws_rds_events",)),
        ),
    )
    g = grade(pack, d)
    assert g.checks["forbidden_keywords"].detail == (
        "forbidden keywords found: 'cpu saturation' in causal_chain[1]; 'two root causes' in claims[0]"
    )


def test_ruling_something_out_never_trips_forbidden_keywords(pack: Pack) -> None:
    d = good(
        ruled_out=(("CPU saturation", "cpu saturation is a symptom: there are not two root causes"),),
        report="We considered CPU saturation and two root causes, and ruled both out.",
    )
    g = grade(pack, d)
    assert g.checks["forbidden_keywords"].passed
    assert g.checks["forbidden_keywords"].detail == "none of: cpu saturation, two root causes"


def test_forbidden_keyword_words_spread_over_sentences_do_not_trip(pack: Pack) -> None:
    d = good(root_cause="Replication lag: WAL outpaced the replica. CPU was normal; no saturation of storage.")
    assert grade(pack, d).checks["forbidden_keywords"].passed


def test_forbidden_keywords_use_the_packs_aliases(write_pack: PackWriter) -> None:
    p = write_pack(
        failure_mode="replication_lag",
        root_cause_category="resource_exhaustion",
        required_keywords=["replica"],
        forbidden_keywords=["failover"],
        ruled_out=[],
        pack_yml={"keyword_aliases": {"failover": ["failed over"]}},
    )
    g = grade(p, good(root_cause="The replica failed over.", claims=(("The primary failed over", ()),)))
    assert g.checks["forbidden_keywords"].detail == "forbidden keywords found: 'failover' in root_cause, claims[0]"


# evidence_queried


def test_evidence_queried_fails_when_a_required_source_was_never_queried(pack: Pack) -> None:
    g = grade(pack, good(), trajectory("get_alert", "query_metrics", "get_events"))
    assert g.checks["evidence_queried"].detail == (
        "never queried: aws_performance_insights (no successful call to get_performance_insights)"
    )


def test_a_failed_call_does_not_count_as_a_query(pack: Pack) -> None:
    g = grade(pack, good(), trajectory(*GOOD_TRAJECTORY, error={"get_events"}))
    assert g.checks["evidence_queried"].detail == "never queried: aws_rds_events (no successful call to get_events)"


def test_evidence_checks_pass_when_no_source_is_required(write_pack: PackWriter) -> None:
    p = write_pack(
        failure_mode="replication_lag", root_cause_category="resource_exhaustion", required_keywords=["replica"]
    )
    g = grade(p, good(claims=()), trajectory())
    assert g.checks["evidence_queried"].detail == "no evidence source is required"
    assert g.checks["evidence_cited"].detail == "no evidence source is required"
    assert g.checks["evidence_queried"].passed and g.checks["evidence_cited"].passed


# evidence_cited


def test_evidence_cited_fails_when_no_claim_cites_an_item_of_a_required_source(pack: Pack) -> None:
    d = good(claims=(("A backup ran", (cite(BACKUP),)), ("guess", ())))
    g = grade(pack, d)
    assert g.checks["evidence_cited"].detail == (
        "no claim cites an item of aws_performance_insights (claims cite items of: aws_rds_events; cite the ids "
        "tool results give, e.g. metric-3f9a1c2e4b, with a fact that holds)"
    )


def test_source_names_do_not_satisfy_evidence_cited_in_sredrill_mode(pack: Pack) -> None:
    # Upstream's way of citing (a source's name) proves nothing was read: only items count here
    # (test_compat.py: in compatibility mode the names still count).
    d = good(claims=(("WAL spiked", ("aws_performance_insights",)), ("quiet", ("aws_rds_events",))))
    g = grade(pack, d)
    assert not g.checks["evidence_cited"].passed
    assert g.checks["evidence_cited"].detail.startswith(
        "no claim cites an item of aws_rds_events, aws_performance_insights (claims cite items of: none;"
    )


def test_an_item_cited_with_a_false_fact_does_not_count_as_cited(pack: Pack) -> None:
    d = good(claims=(("WAL spiked", (cite(SQL, "above", 5),)), ("quiet", (cite(BACKUP),))))
    g = grade(pack, d)
    assert not g.checks["evidence_cited"].passed
    assert "no claim cites an item of aws_performance_insights" in g.checks["evidence_cited"].detail
    assert not g.checks["citations"].passed


def test_an_item_only_a_ruled_out_entry_cites_does_not_count_as_cited(pack: Pack) -> None:
    d = good(
        claims=(("quiet", (cite(BACKUP),)),),
        ruled_out=(("connection_exhaustion", "the query is light", (cite(SQL, "below", 1),)),),
    )
    assert "aws_performance_insights" in grade(pack, d).checks["evidence_cited"].detail


# ruling_out and required_queries (Axis 2)

AXIS2: dict[str, Any] = {
    **ANSWER,
    "ruling_out_keywords": ["failover", "WAL"],
    "ruled_out": ["cpu_saturation", "storage_exhaustion"],
    "required_queries": ["FreeStorageSpace", "CPUUtilization"],
    # These tests serve every item of the tiny scenario; the data budget is tested on its own (below).
    "data_budget": 10_000,
}


@pytest.fixture
def axis2(write_pack: PackWriter) -> Pack:
    return write_pack(**AXIS2)


def dismissing(*ruled: tuple[str, str], report: str = "") -> Diagnosis:
    return good(ruled_out=ruled, report=report)


FULL_RULING = (
    ("CPU saturation", "analytics query", (cite(CPU, "below", 50),)),
    ("storage_full", "plenty of free storage", (cite(STORAGE, "above", 1e10),)),
    ("failover", "no failover event; WAL is the driver"),
)


def test_axis2_checks_gate_in_axis_2_and_observe_in_axis_1(axis2: Pack) -> None:
    d = dismissing(("nothing", "none"))
    g1 = grade(axis2, d, axis=1)
    g2 = grade(axis2, d, axis=2)
    for check in ("ruling_out", "required_queries"):
        assert g1.checks[check].role is SignalRole.OBSERVE
        assert g2.checks[check].role is SignalRole.GATE
        assert not g1.checks[check].passed and not g2.checks[check].passed
    assert g1.passed
    assert not g2.passed
    assert g2.failure_reason is not None and g2.failure_reason.startswith("ruling_out: ")


def test_axis2_checks_are_absent_when_the_answer_does_not_define_them(pack: Pack) -> None:
    g = grade(pack, good(), axis=2)
    assert "ruling_out" not in g.checks and "required_queries" not in g.checks
    assert g.reasoning is None


def test_ruling_out_passes_by_name_or_alias_with_a_citation(axis2: Pack) -> None:
    g = grade(axis2, dismissing(*FULL_RULING), axis=2, returned={"FreeStorageSpace", "CPUUtilization"})
    assert g.checks["ruling_out"].passed, g.checks["ruling_out"].detail
    assert g.passed, g.failure_reason
    # the key's storage_exhaustion is an alias of storage_full: either name dismisses it
    alias = (
        ("cpu_saturation", "low", (cite(CPU, "below", 50),)),
        ("Storage exhaustion", "free space", (cite(STORAGE),)),
    )
    d = dismissing(*alias, ("failover", "none; WAL"))
    assert grade(axis2, d, axis=2).checks["ruling_out"].passed


def test_ruling_out_fails_with_what_was_not_dismissed(axis2: Pack) -> None:
    d = dismissing(("storage_full", "plenty of space", (cite(STORAGE, "above", 1e10),)), report="WAL; no failover.")
    g = grade(axis2, d, axis=2)
    assert g.checks["ruling_out"].detail == (
        "not ruled out: cpu_saturation (each needs a ruled_out entry naming it and citing an item whose fact "
        "refutes it); ruling-out keywords not found: failover, WAL (looked in ruled_out)"
    )


def test_a_ruled_out_entry_that_only_names_the_hypothesis_does_not_rule_it_out(axis2: Pack) -> None:
    d = dismissing(("CPU saturation", "CPU is fine"), *FULL_RULING[1:])
    g = grade(axis2, d, axis=2)
    assert g.checks["ruling_out"].detail == (
        "not ruled out: cpu_saturation (each needs a ruled_out entry naming it and citing an item whose fact "
        "refutes it); ruled_out[0] names cpu_saturation but cites no item that refutes it: cite an item served "
        "in this run with a fact that holds"
    )
    # citing an item with a fact that does not hold refutes nothing either (and fails `citations`)
    d = dismissing(("CPU saturation", "CPU is fine", (cite(CPU, "above", 50),)), *FULL_RULING[1:])
    g = grade(axis2, d, axis=2)
    assert g.checks["ruling_out"].detail.startswith("not ruled out: cpu_saturation ")
    assert g.checks["citations"].detail.startswith("ruled_out[0]: ")


def test_ruling_out_does_not_look_at_the_root_cause_claims_or_report(axis2: Pack) -> None:
    words = "Not CPU saturation, not storage exhaustion, not failover: WAL."
    d = good(root_cause=words, claims=((words, (cite(CPU, "flat"),)),), ruled_out=(), report=words)
    assert grade(axis2, d, axis=2).checks["ruling_out"].detail == (
        "not ruled out: cpu_saturation, storage_full (each needs a ruled_out entry naming it and citing an item "
        "whose fact refutes it); ruling-out keywords not found: failover, WAL (looked in ruled_out)"
    )


def test_a_category_to_rule_out_is_matched_by_its_name(write_pack: PackWriter) -> None:
    p = write_pack(**{**ANSWER, "ruled_out": ["infrastructure"]})
    assert only(p).answer.ruled_out == ["infrastructure"]
    backup = (cite(BACKUP),)
    assert grade(p, dismissing(("Infrastructure", "no event", backup)), axis=2).checks["ruling_out"].passed
    assert not grade(p, dismissing(("disk", "fine", backup)), axis=2).checks["ruling_out"].passed


def test_required_queries_fails_with_what_no_query_returned(axis2: Pack) -> None:
    g = grade(axis2, dismissing(*FULL_RULING), axis=2, returned={"CPUUtilization", "ReadIOPS"})
    assert g.checks["required_queries"].detail == (
        "never returned by a query: FreeStorageSpace (returned: CPUUtilization, ReadIOPS)"
    )
    assert g.failure_reason == g.checks["required_queries"].detail.join(["required_queries: ", ""])


def test_required_queries_compares_metric_names_case_insensitively(axis2: Pack) -> None:
    g = grade(axis2, dismissing(*FULL_RULING), axis=2, returned={"freestoragespace", "CPUUTILIZATION"})
    assert g.checks["required_queries"].passed
    assert g.checks["required_queries"].detail == "returned: FreeStorageSpace, CPUUtilization"


def test_required_queries_says_when_nothing_was_returned(axis2: Pack) -> None:
    detail = grade(axis2, good(), axis=2).checks["required_queries"].detail
    assert detail == "never returned by a query: FreeStorageSpace, CPUUtilization (returned: nothing)"


def test_reasoning_is_the_seeds_reasoning_score(axis2: Pack) -> None:
    g = grade(axis2, dismissing(*FULL_RULING), axis=2, returned={"CPUUtilization"})
    assert dict(g.reasoning or {}) == {
        "ruling_out_ok": True,
        "queries_ok": False,
        "missing_ruling_out": [],
        "missing_queries": ["FreeStorageSpace"],
        "reasoning_score": 0.5,
    }


def test_reasoning_with_only_ruling_out_defined(write_pack: PackWriter) -> None:
    p = write_pack(**{**ANSWER, "ruling_out_keywords": ["failover"]})
    g = grade(p, dismissing(("cpu", "fine")), axis=2)
    assert dict(g.reasoning or {}) == {
        "ruling_out_ok": False,
        "queries_ok": None,
        "missing_ruling_out": ["failover"],
        "missing_queries": [],
        "reasoning_score": 0.0,
    }


# trajectory_sequencing and trajectory_calibration


def test_trajectory_checks_observe_and_never_gate(pack: Pack) -> None:
    t = trajectory("think", "get_events", "think", "get_performance_insights", "think", "get_events")
    g = grade(pack, good(), t)
    seq, cal = g.checks["trajectory_sequencing"], g.checks["trajectory_calibration"]
    assert (seq.passed, seq.role, seq.detail) == (
        False,
        SignalRole.OBSERVE,
        "never executed: query_grafana_metrics (tools called: get_events, get_performance_insights)",
    )
    assert (cal.passed, cal.role, cal.detail) == (
        False,
        SignalRole.OBSERVE,
        "3 investigation loop(s), at most 2 expected",
    )
    assert g.passed
    assert g.redundant_calls == 1


def test_calibration_uses_the_loops_the_connector_reports(pack: Pack) -> None:
    t = trajectory("think", "get_events", "think", "get_performance_insights", "think", "get_events")
    assert grade(pack, good(), t, loops=2).checks["trajectory_calibration"].detail == (
        "2 investigation loop(s), at most 2 expected"
    )


def test_no_optimal_trajectory_means_no_sequencing_check(write_pack: PackWriter) -> None:
    p = write_pack(
        failure_mode="replication_lag", root_cause_category="resource_exhaustion", required_keywords=["replica"]
    )
    g = grade(p, good())
    assert "trajectory_sequencing" not in g.checks
    assert g.trajectory.sequencing_ok is None
    assert g.checks["trajectory_calibration"].detail == "1 investigation loop(s), at most 1 expected"


# a missing diagnosis


def test_a_missing_diagnosis_fails_every_diagnosis_gate_without_crashing(axis2: Pack) -> None:
    g = grade(axis2, None, axis=2, returned={"FreeStorageSpace", "CPUUtilization"})
    assert not g.passed
    assert g.failure_reason == f"root_cause_present: {NO_DIAGNOSIS}"
    for check in (
        "root_cause_present",
        "category",
        "failure_modes",
        "citations",
        "decisive_evidence",
        "location",
        "forbidden_categories",
        "required_keywords",
        "forbidden_keywords",
        "evidence_cited",
        "ruling_out",
    ):
        assert g.checks[check].passed is False, check
        assert g.checks[check].detail == NO_DIAGNOSIS, check
    # what the agent did is still reported truthfully
    assert g.checks["evidence_queried"].passed
    assert g.checks["required_queries"].passed
    assert g.actual.model_dump() == {"category": None, "failure_modes": [], "root_cause": None, "diagnosis": None}
    assert g.reasoning is not None and g.reasoning["ruling_out_ok"] is False


def test_a_rejected_answer_line_is_the_reason_in_place_of_nothing_usable(axis2: Pack) -> None:
    why = "the agent's diagnosis line 3 was rejected: foo: Extra inputs are not permitted; see the agent log"
    g = grade_diagnosis(
        only(axis2),
        None,
        trajectory(*GOOD_TRAJECTORY),
        axis=2,
        returned_metrics=set(),
        vocabulary=axis2.vocabulary,
        no_diagnosis=why,
    )
    assert g.failure_reason == f"root_cause_present: no diagnosis: {why}"
    assert g.checks["category"].detail == g.checks["ruling_out"].detail == f"no diagnosis: {why}"
    assert "nothing usable" not in str(g.failure_reason)
    # With a diagnosis the reason has no use: the checks grade the diagnosis.
    g = grade_diagnosis(
        only(axis2), good(), trajectory(*GOOD_TRAJECTORY), axis=1, returned_metrics=set(),
        vocabulary=axis2.vocabulary, no_diagnosis=why,
    )  # fmt: skip
    assert all(why not in c.detail for c in g.checks.values())


def test_a_missing_diagnosis_and_an_empty_trajectory(pack: Pack) -> None:
    g = grade(pack, None, Trajectory())
    assert g.checks["evidence_queried"].detail == (
        "never queried: aws_rds_events, aws_performance_insights "
        "(no successful call to get_events or get_performance_insights)"
    )
    assert g.gate_fraction == 0.0


# the grade as a whole


def test_failure_reason_is_the_first_failed_gate_in_table_order(pack: Pack) -> None:
    d = good(category=Category.HEALTHY, root_cause="Nothing about the keywords.", claims=())
    g = grade(pack, d)
    failed = [k for k, c in g.checks.items() if not c.passed]
    assert failed == ["category", "decisive_evidence", "required_keywords", "evidence_cited"]
    assert g.failure_reason == "category: expected resource_exhaustion, got healthy"
    # gates: root cause, category, modes, citations, decisive, location, forbidden categories, queried, cited
    assert g.gate_fraction == pytest.approx(6 / 9)


def test_the_grade_fills_a_test_result(axis2: Pack) -> None:
    g = grade(axis2, good(), axis=2)
    result = TestResult(
        id="pack/001-case#2",
        name="001-case",
        status=TestStatus.PASSED if g.passed else TestStatus.FAILED,
        failure_reason=g.failure_reason,
        signals=list(g.signals),
        checks=g.report_checks(),
        expected=g.expected,
        actual=g.actual,
        trajectory=g.trajectory,
        reasoning=g.reasoning,
        axis=2,
        duration_ms=1.0,
    )
    dumped = result.model_dump(mode="json")
    assert dumped["checks"]["ruling_out"] == {
        "passed": False,
        "role": "gate",
        "detail": "not ruled out: cpu_saturation, storage_full (each needs a ruled_out entry naming it and "
        "citing an item whose fact refutes it); ruling-out keywords not found: failover, WAL (looked in ruled_out)",
    }
    assert dumped["reasoning"]["queries_ok"] is False
    assert dumped["signals"][0]["kind"] == "check"


def test_check_ids_are_the_table_order() -> None:
    assert [c.value for c in CheckId][:7] == [
        "root_cause_present",
        "category",
        "failure_modes",
        "citations",
        "decisive_evidence",
        "location",
        "forbidden_categories",
    ]
    assert [c.value for c in CheckId][-1] == "uncited_claims"
    assert [c.value for c in CheckId][12:14] == ["required_queries", "data_budget"]
    assert len(CheckId) == 17


def test_an_axis_other_than_1_or_2_is_an_input_error(pack: Pack) -> None:
    with pytest.raises(InputError, match="axis must be 1 or 2, got 3"):
        grade(pack, good(), axis=3)
