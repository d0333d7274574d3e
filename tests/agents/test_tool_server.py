"""The tool server: one run's tools over HTTP, recorded like in-process calls, a token per run."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sredrill.agents import Task, ToolAccess, ToolHost, ToolRegistry, needs_tool_server, resolve_agent, tool_routes
from sredrill.engine import RunOptions, Settings, run_packs
from sredrill.engine.plan import IsolationRequest
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.results import RunReport, TestResult
from sredrill.scenarios import load_pack
from sredrill.trajectory import Recorder, ToolError, ToolSpec
from tests.support.toolsets import StaticToolset

ROOT = Path(__file__).resolve().parents[2]
ALERT = {"title": "CPU above 90%", "state": "alerting"}


def _steps(recorder: Recorder) -> list[dict[str, Any]]:
    """The steps without their timings, which differ between any two calls."""
    return [s.model_dump(exclude={"t_ms", "latency_ms"}) for s in recorder.steps]


def _auth(access: ToolAccess) -> dict[str, str]:
    return {"Authorization": f"Bearer {access.token}"}


@pytest.fixture
async def host() -> AsyncIterator[ToolHost]:
    host = ToolHost()
    try:
        yield host
    finally:
        await host.aclose()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


class Exploding:
    """A toolset whose tool crashes (a bug in it, not a call the agent could correct)."""

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name="boom", description="crashes")]

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        raise RuntimeError("the evidence backend fell over")


def test_only_out_of_process_connectors_need_the_server() -> None:
    assert needs_tool_server(resolve_agent(f"cmd:{shlex.quote(sys.executable)} -c pass"))
    assert needs_tool_server(resolve_agent("http://127.0.0.1:9/agent"))
    assert not needs_tool_server(resolve_agent("py:tests.support.sample_agents:answer"))
    assert not needs_tool_server(resolve_agent("openai:m", base_url="http://127.0.0.1:9/v1"))


async def test_the_server_starts_on_first_use_and_serves_every_run_on_one_port(host: ToolHost) -> None:
    assert host.server is None
    a = await host.open("run-a", StaticToolset({"get_alert": ALERT}), Recorder())
    b = await host.open("run-b", StaticToolset({"get_alert": ALERT}), Recorder())
    assert a.tools_url.startswith("http://127.0.0.1:") and a.tools_url.endswith("/runs/run-a")
    assert a.tools_url.rsplit("/runs/", 1)[0] == b.tools_url.rsplit("/runs/", 1)[0]
    assert a.token != b.token and len(a.token) >= 32
    assert a.token not in repr(a) and a.token not in repr(host)


async def test_a_call_over_http_is_recorded_exactly_like_an_in_process_call(
    host: ToolHost, http: httpx.AsyncClient
) -> None:
    pack = load_pack("rds_postgres")
    scenario = pack.scenario("001-replication-lag")
    local, remote = Recorder(), Recorder()
    local_tools = RcaToolset(scenario, BackendMode.SELECTIVE, vocabulary=pack.vocabulary)
    remote_tools = RcaToolset(scenario, BackendMode.SELECTIVE, vocabulary=pack.vocabulary)
    access = await host.open("run-1", remote_tools, remote)
    task = Task(run_id="run-0", prompt="p").bind(local_tools, local)

    listed = await http.get(f"{access.tools_url}/tools", headers=_auth(access))
    assert listed.status_code == 200
    assert listed.json() == {"tools": [s.model_dump(mode="json") for s in remote_tools.specs()]}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_alert", {}),
        ("query_metrics", {"metric_name": "replica"}),
        ("get_performance_insights", {"dimension": "top_sql"}),
    ]
    for name, args in calls:
        response = await http.post(f"{access.tools_url}/tools/{name}", json=args, headers=_auth(access))
        assert response.status_code == 200, response.text
        assert response.json() == {"result": await task.call_tool(name, **args)}
    assert _steps(remote) == _steps(local)
    assert remote_tools.returned_metrics() == local_tools.returned_metrics() != ()


async def test_rejected_calls_are_recorded_and_answered_with_the_toolset_message(
    host: ToolHost, http: httpx.AsyncClient
) -> None:
    pack = load_pack("rds_postgres")
    tools = RcaToolset(pack.scenario("001-replication-lag"), BackendMode.FULL, vocabulary=pack.vocabulary)
    recorder = Recorder()
    access = await host.open("run-1", tools, recorder)

    unknown = await http.post(f"{access.tools_url}/tools/get_logs", json={}, headers=_auth(access))
    assert unknown.status_code == 404
    error = unknown.json()["error"]
    assert error["code"] == "unknown_tool" and "get_logs" in error["message"]

    bad = await http.post(f"{access.tools_url}/tools/query_metrics", json={"metric": "cpu"}, headers=_auth(access))
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "bad_arguments"
    with pytest.raises(ToolError) as local:
        await tools.call("query_metrics", {"metric": "cpu"})
    assert bad.json()["error"]["message"] == local.value.message

    results = [s for s in recorder.steps if s.kind == "tool_result"]
    assert [(s.name, s.error) for s in results] == [
        ("get_logs", f"unknown_tool: {error['message']}"),
        ("query_metrics", f"bad_arguments: {local.value.message}"),
    ]


async def test_a_body_that_is_not_a_json_object_is_a_400_and_nothing_is_recorded(
    host: ToolHost, http: httpx.AsyncClient
) -> None:
    recorder = Recorder()
    access = await host.open("run-1", StaticToolset({"get_alert": ALERT}), recorder)
    url = f"{access.tools_url}/tools/get_alert"
    not_json = await http.post(url, content=b"{metric_name: cpu", headers=_auth(access))
    assert not_json.status_code == 400 and not_json.json()["error"]["code"] == "bad_json"
    a_list = await http.post(url, json=["cpu"], headers=_auth(access))
    assert a_list.status_code == 400 and a_list.json()["error"]["code"] == "bad_arguments"
    assert "JSON object" in a_list.json()["error"]["message"]
    assert recorder.steps == []
    empty = await http.post(url, headers=_auth(access))  # no body = no arguments
    assert empty.status_code == 200 and empty.json() == {"result": ALERT}


async def test_a_token_reaches_only_its_own_run_and_nothing_is_recorded_on_the_other(
    host: ToolHost, http: httpx.AsyncClient
) -> None:
    rec_a, rec_b = Recorder(), Recorder()
    a = await host.open("run-a", StaticToolset({"get_alert": ALERT}), rec_a)
    b = await host.open("run-b", StaticToolset({"get_alert": ALERT}), rec_b)
    for method, path in (("GET", "/tools"), ("POST", "/tools/get_alert")):
        crossed = await http.request(
            method, b.tools_url + path, headers=_auth(a), json={} if method == "POST" else None
        )
        assert crossed.status_code == 403, crossed.text
        assert crossed.json()["error"]["code"] == "forbidden"
    assert rec_b.steps == [] and rec_a.steps == []
    for headers, status in (({}, 401), ({"Authorization": a.token}, 401), ({"Authorization": "Basic abc"}, 401)):
        response = await http.post(f"{a.tools_url}/tools/get_alert", headers=headers)
        assert response.status_code == status and response.json()["error"]["code"] == "unauthorized"
    own = await http.post(f"{b.tools_url}/tools/get_alert", headers=_auth(b))
    assert own.status_code == 200 and [s.kind for s in rec_b.steps] == ["tool_call", "tool_result"]
    assert rec_a.steps == []


async def test_a_closed_run_is_gone_and_its_token_stops_working(host: ToolHost, http: httpx.AsyncClient) -> None:
    recorder = Recorder()
    async with host.serving("run-1", StaticToolset({"get_alert": ALERT}), recorder) as access:
        assert (await http.get(f"{access.tools_url}/tools", headers=_auth(access))).status_code == 200
    gone = await http.post(f"{access.tools_url}/tools/get_alert", headers=_auth(access))
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "unknown_run"
    assert recorder.steps == []
    reopened = await host.open("run-1", StaticToolset({"get_alert": ALERT}), Recorder())
    assert reopened.token != access.token


async def test_a_crashing_toolset_is_a_500_with_its_message(host: ToolHost, http: httpx.AsyncClient) -> None:
    access = await host.open("run-1", Exploding(), Recorder())
    response = await http.post(f"{access.tools_url}/tools/boom", json={}, headers=_auth(access))
    assert response.status_code == 500
    assert response.json() == {
        "error": {"code": "tool_failed", "message": "tool 'boom' failed: RuntimeError: the evidence backend fell over"}
    }


async def test_closing_the_host_stops_the_server(http: httpx.AsyncClient) -> None:
    host = ToolHost()
    access = await host.open("run-1", StaticToolset({"get_alert": ALERT}), Recorder())
    await host.aclose()
    with pytest.raises(httpx.ConnectError):
        await http.get(f"{access.tools_url}/tools", headers=_auth(access))
    await host.aclose()  # twice is harmless


async def test_the_routes_mount_in_another_app_as_sredrill_serve_will() -> None:
    from fastapi import FastAPI

    registry = ToolRegistry()
    recorder = Recorder()
    token = registry.register("run-1", StaticToolset({"get_alert": ALERT}), recorder)
    app = FastAPI()
    app.include_router(tool_routes(registry))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://serve") as client:
        response = await client.post("/runs/run-1/tools/get_alert", headers={"Authorization": f"Bearer {token}"})
    assert response.json() == {"result": ALERT}
    assert [s.kind for s in recorder.steps] == ["tool_call", "tool_result"]


# -- cmd: agents over the HTTP tools -------------------------------------------------------------------------

TOOL_USER = """
import json, os, sys, urllib.request, urllib.error

