"""Compatibility grading: answer keys in the upstream format, graded as the upstream scorer defines each field.

Each rule of `grading/compat.py` with a passing and a failing case; the same key with one of sredrill's keys
added is graded as before (the sredrill-mode rules are `test_checks.py`'s).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sredrill.diagnosis import Category, Diagnosis
from sredrill.grading import Grade, UpstreamKeywordMatcher, grade_diagnosis
from sredrill.grading.checks import AnswerKeyConflict
from sredrill.grading.compat import query_matches
from sredrill.results import GradingMode, SignalRole
from sredrill.scenarios import Pack
from sredrill.trajectory import Trajectory
from tests.grading.agent_output import diagnosis, trajectory
from tests.support.scenario_builder import PackWriter, build_pack, only, write_file

# An upstream-format key (none of failure_modes / ruled_out): compatibility mode.
UPSTREAM: dict[str, Any] = {
    "failure_mode": "cpu_saturation",
    "root_cause_category": "resource_exhaustion",
    "required_keywords": ["autoscal", "CPU"],
    # cpu_saturation is the mode scenario.yml names: sredrill mode would forbid the right answer with it.
    "forbidden_categories": ["cpu_saturation", "infrastructure"],
    "forbidden_keywords": ["failover"],
    "required_evidence_sources": ["aws_rds_events"],
}
TRAJECTORY = ("get_alert", "query_metrics", "get_events")


def good(**changes: Any) -> Diagnosis:
    fields: dict[str, Any] = {
        "root_cause": "CPU saturation: the autoscaling group never added capacity while an analytics query ran.",
        "category": Category.RESOURCE_EXHAUSTION,
        "failure_modes": ("cpu_saturation",),
        "causal_chain": ("analytics query starts", "CPU reaches 97%", "queries queue"),
        "claims": (("CPU rose with the analytics query", ("aws_cloudwatch_metrics",)),),
        "ruled_out": (),
        "report": "",
    }
    fields.update(changes)
    return diagnosis(fields.pop("root_cause"), **fields)


def grade(pack: Pack, d: Diagnosis | None, t: Trajectory | None = None, *, axis: int = 1, returned: Any = ()) -> Grade:
    return grade_diagnosis(
        only(pack),
        d,
        t if t is not None else trajectory(*TRAJECTORY),
        axis=axis,
        returned_metrics=set(returned),
        vocabulary=pack.vocabulary,
    )


@pytest.fixture
def compat(write_pack: PackWriter) -> Pack:
    return write_pack(**UPSTREAM)


@pytest.fixture
def sredrill(write_pack: PackWriter) -> Pack:
    """The same key with a sredrill key (`ruled_out: []`), less the forbidden mode that would make it contradict
    itself there: graded as sredrill grades, not in compat mode."""
    return write_pack(**{**UPSTREAM, "forbidden_categories": ["infrastructure"]}, ruled_out=[])


# the mode


def test_a_key_without_sredrill_keys_is_graded_in_compat_mode_and_says_so(compat: Pack, sredrill: Pack) -> None:
    assert only(compat).grading == GradingMode.COMPAT and only(sredrill).grading == GradingMode.SREDRILL
    g = grade(compat, good())
    assert g.grading == GradingMode.COMPAT and g.passed, g.failure_reason
    assert grade(sredrill, good()).grading == GradingMode.SREDRILL


def test_a_correct_answer_passes_in_compat_mode_where_the_same_key_in_sredrill_mode_cannot(
    compat: Pack, sredrill: Pack, write_pack: PackWriter
) -> None:
    # sredrill mode reads forbidden_categories as forbidding the derived mode (cpu_saturation): the key
    # contradicts itself there, so grading refuses it (its results are errored, test_key_conflicts.py).
    with pytest.raises(AnswerKeyConflict, match="failure mode 'cpu_saturation' is also in forbidden_categories"):
        grade(write_pack(**UPSTREAM, ruled_out=[]), good())
    s = grade(sredrill, good())
    assert s.checks["required_keywords"].detail.startswith("missing keywords: autoscal")  # a bare stem is a word
    assert grade(compat, good()).passed


# category


def test_category_is_the_keys_category(compat: Pack) -> None:
    assert grade(compat, good()).checks["category"].detail == "resource_exhaustion"
    g = grade(compat, good(category=Category.CONFIGURATION_ERROR))
    assert not g.passed and g.checks["category"].detail == "expected resource_exhaustion, got configuration_error"


def k8s_pack(root: Path, *, failure_mode: str, category: str, **answer: Any) -> Pack:
    """A one-scenario Kubernetes pack in the upstream EKS layout (our own data), with an upstream-format key."""
    folder = root / "001-case"
    write_file(
        folder / "scenario.yml",
        {
            "schema_version": "1.0",
            "scenario_id": "001-case",
            "engine": "eks",
            "cluster_name": "drill-east",
            "namespace": "shop",
            "workload_type": "deployment",
            "workload_name": "cart-api",
            "region": "eu-west-1",
            "failure_mode": failure_mode,
            "severity": "critical",
            "scenario_difficulty": 2,
            "available_evidence": ["eks_events"],
        },
    )
    write_file(
        folder / "alert.json",
        {
            "title": "cart-api errors",
            "state": "alerting",
            "alert_source": "datadog",
            "commonLabels": {"alertname": "HighErrorRate", "severity": "critical"},
            "commonAnnotations": {"summary": "cart-api returns errors", "error": "upstream calls fail"},
        },
    )
    event = {
        "namespace": "shop",
        "reason": "Unhealthy",
        "message": "Readiness probe failed: lookup payments.shop.svc: i/o timeout",
        "type": "Warning",
        "involved_object": "Pod/cart-api-6d8f9-x2kqp",
        "first_time": "2026-03-09T11:30:00Z",
        "last_time": "2026-03-09T11:41:00Z",
        "count": 9,
    }
    write_file(folder / "eks_events.json", {"warning_events": [event]})
    key = {"root_cause_category": category, "required_keywords": ["dns"], "model_response": "ROOT_CAUSE: x", **answer}
    write_file(folder / "answer.yml", key)
    pack = build_pack(root, {})
    assert pack.domain == "k8s"
    return pack


def k8s_grade(pack: Pack, category: Category) -> Grade:
    d = diagnosis("DNS lookups of the payments service time out in the cluster.", category=category)
    return grade_diagnosis(
        only(pack), d, trajectory("get_events"), axis=1, returned_metrics=(), vocabulary=pack.vocabulary
    )


def test_a_dns_failure_is_also_a_dependency_failure_in_compat_mode(tmp_path: Path) -> None:
    pack = k8s_pack(tmp_path / "dns", failure_mode="dns_resolution_failure", category="infrastructure")
    assert k8s_grade(pack, Category.INFRASTRUCTURE).checks["category"].passed
    g = k8s_grade(pack, Category.DEPENDENCY_FAILURE)
    assert g.checks["category"].passed, g.checks["category"].detail
    assert g.checks["category"].detail == "dependency_failure (accepted beside infrastructure)"
    wrong = k8s_grade(pack, Category.CONFIGURATION_ERROR).checks["category"]
    assert wrong.detail == "expected infrastructure (or dependency_failure), got configuration_error"


def test_the_dns_equivalence_is_for_dns_failures_and_compat_mode_only(tmp_path: Path) -> None:
    node = k8s_pack(tmp_path / "node", failure_mode="node_not_ready", category="infrastructure")
    assert k8s_grade(node, Category.DEPENDENCY_FAILURE).checks["category"].detail == (
        "expected infrastructure, got dependency_failure"
    )
    keyed = k8s_pack(
        tmp_path / "keyed",
        failure_mode="dns_resolution_failure",
        category="infrastructure",
        failure_modes=["dns_resolution_failure"],
    )
    assert only(keyed).grading == GradingMode.SREDRILL
    assert not k8s_grade(keyed, Category.DEPENDENCY_FAILURE).checks["category"].passed


# failure_modes


def test_the_derived_failure_mode_is_observed_not_gated(compat: Pack) -> None:
    g = grade(compat, good(failure_modes=("storage_full",)))
    check = g.checks["failure_modes"]
    assert check.role == SignalRole.OBSERVE and not check.passed
    assert check.detail.startswith("expected cpu_saturation, got storage_full")
    assert g.passed, g.failure_reason


# forbidden_categories


def test_forbidden_categories_fires_on_the_category(compat: Pack) -> None:
    g = grade(compat, good(category=Category.INFRASTRUCTURE))
    assert g.checks["forbidden_categories"].detail == "forbidden category: 'infrastructure'"
    assert not g.checks["forbidden_categories"].passed


def test_forbidden_categories_never_fires_on_a_failure_mode(compat: Pack) -> None:
    # cpu_saturation is forbidden and predicted: upstream compares coarse categories, so it cannot fire.
    check = grade(compat, good(failure_modes=("cpu_saturation", "storage_full"))).checks["forbidden_categories"]
    assert check.passed and check.detail == "category is none of: cpu_saturation, infrastructure"


# required_keywords


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Storage autoscaling was off.", True),  # (a) a stem is a substring
        ("Storage was autoscaled.", True),
        ("Storage was scaled automatically.", False),
    ],
)
def test_a_stem_matches_as_a_substring(text: str, found: bool) -> None:
    assert UpstreamKeywordMatcher.of(text).has("autoscal") is found


def test_every_token_of_a_keyword_anywhere_as_a_whole_word() -> None:
    # (c) tokens in any order, anywhere in the joined fields; each a whole token.
    m = UpstreamKeywordMatcher.of(["The replica fell behind.", "Replication lag grew; the WAL sender lagged."])
    assert m.has("lag replica") and m.has("WAL lag")
    assert not m.has("sender lagging") and not m.has("replica storage")


def test_an_alias_matches_as_a_substring(write_pack: PackWriter) -> None:
    pack = write_pack(
        failure_mode="storage_full",
        root_cause_category="resource_exhaustion",
        required_keywords=["FreeStorageSpace"],
        pack_yml={"keyword_aliases": {"FreeStorageSpace": ["free storage"], "Free Storage Space": ["disk space"]}},
    )
    g = grade(pack, good(root_cause="The free storage fell to zero."))
    assert g.checks["required_keywords"].passed, g.checks["required_keywords"].detail
    # keyed without its spaces, as upstream's table is: `Free Storage Space`'s aliases serve `FreeStorageSpace`
    assert grade(pack, good(root_cause="It ran out of disk space.")).checks["required_keywords"].passed
    assert not grade(pack, good(root_cause="It ran out of room.")).checks["required_keywords"].passed


def test_a_prefix_mark_in_an_alias_is_a_substring() -> None:
    assert UpstreamKeywordMatcher.of("The kernel OOM-killed it.", {"OOMKilled": ["oom-kill*"]}).has("OOMKilled")


@pytest.mark.parametrize("where", ["root_cause", "causal_chain", "claims"])
def test_required_keywords_count_in_root_cause_causal_chain_and_claims(compat: Pack, where: str) -> None:
    plain = {
        "root_cause": "CPU saturation.",
        "causal_chain": ("CPU saturation",),
        "claims": (("CPU saturation", ()),),
    }
    place = {
        "root_cause": {"root_cause": "CPU saturation; autoscaling was off."},
        "causal_chain": {"causal_chain": ("autoscaling was off",)},
        "claims": {"claims": (("autoscaling was off", ()),)},
    }[where]
    g = grade(compat, good(**{**plain, **place}))
    assert g.checks["required_keywords"].passed, g.checks["required_keywords"].detail


def test_required_keywords_in_the_report_alone_do_not_count(compat: Pack) -> None:
    d = good(root_cause="CPU saturation.", report="Alert: autoscaling group at its maximum.")
    check = grade(compat, d).checks["required_keywords"]
    assert not check.passed
    assert check.detail == "missing keywords: autoscal (looked in root_cause, causal_chain, claims)"


# forbidden_keywords


@pytest.mark.parametrize(
    ("changes", "where"),
    [
        ({"root_cause": "CPU saturation after a failover; autoscaling was off."}, "root_cause"),
        ({"claims": (("a failover happened", ()),)}, "claims[0]"),
        ({"report": "The alert followed a Failover."}, "report"),
    ],
)
def test_a_forbidden_keyword_is_a_substring_anywhere_but_ruled_out(
    compat: Pack, changes: dict[str, Any], where: str
) -> None:
    check = grade(compat, good(**changes)).checks["forbidden_keywords"]
    assert not check.passed and check.detail == f"forbidden keywords found: 'failover' in {where}"


def test_a_forbidden_keyword_in_a_ruled_out_entry_does_not_fail(compat: Pack) -> None:
    d = good(ruled_out=(("failover", "no failover event in the window"),))
    check = grade(compat, d).checks["forbidden_keywords"]
    assert check.passed and check.detail == "none of: failover"


# evidence


def test_evidence_queried_gates_and_evidence_cited_observes(compat: Pack) -> None:
    g = grade(compat, good())  # claims cite metrics only, not the required events
    assert g.checks["evidence_cited"].role == SignalRole.OBSERVE and not g.checks["evidence_cited"].passed
    assert g.passed
    g = grade(compat, good(), trajectory("get_alert", "query_metrics"))
    assert g.checks["evidence_queried"].role == SignalRole.GATE
    assert g.failure_reason == "evidence_queried: never queried: aws_rds_events (no successful call to get_events)"


# Axis 2: ruling_out and required_queries


@pytest.fixture
def axis2(write_pack: PackWriter) -> Pack:
    return write_pack(
        **UPSTREAM,
        ruling_out_keywords=["replication", "storag"],
        required_queries=["CPU", "write latency", "list-eks-pods"],
    )


def test_ruling_out_keywords_use_the_upstream_matcher_over_ruled_out_and_report(axis2: Pack) -> None:
    d = good(ruled_out=(("replication lag", "the replica is in sync"),), report="Storage was never short.")
    g = grade(axis2, d, axis=2, returned=("CPUUtilization", "WriteLatency_ms", "list_eks_pods"))
    assert g.checks["ruling_out"].passed, g.checks["ruling_out"].detail
    assert g.checks["ruling_out"].role == SignalRole.GATE


def test_ruling_out_keywords_in_the_root_cause_do_not_count(axis2: Pack) -> None:
    d = good(root_cause="CPU saturation, not replication or storage; autoscaling was off.")
    check = grade(axis2, d, axis=2).checks["ruling_out"]
    assert not check.passed
    assert check.detail == "not ruled out: replication, storag (looked in ruled_out and report)"


@pytest.mark.parametrize(
    ("required", "returned", "found"),
    [
        ("CPUUtilization", "cpuutilization", True),  # case
        ("CPU", "CPUUtilization", True),  # the required name inside a returned one
        ("cpuutilization_average", "CPUUtilization", True),  # a returned name inside the required one
        ("list-eks-pods", "list_eks_pods", True),  # "-" and spaces as "_"
        ("write latency", "Write-Latency_ms", True),
        ("FreeStorageSpace", "CPUUtilization", False),
        ("FreeStorageSpace", "", False),
    ],
)
def test_required_query_names_match_as_upstream_normalises_them(required: str, returned: str, found: bool) -> None:
    assert query_matches(required, returned) is found


def test_required_queries_say_what_no_call_returned(axis2: Pack) -> None:
    check = grade(axis2, good(), axis=2, returned=("CPUUtilization",)).checks["required_queries"]
    assert not check.passed and check.detail.startswith("never returned by a query: write latency, list-eks-pods")
    ok = grade(axis2, good(), axis=2, returned=("CPUUtilization", "write-latency", "list_eks_pods")).checks
    assert ok["required_queries"].passed


# a sredrill key is graded as before


def test_sredrill_mode_keeps_its_rules_on_the_same_key(sredrill: Pack) -> None:
    d = good(
        root_cause="CPU saturation; the autoscaling group was at its maximum.",
        report="failover",
        failure_modes=("cpu_saturation",),
    )
    g = grade(sredrill, d)
    assert g.checks["failure_modes"].role == SignalRole.GATE
    assert g.checks["evidence_cited"].role == SignalRole.GATE
    # sredrill mode leaves the report out of forbidden keywords and reads words, not substrings
    assert g.checks["forbidden_keywords"].passed
    assert (
        g.checks["required_keywords"].detail
        == "missing keywords: autoscal (looked in root_cause, causal_chain, claims, report)"
    )
