"""Bad input never crashes the server (issue: hardening, items 1, 9 and 12), each attack made as a client would.

Real servers on loopback ports: deep JSON and lone surrogates on every body-reading surface (`/reset`, `/step`,
`/mcp`, the WebSocket, the tool routes), the 422/400 split of openenv-core, `--max-runs` (429 with
`Retry-After`), finished runs leaving memory for the store, and an SSE client that goes away.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from sredrill.server import ServerThread, create_app
from sredrill.server.live import KEPT_FINISHED_RUNS
from sredrill.store import Store
from sredrill.text import REPLACED_NOTE
from tests.server.launch import launched

DEEP = "[" * 100_000 + "]" * 100_000
"""100k levels: deeper than any JSON parser here recurses."""
JSON = {"Content-Type": "application/json"}
WAIT = {"action": {"action_type": "wait"}}


@pytest.fixture
def server() -> Iterator[ServerThread]:
    with ServerThread(create_app(packs=())) as running:
        yield running


def runs_client(app: Any, server: ServerThread) -> httpx.Client:
    """A client of `server` carrying the runs API's token (generated at start on a loopback server)."""
    token = app.state.options.runs_token
    return httpx.Client(base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {token}"})


@pytest.fixture
def client(server: ServerThread) -> Iterator[httpx.Client]:
    with runs_client(server.app, server) as http:
        yield http


@pytest.fixture
def ws(server: ServerThread) -> Iterator[ClientConnection]:
    with connect(server.url.replace("http://", "ws://") + "/ws", max_size=None) as connection:
        yield connection


def ask(ws: ClientConnection, frame: str | dict[str, Any]) -> dict[str, Any]:
    ws.send(frame if isinstance(frame, str) else json.dumps(frame))
    return json.loads(ws.recv(timeout=30))


def post(client: httpx.Client, path: str, body: str | bytes, **headers: str) -> httpx.Response:
    return client.post(path, content=body, headers={**JSON, **headers})


# -- deep JSON ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/reset", DEEP),
        ("/reset", '{"task_id": ' + DEEP + "}"),
        ("/step", DEEP),
        ("/step", '{"action": ' + DEEP + "}"),
        ("/step", '{"action": {"action_type": "wait", "args": ' + DEEP + "}}"),
        ("/mcp", DEEP),
        ("/mcp", '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + DEEP + "}"),
    ],
)
def test_deep_json_is_refused_with_detail_and_the_server_goes_on(client: httpx.Client, path: str, body: str) -> None:
    assert client.post("/reset", json={}).status_code == 200
    answer = post(client, path, body)
    assert answer.status_code in (400, 422), answer.text[:300]
    error = answer.json()
    assert error["detail"][0]["msg"], error
    assert error["detail"][0]["type"] == "json_invalid"
    assert client.post("/step", json=WAIT).status_code == 200  # the session is untouched


def test_a_deep_websocket_frame_is_an_error_frame_and_the_next_frame_is_answered(ws: ClientConnection) -> None:
    for frame in (DEEP, '{"type": "step", "data": ' + DEEP + "}", '{"type": "mcp", "data": ' + DEEP + "}"):
        error = ask(ws, frame)
        assert error["type"] == "error" and error["data"]["code"] == "INVALID_JSON"
        assert "deep" in error["data"]["message"]
    assert ask(ws, {"type": "reset", "data": {}})["type"] == "observation"
    assert ask(ws, {"type": "state"})["type"] == "state"


# -- the 422 / 400 split (openenv-core's, seed 004) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "kind"),
    [
        ("/reset", "{not json", "json_invalid"),
        ("/reset", "[]", "model_type"),
        ("/reset", "3", "model_type"),
        ("/reset", '"hard_mixed"', "model_type"),
        ("/reset", '{"task": "hard_mixed"}', "extra_forbidden"),
        ("/reset", '{"seed": "7"}', "int_type"),
        ("/step", "{not json", "json_invalid"),
        ("/step", "[]", "model_type"),
        ("/step", "{}", "missing"),
        ("/step", '{"action": "wait"}', "dict_type"),
        ("/step", '{"action": {"action_type": "wait"}, "extra": 1}', "extra_forbidden"),
    ],
)
def test_a_body_that_does_not_fit_is_422_with_fastapis_detail(
    client: httpx.Client, path: str, body: str, kind: str
) -> None:
    client.post("/reset", json={})
    answer = post(client, path, body)
    assert answer.status_code == 422, answer.text
    assert kind in {d["type"] for d in answer.json()["detail"]}
    assert all(d["msg"] and d["loc"][0] == "body" for d in answer.json()["detail"])


