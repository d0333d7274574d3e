"""`cmd:` agents at `--jobs 16`: wall time against the ideal, and against a bare asyncio runner, round by round.

    python benchmarks/cmd_agents.py            # 5 rounds
    python benchmarks/cmd_agents.py --quick    # 2 rounds, fewer tests
    python benchmarks/cmd_agents.py --baseline /tmp/old/src   # also an older checkout, in the same rounds

The agent is `sh -c 'sleep 0.05; echo pong'`: 50 ms of waiting and almost no CPU. With 16 slots, N runs
ideally take N / 16 × 50 ms. Three runners are measured in turn in every round (A B C A B C …), so a change
in the (shared) machine's load hits them alike, and each round gives its own ratios:

- `sredrill test --jobs 16`: the whole CLI on an eval file of N tests, each `await agent.run()` then one
  `expect`; marginal cost (t(N_HI) − t(N_LO)), so start-up (16 body workers) cancels out.
- the `cmd:` connector alone: `CmdAgent.run` N times in this process under a semaphore of 16.
- the peer: a bare asyncio runner, `create_subprocess_exec` + `communicate()` under a semaphore of 16; what
  any Python harness pays to run a subprocess per test.

With `--baseline SRC`, the CLI and the connector are also measured with `PYTHONPATH=SRC` (an older sredrill,
e.g. `git archive COMMIT src | tar -x -C /tmp/old`) in the same rounds: before and after, under the same load.
Each measurement is a fresh process.

Goal (issue 12): sredrill ≤ 1.15× the ideal. Prints the per-round ratios and their median, min and max;
nothing is asserted (speed is measured, never tested).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

JOBS = 16
AGENT_S = 0.05
COMMAND = ("sh", "-c", f"sleep {AGENT_S}; echo pong")
SPEC = "cmd:" + shlex.join(COMMAND)
EVAL = """
from sredrill import test, expect

for i in range({n}):
    @test(f"t{{i}}", prompt="ping")
    async def _(agent):
        result = await agent.run()
        expect(result.output).to_equal("pong")
"""


def ideal_s(n: int) -> float:
    return -(-n // JOBS) * AGENT_S


def _env(src: str | None) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": src} if src else dict(os.environ)


def cli_s(work: Path, n: int, tag: str, src: str | None = None) -> float:
    """Wall time of one `sredrill test --jobs 16` process over n tests."""
    cmd = [sys.executable, "-m", "sredrill", "test", f"n{n}_eval.py", "--agent", SPEC, "--jobs", str(JOBS),
           "--db", str(work / f"{tag}.db"), "--json"]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=_env(src))
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return elapsed


def measured_s(what: str, n: int, src: str | None = None) -> float:
    """`connector_s` or `peer_s` in a fresh process (with `PYTHONPATH=src` when given)."""
    cmd = [sys.executable, __file__, "--measure", what, "--tests", str(n)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env(src))
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return float(done.stdout)


async def connector_s(n: int) -> float:
    from sredrill.agents import Task, resolve_agent
    from sredrill.trajectory import Recorder

    agent = resolve_agent(SPEC)
    slots = asyncio.Semaphore(JOBS)

    async def one(i: int) -> None:
        async with slots:
            reply = await agent.run(Task(run_id=f"r{i}", prompt="ping"), Recorder())
            assert reply.output == "pong", reply.output

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return time.perf_counter() - start


async def peer_s(n: int) -> float:
    slots = asyncio.Semaphore(JOBS)

    async def one() -> None:
        async with slots:
            proc = await asyncio.create_subprocess_exec(
                *COMMAND, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, start_new_session=True
            )
            out, _ = await proc.communicate(b"{}\n")
            assert out == b"pong\n" and proc.returncode == 0

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - start


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):5.2f}x  (min {min(values):.2f}, max {max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tests", type=int, default=640, help="N_HI: tests in the large run (N_LO is 32)")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 320 tests")
    parser.add_argument("--baseline", metavar="SRC", help="also measure the sredrill in SRC (a src/ folder)")
    parser.add_argument("--measure", choices=("connector", "peer"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        print(asyncio.run(connector_s(args.tests) if args.measure == "connector" else peer_s(args.tests)))
        return
    rounds, n_hi = (2, 320) if args.quick else (args.rounds, args.tests)
    n_lo = 32
    marginal_ideal = ideal_s(n_hi) - ideal_s(n_lo)
    # name -> how to measure it once, and the ideal it is divided by; measured in this order in every round
    runners: dict[str, tuple[tuple[str, str | None], float]] = {}
    for label, src in ((" (baseline)", args.baseline), ("", None)) if args.baseline else (("", None),):
        runners[f"sredrill test --jobs 16{label}"] = ("cli", src), marginal_ideal
        runners[f"cmd: connector{label}"] = ("connector", src), ideal_s(n_hi)
    runners["bare asyncio (peer)"] = ("peer", None), ideal_s(n_hi)
    ratios: dict[str, list[float]] = {name: [] for name in runners}
    vs_peer: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n in (n_lo, n_hi):
            (work / f"n{n}_eval.py").write_text(textwrap.dedent(EVAL.format(n=n)))
        for r in range(rounds):
            seconds = {}
            for name, ((what, src), ideal) in runners.items():
                if what == "cli":
                    spent = cli_s(work, n_hi, f"hi{r}{name}", src) - cli_s(work, n_lo, f"lo{r}{name}", src)
                else:
                    spent = measured_s(what, n_hi, src)
                seconds[name] = spent
                ratios[name].append(spent / ideal)
            vs_peer.append(seconds["cmd: connector"] / seconds["bare asyncio (peer)"])
            shown = ", ".join(f"{name} {spent:.2f} s" for name, spent in seconds.items())
            print(f"round {r + 1}: {shown}; load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"\n{SPEC}, --jobs {JOBS}, {n_hi} runs ({n_hi} − {n_lo} tests for the CLI), {rounds} rounds")
    print(f"ideal: {marginal_ideal:.2f} s for the CLI's marginal runs, {ideal_s(n_hi):.2f} s for {n_hi} runs")
    print("wall time ÷ ideal (goal for sredrill: ≤ 1.15x)")
    for name, values in ratios.items():
        print(f"  {name:<36}{spread(values)}  rounds: {', '.join(f'{v:.2f}' for v in values)}")
    print(f"  {'cmd: connector ÷ peer':<36}{spread(vs_peer)}")
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
