"""The agent the isolation benchmark runs: it answers at once, so what is measured is the harness and the level.

`py:quiet_agent:agent` (this folder on sys.path) or `cmd:python quiet_agent.py` (the Task on stdin).
"""

from __future__ import annotations

import json
import sys

ANSWER = {"root_cause": "nothing investigated", "failure_modes": ["unknown"]}


async def agent(task: object) -> dict[str, object]:
    return ANSWER


if __name__ == "__main__":
    sys.stdin.read()
    print(json.dumps({"kind": "diagnosis", **ANSWER}), flush=True)