@pytest.mark.parametrize(
    ("path", "body", "allowed"),
    [
        ("/reset", {"task_id": "easy_cpu_spik"}, "easy_cpu_spike"),
        ("/step", {"action": {"action_type": "scale_worker"}}, "scale_workers"),
        ("/step", {"action": {"action_type": "inspect_logs", "target": "nowhere"}}, "database"),
        ("/step", {"action": {"action_type": "scale_workers", "target": "api_workers", "value": 0}}, None),
    ],
)
def test_a_disallowed_task_or_action_is_400_with_the_allowed_values(
    client: httpx.Client, path: str, body: dict[str, Any], allowed: str | None
) -> None:
    client.post("/reset", json={"task_id": "hard_mixed"})
    answer = client.post(path, json=body)
    assert answer.status_code == 400, answer.text
    error = answer.json()
    assert error["detail"][0]["msg"]
    if allowed is not None:
        assert allowed in error["allowed"]


def test_websocket_errors_keep_the_connection(ws: ClientConnection) -> None:
    for frame, code in [
        ("{not json", "INVALID_JSON"),
        ("[]", "VALIDATION_ERROR"),
        ("7", "VALIDATION_ERROR"),
        ({"type": "reset", "data": {"seed": "x"}}, "VALIDATION_ERROR"),
        ({"type": "reset", "data": {"task_id": "nope"}}, "VALIDATION_ERROR"),
        ({"type": "reset", "extra": 1}, "VALIDATION_ERROR"),
        ({"type": "step", "data": 3}, "VALIDATION_ERROR"),
        ({"type": "jump"}, "UNKNOWN_TYPE"),
    ]:
        error = ask(ws, frame)
        assert error["type"] == "error" and error["data"]["code"] == code, (frame, error)
        assert error["data"]["message"]
    assert ask(ws, {"type": "reset", "data": {}})["type"] == "observation"


def test_a_body_over_the_limit_is_413_with_detail(client: httpx.Client) -> None:
    answer = post(client, "/step", b"[" * (5 * 1024 * 1024))
    assert answer.status_code == 413 and answer.json()["detail"][0]["type"] == "too_large"
    run = post(client, "/api/runs", json.dumps({"packs": ["x" * 70_000]}))
    assert run.status_code == 413 and run.json()["detail"][0]["msg"]


# -- lone surrogates ---------------------------------------------------------------------------------------------


def test_a_surrogate_in_an_http_body_is_replaced_not_a_crash(client: httpx.Client) -> None:
    unknown = post(client, "/reset", '{"task_id": "hard_mixed\\ud800"}')
    assert unknown.status_code == 400, unknown.text
    assert unknown.json()["detail"][0]["input"] == "hard_mixed\ufffd"
    client.post("/reset", json={"task_id": "hard_mixed"})
    bad_target = post(client, "/step", '{"action": {"action_type": "inspect_logs", "target": "\\udc00db"}}')
    assert bad_target.status_code == 400 and bad_target.json()["detail"][0]["input"] == "\ufffddb"
    unknown_key = post(client, "/step", '{"action": {"action_type": "wait"}, "\\ud800": 1}')
    assert unknown_key.status_code == 422 and unknown_key.json()["detail"][0]["loc"] == ["body", "\ufffd"]


def test_an_accepted_body_with_a_surrogate_answers_200_and_says_so() -> None:
    with ServerThread(create_app(packs=["rds_postgres"])) as server, httpx.Client(base_url=server.url) as http:
        rca = next(t for t in http.get("/tasks").json()["tasks"] if t["kind"] == "rca")
        assert http.post("/reset", json={"task_id": rca["task_id"]}).status_code == 200
        diagnosis = '{"root_cause": "replication lag \\ud800", "failure_modes": ["replication_lag"]}'
        answer = post(http, "/step", '{"action": {"action_type": "submit_diagnosis", "args": ' + diagnosis + "}}")
    assert answer.status_code == 200, answer.text
    assert answer.json()["done"] is True and answer.json()["notes"] == [REPLACED_NOTE]


