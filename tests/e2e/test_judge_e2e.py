"""Judges end to end: a real local OpenAI-compatible server, `sredrill test` in a subprocess."""

from __future__ import annotations

import json
import sys

from tests.support.openai_server import OpenAIStub, chat_completion

from .conftest import Project

AGENT = """
async def agent(task):
    return "The primary database refused connections: pool exhausted."
"""

EVAL = """
from sredrill import test, expect, judge

@test("gate", prompt="p")
async def _(agent):
    result = await agent.run()
    await judge(result, "names the database as the cause")

@test("observe", prompt="p")
async def _(agent):
    result = await agent.run()
    verdict = await judge.observe(result, "names the database as the cause")
    expect(verdict.score).to_be_less_than(0.5)

@test("per-test skip", prompt="p", skip_judge=True)
async def _(agent):
    result = await agent.run()
    verdict = await judge(result, "names the database as the cause")
    expect(verdict.skipped).to_be(True)
"""


def _verdict(passed: bool, score: float, reasoning: str):
    def respond(body):
        return 200, chat_completion(json.dumps({"passed": passed, "score": score, "reasoning": reasoning})).body, {}

    return respond


def _run(project: Project, stub: OpenAIStub, *extra: str, env: dict[str, str] | None = None):
    return project.run(
        "test", "judge_eval.py", "--agent", "py:agent_mod:agent", "--json",
        "--judge-base-url", stub.base_url, "--judge-model", "judge-1", *extra, env=env,
    )  # fmt: skip


def test_gate_fails_observe_does_not_and_skip_is_neutral(project: Project) -> None:
    project.write("agent_mod.py", AGENT)
    project.write("judge_eval.py", EVAL)
    with OpenAIStub(responder=_verdict(False, 0.2, "it never names the database")) as stub:
        cli = _run(project, stub)
    assert cli.code == 1, cli.stderr
    gate, observe, skipped = cli.result("gate"), cli.result("observe"), cli.result("per-test skip")
    assert gate["status"] == "failed"
    assert "it never names the database" in gate["failure_reason"]
    judged = next(s for s in gate["signals"] if s["kind"] == "judge")
    assert (judged["role"], judged["passed"], judged["score"]) == ("gate", False, 0.2)
    assert gate["score"] == 0.2
    assert observe["status"] == "passed"
    assert [s["role"] for s in observe["signals"] if s["kind"] == "judge"] == ["observe"]
    assert skipped["status"] == "passed"
    assert [s["skipped"] for s in skipped["signals"] if s["kind"] == "judge"] == [True]
    # Same criteria, same run content: the observe verdict is a cache hit; the skipped test made no call.
    assert len(stub.requests) == 1
    assert [s["cached"] for s in observe["signals"] if s["kind"] == "judge"] == [True]


def test_no_judge_flag_and_environment_skip_every_judge(project: Project) -> None:
    project.write("agent_mod.py", AGENT)
    project.write("judge_eval.py", EVAL)
    with OpenAIStub(responder=_verdict(False, 0.0, "no")) as stub:
        flag = _run(project, stub, "--no-judge", "--grep", "gate")
        env = _run(project, stub, "--grep", "gate", env={"SREDRILL_SKIP_JUDGE": "1"})
    for cli in (flag, env):
        gate = cli.result("gate")
        assert gate["status"] == "passed"
        assert [s["skipped"] for s in gate["signals"] if s["kind"] == "judge"] == [True]
    assert stub.requests == []


def test_a_judge_server_that_errors_makes_the_test_errored(project: Project) -> None:
    project.write("agent_mod.py", AGENT)
    project.write("judge_eval.py", EVAL)
    with OpenAIStub(responder=lambda body: (500, {"error": {"message": "judge backend down"}}, {})) as stub:
        cli = _run(project, stub, "--grep", "gate")
    gate = cli.result("gate")
    assert cli.code == 3
    assert gate["status"] == "errored"
    assert "judge" in gate["failure_reason"] and "500" in gate["failure_reason"]


