"""A selector's `during`: a level counts only when it is stated over the whole window and was served there, so
"CPU stayed below 90" refutes a saturation through the report's peak, not over a quiet stretch."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sredrill.diagnosis import Citation, FactKind
from sredrill.grading.grounding import _decisive
from sredrill.scenarios.answer import ItemSelector
from tests.grading.served import at, metric
from tests.support.scenario_builder import z

# Calm, then a report's peak at 85-88 (minutes 10-14 of a one-minute series), then calm again.
VALUES = [20.0] * 10 + [85.0, 87.0, 88.0, 86.0, 85.0] + [20.0] * 10
CPU = metric("CPUUtilization", VALUES, start=at(0))
PEAK = ItemSelector.model_validate(
    {"metric": "CPUUtilization", "shows": ["below"], "below": 90, "during": [z(at(10)), z(at(14))]}
)


def below(value: float, start: int | None = None, end: int | None = None) -> Citation:
    return Citation(
        item=CPU.id,
        fact=FactKind.BELOW,
        value=value,
        start=at(start) if start is not None else None,
        end=at(end) if end is not None else None,
    )


def test_a_level_over_the_whole_series_or_the_peak_counts() -> None:
    assert _decisive(below(89), CPU, [PEAK])
    assert _decisive(below(89, 8, 16), CPU, [PEAK])


def test_a_level_over_a_quiet_stretch_does_not() -> None:
    assert not _decisive(below(21, 0, 5), CPU, [PEAK])
    assert not _decisive(below(89, 11, 16), CPU, [PEAK])  # misses the window's first minute


def test_a_level_about_points_that_never_reach_the_window_does_not() -> None:
    before = metric("CPUUtilization", VALUES[:8], start=at(0))
    assert not _decisive(Citation(item=before.id, fact=FactKind.BELOW, value=21), before, [PEAK])


def test_without_during_any_sustained_level_counts() -> None:
    plain = ItemSelector.model_validate({"metric": "CPUUtilization", "shows": ["below"], "below": 90})
    assert _decisive(below(21, 0, 5), CPU, [plain])


def test_during_is_described_and_checked() -> None:
    assert "from " in PEAK.describe() and " to " in PEAK.describe()
    with pytest.raises(ValidationError, match="start at or before end"):
        ItemSelector.model_validate({"metric": "CPUUtilization", "during": [z(at(5)), z(at(1))]})
    with pytest.raises(ValidationError):
        ItemSelector.model_validate({"metric": "CPUUtilization", "during": ["yesterday", z(at(1))]})
