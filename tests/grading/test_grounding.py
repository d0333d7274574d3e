"""Grounded claims (grading/grounding.py and the checks that read it): citations of served items, true facts,
the limits, decisive items, the location, refuting citations; keywords observed and source names not counted
in sredrill mode, both still upstream's in compatibility mode."""

from __future__ import annotations

from typing import Any

import pytest

from sredrill.diagnosis import Claim, Diagnosis
from sredrill.results import SignalRole
from sredrill.scenarios import Pack
from tests.grading.agent_output import cite
from tests.grading.served import BACKUP, CONNECTIONS, CPU, DEFAULT, LOAD, SQL, STORAGE, WAIT, metric, served
from tests.grading.test_checks import ANSWER, good, grade
from tests.support.scenario_builder import REPLICA, PackWriter

LAG = metric("ReplicaLag", [1, 1, 1, 2, 8, 30, 60, 90, 120], resource=REPLICA)
SERVED = served(*DEFAULT.values(), LAG)
NEVER_SERVED = metric("ReplicaLag", [1, 2, 3], resource="another-db")


@pytest.fixture
def pack(write_pack: PackWriter) -> Pack:
    return write_pack(**ANSWER)


def claims(*evidence: Any) -> Diagnosis:
    """`good()` with one claim per evidence tuple given (each backing every diagnosed mode)."""
    return good(claims=tuple((f"claim {i}", e) for i, e in enumerate(evidence)))


# citations


def test_a_citation_of_an_item_never_served_fails(pack: Pack) -> None:
    d = claims((cite(NEVER_SERVED, "rising"),), (cite(SQL), cite(BACKUP)))
    g = grade(pack, d, served=SERVED)
    assert g.checks["citations"].detail == (
        f"claims[0]: {NEVER_SERVED.id} was never served in this run (cite ids from tool results)"
    )
    assert g.failure_reason == f"citations: {g.checks['citations'].detail}"
    # the same diagnosis, in a run that was served the item, cites it rightly
    assert grade(pack, d, served=served(*SERVED.values(), NEVER_SERVED)).checks["citations"].passed


def test_an_item_of_the_scenario_cites_nothing_when_this_run_never_fetched_it(pack: Pack) -> None:
    # Only the events were fetched: the statement exists in the scenario, but this agent was never shown it.
    g = grade(pack, good(), served=served(BACKUP))
    assert f"claims[0]: {SQL.id} was never served in this run" in g.checks["citations"].detail


def test_a_fact_the_served_data_contradicts_fails(pack: Pack) -> None:
    g = grade(pack, claims((cite(CPU, "rising"), cite(SQL)), (cite(BACKUP),)), served=SERVED)
    detail = g.checks["citations"].detail
    assert detail.startswith(f"claims[0]: {CPU.id} rising: {CPU.id} is not rising: it goes from ")
    assert not g.passed
    assert grade(pack, claims((cite(CPU, "flat"), cite(SQL)), (cite(BACKUP),)), served=SERVED).passed


def test_one_false_fact_among_true_ones_fails_the_gate(pack: Pack) -> None:
    d = claims((cite(LAG, "rising"), cite(SQL, "above", 0.5)), (cite(BACKUP), cite(STORAGE, "below", 1)))
    g = grade(pack, d, served=SERVED)
    assert (
        g.checks["citations"].detail
        == f"claims[1]: {STORAGE.id} below 1: {STORAGE.id} reaches 9e+10, not below 1 throughout"
    )


def test_a_fourth_citation_in_a_claim_fails(pack: Pack) -> None:
    three = (cite(SQL), cite(BACKUP), cite(CPU, "flat"))
    assert grade(pack, claims(three), served=SERVED).checks["citations"].passed
    g = grade(pack, claims((*three, cite(WAIT))), served=SERVED)
    assert g.checks["citations"].detail == "claims[0] cites 4 items; at most 3 per entry"
    # and the claim's citations count for nothing else either
    assert not g.checks["evidence_cited"].passed and not g.checks["decisive_evidence"].passed


def test_a_fourth_citation_in_a_ruled_out_entry_fails(pack: Pack) -> None:
    four = (cite(CPU, "flat"), cite(WAIT), cite(LOAD, "flat"), cite(CONNECTIONS, "flat"))
    g = grade(pack, good(ruled_out=(("cpu_saturation", "quiet", four),)), served=SERVED)
    assert g.checks["citations"].detail == "ruled_out[0] cites 4 items; at most 3 per entry"


