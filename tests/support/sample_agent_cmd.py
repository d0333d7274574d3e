"""A `cmd:` agent for connector tests: `python sample_agent_cmd.py BEHAVIOUR` (the names of sample_agents.py).

It reads the Task from stdin and prints JSON-line steps, like a real subprocess agent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def emit(**step: object) -> None:
    print(json.dumps(step), flush=True)


def main(behaviour: str) -> int:
    task = json.loads(sys.stdin.read())
    if behaviour == "answer":
        emit(kind="response", content=f"answer: {task['prompt']}")
    elif behaviour == "fail":
        print("Traceback (most recent call last):", file=sys.stderr)
        print("RuntimeError: disk on fire", file=sys.stderr)
        return 3
    elif behaviour == "hang":
        # A child of our own, as real agents have (an MCP server, a shell): it must die with us.
        child = subprocess.Popen(["sleep", "1000"])
        marker = os.environ["SAMPLE_MARKER"]
        with open(marker + ".tmp", "w") as f:
            json.dump({"pid": os.getpid(), "child": child.pid}, f)
        os.replace(marker + ".tmp", marker)  # the test reads the marker whole or not at all
        emit(kind="thinking", content="waiting forever")
        time.sleep(1000)
    elif behaviour == "diagnose":
        emit(
            kind="diagnosis",
            root_cause="a runaway query saturates the CPU",
            category="resource_exhaustion",
            failure_modes=["cpu_saturation"],
            causal_chain=["runaway query", "CPU at 100%", "slow responses"],
        )
    else:
        print(f"unknown behaviour {behaviour!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
