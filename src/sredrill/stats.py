"""How sure a pass rate is: the Wilson interval of one rate, McNemar's exact test between two runs.

A benchmark's pass rate is a proportion over a few dozen results, so its noise is large; these two functions say
how large, on every surface that shows a rate (`wilson`) and when two runs are compared on the same tests
(`mcnemar`). Pure arithmetic on counts (`math.comb`, no scipy): importable from every layer.
"""

from __future__ import annotations

from math import comb, sqrt

__all__ = ["Z_95", "mcnemar", "wilson"]

Z_95 = 1.96
"""The normal quantile of a two-sided 95% interval."""


def wilson(k: float, n: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion k/n (95% by default).

    Unlike the normal approximation, it stays inside [0, 1] and does not collapse to a point at k = 0 or k = n,
    which is where small benchmark runs often sit.

    Args:
        k: successes (may be fractional: with `--repeat`, the sum of each result's pass share).
        n: trials; 0 gives None (nothing graded: no rate, so no interval).
        z: the normal quantile (1.96 for 95%).

    Returns:
        (low, high), each in [0, 1]; None when n is 0.

    Raises:
        ValueError: n is negative or k is outside [0, n].
    """
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"wilson needs 0 <= k <= n and n >= 0, got k={k}, n={n}")
    if n == 0:
        return None
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar(b: int, c: int) -> float:
    """McNemar's exact test on paired results: the two-sided p-value that b and c differ only by chance.

    Args:
        b: the discordant pairs one way (e.g. tests that failed in run A and passed in run B: fixed).
        c: the discordant pairs the other way (passed in A, failed in B: regressed).

    Returns:
        p = min(1, 2·P(X ≤ min(b, c))) with X ~ Binomial(b + c, 1/2); 1.0 when there is no discordant pair.

    Raises:
        ValueError: b or c is negative.
    """
    if b < 0 or c < 0:
        raise ValueError(f"mcnemar needs counts >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)
