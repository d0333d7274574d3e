"""The main job's speed: the built-in `sredrill run --axis2`, and the cost per scenario as a pack grows.

    python benchmarks/run_speed.py                 # reference agent
    python benchmarks/run_speed.py --agent majority
    python benchmarks/run_speed.py --quick         # 2 runs, 2 rounds, packs of 15 and 150

1. `sredrill run --pack rds_postgres --axis2` as a whole process, median of 5 (target: under 2 s here).
2. Scaling: packs made of 15, 150 and 1,500 copies of the built-in scenarios 000–014 (folder names have three
   digits, so 1,500 copies are three packs of 500), one `sredrill run` each, the sizes alternating round by
   round (15, 150, 1,500, then again); the cost per scenario should stay flat (linear growth). The marginal
   cost per scenario of each round, (t(largest) − t(15)) / (largest − 15), is printed with the median, min and
   max; goal (issue 12): ≤ 6 ms, in wall time and in CPU time (user + system of the run's process; a shared
   machine's load moves it far less). There is no peer; `--baseline SRC` measures an older checkout's `src/`
   in the same rounds (before, after, alternating), with the before ÷ after ratio of each round. Prints a
   table; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILTIN = ROOT / "src" / "sredrill" / "scenarios" / "packs" / "rds_postgres"
PER_PACK = 500


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path, src: str | None = None) -> tuple[float, float]:
    """(wall s, CPU s) of one run; `src` puts an older checkout's `src/` first on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": src} if src else None
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed, _children_cpu() - cpu


def make_packs(work: Path, copies: int) -> list[Path]:
    """`copies` scenarios cycling through 000–014, spread over packs of at most 500."""
    sources = sorted(p for p in BUILTIN.iterdir() if p.is_dir() and p.name[:3].isdigit() and int(p.name[:3]) <= 14)
    packs = []
    for start in range(0, copies, PER_PACK):
        pack = work / f"scale{copies}_{start // PER_PACK}"
        pack.mkdir()
        if (BUILTIN / "pack.yml").exists():
            shutil.copy(BUILTIN / "pack.yml", pack / "pack.yml")
        for i in range(start, min(copies, start + PER_PACK)):
            src = sources[i % len(sources)]
            dst = pack / f"{i - start:03d}-{src.name[4:]}"
            shutil.copytree(src, dst)
            base = dst / "scenario.yml"
            # a `base:` names a sibling folder; point it at the copy of that sibling in this pack
            text = base.read_text()
            for line in text.splitlines():
                if line.startswith("base:"):
                    wanted = line.split(":", 1)[1].strip().strip("'\"")
                    sibling = next(p for p in pack.iterdir() if p.name[4:] == wanted[4:])
                    base.write_text(text.replace(line, f"base: {sibling.name}"))
        packs.append(pack)
    return packs


def _spread(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f}); "
        f"rounds {', '.join(f'{v:.2f}' for v in values)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", default="reference")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the scaling runs")
    parser.add_argument("--quick", action="store_true", help="2 runs, 2 rounds, packs of 15 and 150 only")
    parser.add_argument("--baseline", metavar="SRC", help="also measure the sredrill in SRC (a src/ folder)")
    args = parser.parse_args()
    sizes = (15, 150) if args.quick else (15, 150, 1500)
    reps, rounds = (2, 2) if args.quick else (args.reps, args.rounds)
    sredrill = [sys.executable, "-m", "sredrill"]
    sides = [("before", args.baseline), ("after", None)] if args.baseline else [("sredrill", None)]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = [*sredrill, "run", "--pack", "rds_postgres", "--axis2", "--agent", args.agent, "--json"]
        runs: dict[str, list[float]] = {label: [] for label, _ in sides}
        for i in range(reps):
            for label, src in sides:
                runs[label].append(timed([*base, "--db", str(work / f"a{label}{i}.db")], Path.cwd(), src)[0])
        packs = {copies: make_packs(work, copies) for copies in sizes}
        walls = {(label, c): [] for label, _ in sides for c in sizes}
        cpus = {(label, c): [] for label, _ in sides for c in sizes}
        for r in range(rounds):
            for copies in sizes:
                for label, src in sides:
                    cmd = [*sredrill, "run", "--agent", args.agent, "--db", str(work / f"s{label}{copies}-{r}.db")]
                    for p in packs[copies]:
                        cmd += ["--pack", str(p)]
                    wall, cpu = timed([*cmd, "--json"], Path.cwd(), src)
                    walls[label, copies].append(wall)
                    cpus[label, copies].append(cpu)
            print(
                f"round {r + 1}: "
                + ", ".join(f"{label} {c}: {walls[label, c][-1]:.2f} s" for c in sizes for label, _ in sides),
                flush=True,
            )
    print()
    for label, _ in sides:
        print(f"{label}: sredrill run --pack rds_postgres --axis2 --agent {args.agent}: {_spread(runs[label])} s")
    print(f"{'':>8} {'scenarios':>10} {'wall s':>8} {'ms/scenario':>12}   (median of {rounds} rounds)")
    for label, _ in sides:
        for copies in sizes:
            wall = statistics.median(walls[label, copies])
            print(f"{label:>8} {copies:>10} {wall:8.2f} {wall / copies * 1000:12.2f}")
    small, large = sizes[0], sizes[-1]
    marginal: dict[str, list[float]] = {}
    for label, _ in sides:
        for what, table in (("wall", walls), ("CPU", cpus)):
            values = [
                (hi - lo) / (large - small) * 1000
                for lo, hi in zip(table[label, small], table[label, large], strict=True)
            ]
            marginal[f"{label} {what}"] = values
            print(f"{label}: marginal {what} ms per scenario, (t({large}) − t({small})) / {large - small}: "
                  f"{_spread(values)}; goal ≤ 6 ms")  # fmt: skip
    if args.baseline:
        for what in ("wall", "CPU"):
            ratios = [b / a for b, a in zip(marginal[f"before {what}"], marginal[f"after {what}"], strict=True)]
            print(f"before ÷ after, marginal {what} per scenario: {_spread(ratios)}")
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
