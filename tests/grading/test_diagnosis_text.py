"""The text answer format (diagnosis.py): every form of `[evidence: …]`, `RULED_OUT:` and `LOCATION:` parsed, and
garbage never crashing the parser or the grader (a malformed citation is a `citations` failure naming it)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sredrill.diagnosis import Citation, Diagnosis, FactKind, parse_citation, parse_diagnosis_text
from sredrill.grading import grade_diagnosis
from sredrill.scenarios import Pack
from tests.grading.agent_output import trajectory
from tests.grading.served import BACKUP, CPU, DEFAULT, SQL
from tests.grading.test_checks import ANSWER, GOOD_TRAJECTORY
from tests.support.scenario_builder import PackWriter, only

A, B = CPU.id, SQL.id
T1, T2 = "2024-05-01T10:00:00Z", "2024-05-01T10:05:00Z"


def parsed(text: str) -> Diagnosis:
    d = parse_diagnosis_text(text)
    assert d is not None
    return d


def test_a_citation_in_every_form() -> None:
    assert parse_citation(A) == Citation(item=A)
    assert parse_citation(f"{A} rising") == Citation(item=A, fact=FactKind.RISING)
    assert parse_citation(f"{A} ABOVE 90") == Citation(item=A, fact=FactKind.ABOVE, value=90)
    assert parse_citation(f"{A} below -1.5e3") == Citation(item=A, fact=FactKind.BELOW, value=-1500)
    full = parse_citation(f"{A} above 90 from {T1} to {T2}")
    assert (full.start, full.end) == (datetime(2024, 5, 1, 10, tzinfo=UTC), datetime(2024, 5, 1, 10, 5, tzinfo=UTC))
    assert parse_citation(f"{A} from {T1}") == Citation(item=A, start=datetime(2024, 5, 1, 10, tzinfo=UTC))
    assert parse_citation(f"{A} flat to {T2}").end == datetime(2024, 5, 1, 10, 5, tzinfo=UTC)
    assert full.describe() == f"{A} above 90 from {T1} to {T2}"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("aws_rds_events", "does not start with an item id"),
        (f"{A} soaring", "unknown fact 'soaring'"),
        (f"{A} above", "'above' needs a value"),
        (f"{A} below ninety", "'ninety' is not a number"),
        (f"{A} flat from", "expected 'from TIME' or 'to TIME'"),
        (f"{A} flat since {T1}", "expected 'from TIME' or 'to TIME'"),
        (f"{A} flat from yesterday", "bad time"),
        (f"{A} flat from 2024-05-01T10:00:00", "bad time"),  # no zone
        (f"{A} present 5", "expected 'from TIME' or 'to TIME'"),
    ],
)
def test_a_malformed_citation_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_citation(text)


TEXT = f"""ROOT_CAUSE: Replication lag: WAL outpaced the replica.
ROOT_CAUSE_CATEGORY: resource_exhaustion
FAILURE_MODES: replication_lag
LOCATION: orders-db-replica, db/orders-db-prod
VALIDATED_CLAIMS:
- CPU stayed level [evidence: {A} flat; {B} above 0.5 from {T1} to {T2}]
- The statement ran [evidence: {B}]
- Upstream style [evidence: aws_cloudwatch_metrics, aws_rds_events]
- Two tags [evidence: {A} flat] and [evidence: {B}]
- A bad one [evidence: {A} soaring]
NON_VALIDATED_CLAIMS:
- A hunch [evidence: {A} rising]
CAUSAL_CHAIN: batch job -> WAL grows -> replica lags
RULED_OUT:
- cpu_saturation: CPU is flat [evidence: {A} flat]
- storage_full: plenty of space
- failover
"""


def test_the_text_format_in_every_form() -> None:
    d = parsed(TEXT)
    assert d.failure_modes == ["replication_lag"]
    assert d.location == ["orders-db-replica", "db/orders-db-prod"]
    assert d.causal_chain == ["batch job", "WAL grows", "replica lags"]
    assert [c.text for c in d.claims] == [
        "CPU stayed level",
        "The statement ran",
        "Upstream style",
        "Two tags and",
        "A bad one",
        "A hunch",
    ]
    c = d.claims
    assert c[0].evidence == [
        Citation(item=A, fact=FactKind.FLAT),
        parse_citation(f"{B} above 0.5 from {T1} to {T2}"),
    ]
    assert c[1].evidence == [Citation(item=B)]
    assert c[2].evidence == ["aws_cloudwatch_metrics", "aws_rds_events"] and c[2].sources == c[2].evidence
    assert c[3].evidence == [Citation(item=A, fact=FactKind.FLAT), Citation(item=B)]
    assert c[4].evidence == [f"{A} soaring"]  # kept as given: the grader says what is wrong with it
    assert c[5].evidence == []  # a non-validated claim cites nothing
    assert [(r.hypothesis, r.reason) for r in d.ruled_out] == [
        ("cpu_saturation", "CPU is flat"),
        ("storage_full", "plenty of space"),
        ("failover", ""),
    ]
    assert d.ruled_out[0].evidence == [Citation(item=A, fact=FactKind.FLAT)]
    assert d.ruled_out[1].evidence == []


def test_a_malformed_citation_in_text_is_a_citations_failure_naming_it(write_pack: PackWriter) -> None:
    pack: Pack = write_pack(**ANSWER)
    text = f"""ROOT_CAUSE: Replication lag.
