"""Seed splits of the generated families: train seeds to develop policies on, evaluation seeds to measure them.

The ranges are disjoint and fixed: a policy (or a lookup table) fitted on `TRAIN_SEEDS` is measured on
`EVAL_SEEDS`, episodes it has never seen. Any non-negative seed outside both is allowed too (unseen, unsplit).
"""

from __future__ import annotations

__all__ = ["EVAL_SEEDS", "SEED_LIMIT", "TRAIN_SEEDS", "split_of"]

TRAIN_SEEDS = range(0, 100_000)
"""Seeds to develop and fit policies on."""
EVAL_SEEDS = range(100_000, 200_000)
"""Seeds to measure policies on; never used while writing one."""
SEED_LIMIT = 2**31
"""Family seeds lie in [0, 2**31)."""


def split_of(seed: int) -> str:
    """`train`, `eval` or `unsplit` (a valid seed outside both ranges)."""
    if seed in TRAIN_SEEDS:
        return "train"
    if seed in EVAL_SEEDS:
        return "eval"
    return "unsplit"
