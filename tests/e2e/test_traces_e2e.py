"""Traces end to end: `python -m sredrill test` with `cmd:` agents, real OTLP exports, real SQLite.

An agent traced with the OpenTelemetry SDK exports to the run's OTLP receiver in the trace of its TRACEPARENT:
its tokens, cost and tool calls appear in `await result.traces()`, and every span is in the store. An agent
that exports nothing makes `traces()` raise `TracesUnavailable`: a token budget is `errored`, never passed.
"""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from sredrill.store import Store
from sredrill.traces import SpanSource, parse_otlp

from .conftest import Project

AGENT = Path(__file__).resolve().parents[1] / "support" / "otel_agent_cmd.py"

EVAL = """
from sredrill import test, expect

async def get_alert():
    \"\"\"the alert\"\"\"
    return {"title": "CPU above 90%"}

@test("tokens and tools come from the agent's own spans", prompt="investigate")
async def _(agent):
    result = await agent.run(tools={"get_alert": get_alert})
    traces = await result.traces()
    expect(traces.total_tokens).to_be(1545)
    expect(traces.input_tokens).to_be(1200)
    expect(traces.cost_usd).to_be(0.0125)
    expect([(c.name, c.source.value) for c in traces.tool_calls]).to_equal(
        [("get_alert", "sredrill"), ("grep_notes", "agent")]
    )
    expect(traces.span_duration("chat fake-model")).to_be_greater_than(-1)
    expect(len({s.trace_id for s in traces.spans})).to_be(1)
    expect(traces.total_tokens).to_be_less_than(5000)
"""

SILENT_EVAL = """
from sredrill import test, expect

async def get_alert():
    \"\"\"the alert\"\"\"
    return {"title": "CPU above 90%"}

@test("a token budget without spans", prompt="investigate")
async def _(agent):
    result = await agent.run(tools={"get_alert": get_alert})
    traces = await result.traces(timeout_s=1.0)
    expect(traces.total_tokens).to_be_less_than(5000)
"""


def test_an_agents_otlp_spans_give_its_tokens_and_tool_calls(project: Project) -> None:
    project.write("traces_eval.py", EVAL)
    cli = project.run("test", "traces_eval.py", "--agent", f"cmd:{sys.executable} {AGENT}", "--json")
    result = cli.result("tokens and tools come from the agent's own spans")
    assert result["status"] == "passed", result["failure_reason"] or result["signals"]
    assert cli.code == 0, cli.stderr
    with Store(project.db) as store:
        spans = store.spans(cli.report()["run_id"], result["id"])
    names = {(s.source, s.name) for s in spans}
    assert {
        (SpanSource.SREDRILL, "test tokens and tools come from the agent's own spans"),
        (SpanSource.SREDRILL, "execute_tool get_alert"),
        (SpanSource.AGENT, "invoke_agent otel-sample-agent"),
        (SpanSource.AGENT, "chat fake-model"),
        (SpanSource.AGENT, "execute_tool get_alert"),
    } <= names
    agent_root = next(s for s in spans if s.name == "invoke_agent otel-sample-agent")
    ours = next(s for s in spans if s.source is SpanSource.SREDRILL and s.name.startswith("invoke_agent"))
    assert agent_root.parent_span_id == ours.span_id  # the agent's trace hangs from sredrill's agent run span
    assert agent_root.attributes["service.name"] == "otel-sample-agent"


def test_with_opentelemetrys_endpoint_set_the_whole_trace_is_exported(project: Project) -> None:
    bodies: list[bytes] = []

    class Collector(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        project.write("traces_eval.py", EVAL)
        endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
        cli = project.run(
            "test", "traces_eval.py", "--agent", f"cmd:{sys.executable} {AGENT}", "--json",
            env={"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint},
        )  # fmt: skip
    finally:
        server.shutdown()
    assert cli.code == 0, cli.stderr
    (body,) = bodies
    spans = parse_otlp(body, "application/json")
    assert len({s.trace_id for s in spans}) == 1
    names = {s.name for s in spans}
    assert {"invoke_agent otel-sample-agent", "chat fake-model", "execute_tool get_alert"} <= names
    assert any(s.attributes.get("service.name") == "sredrill" for s in spans)


def test_no_spans_means_traces_unavailable_and_a_token_budget_errored(project: Project) -> None:
    project.write("silent_eval.py", SILENT_EVAL)
    cli = project.run("test", "silent_eval.py", "--agent", f"cmd:{sys.executable} {AGENT} silent", "--json")
    result = cli.result("a token budget without spans")
    assert result["status"] == "errored"
    assert "TracesUnavailable" in result["failure_reason"] or "no spans" in result["failure_reason"]
    assert "arrived within 1s" in result["failure_reason"]
    assert cli.code == 3, cli.stderr


QUERY_EVAL = """
from sredrill import test, expect, evaluator
from sredrill.trajectory import ToolError

SEEN = {}

async def get_alert():
    \"\"\"the alert\"\"\"
    return {"title": "CPU above 90%"}

@evaluator("trace-judge")
async def trace_judge(result, criteria):
    tools = result.trace_tools()
    spans = await tools.call("get_spans", {"run_id": result.run_id, "source": "sredrill"})
    metrics = await tools.call("get_metrics", {"run_id": result.run_id})
    refused = []
    for other in [SEEN.get("first"), "not-this-run"]:
        try:
            await tools.call("get_spans", {"run_id": other})
        except ToolError as exc:
            refused.append(exc.code)
    names = [s["name"] for s in spans["spans"]]
    ok = refused == ["forbidden", "forbidden"] and "execute_tool get_alert" in names
    return {"passed": ok, "score": 1.0 if ok else 0.0,
            "reasoning": f"refused={refused} names={names} tools={[c['name'] for c in metrics['tool_calls']]}"}

@test("first run", prompt="investigate")
async def _(agent):
    result = await agent.run(tools={"get_alert": get_alert})
    SEEN["first"] = result.run_id
    expect(result.output).to_contain("alert")

@test("a judge reads its own run's spans and no other's", prompt="investigate")
async def _(agent, judge):
    result = await agent.run(tools={"get_alert": get_alert})
    verdict = await judge(result, {"criteria": "the agent read the alert", "evaluator": "trace-judge"})
    expect(verdict.reasoning).to_contain("refused=['forbidden', 'forbidden']")
"""


def test_the_trace_query_pack_refuses_another_runs_id(project: Project) -> None:
    project.write(
        "query_agents.py",
        """
        async def reads_alert(task):
            alert = await task.call_tool("get_alert")
            return f"the alert says {alert['title']}"
        """,
    )
    project.write("query_eval.py", QUERY_EVAL)
    cli = project.run("test", "query_eval.py", "--agent", "py:query_agents:reads_alert", "--json", "--jobs", "1")
    assert cli.code == 0, cli.stderr + cli.stdout[-3000:]
    result = cli.result("a judge reads its own run's spans and no other's")
    assert result["status"] == "passed"
    (verdict,) = [s for s in result["signals"] if s["kind"] == "judge"]
    assert verdict["passed"] is True, verdict["reasoning"]
    assert "tools=['get_alert']" in verdict["reasoning"]
