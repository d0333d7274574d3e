"""Failures you can debug (issue 11, point 3), through a real `sredrill test --json` / `sredrill run --json`.

A test's or agent's exception carries its traceback with the user's frames; a failing `expect` says its source
line; a plain `assert` fails (not errors) with its source and the values of its names; `to_equal` on nested
data shows a diff; a `cmd:` agent's stderr and sredrill's warnings about its lines are the result's
`agent_log`, and a rejected `diagnosis` line is named. Real eval files, a real `py:` agent (run inline in the
body worker) and real `cmd:` agents (Python scripts) in `tmp_path`.
"""

from __future__ import annotations

import shlex
import sys

from .conftest import Project

EVAL = """
import asyncio
from sredrill import expect, test

@test("plain assert", prompt="p")
async def _(test_info):
    replicas = ["db-1", "db-2"]
    expected = 3
    assert len(replicas) == expected, "a replica is missing"

@test("expect with nested data", prompt="p")
async def _(test_info):
    actual = {"service": "payments", "checks": [{"name": "db", "ok": False}]}
    expect(actual).to_equal({"service": "payments", "checks": [{"name": "db", "ok": True}]})

@test("raises in a helper", prompt="p")
async def _(test_info):
    parse_port("eighty")

def parse_port(text):
    return int(text)

@test("hangs in the body", prompt="p", timeout=1)
async def _(test_info):
    await asyncio.Event().wait()
"""

AGENTS = """
import asyncio

def lookup(key):
    return {"primary": "db-1"}[key]

async def crashes(task):
    return lookup(task.prompt)

async def hangs(task):
    await asyncio.sleep(60)
"""

AGENT_EVAL = """
from sredrill import test

@test("the agent raises", prompt="replica")
async def _(agent):
    result = await agent.run()
"""

HANG_EVAL = """
from sredrill import test

@test("the agent hangs", prompt="p", timeout=1)
async def _(agent):
    await agent.run()
"""

CMD_AGENT = """
import json, sys
sys.stdin.read()
print("agent: reading the alert", file=sys.stderr)
print(json.dumps({"kind": "thinking", "content": "replication lag is high"}))
print(json.dumps({"kind": "diagnosis", "root_cause": "the replica lags behind", "confidence": 0.9}))
print("agent: done", file=sys.stderr)
"""

CMD_EVAL = """
from sredrill import expect, test

@test("a rejected diagnosis", prompt="p")
async def _(agent):
    result = await agent.run()
    expect(result.rejected_answer).to_be(None)
"""


def cmd(project: Project, script: str) -> str:
    return f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(project.root / script))}"


def test_asserts_expects_errors_and_timeouts_say_where_and_why(project: Project) -> None:
    project.write("failing_eval.py", EVAL)
    cli = project.run("test", "failing_eval.py", "--agent", "cmd:true", "--json")
    assert cli.code == 3, cli.stderr

    plain = cli.result("plain assert")
    assert plain["status"] == "failed"  # not errored: a plain assert is a failed check, as in pytest
    assert plain["failure_reason"] == (
        "a replica is missing: assert len(replicas) == expected\n"
        "  where replicas = ['db-1', 'db-2']\n"
        "  where expected = 3"
    )
    (signal,) = [s for s in plain["signals"] if s["name"] == "assert"]
    assert signal["where"] == 'failing_eval.py:9: assert len(replicas) == expected, "a replica is missing"'
    assert (signal["kind"], signal["role"], signal["passed"]) == ("expect", "gate", False)
    assert plain["traceback"].startswith("failing_eval.py:9 in _\n")

    nested = cli.result("expect with nested data")
    assert nested["status"] == "failed"
    assert "--- expected\n+++ actual\n" in nested["failure_reason"]
    assert '-      "ok": true\n+      "ok": false' in nested["failure_reason"]
    (signal,) = [s for s in nested["signals"] if s["name"] == "to_equal"]
    assert signal["where"].startswith("failing_eval.py:14: expect(actual).to_equal(")

    raised = cli.result("raises in a helper")
    assert (raised["status"], raised["error_type"], raised["error_where"]) == ("errored", "ValueError", "the test body")
    assert raised["traceback"] == (
        "failing_eval.py:18 in _\n"
        '    parse_port("eighty")\n'
        "failing_eval.py:21 in parse_port\n"
        "    return int(text)\n"
        "ValueError: invalid literal for int() with base 10: 'eighty'"
    )

    hung = cli.result("hangs in the body")
    assert (hung["error_type"], hung["error_where"]) == ("timeout", "the test body")
    assert hung["failure_reason"] == "timed out after 1s in the test body"
    assert hung["traceback"] == (
        "failing_eval.py:25 in _\n    await asyncio.Event().wait()\nstopped here: timed out after 1s in the test body"
    )