def test_a_judge_reply_without_json_is_errored_not_failed(project: Project) -> None:
    project.write("agent_mod.py", AGENT)
    project.write("judge_eval.py", EVAL)
    with OpenAIStub(responder=lambda body: (200, chat_completion("I think it passes").body, {})) as stub:
        cli = _run(project, stub, "--grep", "gate")
    assert cli.result("gate")["status"] == "errored"
    assert "did not reply with JSON" in cli.result("gate")["failure_reason"]


def test_the_judge_cache_makes_the_second_run_call_nothing(project: Project) -> None:
    project.write("agent_mod.py", AGENT)
    project.write("judge_eval.py", EVAL)
    with OpenAIStub(responder=_verdict(True, 0.9, "names the database")) as stub:
        first = _run(project, stub, "--grep", "gate|observe")
        calls_after_first = len(stub.requests)
        second = _run(project, stub, "--grep", "gate|observe")
        assert len(stub.requests) == calls_after_first == 1  # observe hit the cache already in the first run
    before = next(s for s in first.result("gate")["signals"] if s["kind"] == "judge")
    for name in ("gate", "observe"):
        after = next(s for s in second.result(name)["signals"] if s["kind"] == "judge")
        assert after["cached"] is True
        assert after["passed"] == before["passed"] and after["score"] == before["score"]
    assert before["cached"] is False


def test_no_judge_configured_is_errored_with_the_fix(project: Project) -> None:
    project.write("agent_mod.py", AGENT)
    project.write("judge_eval.py", EVAL)
    cli = project.run("test", "judge_eval.py", "--agent", "py:agent_mod:agent", "--json", "--grep", "gate")
    assert cli.result("gate")["status"] == "errored"
    assert "--judge-base-url" in cli.result("gate")["failure_reason"]


def test_llm_insights_only_with_the_flag(project: Project) -> None:
    project.write("agent_mod.py", AGENT)
    project.write(
        "ins_eval.py",
        """
        from sredrill import test, expect

        @test("fails", prompt="p")
        async def _(agent):
            expect((await agent.run()).output).to_contain("replica")
        """,
    )
    synth = {"summary": "looked only at connections", "why": ["no replica query"], "recommendations": ["query lag"]}
    reply = chat_completion(json.dumps(synth), usage=(300, 40))
    with OpenAIStub(responder=lambda body: (200, reply.body, {})) as stub:
        base = ["test", "ins_eval.py", "--agent", "py:agent_mod:agent", "--json"]
        judge = ["--judge-base-url", stub.base_url, "--judge-model", "m"]
        rules = project.run(*base, *judge)
        assert stub.requests == []
        llm = project.run(*base, *judge, "--insights", "llm")
        assert len(stub.requests) == 1
    assert rules.result("fails")["insights"]["source"] == "rules"
    insights = llm.result("fails")["insights"]
    assert insights["source"] == "llm" and insights["recommendations"] == ["query lag"]
    # The synthesizer's tokens are the run's cost too: counted, as its own role (not the judge's).
    assert rules.result("fails")["usage"] is None
    usage = llm.result("fails")["usage"]
    assert [(m["model"], m["role"], m["total_tokens"]) for m in usage["by_model"]] == [("m", "insights", 340)]
    assert usage["total_tokens"] == 340 and usage["judge_tokens"] == 0


CMD_JSONL = """
import json, sys
task = json.load(sys.stdin)
print(json.dumps({"kind": "thinking", "content": "check the replica first"}))
print(json.dumps({"kind": "tool_call", "name": "query_metrics", "args": {"metric_name": "ReplicaLag"}}))
print(json.dumps({"kind": "tool_result", "name": "query_metrics", "result": {"values": [1, 900]}}))
print(json.dumps({"kind": "response", "content": "replica lag from " + task["prompt"]}))
"""

