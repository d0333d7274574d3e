"""The RDS generator's cost at the default size: generation time, bytes per scenario, load time.

    python benchmarks/generate_rds.py                 # 100 and 1,000 scenarios (seed 0)
    python benchmarks/generate_rds.py --counts 10 100 # other sizes
    python benchmarks/generate_rds.py --load 50       # load time measured on the first 50 (default 100)

For each count: the wall time to generate every scenario in memory (`sredrill.generate.generate`, files made
and dropped one at a time, as `sredrill run --generate` streams them), the mean and largest bytes per scenario
(and of its metrics file), the CPU time beside the wall time (the machine may be shared: the load average is
printed), and the time `generated_pack` takes to generate and load the first `--load`
scenarios exactly as `load_pack` reads a folder (per scenario). Nothing is asserted; docs/generator.md keeps
the figures (the issue's target: 1,000 scenarios in under 3 minutes).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sredrill.generate import GenerateSpec, generate, generated_pack  # noqa: E402
from sredrill.generate.rds import VERSION  # noqa: E402


def measure(count: int, seed: int) -> dict[str, float]:
    spec = GenerateSpec(domain="rds", seed=seed, count=count)
    sizes: list[int] = []
    metrics: list[int] = []
    start, cpu = time.perf_counter(), time.process_time()
    for scenario in generate(spec):
        sizes.append(sum(len(b) for b in scenario.files.values()))
        metrics.append(len(scenario.files["aws_cloudwatch_metrics.json"]))
    took = time.perf_counter() - start
    return {
        "seconds": took,
        "cpu_seconds": time.process_time() - cpu,
        "per_scenario_ms": took / count * 1000,
        "mean_mb": sum(sizes) / count / 1e6,
        "max_mb": max(sizes) / 1e6,
        "metrics_mean_mb": sum(metrics) / count / 1e6,
    }


def measure_load(count: int, seed: int) -> float:
    """Seconds per scenario to generate and load via `generated_pack`, minus generation alone."""
    spec = GenerateSpec(domain="rds", seed=seed, count=count)
    start = time.perf_counter()
    for _ in generate(spec):
        pass
    gen = time.perf_counter() - start
    start = time.perf_counter()
    pack = generated_pack(spec)
    both = time.perf_counter() - start
    assert not pack.broken, dict(pack.broken)
    return (both - gen) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--load", type=int, default=100, help="scenarios to load through generated_pack")
    args = parser.parse_args()
    print(f"generator {VERSION}; {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    for count in args.counts:
        m = measure(count, args.seed)
        print(
            f"{count:>6} scenarios: {m['seconds']:7.1f} s wall, {m['cpu_seconds']:.1f} s CPU "
            f"({m['per_scenario_ms']:.0f} ms each); "
            f"{m['mean_mb']:.2f} MB each on average (max {m['max_mb']:.2f}, metrics file {m['metrics_mean_mb']:.2f})"
        )
    per = measure_load(args.load, args.seed)
    print(f"load via generated_pack: {per * 1000:.0f} ms per scenario (first {args.load}, beyond generating it)")


if __name__ == "__main__":
    main()
