"""Harness overhead: the marginal cost of one more test, sredrill against Inspect AI, in the same run.

    python benchmarks/harness_overhead.py            # sredrill and inspect-ai (installed in its own venv)
    python benchmarks/harness_overhead.py --skip-peer

Marginal cost per test = (t(1000) − t(100)) / 900, wall time of a whole CLI process each, so start-up cancels
out; the same for CPU time (user + system of the CLI process and its workers), which a shared machine's load
moves far less than wall time. sredrill: `sredrill test` on generated eval files with a no-op `py:` agent
(one expect per test, results stored in SQLite, JSON report). Inspect AI (pinned, `mockllm/model`, one
generate + `includes()` scorer per sample, display none) runs in `benchmarks/.venv-inspect`, created on first
use. Also times `sredrill --help`.
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


CPU: dict[str, list[float]] = {}
"""CPU seconds of each timed command (its process and the children it waited for), by command label."""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, *, label: str | None = None) -> float:
    cpu = _cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if label is not None:
        CPU.setdefault(label, []).append(_cpu() - cpu)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed


def sredrill_times(work: Path, jobs: int, reps: int) -> dict[int, float]:
    (work / "noop_agent.py").write_text(AGENT)
    out = {}
    for n in SIZES:
        (work / f"n{n}_eval.py").write_text(textwrap.dedent(EVAL.format(n=n)))
        runs = []
        for rep in range(reps):
            db = work / f"bench-{n}-{jobs}-{rep}.db"
            cmd = [sys.executable, "-m", "sredrill", "test", f"n{n}_eval.py", "--agent", "py:noop_agent:agent",
                   "--jobs", str(jobs), "--db", str(db), "--json"]  # fmt: skip
            runs.append(timed(cmd, work, label=f"sredrill-{jobs}-{n}"))
        out[n] = statistics.median(runs)
    return out


def marginal_cpu_ms(jobs: int) -> float:
    lo, hi = (statistics.median(CPU[f"sredrill-{jobs}-{n}"]) for n in SIZES)
    return (hi - lo) / (SIZES[1] - SIZES[0]) * 1000


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


def inspect_times(work: Path, reps: int) -> dict[int, float]:
    python = ensure_peer()
    script = work / "inspect_noop.py"
    script.write_text(INSPECT_TASK)
    env = {**os.environ, "INSPECT_LOG_LEVEL": "error", "INSPECT_DISPLAY": "none"}
    out = {}
    for n in SIZES:
        out[n] = statistics.median(
            timed([str(python), str(script), str(n), str(work / f"logs-{n}-{r}")], work, env) for r in range(reps)
        )
    return out


def marginal_ms(times: dict[int, float]) -> float:
    lo, hi = SIZES
    return (times[hi] - times[lo]) / (hi - lo) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-peer", action="store_true", help="measure sredrill only")
    parser.add_argument("--reps", type=int, default=3, help="runs per size (median)")
    args = parser.parse_args()

    helps = []
    for _ in range(5):
        helps.append(timed([sys.executable, "-m", "sredrill", "--help"], ROOT))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for jobs in (1, 16):
            t = sredrill_times(work, jobs, args.reps)
            rows.append((f"sredrill test --jobs {jobs}", t, marginal_ms(t)))
        if not args.skip_peer:
            t = inspect_times(work, args.reps)
            rows.append((f"inspect-ai {INSPECT_VERSION} (mockllm)", t, marginal_ms(t)))

    print(f"sredrill --help: median {statistics.median(helps) * 1000:.0f} ms over 5 runs")
    print(f"{'harness':38} {'t(100) s':>9} {'t(1000) s':>10} {'ms/test':>8} {'cpu ms/test':>12}")
    for name, t, ms in rows:
        cpu = f"{marginal_cpu_ms(int(name.rsplit(' ', 1)[1])):12.2f}" if name.startswith("sredrill") else ""
        print(f"{name:38} {t[100]:9.2f} {t[1000]:10.2f} {ms:8.2f} {cpu}")
    if not args.skip_peer:
        peer = rows[-1][2]
        for name, _, ms in rows[:-1]:
            print(f"{name}: {peer / ms:.1f}x lower marginal cost than inspect-ai")


if __name__ == "__main__":
    main()