def test_a_ninth_distinct_item_across_claims_fails(pack: Pack) -> None:
    extra = metric("Extra")
    items = [SQL, BACKUP, CPU, CONNECTIONS, STORAGE, LOAD, WAIT, LAG, extra]
    run = served(*items)

    def citing(*spans: tuple[int, int]) -> Diagnosis:
        return claims(*(tuple(cite(i) for i in items[a:b]) for a, b in spans))

    eight = citing((0, 3), (3, 6), (6, 8))
    assert grade(pack, eight, served=run).checks["citations"].passed
    # citing one item twice is still one item
    assert grade(pack, citing((0, 3), (3, 6), (6, 8), (0, 1)), served=run).checks["citations"].passed
    g = grade(pack, citing((0, 3), (3, 6), (6, 9)), served=run)
    assert g.checks["citations"].detail == "the claims cite 9 distinct items; at most 8 in all"
    assert not g.checks["decisive_evidence"].passed  # citing everything backs nothing
    assert not g.passed


def test_a_malformed_citation_is_a_citations_failure_naming_what_is_wrong(pack: Pack) -> None:
    entries = (f"{CPU.id} soaring", f"{CPU.id} above", f"{CPU.id} above ninety", f"{CPU.id} flat from yesterday")
    for entry in entries:
        d = good(claims=(("CPU", (entry,)), ("SQL", (cite(SQL),)), ("events", (cite(BACKUP),))))
        detail = grade(pack, d, served=SERVED).checks["citations"].detail
        assert detail.startswith("claims[0]: "), detail
        assert entry in detail, detail
    detail = grade(pack, good(claims=(("CPU", (f"{CPU.id} soaring",)),)), served=SERVED).checks["citations"].detail
    assert detail == (
        f"claims[0]: unknown fact 'soaring' in '{CPU.id} soaring'; facts: rising, falling, flat, above, below, absent, "
        "present"
    )


def test_a_bare_id_cites_the_item_as_present(pack: Pack) -> None:
    d = good(claims=(("a statement", (SQL.id,)), ("an event", (BACKUP.id,))))
    g = grade(pack, d, served=SERVED)
    assert g.passed, g.failure_reason
    assert g.checks["citations"].detail == "3 item(s) cited, every fact holds"


# uncited_claims


def test_uncited_claims_are_counted_and_observed(pack: Pack) -> None:
    d = good(
        claims=(
            ("WAL spiked", (cite(SQL),)),
            ("events are quiet", (cite(BACKUP),)),
            ("a hunch", ()),
            ("a source name is not an item", ("aws_cloudwatch_metrics",)),
        )
    )
    g = grade(pack, d, served=SERVED)
    check = g.checks["uncited_claims"]
    assert (check.passed, check.role, check.detail) == (
        False,
        SignalRole.OBSERVE,
        "2 of 4 claim(s) cite no evidence item",
    )
    assert g.passed, g.failure_reason
    assert grade(pack, good(), served=SERVED).checks["uncited_claims"].detail == "every claim cites"


# decisive_evidence


@pytest.fixture
def decisive(write_pack: PackWriter) -> Pack:
    return write_pack(
        **ANSWER,
        decisive={"replication_lag": [{"metric": "ReplicaLag", "resource": REPLICA, "shows": ["rising", "above"]}]},
        location=[REPLICA],
    )


def test_a_correct_label_without_a_decisive_item_fails(decisive: Pack) -> None:
    d = good(location=(REPLICA,))  # the right mode, true facts, but nothing that shows replication lag
    g = grade(decisive, d, served=SERVED)
    assert g.checks["failure_modes"].passed and g.checks["citations"].passed
    assert g.checks["decisive_evidence"].detail == (
        f"no claim backs replication_lag: cite one of metric=ReplicaLag, resource={REPLICA} (rising/above)"
    )
    assert g.failure_reason == f"decisive_evidence: {g.checks['decisive_evidence'].detail}"


def test_a_decisive_item_with_a_fact_the_key_accepts_backs_the_mode(decisive: Pack) -> None:
    for fact in (cite(LAG, "rising"), cite(LAG, "above", 0.5), cite(LAG, "rising", start=None)):
        d = good(claims=(("lag grows", (fact, cite(SQL))), ("quiet", (cite(BACKUP),))), location=(REPLICA,))
        g = grade(decisive, d, served=SERVED)
        assert g.passed, g.failure_reason
        assert g.checks["decisive_evidence"].detail == "backed by decisive evidence: replication_lag"