def test_a_surrogate_in_a_websocket_frame_or_mcp_call_is_replaced(client: httpx.Client, ws: ClientConnection) -> None:
    error = ask(ws, '{"type": "reset", "data": {"task_id": "\\ud800"}}')
    assert error["type"] == "error" and "\ufffd" in error["data"]["message"]
    assert ask(ws, '{"type": "reset", "data": {"task_id": "hard_mixed"}}')["type"] == "observation"
    step = ask(ws, '{"type": "step", "data": {"action_type": "inspect_logs", "target": "\\ud800"}}')
    assert step["type"] == "error" and "\ufffd" in step["data"]["message"]
    call = '{"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
    call += '{"name": "wait", "arguments": {"args": {"note": "\\ud800"}}}}}'
    answered = ask(ws, call)
    assert answered["type"] == "mcp" and answered["data"]["id"] == 1, answered

    client.post("/reset", json={"task_id": "hard_mixed"})
    body = '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", '
    body += '"params": {"name": "inspect_logs", "arguments": {"target": "\\ud800"}}}'
    rpc = post(client, "/mcp", body)
    assert rpc.status_code == 200, rpc.text
    assert "\ufffd" in rpc.text


AGENT = """
import json, os, sys, urllib.request, urllib.error

task = json.load(sys.stdin)
url, token = os.environ["SREDRILL_TOOLS_URL"], os.environ["SREDRILL_RUN_TOKEN"]

def call(name, body):
    req = urllib.request.Request(f"{url}/tools/{name}", data=body.encode(), method="POST",
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)

tool = next(t for t in task["tools"] if t["input_schema"].get("properties"))
arg = next(iter(tool["input_schema"]["properties"]))
seen = [
    call(tool["name"], json.dumps({arg: "bad\\ud800text"})),   # json.dumps writes the escape \\ud800
    call(tool["name"], "[" * 100000 + "]" * 100000),
    call(tool["name"], json.dumps({arg: json.loads("[" * 500 + "]" * 500)})),  # parses, but deeper than tools take
]
print(json.dumps({"kind": "response", "content": json.dumps(seen)}))
"""