task = json.load(sys.stdin)
url, token = os.environ["SREDRILL_TOOLS_URL"], os.environ["SREDRILL_RUN_TOKEN"]
assert (url, token, os.environ["SREDRILL_RUN_ID"]) == (task["tools_url"], task["token"], task["run_id"])
assert "SREDRILL_MCP_URL" not in os.environ and task["mcp_url"] is None

def call(name, args):
    req = urllib.request.Request(f"{url}/tools/{name}", data=json.dumps(args).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)

seen = [call("get_alert", {}), call("get_logs", {"since": "1h"})]
print(json.dumps({"kind": "response", "content": json.dumps(seen)}))
"""


async def test_a_cmd_agent_calls_its_tools_over_http_with_the_url_and_token_of_its_environment(
    host: ToolHost, tmp_path: Path
) -> None:
    script = tmp_path / "agent.py"
    script.write_text(TOOL_USER)
    agent = resolve_agent(f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}")
    recorder = Recorder()
    tools = StaticToolset({"get_alert": ALERT})
    async with host.serving("run-7", tools, recorder) as access:
        task = Task(run_id="run-7", prompt="p", tools=tools.specs(), tools_url=access.tools_url, token=access.token)
        reply = await agent.run(task, recorder)
    (ok, alert), (missing, error) = json.loads(reply.output)
    assert (ok, alert) == (200, {"result": ALERT})
    assert missing == 404 and error["error"]["code"] == "unknown_tool"
    kinds = [(s.kind, getattr(s, "name", None)) for s in recorder.steps]
    assert kinds == [
        ("tool_call", "get_alert"),
        ("tool_result", "get_alert"),
        ("tool_call", "get_logs"),
        ("tool_result", "get_logs"),
        ("response", None),
    ]
    assert recorder.steps[2].args == {"since": "1h"}  # type: ignore[union-attr]


# -- the engine ----------------------------------------------------------------------------------------------


class Collect:
    def __init__(self) -> None:
        self.results: list[TestResult] = []

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None:
        self.results.append(result)

    def on_run_end(self, report: RunReport) -> None: ...


async def test_the_engine_serves_tools_to_a_cmd_agent_and_not_to_an_in_process_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(ROOT)
    capture = tmp_path / "tasks.jsonl"
    monkeypatch.setenv("CAPTURE", str(capture))
    spy = tmp_path / "spy.py"
    spy.write_text(
        "import json, os, sys\n"
        "task = json.load(sys.stdin)\n"
        "with open(os.environ['CAPTURE'], 'a') as f:\n"
        "    f.write(json.dumps({'tools_url': task['tools_url'], 'token': task['token']}) + '\\n')\n"
        "print('no conclusion')\n"
    )
    scenarios = ["001-replication-lag", "002-connection-exhaustion"]
    for spec in (
        f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(spy))}",
        "py:tests.support.sample_agents:capture_task",
    ):
        report = await run_packs(
            ["rds_postgres"],
            settings=Settings(agent=spec),
            options=RunOptions(jobs=2),
            listener=Collect(),
            store=None,
            scenario_ids=scenarios,
            # Process level: the spies write what they saw to a file outside a sandbox's reach.
            isolation=IsolationRequest(isolation="process", agent_env=("CAPTURE",)),
        )
        assert [r.status for r in report.results] == ["failed", "failed"], [r.failure_reason for r in report.results]
    seen = [json.loads(line) for line in capture.read_text().splitlines()]
    assert seen[2:] == [{"tools_url": None, "token": None}] * 2  # the py: agent calls its tools in process
    seen = seen[:2]
    assert all(s["tools_url"].startswith("http://127.0.0.1:") and s["token"] for s in seen)
    assert seen[0]["tools_url"].rsplit("/runs/", 1)[0] == seen[1]["tools_url"].rsplit("/runs/", 1)[0]
    assert seen[0]["token"] != seen[1]["token"]
    # The run is over: its server is stopped.
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(seen[0]["tools_url"] + "/tools")


# -- docs/agent-protocol.md ------------------------------------------------------------------------------------

DOC = ROOT / "docs" / "agent-protocol.md"
ERROR_SCHEMA = ("<!-- tool-error-schema:start -->", "<!-- tool-error-schema:end -->")


def render_error_schema(doc: str) -> str:
    """The doc with the tool server's error body schema regenerated between its markers."""
    from sredrill.agents.tool_server import ToolErrorBody

    start, end = ERROR_SCHEMA
    before, rest = doc.split(start, 1)
    _, after = rest.split(end, 1)
    schema = json.dumps(ToolErrorBody.model_json_schema(), indent=2, ensure_ascii=False)
    return f"{before}{start}\n```json\n{schema}\n```\n{end}{after}"