def test_a_decisive_item_cited_with_a_fact_the_key_does_not_accept_does_not_count(decisive: Pack) -> None:
    # `present` holds for any served item: the key asks for the rise.
    d = good(claims=(("lag", (cite(LAG), cite(SQL))), ("quiet", (cite(BACKUP),))), location=(REPLICA,))
    assert not grade(decisive, d, served=SERVED).checks["decisive_evidence"].passed


def test_a_decisive_item_with_a_false_fact_does_not_count(decisive: Pack) -> None:
    d = good(claims=(("lag", (cite(LAG, "above", 50), cite(SQL))), ("quiet", (cite(BACKUP),))), location=(REPLICA,))
    g = grade(decisive, d, served=SERVED)
    assert not g.checks["decisive_evidence"].passed and not g.checks["citations"].passed


def test_a_decisive_item_in_a_claim_supporting_another_mode_does_not_back_this_one(decisive: Pack) -> None:
    d = good(
        failure_modes=("replication_lag", "cpu_saturation"),
        location=(REPLICA,),
    ).model_copy(
        update={
            "claims": [
                Claim(text="lag", evidence=[cite(LAG, "rising")], supports=["cpu_saturation"]),
                Claim(text="events", evidence=[cite(BACKUP), cite(SQL)], supports=["replication_lag"]),
            ]
        }
    )
    assert not grade(decisive, d, served=SERVED).checks["decisive_evidence"].passed
    right = d.model_copy(
        update={"claims": [Claim(text="lag", evidence=[cite(LAG, "rising")], supports=["Replication Lag"])]}
    )
    assert grade(decisive, right, served=SERVED).checks["decisive_evidence"].passed


def test_a_decisive_item_in_a_ruled_out_entry_backs_no_mode(decisive: Pack) -> None:
    d = good(
        claims=(("quiet", (cite(BACKUP), cite(SQL))),),
        ruled_out=(("cpu_saturation", "the lag is the story", (cite(LAG, "rising"),)),),
        location=(REPLICA,),
    )
    assert not grade(decisive, d, served=SERVED).checks["decisive_evidence"].passed


def test_decisive_evidence_fails_when_no_expected_mode_is_diagnosed(decisive: Pack) -> None:
    d = good(failure_modes=("cpu_saturation",), ruled_out=(), location=(REPLICA,))
    assert grade(decisive, d, served=SERVED).checks["decisive_evidence"].detail == (
        "no expected failure mode is diagnosed (expected replication_lag)"
    )


# location


@pytest.mark.parametrize(
    "given", [(REPLICA,), ("ORDERS-DB-REPLICA",), (f"arn:aws:rds:eu-north-1:123456789012:db/{REPLICA}",)]
)
def test_location_accepts_the_keys_names_by_case_or_after_the_last_slash(decisive: Pack, given: tuple[str]) -> None:
    lag = (("lag", (cite(LAG, "rising"), cite(SQL), cite(BACKUP))),)
    g = grade(decisive, good(claims=lag, location=given), served=SERVED)
    assert g.checks["location"].passed, g.checks["location"].detail
    assert g.passed, g.failure_reason


def test_location_fails_when_missing_or_elsewhere(decisive: Pack) -> None:
    lag = (("lag", (cite(LAG, "rising"),)),)
    assert grade(decisive, good(claims=lag), served=SERVED).checks["location"].detail == (
        "no location given (name the resource at fault in `location`)"
    )
    g = grade(decisive, good(claims=lag, location=(REPLICA, "orders-db-prod")), served=SERVED)
    assert g.checks["location"].detail == "not where the fault is: orders-db-prod"
    assert g.failure_reason == "location: not where the fault is: orders-db-prod"


# a mode both diagnosed and ruled out


def test_a_mode_both_diagnosed_and_ruled_out_fails(pack: Pack) -> None:
    d = good(ruled_out=(("Replication Lag", "or is it", (cite(CPU, "flat"),)),))
    g = grade(pack, d, served=SERVED)
    assert g.checks["failure_modes"].detail == "diagnosed and ruled out at once: replication_lag"
    assert g.failure_reason == "failure_modes: diagnosed and ruled out at once: replication_lag"


# ruling_out with refuting selectors


