"""A `cmd:` agent's JSON lines with lone surrogates or absurd nesting: recorded, stored, noted, never a crash."""

from __future__ import annotations

import json
import shlex
import sqlite3
import sys

from sredrill.text import REPLACED_NOTE

from .conftest import Project

# `\\ud800` in a JSON string is a lone surrogate once parsed: valid JSON, not encodable as UTF-8.
AGENT = r"""
import sys
sys.stdin.read()
print('{"kind": "thinking", "content": "the replica \\ud800 lags"}', flush=True)
print('{"kind": "tool_call", "name": "get_alert", "args": {"x": ' + "[" * 100000 + "]" * 100000 + '}}', flush=True)
print('{"kind": "diagnosis", "root_cause": "replication lag \\udfff on the replica", '
      '"category": "resource_exhaustion", "failure_modes": ["replication_lag"]}', flush=True)
"""


def test_surrogates_and_deep_nesting_in_json_lines_are_stored_with_a_note(project: Project) -> None:
    project.write("agent.py", AGENT)
    spec = f"cmd:{shlex.quote(sys.executable)} agent.py"
    cli = project.run("run", "--pack", "rds_postgres", "--scenario", "001-replication-lag", "--agent", spec, "--json")
    assert cli.code == 1, cli.stderr  # graded and failed: not an internal error (4)
    (result,) = cli.report()["results"]
    assert result["status"] == "failed"
    assert REPLACED_NOTE in result["notes"]
    assert result["actual"]["root_cause"] == "replication lag \ufffd on the replica"
    with sqlite3.connect(project.db) as db:
        (stored,) = db.execute("SELECT result FROM results WHERE test_id = ?", (result["id"],)).fetchone()
        (steps,) = db.execute("SELECT steps FROM trajectories WHERE test_id = ?", (result["id"],)).fetchone()
    assert REPLACED_NOTE in json.loads(stored)["notes"]
    kinds = [s["kind"] for s in json.loads(steps)]
    # The deep line is kept as text (its warning is in the log), never a tool call.
    assert "tool_call" not in kinds and kinds.count("assistant") == 1
    assert {"kind": "thinking", "content": "the replica \ufffd lags"}.items() <= json.loads(steps)[1].items()
