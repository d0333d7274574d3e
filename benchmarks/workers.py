"""`sredrill run --workers N` against `--workers 1`: the same pack run, wall time, alternating round by round.

    python benchmarks/workers.py                        # rds_postgres and k8s, both axes, 4 repeats: 2 workers vs 1
    python benchmarks/workers.py --workers 2 --rounds 5
    python benchmarks/workers.py --pack rds_generated --repeat 1
    python benchmarks/workers.py --generate rds:seed=3:count=100 --repeat 1

Each round runs `sredrill run` in a fresh process (its own store in a temporary folder) once with `--workers 1`
and once with `--workers N`, the order alternating between rounds so neither always runs on a warm cache, and
prints both wall times and their ratio (1 worker / N workers: above 1 means the workers are faster). The runs
must report the same results: the script says so, or stops. Nothing is asserted about speed; docs/scale.md
keeps the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(selection: list[str], workers: int, jobs: int, folder: Path) -> tuple[float, dict[str, str]]:
    """One `sredrill run`: its wall time and each result's status."""
    db = folder / f"runs-{workers}-{time.monotonic_ns()}.db"
    cmd = [sys.executable, "-m", "sredrill", "run", *selection, "--workers", str(workers), "--jobs", str(jobs),
           "--db", str(db), "--json"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=folder, check=False)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"sredrill run failed ({done.returncode}): {done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    return wall, {r["id"]: r["status"] for r in report["results"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pack", action="append", help="repeatable (default: rds_postgres and k8s)")
    parser.add_argument("--generate", default=None, help="a generated set instead of --pack")
    parser.add_argument("--repeat", type=int, default=4, help="attempts per scenario (more work per worker start)")
    args = parser.parse_args()
    packs = [f"--pack={p}" for p in args.pack or ("rds_postgres", "k8s")]
    selection = [*(["--generate", args.generate] if args.generate else packs), "--axis2", "--repeat", str(args.repeat)]
    jobs = args.workers
    print(f"{' '.join(selection)}: --workers 1 vs --workers {args.workers} (--jobs {jobs}), {args.rounds} rounds, "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i in range(args.rounds):
            order = (1, args.workers) if i % 2 == 0 else (args.workers, 1)
            walls: dict[int, float] = {}
            statuses: dict[int, dict[str, str]] = {}
            for workers in order:
                walls[workers], statuses[workers] = run(selection, workers, jobs, folder)
            if statuses[1] != statuses[args.workers]:
                sys.exit("the two runs reported different results")
            ratio = walls[1] / walls[args.workers]
            ratios.append(ratio)
            print(f"round {i + 1}: 1 worker {walls[1]:.1f} s, {args.workers} workers {walls[args.workers]:.1f} s, "
                  f"ratio {ratio:.2f}x ({len(statuses[1])} results, the same in both)")  # fmt: skip
    print(f"median ratio {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
