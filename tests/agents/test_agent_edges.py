"""Foreign text and size at every connector's edge (hardening items 1 and 9): lone surrogates are replaced and
said in the reply's notes, JSON of any depth is an AgentError or plain text (never a RecursionError), output is
kept up to 1 MiB with a marker, and nothing is buffered without bound. Real subprocesses, real HTTP servers."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from sredrill import processes
from sredrill.agents import Agent, Task, resolve_agent
from sredrill.agents.connectors.cmd import DRAIN_GRACE_S
from sredrill.agents.connectors.http import BODY_LIMIT_BYTES
from sredrill.agents.reply import OUTPUT_LIMIT_BYTES, reply_from_value
from sredrill.diagnosis import Diagnosis
from sredrill.errors import AgentError
from sredrill.text import REPLACED_NOTE
from sredrill.trajectory import Recorder
from tests.support.canned_agent_service import CannedService
from tests.support.openai_server import OpenAIStub
from tests.support.processes import is_running, wait_until

MARKER = "… [truncated: "
BAD = "bad \ud800 text"


def deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_dict(depth: int) -> dict[str, object]:
    root: dict[str, object] = {}
    node = root
    for _ in range(depth):
        child: dict[str, object] = {}
        node["x"] = child
        node = child
    return root


def task() -> Task:
    return Task(run_id="run-0001", prompt="Why is checkout slow?")


def script_agent(tmp_path: Path, source: str) -> Agent:
    path = tmp_path / "agent.py"
    path.write_text("import json, os, subprocess, sys\n" + textwrap.dedent(source))
    return resolve_agent(f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(path))}")


def fits(text: str) -> bool:
    return len(text.encode()) <= OUTPUT_LIMIT_BYTES + 64


# reply_from_value: what a py: agent returns


def test_a_returned_lone_surrogate_is_replaced_and_noted() -> None:
    for value in (BAD, {"answer": BAD}, {BAD: 1}, Diagnosis(root_cause=BAD), {"root_cause": BAD}):
        reply = reply_from_value(value)
        assert "\ud800" not in reply.output and "\ufffd" in reply.output, value
        reply.output.encode("utf-8")
        json.dumps(reply.data, ensure_ascii=False).encode("utf-8")
        assert reply.notes == [REPLACED_NOTE]
        if reply.diagnosis is not None:
            assert reply.diagnosis.root_cause == "bad \ufffd text"
    assert reply_from_value("fine").notes == []


def test_a_returned_dict_nested_too_deeply_is_an_agent_error() -> None:
    with pytest.raises(AgentError, match="nested too deeply"):
        reply_from_value(deep_dict(100_000))


def test_returned_text_that_is_deep_json_stays_text() -> None:
    text = deep_json(100_000)
    reply = reply_from_value(text)
    assert reply.output == text and reply.data is None and reply.diagnosis is None


def test_a_huge_returned_answer_keeps_its_head_and_says_so() -> None:
    for value in ("é" * (3 << 20), {"blob": "x" * (3 << 20)}, Diagnosis(root_cause="r" * (3 << 20))):
        reply = reply_from_value(value)
        assert fits(reply.output) and MARKER in reply.output
        assert len(reply.notes) == 1 and "only the first 1048576 were kept" in reply.notes[0]
    assert reply.diagnosis is not None and len(reply.diagnosis.root_cause) == 3 << 20, "grading sees it whole"


@pytest.mark.parametrize("value", [{"x": {1, 2}}, {"root_cause": 3}, {("a",): 1}, 3, None, b"bytes", ["a"]])
def test_an_unusable_return_value_is_an_agent_error(value: object) -> None:
    with pytest.raises(AgentError):
        reply_from_value(value)


# cmd: agents


async def test_a_cmd_agent_printing_100_mb_is_cut_to_1_mib_and_its_late_answer_kept(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        """
        block = ("x" * 99 + "\\n").encode() * 10_000
        for _ in range(100):
            sys.stdout.buffer.write(block)
        print(json.dumps({"kind": "response", "content": "the late answer"}))
        """,
    )
    recorder = Recorder()
    reply = await agent.run(task(), recorder)
    assert reply.output == "the late answer"
    assert sum(len(line) + 1 for line in reply.raw) <= OUTPUT_LIMIT_BYTES + 200
    assert any(line.startswith(MARKER) for line in reply.raw)
    total = 100_000_000 + len(json.dumps({"kind": "response", "content": "the late answer"})) + 1
    assert any(f"the agent's stdout was {total} bytes" in note for note in reply.notes), reply.notes
    assert recorder.steps[-1].kind == "response"


async def test_one_endless_line_keeps_its_head(tmp_path: Path) -> None:
    agent = script_agent(tmp_path, 'sys.stdout.buffer.write("é".encode() * (20 << 20))\n')
    reply = await agent.run(task(), Recorder())
    assert fits(reply.output) and reply.output.startswith("éé") and MARKER in reply.output
    assert "\ufffd" not in reply.output, "the cut does not split a character"


async def test_many_short_lines_are_capped_by_count(tmp_path: Path) -> None:
    agent = script_agent(tmp_path, 'sys.stdout.buffer.write(b"y\\n" * (5 << 20))\n')
    recorder = Recorder()
    reply = await agent.run(task(), recorder)
    assert len(recorder.steps) < 20_100 and reply.raw[-1].startswith(MARKER)


async def test_cmd_surrogates_and_invalid_utf8_are_replaced_and_noted(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        """
        sys.stdout.buffer.write(b"caf\\xe9 \\xff\\n")
        print('{"kind": "response", "content": "lag \\\\ud800 on the replica"}')
        """,
    )
    recorder = Recorder()
    reply = await agent.run(task(), recorder)
    assert reply.output == "lag \ufffd on the replica"
    assert REPLACED_NOTE in [*recorder.notes, *reply.notes]  # the transcript notes it on the recorder
    assert any("not valid UTF-8" in note for note in reply.notes)


async def test_the_agent_group_is_registered_while_it_runs(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    agent = script_agent(
        tmp_path,
        f"""
        import time
        open({str(pidfile)!r}, "w").write(str(os.getpid()))
        time.sleep(1000)
        """,
    )
    running = asyncio.create_task(agent.run(task(), Recorder()))
    assert await asyncio.to_thread(wait_until, lambda: pidfile.exists() and pidfile.read_text() != "")
    pid = int(pidfile.read_text())
    assert pid in processes.live_groups()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert pid not in processes.live_groups() and not is_running(pid)


async def test_a_detached_grandchild_holding_stdout_neither_loses_the_answer_nor_survives(tmp_path: Path) -> None:
    agent = script_agent(
        tmp_path,
        """
        child = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(1000)"])
        print(json.dumps({"kind": "response", "content": str(child.pid)}), flush=True)
        """,
    )
    reply = await asyncio.wait_for(agent.run(task(), Recorder()), timeout=60)
    assert reply.output.isdigit() and reply.notes == []
    assert await asyncio.to_thread(wait_until, lambda: not is_running(int(reply.output)))


async def test_a_grandchild_that_also_clears_its_environment_costs_only_the_grace(tmp_path: Path) -> None:
    # Out of sredrill's reach (no group, no tag): the answer is still kept, and the result says why it ended.
    ready = tmp_path / "ready"
    agent = script_agent(
        tmp_path,
        f"""
        import time
        code = "import os, time; os.setsid(); open({str(ready)!r}, 'w').close(); time.sleep(1000)"
        child = subprocess.Popen(["env", "-i", sys.executable, "-c", code])
        while not os.path.exists({str(ready)!r}):  # detached and without the tag: not before
            time.sleep(0.01)
        print(json.dumps({{"kind": "response", "content": str(child.pid)}}), flush=True)
        """,
    )
    reply = await asyncio.wait_for(agent.run(task(), Recorder()), timeout=60)
    try:
        assert reply.output.isdigit()
        assert any(f"still held its output open {DRAIN_GRACE_S:g}s" in note for note in reply.notes), reply.notes
    finally:
        processes.kill_group(int(reply.output))  # setsid made it a group leader


# http(s):// agents


@pytest.fixture
def service() -> CannedService:
    with CannedService() as canned:
        yield canned


async def test_an_http_reply_nested_too_deeply_is_an_agent_error(service: CannedService) -> None:
    service.reply = ("application/json", ('{"output": "x", "steps": ' + deep_json(100_000) + "}").encode())
    with pytest.raises(AgentError, match="nested too deeply"):
        await resolve_agent(service.url).run(task(), Recorder())


async def test_an_http_reply_with_a_surrogate_is_replaced_and_noted(service: CannedService) -> None:
    service.reply = ("application/json", b'{"output": "lag \\ud800 on the replica"}')
    reply = await resolve_agent(service.url).run(task(), Recorder())
    assert reply.output == "lag \ufffd on the replica" and REPLACED_NOTE in reply.notes


async def test_an_http_reply_over_the_body_limit_is_an_agent_error(service: CannedService) -> None:
    service.reply = ("application/json", (b'{"output": "' + b"x" * (1 << 20) for _ in range(100)))
    with pytest.raises(AgentError, match=f"more than {BODY_LIMIT_BYTES} bytes"):
        await resolve_agent(service.url).run(task(), Recorder())


async def test_a_long_http_output_keeps_its_head(service: CannedService) -> None:
    service.reply = ("application/json", json.dumps({"output": "y" * (3 << 20)}).encode())
    reply = await resolve_agent(service.url).run(task(), Recorder())
    assert fits(reply.output) and MARKER in reply.output
    assert len(reply.raw) == 1 and isinstance(reply.raw[0], str) and fits(reply.raw[0])
    assert any("reply body was" in note for note in reply.notes)


def _event(**event: object) -> bytes:
    return b"data: " + json.dumps(event).encode() + b"\n\n"


async def test_an_endless_event_stream_is_bounded_and_run_finished_still_answers(service: CannedService) -> None:
    chatter = _event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="z" * 1000) * 1000
    service.reply = (
        "text/event-stream",
        [_event(type="RUN_STARTED"), *(chatter for _ in range(100)), b"data: " + b"q" * (5 << 20) + b"\n\n",
         _event(type="RUN_FINISHED", result="the answer")],
    )  # fmt: skip
    reply = await resolve_agent(service.url).run(task(), Recorder())
    assert reply.output == "the answer"
    assert len(json.dumps(reply.raw)) <= 2 * OUTPUT_LIMIT_BYTES
    assert any("event stream was" in note for note in reply.notes), reply.notes


async def test_garbage_events_are_ignored_or_errors_never_crashes(service: CannedService) -> None:
    service.reply = (
        "text/event-stream",
        b"".join([
            b"data: " + deep_json(100_000).encode() + b"\n\n",
            b"data: \xff\xfe\n\n",
            _event(type="TEXT_MESSAGE_CONTENT", messageId=[1, [2]], delta={"a": 1}),
            _event(type="TOOL_CALL_START", toolCallId=None, toolCallName=7),
            _event(type="TOOL_CALL_ARGS", toolCallId=None, delta=deep_json(3000)),
            _event(type="TOOL_CALL_END", toolCallId=None),
            b'data: {"type": "TEXT_MESSAGE_CHUNK", "delta": "\\ud800"}\n\n',
            _event(type="RUN_ERROR", message=["not", "text"], code={"x": 1}),
        ]),
    )  # fmt: skip
    with pytest.raises(AgentError, match=r"RUN_ERROR: \(no message\)$"):
        await resolve_agent(service.url).run(task(), Recorder())


# openai: agents


async def test_an_openai_reply_nested_too_deeply_is_a_malformed_reply_not_a_crash() -> None:
    deep = '{"choices": ' + deep_json(100_000) + "}"
    with OpenAIStub(responder=lambda request: (200, deep, {"Content-Type": "application/json"})) as stub:
        agent = resolve_agent("openai:stub", base_url=stub.base_url)
        with pytest.raises(AgentError, match="not a chat completion"):
            await agent.run(task(), Recorder())


async def test_an_openai_reply_with_a_surrogate_or_a_huge_message_is_cleaned_and_noted() -> None:
    content = "lag \\ud800 " + "w" * (3 << 20)
    body = '{"choices": [{"message": {"role": "assistant", "content": "' + content + '"}, "finish_reason": "stop"}]}'
    with OpenAIStub(responder=lambda request: (200, body, {"Content-Type": "application/json"})) as stub:
        reply = await resolve_agent("openai:stub", base_url=stub.base_url).run(task(), Recorder())
    assert reply.output.startswith("lag \ufffd ww") and fits(reply.output) and MARKER in reply.output
    assert REPLACED_NOTE in reply.notes and any("the model's message was" in n for n in reply.notes)


def test_the_tag_sweep_reads_only_processes_forked_since_the_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    from sredrill import processes

    tag = "sweep-test-" + str(os.getpid())
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], env={**os.environ, "SREDRILL_TEST_TAG": tag}
    )
    try:
        assert processes._tagged("SREDRILL_TEST_TAG", tag, since_pid=child.pid - 1) == [child.pid]
        # Started before the pid it is asked about: not read, unless pids wrapped since (then all are read).
        assert processes._tagged("SREDRILL_TEST_TAG", tag, since_pid=child.pid) == []
        monkeypatch.setattr(processes, "_last_pid", lambda: child.pid - 5)  # a wrap cannot be caused in a test
        assert processes._tagged("SREDRILL_TEST_TAG", tag, since_pid=child.pid) == [child.pid]
    finally:
        child.kill()
        child.wait()
