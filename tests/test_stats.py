"""The Wilson interval and McNemar's exact test against known values (textbook tables, hand-computed sums)."""

from __future__ import annotations

import pytest

from sredrill.stats import mcnemar, wilson


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (5, 10, 0.2366, 0.7634),
        (1, 1, 0.2065, 1.0),
        (81, 263, 0.2553, 0.3662),  # Wilson (1927) / Newcombe (1998) style example, 95%
    ],
)
def test_wilson_matches_known_intervals(k: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson(k, n)  # type: ignore[misc]
    assert (lo, hi) == (pytest.approx(low, abs=5e-4), pytest.approx(high, abs=5e-4))


def test_wilson_is_symmetric_and_holds_the_rate() -> None:
    lo, hi = wilson(3, 17)  # type: ignore[misc]
    mirror_lo, mirror_hi = wilson(14, 17)  # type: ignore[misc]
    assert (lo, hi) == (pytest.approx(1 - mirror_hi), pytest.approx(1 - mirror_lo))
    assert lo < 3 / 17 < hi


def test_wilson_of_nothing_graded_is_none() -> None:
    assert wilson(0, 0) is None


def test_wilson_narrows_with_more_trials() -> None:
    small, large = wilson(5, 10), wilson(500, 1000)
    assert small is not None and large is not None
    assert large[1] - large[0] < small[1] - small[0]


@pytest.mark.parametrize(("k", "n"), [(-1, 10), (11, 10), (0, -1)])
def test_wilson_refuses_impossible_counts(k: int, n: int) -> None:
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson(k, n)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),
        (0, 6, 0.03125),
        (6, 0, 0.03125),
        (1, 4, 0.375),  # 2 * (1 + 5) / 32
        (3, 3, 1.0),
        (2, 10, 0.03857421875),  # 2 * (1 + 12 + 66) / 4096
    ],
)
def test_mcnemar_exact_p_values(b: int, c: int, p: float) -> None:
    assert mcnemar(b, c) == pytest.approx(p)


def test_mcnemar_is_symmetric() -> None:
    for b in range(8):
        for c in range(8):
            assert mcnemar(b, c) == mcnemar(c, b)


def test_mcnemar_refuses_negative_counts() -> None:
    with pytest.raises(ValueError, match="counts >= 0"):
        mcnemar(-1, 2)
