#!/usr/bin/env python3
"""A `cmd:` agent in plain Python: read the Task on stdin, print JSON-line steps on stdout.

    sredrill test evals/ --agent "cmd:python examples/agents/script_agent.py"

Copy it and put your agent in `investigate`. Everything it needs comes from sredrill: the Task on stdin (see
docs/agent-protocol.md) and, when tools are served, SREDRILL_TOOLS_URL / SREDRILL_MCP_URL with the bearer
token SREDRILL_RUN_TOKEN. Anything written to stderr is kept as the agent's log; a non-zero exit makes the
run `errored` with the end of that log.
"""

import json
import sys


def emit(kind: str, **fields: object) -> None:
    # One JSON object per line, flushed at once, so sredrill records each step as it happens.
    print(json.dumps({"kind": kind, **fields}), flush=True)


def investigate(task: dict) -> str:
    emit("thinking", content=f"I was asked: {task['prompt']}")
    tools = [tool["name"] for tool in task["tools"]]
    emit("thinking", content=f"tools on offer: {', '.join(tools) or 'none'}; this example calls none of them")
    return "script agent: no investigation was done, so no root cause can be given."


def main() -> int:
    task = json.load(sys.stdin)  # the whole Task; sredrill closes stdin after writing it
    print(f"run {task['run_id']}: starting", file=sys.stderr)
    # A diagnosis would be: emit("diagnosis", root_cause=..., category=..., failure_modes=[...]).
    emit("response", content=investigate(task))
    return 0


if __name__ == "__main__":
    sys.exit(main())
