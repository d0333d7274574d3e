"""Harness overhead: the marginal cost of one more test, sredrill against Inspect AI, in the same run.

    python benchmarks/harness_overhead.py            # sredrill and inspect-ai (installed in its own venv)
    python benchmarks/harness_overhead.py --quick    # 3 rounds
    python benchmarks/harness_overhead.py --skip-peer

Marginal cost per test = (t(1000) − t(100)) / 900, wall time of a whole CLI process each, so start-up cancels
out; the same for CPU time (user + system of the CLI process and its workers), which a shared machine's load
moves far less than wall time. sredrill: `sredrill test` on generated eval files with a no-op `py:` agent
(one expect per test, results stored in SQLite, JSON report). Inspect AI (pinned, `mockllm/model`, one
generate + `includes()` scorer per sample, display none) runs in `benchmarks/.venv-inspect`, created on first
use. Also times `sredrill --help`.

The harnesses alternate round by round (sredrill --jobs 1, sredrill --jobs 16, inspect-ai, then again), each
round measuring every harness at both sizes, so a change in the (shared) machine's load hits them alike; each
round gives its own ratios, and the script prints them with their median, min and max. Goals (issue 12):
sredrill ≤ 0.2 ms per test and ≥ 20× below Inspect AI.
Prints a table; nothing here is asserted (speed is measured, never tested).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

INSPECT_VERSION = "0.3.285"
ROOT = Path(__file__).resolve().parents[1]
PEER_VENV = ROOT / "benchmarks" / ".venv-inspect"
SIZES = (100, 1000)

EVAL = """
from sredrill import test, expect

for i in range({n}):
    @test(f"t{{i}}", prompt="ping")
    async def _(agent):
        result = await agent.run()
        expect(result.output).to_equal("pong")
"""
AGENT = """
async def agent(task):
    return "pong"
"""
INSPECT_TASK = """
import sys, types

