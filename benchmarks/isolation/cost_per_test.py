"""The cost per test of each isolation level, as a ratio to `none`, measured in alternating rounds (issue 17).

    python benchmarks/isolation/cost_per_test.py            # 5 rounds, `sredrill run` and `test`, py: and cmd:
    python benchmarks/isolation/cost_per_test.py --quick    # 2 rounds, fewer tests
    python benchmarks/isolation/cost_per_test.py --commands test --agents py   # one of the four

Each measurement is one `sredrill` process with `--jobs 2` and an agent that answers at once (`quiet_agent.py`:
no tools, no thinking), `py:quiet_agent:agent` or `cmd:python quiet_agent.py`:
- `run`: one scenario of the test pack `tests/fixtures/k8s_small` (it loads in a moment) with `--repeat N`;
- `test`: `sredrill test quiet_eval.py --no-judge`, an eval file of N tests (`QUIET_EVAL_TESTS=N`), each one
  `await agent.run()` and one expect.
The cost per test is the marginal one, (t(N_HI) - t(N_LO)) / (N_HI - N_LO), so start-up (the CLI, the pack or
eval file, the first workers) cancels out. In every round the levels run in turn (none, process, sandbox, none,
process, sandbox, …), so a change in the shared machine's load hits them alike, and each round gives its own
ratios to `none`.

What each level adds: `process` builds the agent's environment from an allow-list; `sandbox` starts each `cmd:`
agent under bubblewrap (a fresh workdir, masks, and the tools forwarder, a Python process, inside) and each
`py:` agent worker under bubblewrap (workers are reused, so `py:` pays it once per slot, not per test). Under
`sredrill test` the agents are started by the body workers (never isolated themselves): a `cmd:` agent per test,
a `py:` agent in an agent worker of the body worker's own, except at `none`, where it runs inline in the body
worker (so `test py: none` is the cheapest form, and its ratios include the agent worker's round trip).
Prints the per-round ratios and their median, min and max; nothing is asserted (speed is measured, never tested).
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

HERE = Path(__file__).resolve().parent
LEVELS = ("none", "process", "sandbox")
COMMANDS = ("run", "test")
JOBS = 2
AGENTS = {"py": "py:quiet_agent:agent", "cmd": f"cmd:{sys.executable} {HERE / 'quiet_agent.py'}"}


PACK = HERE.parents[1] / "tests" / "fixtures" / "k8s_small"
SCENARIO = "001-ledger-memory"
EVAL_FILE = HERE / "quiet_eval.py"


def run_s(work: Path, command: str, agent: str, level: str, tests: int) -> float:
    """Wall time of one `sredrill run` (`tests` repeats of one scenario) or `sredrill test` (`tests` tests) process."""
    if command == "run":
        selected = ["run", "--pack", str(PACK), "-s", SCENARIO, "--repeat", str(tests)]
    else:
        selected = ["test", str(EVAL_FILE), "--no-judge"]
    cmd = [sys.executable, "-m", "sredrill", *selected, "--agent", AGENTS[agent], "--isolation", level,
           "--jobs", str(JOBS), "--agent-dir", str(HERE), "--db", str(work / f"{command}-{agent}-{level}-{tests}.db"),
           "--json"]  # fmt: skip
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "QUIET_EVAL_TESTS": str(tests),
    }
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    summary = json.loads(done.stdout)["summary"]
    # `--repeat N` counts its scenario once; the eval file must have registered N tests.
    if summary.get("errored") or (command == "test" and summary.get("total") != tests):
        raise SystemExit(f"{' '.join(cmd)}: errored, or not {tests} tests: {summary}\n{done.stderr[-2000:]}")
    return elapsed


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):5.2f}x  (min {min(values):.2f}, max {max(values):.2f})"


def _listed(text: str, allowed: tuple[str, ...], flag: str) -> list[str]:
    chosen = [v for v in text.split(",") if v]
    unknown = [v for v in chosen if v not in allowed]
    if unknown or not chosen:
        raise SystemExit(f"{flag}: {', '.join(unknown) or 'nothing'} given; pick from {', '.join(allowed)}")
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tests", type=int, default=61, help="N_HI: tests in the large run (N_LO is 1)")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 31 tests")
    parser.add_argument("--agents", default="py,cmd", help="which agent forms: py, cmd or py,cmd")
    parser.add_argument("--commands", default="run,test", help="which commands: run, test or run,test")
    args = parser.parse_args()
    rounds, n_hi = (2, 31) if args.quick else (args.rounds, args.tests)
    n_lo = 1
    forms = [
        f"{command} {agent}"
        for command in _listed(args.commands, COMMANDS, "--commands")
        for agent in _listed(args.agents, tuple(AGENTS), "--agents")
    ]
    per_test: dict[tuple[str, str], list[float]] = {(f, lv): [] for f in forms for lv in LEVELS}
    ratios: dict[tuple[str, str], list[float]] = {(f, lv): [] for f in forms for lv in LEVELS if lv != "none"}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for r in range(rounds):
            shown = []
            for form in forms:
                command, agent = form.split()
                seconds = {}
                for level in LEVELS:
                    hi = run_s(work, command, agent, level, n_hi)
                    lo = run_s(work, command, agent, level, n_lo)
                    seconds[level] = (hi - lo) / (n_hi - n_lo)
                    per_test[form, level].append(seconds[level])
                for level in LEVELS[1:]:
                    ratios[form, level].append(seconds[level] / seconds["none"])
                shown.append(f"{form}: " + ", ".join(f"{lv} {s * 1000:.0f} ms" for lv, s in seconds.items()))
            print(f"round {r + 1}: {'; '.join(shown)}; load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"\nrun: k8s_small/{SCENARIO} --repeat N; test: {EVAL_FILE.name} with N tests; N = {n_hi} − {n_lo}")
    print(f"--jobs {JOBS}, {rounds} rounds")
    print("cost per test (marginal), median of the rounds:")
    for (form, level), values in per_test.items():
        print(f"  {form}: {level:<8} {statistics.median(values) * 1000:7.1f} ms")
    print("median cost per test ÷ none's median:")
    for form, level in ratios:
        none = statistics.median(per_test[form, "none"])
        print(f"  {form}: {level:<8} {statistics.median(per_test[form, level]) / none:5.2f}x")
    print("cost per test ÷ none's, per round:")
    for (form, level), values in ratios.items():
        print(f"  {form}: {level:<8} {spread(values)}  rounds: {', '.join(f'{v:.2f}' for v in values)}")
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
