"""The main job's speed: the built-in `sredrill run --axis2`, and the cost per scenario as a pack grows.

    python benchmarks/run_speed.py                 # reference agent
    python benchmarks/run_speed.py --agent majority
    python benchmarks/run_speed.py --quick         # 2 runs, 2 rounds, packs of 15 and 150

1. `sredrill run --pack rds_postgres --axis2` as a whole process, median of 5 (target: under 2 s here).
2. Scaling: packs made of 15, 150 and 1,500 copies of the built-in scenarios 000–014 (folder names have three
   digits, so 1,500 copies are three packs of 500), one `sredrill run` each, the sizes alternating round by
   round (15, 150, 1,500, then again); the cost per scenario should stay flat (linear growth). The marginal
   cost per scenario of each round, (t(largest) − t(15)) / (largest − 15), is printed with the median, min and
   max; goal (issue 12): ≤ 6 ms. There is no peer. Prints a table; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
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


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", default="reference")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the scaling runs")
    parser.add_argument("--quick", action="store_true", help="2 runs, 2 rounds, packs of 15 and 150 only")
    args = parser.parse_args()
    sizes = (15, 150) if args.quick else (15, 150, 1500)
    reps, rounds = (2, 2) if args.quick else (args.reps, args.rounds)
    sredrill = [sys.executable, "-m", "sredrill"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = [*sredrill, "run", "--pack", "rds_postgres", "--axis2", "--agent", args.agent, "--json"]
        runs = [timed([*base, "--db", str(work / f"a{i}.db")], Path.cwd()) for i in range(reps)]
        packs = {copies: make_packs(work, copies) for copies in sizes}
        walls: dict[int, list[float]] = {copies: [] for copies in sizes}
        for r in range(rounds):
            for copies in sizes:
                cmd = [*sredrill, "run", "--agent", args.agent, "--db", str(work / f"s{copies}-{r}.db"), "--json"]
                for p in packs[copies]:
                    cmd += ["--pack", str(p)]
                walls[copies].append(timed(cmd, Path.cwd()))
            print(f"round {r + 1}: " + ", ".join(f"{c}: {walls[c][-1]:.2f} s" for c in sizes), flush=True)
    print(f"\nsredrill run --pack rds_postgres --axis2 --agent {args.agent}: median {statistics.median(runs):.2f} s "
          f"over {reps} (min {min(runs):.2f}, max {max(runs):.2f})")  # fmt: skip
    print(f"{'scenarios':>10} {'wall s':>8} {'ms/scenario':>12}   (median of {rounds} rounds)")
    for copies in sizes:
        wall = statistics.median(walls[copies])
        print(f"{copies:>10} {wall:8.2f} {wall / copies * 1000:12.2f}")
    small, large = sizes[0], sizes[-1]
    marginal = [(hi - lo) / (large - small) * 1000 for lo, hi in zip(walls[small], walls[large], strict=True)]
    print(f"marginal ms per scenario, (t({large}) − t({small})) / {large - small}, per round: "
          f"{', '.join(f'{v:.2f}' for v in marginal)}; median {statistics.median(marginal):.2f} "
          f"(min {min(marginal):.2f}, max {max(marginal):.2f}); goal ≤ 6 ms")  # fmt: skip
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
