"""Typed facts (grading/facts.py): each fact holding and not holding, in and out of a window, on what was served."""

from __future__ import annotations

from datetime import timedelta

import pytest

from sredrill.diagnosis import Citation, FactKind
from sredrill.grading.facts import check_fact, trend_of
from tests.grading.agent_output import cite
from tests.grading.served import BACKUP, SQL, at, event, metric

RISING = metric("ReplicaLag", [1, 1, 1, 1, 2, 5, 20, 40, 60])
FALLING = metric("FreeStorageSpace", [90, 88, 85, 60, 40, 20, 10, 5, 1])
FLAT = metric("CPUUtilization", [50, 51, 49, 50, 52, 50, 49, 51, 50])
SPIKE = metric("ReadIOPS", [10, 10, 10, 400, 10, 10, 10, 10, 10])
EMPTY = metric("WriteLatency", [])
# Flat for the first eight minutes, then rising hard: the series a temporal run has not yet seen the end of.
LATE = metric("DiskQueueDepth", [2, 2, 2, 2, 2, 2, 2, 2, 30, 60, 90, 120])
LATE_PREFIX = metric("DiskQueueDepth", [2, 2, 2, 2, 2, 2, 2, 2])


@pytest.mark.parametrize(
    ("item", "fact", "holds"),
    [
        (RISING, FactKind.RISING, True),
        (RISING, FactKind.FALLING, False),
        (RISING, FactKind.FLAT, False),
        (FALLING, FactKind.FALLING, True),
        (FALLING, FactKind.RISING, False),
        (FLAT, FactKind.FLAT, True),
        (FLAT, FactKind.RISING, False),
        (FLAT, FactKind.FALLING, False),
        (SPIKE, FactKind.RISING, False),  # a spike that returns is no trend
        (SPIKE, FactKind.FLAT, False),
    ],
)
def test_trends(item: object, fact: FactKind, holds: bool) -> None:
    why = check_fact(cite(item, fact), item)  # type: ignore[arg-type]
    assert (why is None) is holds, why


def test_a_wrong_trend_says_what_the_data_does() -> None:
    assert check_fact(cite(FLAT, "rising"), FLAT) == (f"{FLAT.id} is not rising: it goes from 50 to 50 (range 3)")


def test_trend_of_names_the_trend_that_holds_or_none() -> None:
    assert trend_of([1, 1, 1, 1, 2, 5, 20, 40, 60]) == FactKind.RISING
    assert trend_of([90, 88, 85, 60, 40, 20, 10, 5, 1]) == FactKind.FALLING
    assert trend_of([50, 51, 49, 50, 52, 50]) == FactKind.FLAT
    assert trend_of([0, 0, 0]) == FactKind.FLAT
    assert trend_of([10, 10, 400, 10, 10, 10]) is None
    assert trend_of([1, 100]) is None


def test_a_trend_needs_three_points() -> None:
    two = metric("ReplicaLag", [1, 90])
    assert check_fact(cite(two, "rising"), two) == f"{two.id} has 2 point(s) there; a trend needs at least 3"


def test_a_trend_is_not_a_fact_about_a_record_or_an_aggregate() -> None:
    assert (
        check_fact(cite(SQL, "rising"), SQL) == f"{SQL.id} is not a time series; facts about it: present, above, below"
    )
    assert check_fact(cite(BACKUP, "flat"), BACKUP) is not None


@pytest.mark.parametrize(
    ("fact", "value", "holds"),
    [
        (FactKind.ABOVE, 0.5, True),
        (FactKind.ABOVE, 1, False),  # strict: the lowest point is 1, which is not above 1
        (FactKind.ABOVE, 30, False),
        (FactKind.BELOW, 61, True),
        (FactKind.BELOW, 60, False),  # strict: the highest point is 60
        (FactKind.BELOW, 5, False),
    ],
)
def test_above_and_below_hold_for_every_point(fact: FactKind, value: float, holds: bool) -> None:
    why = check_fact(cite(RISING, fact, value), RISING)
    assert (why is None) is holds, why


