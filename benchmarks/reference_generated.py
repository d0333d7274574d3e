"""An agent on a generated RDS set, per difficulty: pass rate on Axis 1 and Axis 2, failure-mode accuracy, and
the gap (Axis 1 − Axis 2), as issue 18 asks them reported (docs/generator.md, "Measured").

Usage (the figures of the docs come from evaluation seeds, 1,000,000 and up; never tune on them):

    python benchmarks/reference_generated.py --seed 1000000 --count 500
    python benchmarks/reference_generated.py --seed 1000000 --count 40 --agent redteam:enumerator

Runs in process, `--jobs 2`, both axes; the set is generated in memory (nothing is written).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time
from collections import Counter

from sredrill.engine.api import run_packs
from sredrill.engine.config import Settings
from sredrill.engine.execute import RunOptions
from sredrill.results import RunReport, TestResult, TestStatus


class _Quiet:
    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.0f}%" if d else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1_000_000)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--agent", default="reference")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    spec = f"rds:seed={args.seed}:count={args.count}"
    start = time.perf_counter()
    report = asyncio.run(
        run_packs(
            [],
            settings=Settings(jobs=args.jobs, agent=args.agent),
            options=RunOptions(jobs=args.jobs),
            listener=_Quiet(),
            store=None,
            axis2=True,
            generate=spec,
        )
    )
    wall = time.perf_counter() - start
    total: Counter[tuple[int, int]] = Counter()
    passed: Counter[tuple[int, int]] = Counter()
    modes: Counter[tuple[int, int]] = Counter()
    for r in report.results:
        key = (r.axis or 1, r.difficulty or 0)
        total[key] += 1
        passed[key] += r.status == TestStatus.PASSED
        modes[key] += bool(r.checks and r.checks["failure_modes"].passed)
    levels = sorted({d for _, d in total})
    print(f"{args.agent} on {spec} (both axes), {wall:.1f} s, peak RSS {_peak_mb():.0f} MB")
    print(f"{'':26}" + "".join(f"{'d' + str(d):>8}" for d in levels) + f"{'all':>8}")

    def row(name: str, counts: Counter[tuple[int, int]], axis: int) -> None:
        cells = [_pct(counts[(axis, d)], total[(axis, d)]) for d in levels]
        whole = _pct(sum(counts[(axis, d)] for d in levels), sum(total[(axis, d)] for d in levels))
        print(f"{name:26}" + "".join(f"{c:>8}" for c in cells) + f"{whole:>8}")

    row("pass, Axis 1 (full)", passed, 1)
    row("pass, Axis 2 (selective)", passed, 2)
    row("failure modes, Axis 1", modes, 1)
    row("failure modes, Axis 2", modes, 2)
    gaps = []
    for d in levels:
        a1 = passed[(1, d)] / total[(1, d)] if total[(1, d)] else 0.0
        a2 = passed[(2, d)] / total[(2, d)] if total[(2, d)] else 0.0
        gaps.append(f"{100 * (a1 - a2):+.0f}")
    n1, n2 = sum(total[(1, d)] for d in levels), sum(total[(2, d)] for d in levels)
    gap = 100 * (sum(passed[(1, d)] for d in levels) / n1 - sum(passed[(2, d)] for d in levels) / n2)
    print(f"{'gap (pp)':26}" + "".join(f"{g:>8}" for g in gaps) + f"{gap:>+8.1f}")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
