"""Agents outside the sredrill process, end to end: `python -m sredrill run` graded by the RCA suite.

A `cmd:` script and an HTTP agent service investigate through the HTTP tools; the `openai:` agent talks to a
scripted OpenAI-compatible server. Each time, the trajectory in the store is checked against what the agent
did, as the agent (or the model's server) saw it.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sredrill.store import Store
from tests.support.openai_server import OpenAIStub, StubReply, chat_completion, conversation, rate_limited, tool_call

from .conftest import Cli, Project

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "agents"
SCENARIOS = ("001-replication-lag", "004-cpu-saturation-bad-query")


def _run(project: Project, agent: str, *extra: str, env: dict[str, str] | None = None) -> Cli:
    scenarios = [arg for s in SCENARIOS for arg in ("--scenario", s)]
    return project.run("run", "--pack", "rds_postgres", *scenarios, "--agent", agent, "--json", *extra, env=env)


def _graded(cli: Cli) -> dict[str, dict[str, Any]]:
    """The results by scenario folder, each checked to be graded (not errored) by the RCA suite."""
    assert cli.code in (0, 1), cli.stderr + cli.stdout[-2000:]
    results = {r["id"].split("/")[1].split("#")[0]: r for r in cli.report()["results"]}
    assert sorted(results) == sorted(SCENARIOS)
    for result in results.values():
        assert result["status"] in ("passed", "failed"), result["failure_reason"]
        assert {"root_cause_present", "category", "failure_modes", "evidence_queried"} <= set(result["checks"])
    return results


def _stored(project: Project, cli: Cli, result: dict[str, Any]) -> list[dict[str, Any]]:
    with Store(project.db) as store:
        steps = store.trajectory(cli.report()["run_id"], result["id"])
    assert steps is not None
    return steps


def _calls(steps: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [(s["name"], s["args"]) for s in steps if s["kind"] == "tool_call"]


def _paired(steps: list[dict[str, Any]]) -> None:
    """Every call has its result, right after it: the server records both around the toolset call."""
    for call, result in itertools.pairwise(steps):
        if call["kind"] == "tool_call":
            assert result["kind"] == "tool_result" and result["call_id"] == call["call_id"], (call, result)


# -- a cmd: script using the HTTP tools --------------------------------------------------------------------------


def test_a_script_agent_investigates_whole_scenarios_through_the_http_tools(project: Project) -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import http_tools_agent as example  # what the example does, to compare with what was recorded
    finally:
        sys.path.remove(str(EXAMPLES))
    cli = _run(project, f"cmd:{sys.executable} {EXAMPLES / 'http_tools_agent.py'}")
    results = _graded(cli)
    expected = [
        ("get_alert", {}),
        *[("query_metrics", {"metric_name": m}) for m in example.WATCHED],
        ("get_performance_insights", {"dimension": "top_sql"}),
        ("get_events", {}),
    ]
    for result in results.values():
        steps = _stored(project, cli, result)
        assert _calls(steps) == expected
        _paired(steps)
        assert not [s for s in steps if s["kind"] == "tool_result" and s["error"]]
        assert [s["kind"] for s in steps if s["kind"] not in ("tool_call", "tool_result")] == [
            "user",
            "thinking",
            "thinking",
            "response",
        ]
        assert result["trajectory"]["tool_calls"] == [name for name, _ in expected]
        assert result["actual"]["failure_modes"] and result["actual"]["failure_modes"][0] in {
            mode for mode, _, _ in example.WATCHED.values()
        }
    assert results["001-replication-lag"]["actual"]["failure_modes"] == ["replication_lag"]


# -- an agent service ------------------------------------------------------------------------------------------


@pytest.fixture
def agent_service() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "http_agent_service.py"), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # the service prints its URL once it listens
        assert url.startswith("http://127.0.0.1:"), url
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_an_agent_service_investigates_whole_scenarios_through_the_http_tools(
    project: Project, agent_service: tuple[str, subprocess.Popen[str]]
) -> None:
    url, proc = agent_service
    cli = _run(project, url)
    results = _graded(cli)
    metrics = {"001-replication-lag": "ReplicaLag", "004-cpu-saturation-bad-query": "CPUUtilization"}
    for folder, result in results.items():
        steps = _stored(project, cli, result)
        assert _calls(steps) == [
            ("get_alert", {}),
            ("query_metrics", {"metric_name": metrics[folder]}),
            ("get_performance_insights", {"dimension": "top_wait_events"}),
        ]
        _paired(steps)
        # The tools were called while the POST was open; the reply's steps come after (a JSON reply).
        assert [s["kind"] for s in steps][-3:] == ["thinking", "thinking", "response"]
        assert metrics[folder] in steps[-3]["content"]
    assert results["004-cpu-saturation-bad-query"]["actual"]["failure_modes"] == ["cpu_saturation"]
    proc.terminate()
    _, log = proc.communicate(timeout=10)
    traced = [line for line in log.splitlines() if " traceparent 00-" in line]
    assert len(traced) == 2  # one POST per agent run, each with its own trace context
    assert {line.split()[1] for line in traced} == {r["agent_run_id"] for r in results.values()}


def test_an_unreachable_agent_service_makes_every_run_errored_with_the_reason(project: Project) -> None:
    with OpenAIStub() as stub:  # any free port, closed again: nothing listens there
        url = f"{stub.url}/agent"
    cli = _run(project, url)
    assert cli.code == 3, cli.stderr
    for result in cli.report()["results"]:
        assert result["status"] == "errored"
        assert f"cannot reach agent service {url}" in result["failure_reason"]


# -- tokens --------------------------------------------------------------------------------------------------

# Two runs side by side (--jobs 2): each tries the other's tools with its own token, then its own.
INTRUDER = """
import json, os, sys, time, pathlib, urllib.request, urllib.error