CMD_PLAIN = """
import sys
sys.stdin.read()
print("no JSON here")
print("the replica is behind")
"""

CMD_EVAL = """
from sredrill import test, expect

@test("cmd agent", prompt="a WAL burst")
async def _(agent):
    result = await agent.run()
    expect(result.output).to_contain("replica")
    expect(result).to_have_called_tool("query_metrics", args={"metric_name": "ReplicaLag"})
    expect(result).to_have_steps_of_type("thinking")
"""


def test_a_cmd_agent_speaking_json_lines(project: Project) -> None:
    project.write("jsonl_agent.py", CMD_JSONL)
    project.write("cmd_eval.py", CMD_EVAL)
    cli = project.run("test", "cmd_eval.py", "--agent", f"cmd:{sys.executable} jsonl_agent.py", "--json")
    assert cli.code == 0, cli.stdout + cli.stderr
    r = cli.result("cmd agent")
    assert r["output"] == "replica lag from a WAL burst"
    assert {s["name"]: s["value"] for s in r["signals"] if s["kind"] == "metric"}["tool_calls"] == 1


def test_a_cmd_agent_printing_plain_text(project: Project) -> None:
    project.write("plain_agent.py", CMD_PLAIN)
    project.write("cmd_eval.py", CMD_EVAL)
    cli = project.run("test", "cmd_eval.py", "--agent", f"cmd:{sys.executable} plain_agent.py", "--json")
    r = cli.result("cmd agent")
    assert r["status"] == "failed"  # it called no tool; the text still counts as its answer
    assert "the replica is behind" in r["output"]
    assert "to have called tool" in r["failure_reason"]


def test_the_judges_tokens_are_counted_in_the_tests_usage_and_priced(project: Project) -> None:
    """An LLM judge's tokens join the test's usage as role `judge` (the run's cost counts them); a cached verdict
    spent none; `--prices` prices the judge model as any other."""
    project.write("agent_mod.py", AGENT)
    project.write("judge_eval.py", EVAL)
    project.write("prices.toml", 'currency = "USD"\n[models."judge-1"]\ninput = 1.0\noutput = 4.0\n')

    def respond(body: dict) -> tuple[int, dict, dict]:
        reply = chat_completion(json.dumps({"passed": True, "score": 0.9, "reasoning": "ok"}), usage=(700, 50))
        return 200, reply.body, {}

    with OpenAIStub(responder=respond) as stub:
        first = _run(project, stub, "--grep", "gate|observe", "--prices", "prices.toml")
        second = _run(project, stub, "--grep", "gate")
    gate = first.result("gate")
    assert gate["status"] == "passed", first.stderr
    judged = next(s for s in gate["signals"] if s["kind"] == "judge")
    assert judged["usage"] == {
        "model": "judge-1", "input_tokens": 700, "output_tokens": 50, "total_tokens": 750,
        "cached_input_tokens": None, "cost": None, "role": "judge",
    }  # fmt: skip
    usage = gate["usage"]
    assert usage["judge_tokens"] == 750 and usage["total_tokens"] == 750
    assert [(m["model"], m["role"]) for m in usage["by_model"]] == [("judge-1", "judge")]
    assert usage["cost"] == (700 * 1.0 + 50 * 4.0) / 1_000_000
    # "observe" judged the same content: a cache hit, no tokens spent, so no usage at all.
    assert first.result("observe")["usage"] is None
    summary = first.report()["summary"]["usage"]
    assert summary["judge_tokens"] == 750 and summary["cost"] == usage["cost"]
    assert (
        "750 tokens (700 in; 50 out; 750 of them the judge's)"
        in project.run("runs", "show", first.report()["run_id"]).stdout
    )
    # The second run hit the cache: nothing judged by the model, nothing counted.
    assert second.result("gate")["usage"] is None