def test_a_py_agents_exception_shows_the_agents_own_frames(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write("agent_eval.py", AGENT_EVAL)
    project.write("hang_eval.py", HANG_EVAL)
    r = project.run("test", "agent_eval.py", "--agent", "py:agents:crashes", "--json").result("the agent raises")
    assert (r["status"], r["error_type"], r["error_where"]) == ("errored", "AgentError", "the agent (agent.run())")
    assert r["traceback"].startswith(
        "agents.py:8 in crashes\n"
        "    return lookup(task.prompt)\n"
        "agents.py:5 in lookup\n"
        '    return {"primary": "db-1"}[key]\n'
        "KeyError: 'replica'\n"
    )
    assert r["traceback"].endswith(
        "agent_eval.py:6 in _\n    result = await agent.run()\nAgentError: agent raised KeyError: 'replica'"
    )

    r = project.run("test", "hang_eval.py", "--agent", "py:agents:hangs", "--json").result("the agent hangs")
    assert (r["error_type"], r["error_where"]) == ("timeout", "the agent (agent.run())")
    assert r["failure_reason"] == "timed out after 1s in the agent (agent.run())"
    assert "agents.py:11 in hangs\n    await asyncio.sleep(60)\nstopped here:" in r["traceback"]


def test_a_cmd_agents_stderr_and_its_rejected_diagnosis_line_are_kept(project: Project) -> None:
    project.write("agent.py", CMD_AGENT)
    project.write("cmd_eval.py", CMD_EVAL)
    cli = project.run("test", "cmd_eval.py", "--agent", cmd(project, "agent.py"), "--json")
    r = cli.result("a rejected diagnosis")
    assert r["status"] == "failed", cli.stderr
    rejected = (
        "the agent's diagnosis line 2 was rejected: confidence: Extra inputs are not permitted (unknown key "
        "'confidence'; a diagnosis line has: kind, root_cause, category, failure_modes, causal_chain, claims, "
        "ruled_out, location, report); see the agent log"
    )
    assert "diagnosis line 2 was rejected: confidence" in r["failure_reason"]
    assert rejected in r["notes"]
    log = r["agent_log"].splitlines()
    assert log[:2] == ["agent: reading the alert", "agent: done"]
    assert log[2].startswith("[sredrill] stdout line 2: invalid step, kept as text: confidence: Extra inputs")


def test_an_rca_result_keeps_the_agents_log_and_says_its_diagnosis_was_rejected(project: Project) -> None:
    project.write("agent.py", CMD_AGENT)
    cli = project.run(
        "run", "--pack", "rds_postgres", "--scenario", "001-replication-lag", "--agent", cmd(project, "agent.py"),
        "--json",
    )  # fmt: skip
    assert cli.code == 1, cli.stderr
    (r,) = cli.report()["results"]
    assert r["status"] == "failed"
    assert r["agent_log"].startswith("agent: reading the alert\nagent: done\n[sredrill] stdout line 2:")
    assert any(n.startswith("the agent's diagnosis line 2 was rejected: confidence:") for n in r["notes"])
    assert r["traceback"] is None  # no frame of the user's: the message says it all


def test_a_test_whose_worker_had_to_be_killed_says_timeout_and_that_where_is_unknown(project: Project) -> None:
    project.write(
        "block_eval.py",
        """
        import time
        from sredrill import test

        @test("blocks", prompt="p", timeout=1)
        async def _(test_info):
            time.sleep(60)
        """,
    )
    r = project.run("test", "block_eval.py", "--agent", "cmd:true", "--json").result("blocks")
    assert (r["status"], r["error_type"]) == ("errored", "timeout")
    assert r["error_where"] == "the test (its worker was killed, so where it stopped is unknown)"
    assert r["failure_reason"].startswith("timed out after 1s: the test did not stop")


def test_an_rca_py_agent_in_its_worker_brings_back_its_traceback_and_what_it_printed(project: Project) -> None:
    # `sredrill run` holds answer keys, so a `py:` agent runs in an agent worker: its frames cross the pipe.
    project.write(
        "noisy.py",
        """
        import sys

        def read_alert(task):
            raise OSError("the alert file is gone")

        async def agent(task):
            print("agent: starting", file=sys.stderr)
            read_alert(task)
        """,
    )
    cli = project.run("run", "--pack", "rds_postgres", "--scenario", "001-replication-lag", "--agent", "py:noisy:agent",
                      "--json")  # fmt: skip
    assert cli.code == 3, cli.stderr
    (r,) = cli.report()["results"]
    assert (r["status"], r["error_type"], r["error_where"]) == ("errored", "AgentError", "the agent (agent.run())")
    assert r["agent_log"] == "agent: starting\n"
    assert r["traceback"] == (
        "noisy.py:9 in agent\n"
        "    read_alert(task)\n"
        "noisy.py:5 in read_alert\n"
        '    raise OSError("the alert file is gone")\n'
        "OSError: the alert file is gone"
        "\n\nThe above exception was the direct cause of the following:\n\n"
        "AgentError: agent raised OSError: the alert file is gone"
    )
