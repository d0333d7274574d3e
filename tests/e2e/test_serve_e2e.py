"""`sredrill serve` as a subprocess: it answers on a loopback port, plays episodes, stops cleanly on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import httpx
from websockets.sync.client import connect

from tests.server.launch import launched


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("SREDRILL_")}


def serve_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "sredrill", "serve", "--port", "0", *args]


def test_serve_answers_health_and_plays_over_http_and_websocket() -> None:
    with launched(serve_cmd("--pack", "rds_postgres", "--max-sessions", "4"), env=env()) as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert "sredrill serve: listening on" in "".join(server.stderr)
        with httpx.Client(base_url=server.url) as http:
            assert http.get("/health").json() == {"status": "healthy"}
            tasks = http.get("/tasks").json()["tasks"]
            assert {t["kind"] for t in tasks} == {"incident", "family", "rca"}
            reset = http.post("/reset", json={"task_id": "hard_mixed", "seed": 0})
            step = http.post("/step", json={"action": {"action_type": "restart_database"}},
                             headers={"X-Session-Id": reset.headers["X-Session-Id"]})  # fmt: skip
            assert step.json()["reward"] == 5.0
        with connect(server.url.replace("http://", "ws://") + "/ws") as ws:
            ws.send(json.dumps({"type": "reset", "data": {"task_id": "easy_cpu_spike"}}))
            assert json.loads(ws.recv(timeout=10))["type"] == "observation"
        server.proc.send_signal(signal.SIGINT)
        assert server.proc.wait(timeout=30) == 0  # Ctrl-C is a normal way to stop a server


def test_serve_plays_a_task_family_episode_by_id_and_seed() -> None:
    from sredrill.incidents.families import family_task

    task = family_task("event_pipeline", 100_007)
    with launched(serve_cmd(), env=env()) as server, httpx.Client(base_url=server.url) as http:
        reset = http.post("/reset", json={"task_id": "event_pipeline", "seed": 100_007, "reward_mode": "sparse"})
        assert reset.status_code == 200, reset.text
        session = {"X-Session-Id": reset.headers["X-Session-Id"]}
        assert list(reset.json()["observation"]["services"]) == list(task.components)
        assert reset.json()["info"]["description"] == task.description
        assert http.get("/schema", headers=session).json()["action"] == task.action_schema()
        wrong = http.post("/step", json={"action": {"action_type": "failover", "target": "api_workers"}},
                          headers=session)  # fmt: skip
        assert wrong.status_code == 400 and wrong.json()["detail"][0]["loc"][-1] in ("target", "action_type")
        done = http.post("/step", json={"action": {"action_type": "declare_unfixable"}}, headers=session).json()
        assert done["done"] is True and done["reward"] == done["info"]["grade"] == 0.0  # sparse: only the grade
        bad = http.post("/reset", json={"task_id": "event_pipelines"})
        assert bad.status_code == 400 and "did you mean 'event_pipeline'" in bad.json()["detail"][0]["msg"]


def test_serve_options_token_and_capacity() -> None:
    with launched(serve_cmd("--token", "tok", "--max-sessions", "1"), env=env()) as server:
        assert httpx.post(f"{server.url}/reset", json={}).status_code == 401
        auth = {"Authorization": "Bearer tok"}
        assert httpx.post(f"{server.url}/reset", json={}, headers=auth).status_code == 200
        first = httpx.post(f"{server.url}/reset", json={}, headers=auth)  # the unaddressed one makes room
        assert first.status_code == 200
        held = {**auth, "X-Session-Id": first.headers["X-Session-Id"]}
        assert httpx.get(f"{server.url}/state", headers=held).status_code == 200  # now addressed: kept
        full = httpx.post(f"{server.url}/reset", json={}, headers=auth)
        assert full.status_code == 503 and "1/1 sessions" in full.json()["detail"][0]["msg"]


def test_serve_usage_errors_exit_2() -> None:
    bad_pack = subprocess.run(serve_cmd("--pack", "no_such_pack"), env=env(), capture_output=True, text=True,
                              timeout=60)  # fmt: skip
    assert bad_pack.returncode == 2 and bad_pack.stderr.startswith("error:")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        busy = subprocess.run([sys.executable, "-m", "sredrill", "serve", "--port", port], env=env(),
                              capture_output=True, text=True, timeout=60)  # fmt: skip
    assert busy.returncode == 2 and "cannot listen on 127.0.0.1:" in busy.stderr and "--port" in busy.stderr


def test_serve_help_does_not_import_fastapi() -> None:
    code = "import sys; from sredrill.cli import app; print('fastapi' in sys.modules, 'uvicorn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env())
    assert out.stdout.strip() == "False False"
    helped = subprocess.run([sys.executable, "-m", "sredrill", "serve", "--help"], capture_output=True, text=True,
                            env=env(), timeout=60)  # fmt: skip
    assert helped.returncode == 0
    for option in ("--host", "--port", "--pack", "--evals", "--token", "--max-sessions", "--allow-agent", "--max-runs"):
        assert option in helped.stdout
