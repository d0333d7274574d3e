"""Peak memory and wall time of `sredrill run --generate` by count: a generated set streams (issue 18, point 7).

    python benchmarks/generated_run_memory.py                        # 100 and 1,000 scenarios
    python benchmarks/generated_run_memory.py --counts 10000         # the issue's 10,000 (several hours here)
    python benchmarks/generated_run_memory.py --agent reference --axis2 --counts 100

Each count runs `python -m sredrill run --generate rds:seed=SEED:count=N --agent AGENT --jobs 2 --json` in its
own process, with a store in a temporary folder (every result and trajectory is written, as a real run does),
and reports the run's wall time, its peak RSS (that process's `ru_maxrss`, from `os.wait4`), the tests run
and their statuses, and the machine's load average (the machine may be shared). Nothing is asserted;
docs/performance.md, "Generated sets", keeps the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(count: int, *, seed: int, agent: str, jobs: int, axis2: bool) -> dict[str, object]:
    spec = f"rds:seed={seed}:count={count}"
    command = [sys.executable, "-m", "sredrill", "run", "--generate", spec, "--agent", agent, "--jobs", str(jobs)]
    command += ["--axis2"] if axis2 else []
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        command += ["--db", str(Path(folder) / "runs.db"), "--reporter", "json", "--output", str(report)]
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        start = time.perf_counter()
        with open(Path(folder) / "stderr.txt", "wb") as stderr:
            child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=env, cwd=folder)
            _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1, 3):
            tail = (Path(folder) / "stderr.txt").read_text(errors="replace")[-2000:]
            raise SystemExit(f"{' '.join(command)} exited {code}:\n{tail}")
        results = json.loads(report.read_text())["results"]
    return {
        "command": f"sredrill run --generate {spec} --agent {agent} --jobs {jobs}" + (" --axis2" if axis2 else ""),
        "count": count,
        "tests": len(results),
        "statuses": dict(Counter(r["status"] for r in results)),
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
        "load_average": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--seed", type=int, default=1_000_000)
    parser.add_argument("--agent", default="keyword")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--axis2", action="store_true", help="run both axes (each test makes its own scenario)")
    args = parser.parse_args()
    for count in args.counts:
        row = measure(count, seed=args.seed, agent=args.agent, jobs=args.jobs, axis2=args.axis2)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