task = json.load(sys.stdin)
shared = pathlib.Path(os.environ["SHARED"])
url, token = os.environ["SREDRILL_TOOLS_URL"], os.environ["SREDRILL_RUN_TOKEN"]
(shared / (task["run_id"] + ".url")).write_text(url)

def wait_for(pattern):
    deadline = time.monotonic() + 60
    while len(list(shared.glob(pattern))) < 2:
        if time.monotonic() > deadline:
            sys.exit("the other run never arrived")
        time.sleep(0.02)

def post(base):
    req = urllib.request.Request(base + "/tools/get_alert", data=b"{}", method="POST",
                                 headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code

wait_for("*.url")
other = next(p.read_text() for p in shared.glob("*.url") if p.stem != task["run_id"])
crossed = post(other)
(shared / (task["run_id"] + ".done")).write_text("")
wait_for("*.done")  # the other run is still open while both try
print(json.dumps({"kind": "response", "content": "crossed=%d own=%d" % (crossed, post(url))}))
"""


def test_a_run_s_token_does_not_reach_another_run_s_tools(project: Project) -> None:
    shared = project.root / "shared"
    shared.mkdir()
    project.write("intruder.py", INTRUDER)
    # The two agents meet in a folder of the project: at process level (a sandbox would keep them apart anyway).
    cli = _run(
        project,
        f"cmd:{sys.executable} intruder.py",
        "--jobs",
        "2",
        "--isolation",
        "process",
        "--agent-env",
        "SHARED",
        env={"SHARED": str(shared)},
    )
    assert cli.code == 1, cli.stderr
    for result in cli.report()["results"]:
        assert result["output"] == "crossed=403 own=200", result["failure_reason"]
        steps = _stored(project, cli, result)
        assert _calls(steps) == [("get_alert", {})]  # its own call only: the refused one left no trace
        _paired(steps)


# -- the openai: agent -------------------------------------------------------------------------------------------

REPLICA = {
    "root_cause": "A write-heavy UPDATE backfill generates WAL faster than the read replica can replay it, so "
    "replication lag on the replica grows past the alert threshold.",
    "category": "resource_exhaustion",
    "failure_modes": ["replication_lag"],
    "causal_chain": ["bulk UPDATE writes", "WAL volume grows", "replica replay falls behind", "ReplicaLag alert"],
    "claims": [
        {"text": "ReplicaLag climbs steadily after the backfill starts", "evidence": ["aws_cloudwatch_metrics"]},
        {"text": "The top SQL is the backfill UPDATE waiting on WAL writes", "evidence": ["aws_performance_insights"]},
    ],
    "ruled_out": [{"hypothesis": "cpu_saturation", "reason": "CPU on the primary stays moderate"}],
}
CPU_TEXT = """ROOT_CAUSE: A query doing a sequential scan runs on every request and saturates the CPU.
ROOT_CAUSE_CATEGORY: resource_exhaustion
FAILURE_MODES: cpu_saturation
VALIDATED_CLAIMS:
- CPUUtilization rises to its ceiling at the alert. [evidence: aws_cloudwatch_metrics]
- The top SQL by load is one statement waiting on CPU. [evidence: aws_performance_insights]
CAUSAL_CHAIN:
- new query -> sequential scans -> CPU saturation -> alert"""


def _is_replica(messages: list[dict[str, Any]]) -> bool:
    return "ReplicaLag above" in messages[1]["content"]


def _usage(messages: list[dict[str, Any]], tokens: tuple[int, int]) -> tuple[int, int] | None:
    # One conversation reports usage, the other never does: its token usage must stay unknown.
    return tokens if _is_replica(messages) else None


def _model() -> list[StubReply | Any]:
    """The scripted model: the same five turns for every scenario, each a server quirk, then an answer."""
    return [
        # content null beside a tool call; arguments a JSON string; no id
        lambda m: chat_completion(None, tool_calls=[tool_call("get_alert", "{}", id=None)], usage=_usage(m, (900, 30))),
        # arguments an object; invalid JSON arguments; an unknown tool; no finish_reason
        lambda m: chat_completion(
            "Listing the metrics first.",
            tool_calls=[
                tool_call("list_metrics", {}, id="t2a"),
                tool_call("query_metrics", '{"metric_name": ', id="t2b"),
                tool_call("get_logs", "{}", id="t2c"),
            ],
            usage=_usage(m, (1500, 60)),
            absent=("finish_reason",),
        ),
        # neither content nor tool calls
        lambda m: chat_completion(None, usage=_usage(m, (1600, 1)), absent=("content",)),
        lambda m: chat_completion(
            None,
            tool_calls=[
                tool_call("query_metrics", {"metric_name": "ReplicaLag" if _is_replica(m) else "CPU"}, id="t4a"),
                tool_call("get_performance_insights", {"dimension": "top_sql"}, id="t4b"),
            ],
            usage=_usage(m, (2500, 40)),
        ),
        lambda m: (
            chat_completion(None, tool_calls=[tool_call("submit_diagnosis", json.dumps(REPLICA))], usage=(3000, 200))
            if _is_replica(m)
            else chat_completion(CPU_TEXT, finish_reason="stop")
        ),
    ]


def test_the_openai_agent_investigates_whole_scenarios_against_a_scripted_model(project: Project) -> None:
    with OpenAIStub([rate_limited(retry_after_s=0)], responder=conversation(_model())) as stub:
        cli = _run(project, "openai:stub-model", "--base-url", stub.base_url)
        bodies = [b for b in stub.bodies if isinstance(b, dict)]
    results = _graded(cli)
    assert len(bodies) == 1 + 2 * 5  # the 429, then five turns per scenario
    assert all(b["model"] == "stub-model" for b in bodies)

    for folder, result in results.items():
        replica = folder == "001-replication-lag"
        conversation_bodies = [b for b in bodies if _is_replica(b["messages"]) == replica]
        last = max(conversation_bodies, key=lambda b: len(b["messages"]))["messages"]
        steps = _stored(project, cli, result)
        _paired(steps)
        # The calls the model asked for, in order, are the calls recorded.
        asked = [(c["function"]["name"], c["function"]["arguments"]) for m in last if m["role"] == "assistant"
                 for c in m.get("tool_calls") or []]  # fmt: skip
        if replica:
            asked.append(("submit_diagnosis", json.dumps(REPLICA)))
        recorded = _calls(steps)
        assert [name for name, _ in recorded] == [name for name, _ in asked]
        for (_, args), (_, sent) in zip(recorded, asked, strict=True):
            parsed = sent if isinstance(sent, dict) else _json_or_none(sent)
            assert args == (parsed if isinstance(parsed, dict) else {})
        # What each tool answered is what the model was told.
        told = [m["content"] for m in last if m["role"] == "tool"]
        answers = [s for s in steps if s["kind"] == "tool_result"][: len(told)]
        for answer, content in zip(answers, told, strict=True):
            if answer["error"]:
                assert content == f"error: {answer['error']}"
            else:
                assert json.loads(content) == answer["result"]
        assert sum(1 for a in answers if a["error"]) == 2  # the bad JSON and the unknown tool
        assert {"role": "user", "content": _nudge()} in last
        assert result["trajectory"]["loops"] == 5
        assert steps[-1]["kind"] == "response"

    replica, cpu = results["001-replication-lag"], results["004-cpu-saturation-bad-query"]
    assert replica["actual"]["failure_modes"] == ["replication_lag"]
    assert cpu["actual"]["failure_modes"] == ["cpu_saturation"]
    assert replica["metrics"]["tokens"] == {"prompt": 9500, "completion": 331, "total": 9831, "cached": None}
    assert cpu["metrics"]["tokens"] is None  # its server never reported usage: unknown, not zero


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _nudge() -> str:
    from sredrill.agents.connectors.openai import NUDGE

    return NUDGE


def test_an_openai_agent_whose_key_is_refused_is_errored_with_the_server_s_message(project: Project) -> None:
    refused = StubReply(status=401, body={"error": {"message": "Incorrect API key provided: sk-wrong"}})
    with OpenAIStub(responder=lambda request: (refused.status, refused.body, {})) as stub:
        cli = _run(project, "openai:stub-model", "--base-url", stub.base_url, env={"OPENAI_API_KEY": "sk-wrong"})
        assert stub.requests[0].headers["Authorization"] == "Bearer sk-wrong"
    assert cli.code == 3, cli.stderr
    for result in cli.report()["results"]:
        assert result["status"] == "errored"
        assert "HTTP 401: Incorrect API key provided" in result["failure_reason"]