@pytest.fixture
def refuting(write_pack: PackWriter) -> Pack:
    return write_pack(
        **ANSWER,
        ruled_out=["cpu_saturation"],
        refuting={"cpu_saturation": [{"metric": "CPUUtilization", "shows": ["flat", "below"]}]},
        data_budget=10_000,  # every item is served here; the budget is tested in test_budget.py
    )


def test_ruling_out_passes_with_a_citation_the_key_names_as_refuting(refuting: Pack) -> None:
    for fact in (cite(CPU, "flat"), cite(CPU, "below", 20)):
        d = good(ruled_out=(("cpu_saturation", "CPU is level", (fact,)),))
        g = grade(refuting, d, axis=2, served=SERVED)
        assert g.checks["ruling_out"].passed, g.checks["ruling_out"].detail
        assert g.passed, g.failure_reason


def test_ruling_out_fails_with_a_citation_that_is_not_refuting(refuting: Pack) -> None:
    hint = "ruled_out[0] names cpu_saturation but cites no item that refutes it: cite one of metric=CPUUtilization"
    for evidence in ((cite(SQL, "below", 1),), (cite(CPU),), ()):  # a true fact of another item; a fact not named
        g = grade(refuting, good(ruled_out=(("cpu_saturation", "fine", evidence),)), axis=2, served=SERVED)
        assert g.checks["ruling_out"].detail == (
            "not ruled out: cpu_saturation (each needs a ruled_out entry naming it and citing an item whose fact "
            f"refutes it); {hint} (flat/below)"
        )
        assert g.failure_reason is not None and g.failure_reason.startswith("ruling_out: ")
        assert g.checks["citations"].passed


def test_ruling_out_with_a_refuting_item_whose_fact_is_false_fails_twice(refuting: Pack) -> None:
    d = good(ruled_out=(("cpu_saturation", "fine", (cite(CPU, "below", 5),)),))
    g = grade(refuting, d, axis=2, served=SERVED)
    assert not g.checks["ruling_out"].passed
    assert g.checks["citations"].detail.startswith(f"ruled_out[0]: {CPU.id} below 5: ")


# keywords and source names: observed in sredrill mode, upstream's gates in compatibility mode


UPSTREAM: dict[str, Any] = {k: v for k, v in ANSWER.items() if k != "failure_modes"}


def test_keywords_are_observed_in_sredrill_mode_and_gate_in_compat_mode(write_pack: PackWriter) -> None:
    sredrill, compat = write_pack(**ANSWER), write_pack(**UPSTREAM)
    d = good(root_cause="WAL replay fell behind on the replica: replication lag.", causal_chain=(), report="")
    silent = good(
        root_cause="The standby fell behind.",
        causal_chain=(),
        claims=(("behind", (cite(SQL),)), ("quiet", (cite(BACKUP),))),
        report="",
    )
    g = grade(sredrill, silent, served=SERVED)
    assert g.checks["required_keywords"].role is SignalRole.OBSERVE and not g.checks["required_keywords"].passed
    assert g.passed, g.failure_reason
    g = grade(compat, silent, served=SERVED)
    assert g.checks["required_keywords"].role is SignalRole.GATE
    assert g.failure_reason is not None and g.failure_reason.startswith("required_keywords: missing keywords: ")
    assert grade(compat, d, served=SERVED).checks["required_keywords"].passed


def test_forbidden_keywords_are_observed_in_sredrill_mode_and_gate_in_compat_mode(write_pack: PackWriter) -> None:
    sredrill, compat = write_pack(**ANSWER), write_pack(**UPSTREAM)
    stuffed = good(report="cpu saturation; two root causes")
    g = grade(sredrill, good(root_cause="Replication lag, WAL, replica; cpu saturation"), served=SERVED)
    assert g.checks["forbidden_keywords"].role is SignalRole.OBSERVE and not g.checks["forbidden_keywords"].passed
    assert g.passed, g.failure_reason
    assert grade(sredrill, stuffed, served=SERVED).passed
    c = grade(compat, stuffed, served=SERVED).checks["forbidden_keywords"]
    assert c.role is SignalRole.GATE and not c.passed
    assert c.detail == "forbidden keywords found: 'cpu saturation' in report; 'two root causes' in report"