# Offline machine: tiktoken would download its encoding for mockllm's token count. A stub stands in
# (as in the reference measurement), costing about what a real short encode costs.
class _Encoding:
    def encode(self, text, **kwargs):
        return list(range(max(1, len(text) // 4)))

stub = types.ModuleType("tiktoken")
stub.get_encoding = lambda name: _Encoding()
stub.encoding_for_model = lambda name: _Encoding()
sys.modules["tiktoken"] = stub

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate
import sys

n = int(sys.argv[1])

@task
def noop():
    return Task(dataset=[Sample(input="ping", target="") for _ in range(n)], solver=generate(), scorer=includes())

logs = eval(noop(), model="mockllm/model", display="none", log_dir=sys.argv[2])
if logs[0].status != "success" or len(logs[0].samples or []) != n:
    raise SystemExit(f"inspect run failed: {logs[0].status} {logs[0].error}")
"""


CPU_S: dict[str, float] = {}
"""CPU seconds of the last timed command (its process and the children it waited for), by label."""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, *, label: str | None = None) -> float:
    cpu = _cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if label is not None:
        CPU_S[label] = _cpu() - cpu
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed


def ensure_peer() -> Path:
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        uv = ROOT / ".tools" / "bin" / "uv"
        subprocess.run([str(uv), "venv", "--quiet", "--python", sys.executable, str(PEER_VENV)], check=True)
        subprocess.run(
            [str(uv), "pip", "install", "--quiet", "--python", str(python), f"inspect-ai=={INSPECT_VERSION}"],
            check=True,
        )
    return python


def prepare(work: Path, peer: bool) -> None:
    (work / "noop_agent.py").write_text(AGENT)
    for n in SIZES:
        (work / f"n{n}_eval.py").write_text(textwrap.dedent(EVAL.format(n=n)))
    if peer:
        (work / "inspect_noop.py").write_text(INSPECT_TASK)


def sredrill_run(work: Path, jobs: int, n: int, tag: str) -> tuple[float, float]:
    """(wall s, CPU s) of one `sredrill test` over n no-op tests."""
    cmd = [sys.executable, "-m", "sredrill", "test", f"n{n}_eval.py", "--agent", "py:noop_agent:agent",
           "--jobs", str(jobs), "--db", str(work / f"bench-{tag}.db"), "--json"]  # fmt: skip
    wall = timed(cmd, work, label="run")
    return wall, CPU_S["run"]


def inspect_run(work: Path, python: Path, n: int, tag: str) -> tuple[float, float]:
    env = {**os.environ, "INSPECT_LOG_LEVEL": "error", "INSPECT_DISPLAY": "none"}
    wall = timed(
        [str(python), str(work / "inspect_noop.py"), str(n), str(work / f"logs-{tag}")], work, env, label="run"
    )
    return wall, CPU_S["run"]


def marginal_ms(lo: float, hi: float) -> float:
    return (hi - lo) / (SIZES[1] - SIZES[0]) * 1000


def spread(values: list[float], unit: str = "") -> str:
    return f"median {statistics.median(values):.2f}{unit} (min {min(values):.2f}, max {max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-peer", action="store_true", help="measure sredrill only")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (the median is reported)")
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    args = parser.parse_args()
    rounds = 3 if args.quick else args.rounds

    helps = [timed([sys.executable, "-m", "sredrill", "--help"], ROOT) for _ in range(5)]
    harnesses = ["sredrill test --jobs 1", "sredrill test --jobs 16"]
    peer_name = f"inspect-ai {INSPECT_VERSION} (mockllm)"
    python = None if args.skip_peer else ensure_peer()
    if python is not None:
        harnesses.append(peer_name)
    # harness -> per round: (t(100), t(1000), marginal wall ms, marginal CPU ms)
    rows: dict[str, list[tuple[float, float, float, float]]] = {h: [] for h in harnesses}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        prepare(work, python is not None)
        for r in range(rounds):
            for name in harnesses:  # A B C, A B C, …: every round sees the same machine load for all three
                runs = []
                for n in SIZES:
                    tag = f"{r}-{name.split()[-1]}-{n}"
                    if name == peer_name:
                        assert python is not None
                        runs.append(inspect_run(work, python, n, tag))
                    else:
                        runs.append(sredrill_run(work, int(name.rsplit(" ", 1)[1]), n, tag))
                (lo_wall, lo_cpu), (hi_wall, hi_cpu) = runs
                rows[name].append((lo_wall, hi_wall, marginal_ms(lo_wall, hi_wall), marginal_ms(lo_cpu, hi_cpu)))
            shown = ", ".join(f"{name} {rows[name][-1][2]:.2f} ms" for name in harnesses)
            print(f"round {r + 1}: {shown}; load {os.getloadavg()[0]:.1f}", flush=True)

    print(f"\nsredrill --help: median {statistics.median(helps) * 1000:.0f} ms over 5 runs")
    print(f"marginal cost per test, {rounds} alternating rounds (median of rounds; t(n) in s, the median too)")
    print(f"{'harness':38} {'t(100) s':>9} {'t(1000) s':>10} {'ms/test':>8} {'cpu ms/test':>12}")
    for name in harnesses:
        lo, hi, ms, cpu = (statistics.median(column) for column in zip(*rows[name], strict=True))
        print(f"{name:38} {lo:9.2f} {hi:10.2f} {ms:8.2f} {cpu:12.2f}")
    for name in harnesses:
        walls = [row[2] for row in rows[name]]
        print(f"{name}: ms per test {spread(walls)}; rounds: {', '.join(f'{v:.2f}' for v in walls)}")
    if python is not None:
        for name in harnesses[:-1]:
            ratios = [peer[2] / ours[2] for ours, peer in zip(rows[name], rows[peer_name], strict=True)]
            cpu = [peer[3] / ours[3] for ours, peer in zip(rows[name], rows[peer_name], strict=True)]
            print(f"{name}: inspect-ai ÷ sredrill per round {', '.join(f'{v:.1f}' for v in ratios)}; "
                  f"{spread(ratios, 'x')} lower (goal ≥ 20x); by CPU time {spread(cpu, 'x')}")  # fmt: skip
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
