"""The main job's speed: the built-in `sredrill run --axis2`, and the cost per scenario as a pack grows.

    python benchmarks/run_speed.py                 # reference agent
    python benchmarks/run_speed.py --agent majority

1. `sredrill run --pack rds_postgres --axis2` as a whole process, median of 5 (target: under 2 s here).
2. Scaling: packs made of 15, 150 and 1,500 copies of the built-in scenarios 000–014 (folder names have three
   digits, so 1,500 copies are three packs of 500), one `sredrill run` each; the cost per scenario should
   stay flat (linear growth). Prints a table; nothing is asserted.
"""

from __future__ import annotations

import argparse
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
    args = parser.parse_args()
    sredrill = [sys.executable, "-m", "sredrill"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = [*sredrill, "run", "--pack", "rds_postgres", "--axis2", "--agent", args.agent, "--json"]
        runs = [timed([*base, "--db", str(work / f"a{i}.db")], Path.cwd()) for i in range(args.reps)]
        print(f"sredrill run --pack rds_postgres --axis2 --agent {args.agent}: median {statistics.median(runs):.2f} s "
              f"over {args.reps} (min {min(runs):.2f}, max {max(runs):.2f})")  # fmt: skip
        print(f"{'scenarios':>10} {'wall s':>8} {'ms/scenario':>12}")
        for copies in (15, 150, 1500):
            packs = make_packs(work, copies)
            cmd = [*sredrill, "run", "--agent", args.agent, "--db", str(work / f"s{copies}.db"), "--json"]
            for p in packs:
                cmd += ["--pack", str(p)]
            wall = timed(cmd, Path.cwd())
            print(f"{copies:>10} {wall:8.2f} {wall / copies * 1000:12.2f}")


if __name__ == "__main__":
    main()