ROOT_CAUSE_CATEGORY: resource_exhaustion
FAILURE_MODES: replication_lag
VALIDATED_CLAIMS:
- The statement is heavy [evidence: {B} above zero]
- A backup ran [evidence: {BACKUP.id}]
"""
    g = grade_diagnosis(
        only(pack), parsed(text), trajectory(*GOOD_TRAJECTORY), axis=1, returned_metrics=(),
        vocabulary=pack.vocabulary, served=DEFAULT,
    )  # fmt: skip
    assert g.checks["citations"].detail == f"claims[0]: 'zero' is not a number in '{B} above zero'"
    assert g.failure_reason is not None and g.failure_reason.startswith("citations: ")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no sections at all",
        "ROOT_CAUSE:",
        "ROOT_CAUSE: x\nVALIDATED_CLAIMS:\n- [evidence: ]\n- [evidence:\n- ]evidence[\n- [evidence: ;;,,]",
        "ROOT_CAUSE: x\nVALIDATED_CLAIMS:\n- y [evidence: [nested] ]\n- z [evidence: metric-0123456789 above 9e999]",
        f"ROOT_CAUSE: x\nVALIDATED_CLAIMS:\n- y [evidence: {A} from {T1} to]\n- [evidence: {A} nan]",
        f"ROOT_CAUSE: x\nVALIDATED_CLAIMS:\n- y [evidence: {A} above nan; {A} below inf; {A} above -inf]",
        "ROOT_CAUSE: x\nRULED_OUT:\n- : \n- :::\n- [evidence: x]\nLOCATION: , ,\nFAILURE_MODES: ,",
        "ROOT_CAUSE: \x00\ud800 é 🔥\nCAUSAL_CHAIN: -> -> ->\nRULED_OUT: - a: b [evidence: metric-zzzzzzzzzz rising]",
        "ROOT_CAUSE: x\n" + "VALIDATED_CLAIMS:\n- c [evidence: " + "; ".join([A] * 200) + "]",
    ],
)
def test_garbage_never_crashes_the_parser_or_the_grader(write_pack: PackWriter, text: str) -> None:
    pack: Pack = write_pack(**ANSWER)
    d = parse_diagnosis_text(text)
    g = grade_diagnosis(
        only(pack), d, trajectory(*GOOD_TRAJECTORY), axis=2, returned_metrics=(), vocabulary=pack.vocabulary,
        served=DEFAULT,
    )  # fmt: skip
    assert not g.passed