def test_source_names_satisfy_evidence_cited_in_compat_mode_only(write_pack: PackWriter) -> None:
    names = good(claims=(("WAL", ("aws_performance_insights",)), ("quiet", ("aws_rds_events",))))
    compat = grade(write_pack(**UPSTREAM), names, served=SERVED).checks["evidence_cited"]
    assert compat.passed and compat.role is SignalRole.OBSERVE
    s = grade(write_pack(**ANSWER), names, served=SERVED).checks["evidence_cited"]
    assert not s.passed and s.role is SignalRole.GATE


def test_the_grounded_checks_are_observed_in_compat_mode(write_pack: PackWriter) -> None:
    compat = write_pack(**UPSTREAM)
    d = good(
        claims=(("WAL", (cite(NEVER_SERVED, "rising"), "aws_performance_insights")), ("quiet", ("aws_rds_events",)))
    )
    g = grade(compat, d, served=SERVED)
    for check in ("citations", "decisive_evidence", "location"):
        assert g.checks[check].role is SignalRole.OBSERVE, check
    assert not g.checks["citations"].passed
    assert g.passed, g.failure_reason


# selectors: the least informative bound a decisive citation may state, and prefixes


def test_a_selector_bound_refuses_an_uninformative_above_or_below() -> None:
    from sredrill.diagnosis import Citation
    from sredrill.scenarios.answer import ItemSelector

    sel = ItemSelector.model_validate({"kind": "pod", "pod": "checkout-*", "shows": ["above"], "above": 3})
    assert sel.matches("pod", "eks_pods", {"namespace": "shop", "pod": "checkout-7d9f-abcde"})
    assert not sel.matches("pod", "eks_pods", {"namespace": "shop", "pod": "cart-7d9f-abcde"})
    assert sel.accepts(Citation(item="pod-0123456789", fact="above", value=5))
    assert not sel.accepts(Citation(item="pod-0123456789", fact="above", value=-1))  # holds for any pod
    assert not sel.accepts(Citation(item="pod-0123456789", fact="below", value=10))  # not a fact it shows
    low = ItemSelector.model_validate({"metric": "CPUUtilization", "shows": ["below"], "below": 50})
    assert low.accepts(Citation(item="metric-0123456789", fact="below", value=40))
    assert not low.accepts(Citation(item="metric-0123456789", fact="below", value=1000))
    assert "below 50" in low.describe()


def test_a_healthy_scenario_has_nothing_to_locate(write_pack: PackWriter) -> None:
    healthy = write_pack(
        failure_mode="healthy", root_cause_category="healthy", failure_modes=["healthy"], required_keywords=["normal"]
    )
    quiet = Diagnosis(root_cause="Nothing is wrong.", category="healthy", failure_modes=["healthy"])
    assert grade(healthy, quiet, served=SERVED).checks["location"].passed
    located = quiet.model_copy(update={"location": ["ledger-pg-prod"]})
    check = grade(healthy, located, served=SERVED).checks["location"]
    assert not check.passed and check.detail == "nothing is at fault here, but location names ledger-pg-prod"


def test_a_level_over_one_sample_is_true_but_backs_no_mode() -> None:
    from sredrill.grading.facts import check_fact
    from sredrill.grading.grounding import _decisive
    from sredrill.scenarios.answer import ItemSelector

    spike = metric("CPUUtilization", [20, 20, 97, 20, 20, 96, 95, 97, 20])
    sel = [ItemSelector.model_validate({"metric": "CPUUtilization", "shows": ["above"], "above": 90})]
    t = [p[0] for p in spike.points]
    one = cite(spike, "above", 95, start=t[2], end=t[2])
    three = cite(spike, "above", 94, start=t[5], end=t[7])
    assert check_fact(one, spike) is None and check_fact(three, spike) is None  # both are true facts
    assert not _decisive(one, spike, sel)  # a blip is not the state of the system
    assert _decisive(three, spike, sel)


def test_only_the_first_ruled_out_entry_of_a_hypothesis_counts(refuting: Pack) -> None:
    # A shotgun of entries for one hypothesis, each citing another item, does not get to try every item.
    wrong = ("cpu_saturation", "a guess", (cite(SQL),))
    right = ("cpu_saturation", "CPU is level", (cite(CPU, "flat"),))
    assert not grade(refuting, good(ruled_out=(wrong, right)), axis=2, served=SERVED).checks["ruling_out"].passed
    assert grade(refuting, good(ruled_out=(right, wrong)), axis=2, served=SERVED).checks["ruling_out"].passed
