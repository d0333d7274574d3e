"""The `cmd:` connector: real subprocess agents, written per test, speaking DESIGN §4.1."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from sredrill import processes
from sredrill.agents import Agent, Task, resolve_agent
from sredrill.agents.connectors.cmd import LOG_LIMIT_BYTES, _spawn
from sredrill.errors import AgentError
from sredrill.trajectory import (
    Recorder,
    ResponseStep,
    ToolCallStep,
    ToolResultStep,
)
from tests.support.processes import is_running, wait_until


def script_agent(tmp_path: Path, source: str) -> Agent:
    """A `cmd:` agent running `source` with this Python (imports json, os, sys, subprocess for it)."""
    path = tmp_path / "agent.py"
    path.write_text("import json, os, subprocess, sys\n" + textwrap.dedent(source))
    return resolve_agent(f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(path))}")


def task(**fields: object) -> Task:
    return Task.model_validate({"run_id": "run-0001", "prompt": "Why is checkout slow?", **fields})


async def test_json_lines_become_steps_in_order(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        """
        def emit(**step): print(json.dumps(step), flush=True)
        emit(kind="thinking", content="CPU looks high")
        emit(kind="tool_call", name="query_metrics", args={"metric_name": "CPUUtilization"}, id="c1")
        emit(kind="tool_result", call_id="c1", name="query_metrics", result={"values": [97.5]}, latency_ms=3)
        emit(kind="assistant", content="the CPU is saturated")
        emit(kind="response", content="a runaway query saturates the CPU")
        """,
    )
    recorder = Recorder()
    reply = await agent.run(task(), recorder)
    assert [s.kind for s in recorder.steps] == ["thinking", "tool_call", "tool_result", "assistant", "response"]
    call, result = recorder.steps[1], recorder.steps[2]
    assert isinstance(call, ToolCallStep) and isinstance(result, ToolResultStep)
    assert (call.call_id, call.name, call.args) == ("c1", "query_metrics", {"metric_name": "CPUUtilization"})
    assert (result.call_id, result.result, result.latency_ms) == ("c1", {"values": [97.5]}, 3)
    assert result.size_bytes == len('{"values":[97.5]}')
    assert reply.output == "a runaway query saturates the CPU"
    assert reply.diagnosis is None
    assert len(reply.raw) == 5


async def test_plain_text_is_assistant_text_and_the_answer(tmp_path: Path) -> None:
    agent = script_agent(tmp_path, 'print("first line")\nprint()\nprint("second line")\n')
    recorder = Recorder()
    reply = await agent.run(task(), recorder)
    assert [s.kind for s in recorder.steps] == ["assistant", "assistant", "response"]
    assert reply.output == "first line\nsecond line"
    assert recorder.steps[-1] == ResponseStep(content=reply.output, t_ms=recorder.steps[-1].t_ms)


async def test_text_in_the_original_suite_format_is_parsed_as_a_diagnosis(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        """
        print("ROOT_CAUSE: storage filled up")
        print("ROOT_CAUSE_CATEGORY: resource_exhaustion")
        print("FAILURE_MODES: storage_full")
        """,
    )
    reply = await agent.run(task(), Recorder())
    assert reply.diagnosis is not None
    assert reply.diagnosis.root_cause == "storage filled up"
    assert reply.diagnosis.failure_modes == ["storage_full"]


async def test_the_last_diagnosis_wins_over_responses_and_text(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        """
        def emit(**step): print(json.dumps(step), flush=True)
        emit(kind="diagnosis", diagnosis={"root_cause": "first guess"})
        emit(kind="response", content="a response")
        emit(kind="diagnosis", root_cause="replication lag", failure_modes=["replication_lag"])
        print("trailing text")
        """,
    )
    reply = await agent.run(task(), Recorder())
    assert reply.diagnosis is not None and reply.diagnosis.root_cause == "replication lag"
    assert reply.output == "replication lag"
    assert reply.data == reply.diagnosis.model_dump(mode="json")


async def test_malformed_lines_become_text_with_a_warning_and_never_crash(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        """
        print(json.dumps({"kind": "tool_call", "args": {}}))
        print(json.dumps({"kind": "toolcall", "name": "x"}))
        print(json.dumps({"kind": "diagnosis", "root_cause": "x", "confidence": 0.9}))
        print(json.dumps({"level": "info", "msg": "a JSON log line"}))
        print("{not json")
        print(json.dumps({"kind": "response", "content": "done"}))
        """,
    )
    recorder = Recorder()
    reply = await agent.run(task(), recorder)
    kinds = [s.kind for s in recorder.steps]
    assert kinds == ["assistant"] * 5 + ["response"]
    assert reply.output == "done"
    warnings = [line for line in reply.log.splitlines() if line.startswith("[sredrill]")]
    assert len(warnings) == 3, reply.log
    assert "stdout line 1" in warnings[0] and "name: Field required" in warnings[0]
    assert "unknown kind 'toolcall'" in warnings[1]
    assert "confidence: Extra inputs are not permitted" in warnings[2]


async def test_a_tool_result_without_call_id_answers_the_latest_call_of_its_name(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        """
        def emit(**step): print(json.dumps(step), flush=True)
        emit(kind="tool_call", name="get_alert")
        emit(kind="tool_result", name="get_alert", result={"title": "high CPU"})
        emit(kind="tool_call", name="get_events", call_id="e1")
        emit(kind="tool_result", call_id="e1", error="timeout")
        """,
    )
    recorder = Recorder()
    await agent.run(task(), recorder)
    calls = {c.name: c for c in (s for s in recorder.steps if isinstance(s, ToolCallStep))}
    results = {r.name: r for r in (s for s in recorder.steps if isinstance(s, ToolResultStep))}
    assert results["get_alert"].call_id == calls["get_alert"].call_id
    assert results["get_events"].call_id == "e1" and results["get_events"].error == "timeout"


async def test_the_task_arrives_as_json_on_stdin_without_env(tmp_path: Path) -> None:
    agent = script_agent(tmp_path, 'print(json.dumps({"kind": "response", "content": sys.stdin.read()}))\n')
    sent = task(
        context=[{"description": "Error log", "value": "Connection refused"}],
        alert={"title": "High CPU"},
        tools=[{"name": "get_alert", "description": "the alert"}],
        deadline_s=30,
        env={"SECRET_FOR_THE_AGENT": "s3cret"},
    )
    reply = await agent.run(sent, Recorder())
    assert reply.data == sent.model_dump(mode="json", exclude={"env"})
    assert "s3cret" not in reply.output


async def test_the_run_variables_and_task_env_are_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stale value from an outer run must not leak into this one.
    monkeypatch.setenv("SREDRILL_MCP_URL", "http://127.0.0.1:1/stale")
    monkeypatch.setenv("INHERITED", "yes")
    agent = script_agent(
        tmp_path,
        """
        names = ["SREDRILL_RUN_ID", "SREDRILL_TOOLS_URL", "SREDRILL_MCP_URL", "SREDRILL_RUN_TOKEN",
                 "TRACEPARENT", "INHERITED", "FROM_TASK"]
        sys.stdin.read()
        print(json.dumps({"kind": "response", "content": json.dumps({n: os.environ.get(n) for n in names})}))
        """,
    )
    sent = task(tools_url="http://127.0.0.1:7860/runs/run-0001", token="tok-123", env={"FROM_TASK": "1"})
    first = await agent.run(sent, Recorder())
    second = await agent.run(sent, Recorder())
    env = first.data
    assert isinstance(env, dict) and isinstance(second.data, dict)
    assert env["SREDRILL_RUN_ID"] == "run-0001"
    assert env["SREDRILL_TOOLS_URL"] == "http://127.0.0.1:7860/runs/run-0001"
    assert env["SREDRILL_RUN_TOKEN"] == "tok-123"
    assert env["SREDRILL_MCP_URL"] is None
    assert (env["INHERITED"], env["FROM_TASK"]) == ("yes", "1")
    assert re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-01", env["TRACEPARENT"])
    assert env["TRACEPARENT"] != second.data["TRACEPARENT"], "one trace per run"


async def test_a_non_zero_exit_is_an_agent_error_with_the_code_and_stderr_tail(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        """
        for i in range(50):
            print(f"log line {i}", file=sys.stderr)
        print("ValueError: no metrics found", file=sys.stderr)
        sys.exit(7)
        """,
    )
    with pytest.raises(AgentError) as caught:
        await agent.run(task(), Recorder())
    message = str(caught.value)
    assert "exited with code 7" in message
    assert "ValueError: no metrics found" in message
    assert "log line 49" in message and "log line 10" not in message


async def test_a_crash_by_signal_is_named(tmp_path: Path) -> None:
    agent = script_agent(tmp_path, "import signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    with pytest.raises(AgentError, match=r"was killed by SIGKILL.*stderr was empty"):
        await agent.run(task(), Recorder())


async def test_stderr_is_the_log_and_is_bounded(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        """
        sys.stderr.write("x" * (3 << 20) + "\\nthe end\\n")
        print("answer")
        """,
    )
    reply = await agent.run(task(), Recorder())
    assert reply.output == "answer"
    assert reply.log.endswith("the end")
    assert len(reply.log) < LOG_LIMIT_BYTES + 200
    assert "earlier output dropped" in reply.log


async def test_a_long_line_spanning_many_reads_is_one_step(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        'print(json.dumps({"kind": "tool_result", "name": "get_events", "result": "e" * 500_000}))\n',
    )
    recorder = Recorder()
    await agent.run(task(), recorder)
    assert isinstance(recorder.steps[0], ToolResultStep)
    assert recorder.steps[0].result == "e" * 500_000


async def test_an_agent_that_ignores_a_large_task_on_stdin_still_runs(tmp_path: Path) -> None:
    agent = script_agent(tmp_path, 'sys.stdin.close()\nprint("did not read it")\n')
    reply = await agent.run(task(prompt="p" * 1_000_000), Recorder())
    assert reply.output == "did not read it"


async def test_what_the_agent_leaves_running_is_killed_when_it_exits(tmp_path: Path) -> None:
    # The child inherits stdout: without killing it the run would wait for it until the timeout.
    agent = script_agent(
        tmp_path,
        """
        child = subprocess.Popen(["sleep", "1000"])
        print(json.dumps({"kind": "response", "content": str(child.pid)}), flush=True)
        """,
    )
    reply = await asyncio.wait_for(agent.run(task(), Recorder()), timeout=60)
    assert await asyncio.to_thread(wait_until, lambda: not is_running(int(reply.output)))


async def test_cancelling_kills_the_process_group_and_reaps_the_agent(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    agent = script_agent(
        tmp_path,
        f"""
        import time
        child = subprocess.Popen(["sh", "-c", "sleep 1000 & sleep 1000"])
        with open({str(pidfile)!r} + ".tmp", "w") as f:
            f.write(f"{{os.getpid()}} {{child.pid}}")
        os.replace({str(pidfile)!r} + ".tmp", {str(pidfile)!r})
        time.sleep(1000)
        """,
    )
    running = asyncio.create_task(agent.run(task(), Recorder()))
    assert await asyncio.to_thread(wait_until, pidfile.exists)
    leader, child = (int(p) for p in pidfile.read_text().split())
    assert is_running(leader) and is_running(child)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert not Path(f"/proc/{leader}").exists(), "the agent process was reaped, not left a zombie"
    assert await asyncio.to_thread(wait_until, lambda: not is_running(child))


async def test_a_missing_executable_at_run_time_is_an_agent_error(tmp_path: Path) -> None:
    path = tmp_path / "agent.sh"
    path.write_text("#!/bin/sh\necho hi\n")
    path.chmod(0o755)
    agent = resolve_agent(f"cmd:{path}")
    path.unlink()
    with pytest.raises(AgentError, match="cannot start agent command"):
        await agent.run(task(), Recorder())


# -- the exit notification (no polling): what decides when a run ends --------------------------------------


async def test_an_agent_that_exits_at_once_without_output_answers_empty() -> None:
    agent = resolve_agent("cmd:true")
    reply = await asyncio.wait_for(agent.run(task(), Recorder()), timeout=60)
    assert reply.output == "" and reply.notes == []


async def test_agents_that_exit_at_once_all_finish_together() -> None:
    # Sixteen exits reported by the child watcher at about the same moment, each to its own run.
    agent = resolve_agent(f"cmd:{shlex.quote(sys.executable)} -c 'import sys; print(sys.argv); sys.exit(0)'")
    replies = await asyncio.wait_for(asyncio.gather(*(agent.run(task(), Recorder()) for _ in range(16))), timeout=120)
    assert [r.output for r in replies] == ["['-c']"] * 16


async def test_the_exit_is_notified_while_a_grandchild_still_holds_stdout() -> None:
    # `Process.wait()` would wait for the pipes; the notification comes from the child watcher when the
    # command itself is reaped, while `sleep` (in the same group) still holds stdout open.
    proc, protocol = await _spawn(("sh", "-c", "sleep 1000 & exit 3"), dict(os.environ))
    assert proc.stdout is not None and proc.stdin is not None
    try:
        await asyncio.wait_for(protocol.exited, timeout=60)
        assert proc.returncode == 3
        assert not proc.stdout.at_eof(), "the grandchild still holds stdout: the exit did not wait for it"
    finally:
        processes.kill_group(proc.pid)
        proc.stdin.close()
        await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.stdout.at_eof()


async def test_an_agent_killed_by_a_signal_while_its_grandchild_holds_stdout_is_named(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        """
        import signal
        subprocess.Popen(["sleep", "1000"])  # inherits stdout, and is killed with the group
        print("partial", flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
        """,
    )
    with pytest.raises(AgentError, match=r"was killed by SIGTERM"):
        await asyncio.wait_for(agent.run(task(), Recorder()), timeout=60)
