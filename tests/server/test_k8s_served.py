"""Kubernetes scenarios on the environment server (issue 15, item 7): `GET /tasks` lists them beside the RDS
ones, an HTTP session resets one, steps through every `inspect_logs` target and submits; the session's schema
and MCP tools are its domain's; a wrong target is a 400 naming them; a WebSocket session plays one too; and
nothing the server sends in an episode names the scenario or its answer.

A real server on a loopback port, over the test fixture in the upstream EKS layout (`tests/fixtures/k8s_env`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from sredrill.env import RcaTask
from sredrill.scenarios import get_domain, leak_needles, load_pack

from .test_mcp import rpc

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "k8s_env"
PACK = load_pack(FIXTURE)
TARGETS = list(get_domain("k8s").action_targets("inspect_logs"))


def sid(response: httpx.Response) -> dict[str, str]:
    return {"X-Session-Id": response.headers["X-Session-Id"]}


def test_the_task_list_has_the_k8s_scenarios_beside_the_rds_ones(serve: Any) -> None:
    with serve(packs=["rds_postgres", str(FIXTURE)]) as server, httpx.Client(base_url=server.url) as http:
        tasks = http.get("/tasks").json()["tasks"]
    rca = {t["task_id"]: t for t in tasks if t["kind"] == "rca"}
    mine = [rca.pop(RcaTask.of(PACK, s).task_id) for s in PACK.scenarios]
    assert len(rca) == len(load_pack("rds_postgres").scenarios)
    for task in mine:
        assert "Kubernetes" in task["description"]
        assert task["action_schema"]["$defs"]["RcaInspectLogs"]["properties"]["target"]["enum"] == TARGETS
    assert all("pods" not in t["action_schema"]["$defs"]["RcaInspectLogs"]["properties"]["target"]["enum"]
               for t in rca.values())  # fmt: skip


def test_an_http_session_plays_a_k8s_task_to_its_grade(serve: Any) -> None:
    scenario = PACK.scenario("002-bad-image-tag")
    task_id = RcaTask.of(PACK, scenario).task_id
    with serve(packs=[str(FIXTURE)]) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        reset = http.post("/reset", json={"task_id": task_id})
        assert reset.status_code == 200, reset.text
        session = sid(reset)
        schema = http.get("/schema", headers=session).json()["action"]
        assert schema["$defs"]["RcaInspectLogs"]["properties"]["target"]["enum"] == TARGETS
        tools = {
            t["name"]: t for t in rpc(http, "tools/list", {"session_id": session["X-Session-Id"]})["result"]["tools"]
        }
        assert tools["inspect_logs"]["inputSchema"]["properties"]["target"]["enum"] == TARGETS

        sent = [reset.text]
        for target in TARGETS:
            args = {"pod": scenario.pods[-1].name} if target == "pod_logs" else None
            step = http.post("/step", json={"action": {"action_type": "inspect_logs", "target": target, "args": args}},
                             headers=session)  # fmt: skip
            assert step.status_code == 200, (target, step.text)
            assert step.json()["observation"]["inspection"]["evidence"], target
            sent.append(step.text)
        monitors = rpc(http, "tools/call", {"name": "inspect_metrics", "arguments": {"target": "ready"},
                                            "session_id": session["X-Session-Id"]})["result"]  # fmt: skip
        assert not monitors["isError"]
        assert [m["name"] for m in monitors["structuredContent"]["observation"]["inspection"]["evidence"]["monitors"]]
        sent.append(json.dumps(monitors))

        bad = http.post("/step", json={"action": {"action_type": "inspect_logs", "target": "events_"}}, headers=session)
        assert bad.status_code == 400 and sorted(bad.json()["allowed"]) == sorted(TARGETS)
        assert "did you mean 'events'" in bad.text

        diagnosis = {
            "root_cause": "The new pods stay in ImagePullBackOff: the image tag is missing (manifest unknown).",
            "category": "configuration_error",
            "failure_modes": ["image_pull_backoff"],
            "claims": [{"text": "Failed to pull image: manifest unknown", "evidence": ["eks_events"]}],
        }
        done = http.post("/step", json={"action": {"action_type": "submit_diagnosis", "args": diagnosis}},
                         headers=session)  # fmt: skip
        assert done.status_code == 200, done.text
        body = done.json()
        assert body["done"] is True and 0.0 < body["reward"] < 1.0  # no ruling out: not every gate
        state = http.get("/state", headers=session).json()
        assert state["done"] and state["task_id"] == task_id and state["step_count"] == len(TARGETS) + 2

    # Nothing sent before the submission names the scenario or its answer (its folder, the reference answer's
    # sentences, a snake_case failure mode, the annotations that carry the answer).
    text = "\n".join(sent).lower()
    assert not [n for n in leak_needles(scenario, PACK.vocabulary) if n in text]
    assert "k8s_failure_mode" not in text and "image pull backoff" not in text


def test_a_websocket_session_plays_a_k8s_task(serve: Any) -> None:
    from websockets.sync.client import connect

    scenario = PACK.scenario("001-cart-memory-limit")
    with serve(packs=[str(FIXTURE)]) as server, connect(server.url.replace("http", "ws") + "/ws") as ws:

        def ask(message: dict[str, Any]) -> dict[str, Any]:
            ws.send(json.dumps(message))
            answer: dict[str, Any] = json.loads(ws.recv())
            return answer

        reset = ask({"type": "reset", "data": {"task_id": RcaTask.of(PACK, scenario).task_id}})
        assert reset["type"] == "observation", reset
        pods = ask({"type": "step", "data": {"action_type": "inspect_logs", "target": "pods"}})
        evidence = pods["data"]["observation"]["inspection"]["evidence"]
        assert [p["name"] for p in evidence["pods"]] == [p.name for p in scenario.pods]
        wrong = ask({"type": "step", "data": {"action_type": "inspect_logs", "target": "performance_insights"}})
        assert wrong["type"] == "error" and "pod_logs" in json.dumps(wrong)
