"""A `cmd:` agent printing 100 MB through a real `sredrill test`: the run finishes, the stored output is its
first MiB with the marker, the result's notes say so, and sredrill's memory stays moderate (hardening item 9)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap

from tests.e2e.conftest import Project

AGENT = """
import sys
block = ("x" * 99 + "\\n").encode() * 10_000
for _ in range(100):
    sys.stdout.buffer.write(block)
"""

EVAL = """
from sredrill import test, expect

@test("a flood of output", prompt="p")
async def _(agent):
    result = await agent.run()
    expect(result.output).to_contain("xxxx")
"""

# Runs sredrill from a fresh process, so that RUSAGE_CHILDREN's peak is sredrill's (and its workers' and
# agents'), not that of whatever this pytest process started before.
MEASURE = """
import json, resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr, "peak_mb": peak_mb}))
"""


def test_a_100_mb_flood_is_cut_to_a_mib_and_costs_little_memory(project: Project) -> None:
    project.write("flood.py", AGENT)
    project.write("flood_eval.py", EVAL)
    agent = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(project.root / 'flood.py'))}"
    cmd = [sys.executable, "-m", "sredrill", "test", "flood_eval.py", "--agent", agent, "--json"]
    cmd += ["--db", str(project.db)]
    measured = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(MEASURE), *cmd],
        cwd=project.root, env=project.env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = json.loads(measured.stdout)
    assert out["code"] == 0, out["stderr"]
    [result] = json.loads(out["stdout"])["results"]
    assert result["status"] == "passed"
    output = result["output"]
    assert len(output.encode()) <= (1 << 20) + 64
    assert "… [truncated: " in output
    assert any("the agent's stdout was 100000000 bytes" in note for note in result["notes"]), result["notes"]
    # Before the cap, 100 MB of stdout cost about 1.2 GB; the bound is generous on purpose (not a benchmark).
    assert out["peak_mb"] < 400, out["peak_mb"]