def test_the_error_schema_in_the_doc_is_current() -> None:
    doc = DOC.read_text()
    assert doc == render_error_schema(doc), "regenerate: python tests/agents/test_tool_server.py"


if __name__ == "__main__":
    DOC.write_text(render_error_schema(DOC.read_text()))


# -- the server starts on its first connection ---------------------------------------------------------------

LAZY_RUN = """
import asyncio, json, shlex, sys
from sredrill.agents import Task, ToolHost, resolve_agent
from sredrill.trajectory import Recorder
from tests.support.toolsets import StaticToolset

HEAVY = ("fastapi", "uvicorn", "starlette", "mcp")

def loaded():
    return sorted(m for m in HEAVY if m in sys.modules)

async def main():
    host = ToolHost()
    seen = {}
    try:
        recorder = Recorder()
        access = await host.open("run-1", StaticToolset({"get_alert": {"title": "CPU"}}), recorder)
        idle = resolve_agent("cmd:" + shlex.quote(sys.executable) + " -c 'print(42)'")
        task = Task(run_id="run-1", prompt="p", tools_url=access.tools_url, token=access.token)
        seen["idle_output"] = (await idle.run(task, Recorder())).output
        seen["before_a_call"] = loaded()
        seen["serving_before"] = host.server.is_serving
        seen["mcp_url"] = access.mcp_url
        caller = resolve_agent("cmd:" + shlex.quote(sys.executable) + " -c " + shlex.quote(CALLER))
        seen["call_output"] = (await caller.run(task, recorder)).output
        seen["after_a_call"] = loaded()
        seen["serving_after"] = host.server.is_serving
        seen["steps"] = [s.kind for s in recorder.steps]
    finally:
        await host.aclose()
    print(json.dumps(seen))

CALLER = '''
import json, os, urllib.request
req = urllib.request.Request(os.environ["SREDRILL_TOOLS_URL"] + "/tools/get_alert", data=b"{}", method="POST",
                             headers={"Authorization": "Bearer " + os.environ["SREDRILL_RUN_TOKEN"]})
print(json.load(urllib.request.urlopen(req, timeout=60))["result"]["title"])
'''

asyncio.run(main())
"""


def test_no_web_framework_or_mcp_sdk_is_imported_until_an_agent_connects() -> None:
    done = subprocess.run([sys.executable, "-c", LAZY_RUN], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["idle_output"] == "42"
    assert seen["before_a_call"] == [] and seen["serving_before"] is False
    assert seen["mcp_url"].endswith("/runs/run-1/mcp"), "the mcp extra is found without importing it"
    assert seen["call_output"] == "CPU", "the first connection waited for the server to start, then was answered"
    assert seen["serving_after"] is True and {"fastapi", "uvicorn", "mcp"} <= set(seen["after_a_call"])
    assert seen["steps"][:2] == ["tool_call", "tool_result"]


async def test_a_server_closed_before_any_connection_refuses_connections(http: httpx.AsyncClient) -> None:
    host = ToolHost()
    access = await host.open("run-1", StaticToolset({"get_alert": ALERT}), Recorder())
    assert host.server is not None and not host.server.is_serving
    await host.aclose()
    with pytest.raises(httpx.ConnectError):
        await http.get(f"{access.tools_url}/tools", headers=_auth(access))