def test_above_says_the_point_that_contradicts_it() -> None:
    assert check_fact(cite(RISING, "above", 30), RISING) == f"{RISING.id} reaches 1, not above 30 throughout"
    assert check_fact(cite(RISING, "below", 5), RISING) == f"{RISING.id} reaches 60, not below 5 throughout"


def test_above_or_below_without_a_value_is_refused() -> None:
    for fact in ("above", "below"):
        why = check_fact(Citation(item=RISING.id, fact=FactKind(fact)), RISING)
        assert why is not None and why.startswith(f"{fact} needs a value"), why


def test_above_and_below_hold_for_an_aggregate_without_a_time() -> None:
    assert check_fact(cite(SQL, "above", 0.5), SQL) is None
    assert check_fact(cite(SQL, "below", 0.5), SQL) == f"{SQL.id} reaches 0.6, not below 0.5 throughout"


def test_absent_holds_for_a_series_served_without_points() -> None:
    assert check_fact(cite(EMPTY, "absent"), EMPTY) is None
    assert check_fact(cite(FLAT, "absent"), FLAT) == f"{FLAT.id} was served with 9 point(s) there"


def test_absent_in_a_window_holds_where_no_point_was_served() -> None:
    after = cite(FLAT, "absent", start=at(30), end=at(40))
    assert check_fact(after, FLAT) is None
    assert (
        check_fact(cite(FLAT, "absent", start=at(0), end=at(2)), FLAT) == f"{FLAT.id} was served with 3 point(s) there"
    )


def test_a_record_is_never_absent() -> None:
    why = check_fact(cite(BACKUP, "absent"), BACKUP)
    assert why is not None and "not a time series" in why
    assert check_fact(cite(SQL, "absent"), SQL) is not None


def test_present_holds_for_anything_served_and_a_dated_record_inside_its_window() -> None:
    for item in (FLAT, EMPTY, SQL, BACKUP):
        assert check_fact(cite(item), item) is None
    assert check_fact(cite(BACKUP, start=at(3), end=at(5)), BACKUP) is None
    assert check_fact(cite(BACKUP, start=at(3)), BACKUP) is None
    outside = check_fact(cite(BACKUP, start=at(5), end=at(9)), BACKUP)
    assert outside == f"{BACKUP.id} happened at {at(4).isoformat()}, outside the window cited"
    assert check_fact(cite(BACKUP, end=at(3)), BACKUP) is not None


def test_a_window_narrows_a_trend_to_its_points() -> None:
    # Overall rising; inside the first four minutes, flat.
    early = {"start": at(0), "end": at(3)}
    assert check_fact(cite(RISING, "rising"), RISING) is None
    assert check_fact(cite(RISING, "flat", **early), RISING) is None
    assert check_fact(cite(RISING, "rising", **early), RISING) is not None
    assert check_fact(cite(RISING, "above", 10, start=at(6)), RISING) is None
    assert check_fact(cite(RISING, "above", 10), RISING) is not None


def test_a_window_with_no_point_served_supports_no_value_fact() -> None:
    why = check_fact(cite(FLAT, "above", 1, start=at(30)), FLAT)
    assert why == f"{FLAT.id} was served no point in the window cited, so it cannot be above"


def test_a_fact_is_checked_against_the_points_served_not_the_whole_series() -> None:
    # The same item (same id) as a temporal run served it up to minute 7: the rise came later.
    assert LATE.id == LATE_PREFIX.id
    assert check_fact(cite(LATE, "rising"), LATE) is None
    assert check_fact(cite(LATE, "rising"), LATE_PREFIX) is not None
    assert check_fact(cite(LATE, "above", 20, start=at(9)), LATE_PREFIX) is not None
    assert check_fact(cite(LATE, "flat"), LATE_PREFIX) is None


def test_a_dated_record_outside_a_window_fails_every_fact() -> None:
    later = event(50, "Backing up DB instance")
    assert check_fact(cite(later, start=at(0), end=at(10)), later) is not None
    assert check_fact(cite(later, "above", 1, end=at(10)), later) is not None
    assert timedelta(minutes=50) == later.at - at(0)  # type: ignore[operator]
