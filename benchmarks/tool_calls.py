"""Tool-call round trips per second: over the HTTP tool server against in-process calls, in the same run.

    python benchmarks/tool_calls.py               # 2000 calls per measurement, 5 rounds
    python benchmarks/tool_calls.py --quick       # 500 calls, 3 rounds

In process is what a `py:` or `openai:` agent pays (`Recorder.call_tool` on the scenario's `RcaToolset`).
Over HTTP is what a `cmd:` or `http(s)://` agent pays: the engine's `ToolHost` serves the same toolset and a
client in another process (as a real agent is) calls `POST {tools_url}/tools/{name}` in a loop, once over one
keep-alive connection (http.client) and once with a new connection per call (urllib, as the examples do). Every
call is recorded on the trajectory either way. The three transports alternate round by round (in process,
keep-alive, new connection, then again), so a change in the (shared) machine's load hits them alike; each
round gives its own ratio, printed with their median, min and max. Prints a table and the ratios; nothing here
is asserted (speed is measured, never tested).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from typing import Any

from sredrill.agents import ToolHost
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.scenarios import load_pack
from sredrill.trajectory import Recorder

SCENARIO = "004-cpu-saturation-bad-query"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_alert", {}),  # about 1 KB
    ("query_metrics", {"metric_name": "CPUUtilization"}),  # one series, a few KB
    ("get_performance_insights", {}),  # the largest answer
]

# The client: a separate process, as an agent is. Prints the seconds its calls took.
CLIENT = """
import json, sys, time, urllib.parse, urllib.request, http.client
url, token, name, args, n, mode = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
body = args.encode()
if mode == "keep-alive":
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port)
    def call():
        conn.request("POST", f"{parts.path}/tools/{name}", body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 200, resp.status
    call()  # connect once, outside the timing
else:
    def call():
        req = urllib.request.Request(f"{url}/tools/{name}", data=body, method="POST", headers=headers)
        with urllib.request.urlopen(req) as resp:
            resp.read()
start = time.perf_counter()
for _ in range(n):
    call()
print(time.perf_counter() - start)
"""


async def in_process(toolset: RcaToolset, name: str, args: dict[str, Any], n: int) -> float:
    recorder = Recorder()
    start = time.perf_counter()
    for _ in range(n):
        await recorder.call_tool(toolset, name, dict(args))
    return time.perf_counter() - start


async def over_http(host: ToolHost, toolset: RcaToolset, name: str, args: dict[str, Any], n: int, mode: str) -> float:
    recorder = Recorder()
    run_id = f"bench-{name}-{mode}"
    async with host.serving(run_id, toolset, recorder) as access:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CLIENT, access.tools_url, access.token, name, json.dumps(args), str(n), mode,
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"the HTTP client failed ({proc.returncode})")
    calls = sum(1 for s in recorder.steps if s.kind == "tool_call")
    assert calls == n + (mode == "keep-alive"), calls  # every call was recorded (plus the warm-up)
    return float(out)


async def main(n: int, rounds: int) -> None:
    pack = load_pack("rds_postgres")
    toolset = RcaToolset(pack.scenario(SCENARIO), BackendMode.FULL, vocabulary=pack.vocabulary)
    host = ToolHost()
    # tool -> transport -> calls/s per round
    rates: dict[str, dict[str, list[float]]] = {name: {"local": [], "kept": [], "fresh": []} for name, _ in CALLS}
    sizes = {}
    try:
        for name, args in CALLS:
            sizes[name] = len(json.dumps(await toolset.call(name, dict(args))))
            await in_process(toolset, name, args, min(n, 200))  # warm up
        for r in range(rounds):
            for name, args in CALLS:
                rates[name]["local"].append(n / await in_process(toolset, name, args, n))
                rates[name]["kept"].append(n / await over_http(host, toolset, name, args, n, "keep-alive"))
                rates[name]["fresh"].append(n / await over_http(host, toolset, name, args, n, "new-connection"))
            print(f"round {r + 1} done; load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        await host.aclose()
    med = statistics.median
    print(f"\ntool-call round trips per second, {n} calls each, scenario {SCENARIO} (full backend), "
          f"median of {rounds} alternating rounds")  # fmt: skip
    print(f"{'tool':<26}{'result':>9}{'in process':>13}{'HTTP keep-alive':>17}{'HTTP new conn':>15}{'ratio':>9}")
    for name, _ in CALLS:
        by = rates[name]
        ratios = [local / kept for local, kept in zip(by["local"], by["kept"], strict=True)]
        print(f"{name:<26}{sizes[name]:>8}B{med(by['local']):>13,.0f}{med(by['kept']):>17,.0f}"
              f"{med(by['fresh']):>15,.0f}{med(ratios):>8.1f}x")  # fmt: skip
    print("ratio = in-process calls/s ÷ HTTP keep-alive calls/s (how much slower a remote agent's tool call is),")
    print("per round:")
    for name, _ in CALLS:
        by = rates[name]
        ratios = [local / kept for local, kept in zip(by["local"], by["kept"], strict=True)]
        print(f"  {name:<26}{', '.join(f'{v:.1f}' for v in ratios)}  "
              f"(median {med(ratios):.1f}, min {min(ratios):.1f}, max {max(ratios):.1f})")  # fmt: skip
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="500 calls, 3 rounds")
    options = parser.parse_args()
    if options.quick:
        options.calls, options.rounds = 500, 3
    asyncio.run(main(options.calls, options.rounds))