def test_a_surrogate_tool_argument_is_recorded_stored_and_answered_with_u_fffd(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    db = tmp_path / "runs.db"
    agent = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    done = subprocess.run(
        [sys.executable, "-m", "sredrill", "run", "--pack", "rds_postgres", "--scenario", "001-replication-lag",
         "--agent", agent, "--db", str(db), "--json"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr  # a result (passed or failed), never errored or a crash
    report = json.loads(done.stdout)
    (result,) = report["results"]
    assert result["status"] != "errored", result
    (replaced, answer), *refused = json.loads(result["output"])
    for status, error in refused:
        assert status == 400 and error["error"]["code"] == "bad_json" and "deep" in error["error"]["message"]
    assert replaced in (200, 400), answer
    if replaced == 200:
        assert answer["notes"] == [REPLACED_NOTE]
    with Store(db) as store:
        run_id = store.list_runs(1)[0].run_id
        steps = store.trajectory(run_id, result["id"])
    calls = [s for s in steps if s["kind"] == "tool_call"]
    assert len(calls) == 1  # the deep bodies never reached the toolset
    assert "bad\ufffdtext" in calls[0]["args"].values()


# -- runs: --max-runs, eviction, SSE disconnect -----------------------------------------------------------------

SLOW = """
import asyncio

from sredrill import expect, test


@test("slow")
async def _(agent):
    await asyncio.sleep(300)
"""

QUICK = """
from sredrill import expect, test


@test("quick")
async def _(agent):
    expect(1).to_be(1)
"""


@pytest.fixture
def evals_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "slow_eval.py").write_text(textwrap.dedent(SLOW))
    (folder / "quick_eval.py").write_text(textwrap.dedent(QUICK))
    return folder


def wait_for(check: Any, *, deadline_s: float = 60) -> None:
    end = time.monotonic() + deadline_s
    while not check():
        assert time.monotonic() < end, "condition not met in time"
        time.sleep(0.05)


def test_max_runs_answers_429_with_retry_after(tmp_path: Path, evals_dir: Path) -> None:
    cmd = [sys.executable, "-m", "sredrill", "serve", "--port", "0", "--pack", "incidents", "--max-runs", "4",
           "--evals", str(evals_dir), "--db", str(tmp_path / "runs.db"), "--token", "s3cret"]  # fmt: skip
    auth = {"Authorization": "Bearer s3cret"}
    with (
        launched(cmd, env=dict(os.environ), cwd=str(tmp_path)) as server,
        httpx.Client(base_url=server.url, timeout=60, headers=auth) as http,
    ):
        started = []
        for _ in range(4):
            answer = http.post("/api/runs", json={"evals": ["slow_eval.py"]})
            assert answer.status_code == 201, answer.text
            started.append(answer.json()["run_id"])
        fifth = http.post("/api/runs", json={"evals": ["slow_eval.py"]})
        assert fifth.status_code == 429, fifth.text
        assert int(fifth.headers["Retry-After"]) > 0
        error = fifth.json()
        assert error["detail"][0]["type"] == "too_many_runs" and "--max-runs" in error["detail"][0]["msg"]
        # A slot comes back when a run ends.
        assert http.post(f"/api/runs/{started[0]}/cancel").status_code == 202
        wait_for(lambda: http.get(f"/api/runs/{started[0]}").json()["status"] == "cancelled")
        again = http.post("/api/runs", json={"evals": ["quick_eval.py"]})
        assert again.status_code == 201, again.text
        for run_id in started[1:]:
            http.post(f"/api/runs/{run_id}/cancel")
    assert not any("Traceback" in line for line in server.stderr), "".join(server.stderr)


def finish(http: httpx.Client, body: dict[str, Any]) -> str:
    answer = http.post("/api/runs", json=body)
    assert answer.status_code == 201, answer.text
    run_id = answer.json()["run_id"]
    with http.stream("GET", f"/api/runs/{run_id}/events") as events:
        for line in events.iter_lines():
            if line.startswith("event: run_finished"):
                break
    return run_id


def test_finished_runs_leave_memory_and_are_served_from_the_store(tmp_path: Path, evals_dir: Path) -> None:
    app = create_app(packs=(), db=tmp_path / "runs.db", evals=str(evals_dir))
    with ServerThread(app) as server, runs_client(app, server) as http:
        first = finish(http, {"evals": ["quick_eval.py"]})
        wait_for(lambda: http.get(f"/api/runs/{first}").json()["status"] == "finished")
        before = http.get(f"/api/runs/{first}").json()
        assert app.state.runs.get(first) is not None
        for _ in range(KEPT_FINISHED_RUNS):
            finish(http, {"evals": ["quick_eval.py"]})
        wait_for(lambda: app.state.runs.get(first) is None)
        assert len(app.state.runs) <= KEPT_FINISHED_RUNS
        assert http.get(f"/api/runs/{first}").json() == before
        with http.stream("GET", f"/api/runs/{first}/events") as events:
            lines = [line for line in events.iter_lines() if line]
        assert lines[0] == "event: run_finished" and '"status": "finished"' in lines[1]


def test_a_live_progress_client_going_away_logs_no_error(
    tmp_path: Path, evals_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(packs=(), db=tmp_path / "runs.db", evals=str(evals_dir))
    with ServerThread(app) as server, runs_client(app, server) as http:
        run_id = http.post("/api/runs", json={"evals": ["slow_eval.py"]}).json()["run_id"]
        with caplog.at_level(logging.INFO):
            for _ in range(3):
                with runs_client(app, server) as follower, follower.stream("GET", f"/api/runs/{run_id}/events") as s:
                    for line in s.iter_lines():
                        if line.startswith("event: test_started"):
                            break  # and hang up mid-stream
            host, port = server.url.removeprefix("http://").split(":")
            for _ in range(3):  # a browser tab closed: the socket goes, nothing else is said
                with socket.create_connection((host, int(port))) as raw:
                    token = app.state.options.runs_token
                    raw.sendall(f"GET /api/runs/{run_id}/events HTTP/1.1\r\nHost: {host}:{port}\r\n"
                                f"Authorization: Bearer {token}\r\n\r\n".encode())  # fmt: skip
                    assert raw.recv(12) == b"HTTP/1.1 200"
            live = app.state.runs.get(run_id)
            wait_for(lambda: not live._waiters)  # every stream noticed its client left
        assert http.post(f"/api/runs/{run_id}/cancel").status_code == 202
        wait_for(lambda: live.done)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
