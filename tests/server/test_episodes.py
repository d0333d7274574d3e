"""What a session's episode chooses over HTTP: the task (classic or family) and seed, the reward mode, and the
action schema and MCP tools that follow it. Real servers on loopback ports."""

from __future__ import annotations

import json

import httpx

from sredrill.env import Action, make
from sredrill.incidents.families import family_task
from sredrill.server import ServerThread
from tests.server.conftest import ServerFactory
from tests.server.test_mcp import rpc

OPTIMAL_EASY = [
    {"action_type": "inspect_logs", "target": "api_workers"},
    {"action_type": "scale_workers", "target": "api_workers", "value": 6},
    {"action_type": "declare_healthy"},
]


def test_sparse_rewards_pay_only_the_grade_on_the_last_step(client: httpx.Client) -> None:
    reset = client.post("/reset", json={"task_id": "easy_cpu_spike", "seed": 0, "reward_mode": "sparse"})
    assert reset.status_code == 200, reset.text
    rewards = [client.post("/step", json={"action": a}).json()["reward"] for a in OPTIMAL_EASY]
    assert rewards == [0.0, 0.0, 0.76]  # the seed's worked example: easy in 3 of 5 steps
    state = client.get("/state").json()
    assert state["reward_mode"] == "sparse" and state["episode_reward"] == 0.76
    # A session keeps its mode until a reset changes it; dense is the seed's table again.
    named = {"X-Session-Id": reset.headers["X-Session-Id"]}
    client.post("/reset", json={"seed": 0}, headers=named)
    assert client.post("/step", json={"action": OPTIMAL_EASY[0]}, headers=named).json()["reward"] == 0.0
    client.post("/reset", json={"seed": 0, "reward_mode": "dense"}, headers=named)
    dense = [client.post("/step", json={"action": a}, headers=named).json()["reward"] for a in OPTIMAL_EASY]
    assert dense == [1.0, 5.0, 10.0]
    # A reset without the header opens a new session: dense, the default.
    assert client.post("/reset", json={"seed": 0}).json()["reward"] == 0.0
    assert client.get("/state").json()["reward_mode"] == "dense"


def test_an_unknown_reward_mode_is_a_400_naming_the_field_and_the_allowed_values(client: httpx.Client) -> None:
    answer = client.post("/reset", json={"task_id": "easy_cpu_spike", "reward_mode": "spars"})
    assert answer.status_code == 400
    body = answer.json()
    assert body["detail"][0]["loc"] == ["body", "reward_mode"]
    assert "did you mean 'sparse'" in body["detail"][0]["msg"]
    assert body["allowed"] == ["dense", "sparse"]
    assert client.post("/reset", json={"reward_mode": 1}).status_code == 422  # not even a string


def test_schema_follows_the_sessions_episode(serve: ServerFactory) -> None:
    with serve(token="t0k") as server, httpx.Client(base_url=server.url) as http:
        auth = {"Authorization": "Bearer t0k"}
        generic = http.get("/schema").json()
        assert generic["action"] == Action.model_json_schema()  # no session: the action envelope
        session = http.post("/reset", json={"task_id": "hard_mixed"}, headers=auth).headers["X-Session-Id"]
        mine = http.get("/schema", headers={**auth, "X-Session-Id": session}).json()
        assert mine["action"] == make("hard_mixed").info.action_schema  # a classic task's schema, as listed
        assert set(mine) == {"action", "observation", "state"}
        # Without the token, /schema stays public and shows no session's schema.
        assert http.get("/schema", headers={"X-Session-Id": session}).json() == generic
        unknown = http.get("/schema", headers={**auth, "X-Session-Id": "nope"})
        assert unknown.status_code == 400 and unknown.json()["detail"][0]["type"] == "unknown_session"


def test_the_default_session_answers_schema_without_a_header(server: ServerThread) -> None:
    with httpx.Client(base_url=server.url) as http:
        assert http.get("/schema").json()["action"] == Action.model_json_schema()
        http.post("/reset", json={"task_id": "medium_cascade"})
        assert http.get("/schema").json()["action"] == make("medium_cascade").info.action_schema


# -- task families ------------------------------------------------------------------------------------------


def test_reset_takes_a_family_and_a_seed_and_schema_and_tools_follow_the_episode(client: httpx.Client) -> None:
    task = family_task("web_api", 100_017)
    reset = client.post("/reset", json={"task_id": "web_api", "seed": 100_017})
    assert reset.status_code == 200, reset.text
    body = reset.json()
    assert list(body["observation"]["services"]) == list(task.components)
    assert body["info"]["task_id"] == "web_api" and body["info"]["max_steps"] == task.max_steps
    assert client.get("/schema").json()["action"] == task.action_schema()
    tools = {t["name"]: t for t in rpc(client, "tools/list")["result"]["tools"]}
    logs = tools["inspect_logs"]["inputSchema"]["properties"]["target"]
    assert set(next(m["enum"] for m in logs["anyOf"] if "enum" in m)) == set(task.components)
    assert set(tools) == {v["properties"]["action_type"]["const"] for v in task.action_schema()["oneOf"]}
    call = rpc(client, "tools/call", {"name": "inspect_logs", "arguments": {"target": task.components[0]}})
    assert call["result"]["isError"] is False and "reward" in call["result"]["structuredContent"]  # RL: dense
    state = client.get("/state").json()
    assert state["task_id"] == "web_api" and state["seed"] == 100_017 and state["step_count"] == 1
    # Another seed, another system: the session's schema changes with it.
    named = {"X-Session-Id": reset.headers["X-Session-Id"]}
    other = family_task("web_api", 100_018)
    client.post("/reset", json={"seed": 100_018}, headers=named)
    assert client.get("/schema", headers=named).json()["action"] == other.action_schema()


def test_a_family_without_an_episode_lists_its_maximum_tools(client: httpx.Client) -> None:
    created = rpc(client, "openenv/session/create", {"task_id": "event_pipeline", "seed": 100_002})["result"]
    assert created["reset"]["info"]["task_id"] == "event_pipeline"
    tasks = {t["task_id"]: t for t in client.get("/tasks").json()["tasks"]}
    family = tasks["event_pipeline"]
    assert family["kind"] == "family" and family["difficulties"] == [1, 2, 3] and family["seed_splits"]["eval"]
    targets = [v["properties"]["target"] for v in family["action_schema"]["oneOf"]]
    assert all("enum" not in t for t in targets)  # the maximum schema: targets are strings, per episode


def test_a_family_step_with_a_target_outside_its_topology_is_a_400_with_its_targets(client: httpx.Client) -> None:
    reset = client.post("/reset", json={"task_id": "data_platform", "seed": 100_005})
    components = list(reset.json()["observation"]["services"])
    answer = client.post("/step", json={"action": {"action_type": "restart_database", "target": "database"}})
    assert answer.status_code == 400
    body = answer.json()
    assert body["detail"][0]["loc"] == ["body", "action", "target"] and body["detail"][0]["input"] == "database"
    assert body["allowed"] and set(body["allowed"]) <= set(components)
    assert client.get("/state").json()["step_count"] == 0


def test_bad_family_resets_say_which_field_is_wrong(client: httpx.Client) -> None:
    unknown = client.post("/reset", json={"task_id": "web_apu", "seed": 100_000})
    assert unknown.status_code == 400 and "did you mean 'web_api'" in unknown.json()["detail"][0]["msg"]
    assert {"web_api", "event_pipeline", "data_platform", "easy_cpu_spike"} <= set(unknown.json()["allowed"])
    too_big = client.post("/reset", json={"task_id": "web_api", "seed": 2**31})
    assert too_big.status_code == 400 and too_big.json()["detail"][0]["loc"] == ["body", "seed"]
    assert "evaluation seeds" in too_big.json()["hint"]
    for seed in ("100017", 1.5, -1):
        not_int = client.post("/reset", json={"task_id": "web_api", "seed": seed})
        assert not_int.status_code == 422 and not_int.json()["detail"][0]["loc"] == ["body", "seed"]
    mode = client.post("/reset", json={"task_id": "web_api", "seed": 1, "reward_mode": "shaped"})
    assert mode.status_code == 400 and mode.json()["allowed"] == ["dense", "sparse"]
    # None of these opened a session: the server still has no default one.
    assert client.post("/step", json={"action": {"action_type": "wait"}}).json()["detail"][0]["type"] == "no_episode"


def test_a_websocket_session_plays_a_family(server: ServerThread) -> None:
    from websockets.sync.client import connect

    task = family_task("event_pipeline", 100_009)
    with connect(server.url.replace("http", "ws") + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_id": "event_pipeline", "seed": 100_009,
                                                       "reward_mode": "sparse"}}))  # fmt: skip
        first = json.loads(ws.recv())["data"]
        assert list(first["observation"]["services"]) == list(task.components)
        ws.send(json.dumps({"type": "step", "data": {"action_type": "wait"}}))
        assert json.loads(ws.recv())["data"]["reward"] == 0.0  # sparse
        ws.send(json.dumps({"type": "step", "data": {"action_type": "inspect_logs", "target": "nope"}}))
        error = json.loads(ws.recv())["data"]
        assert error["code"] == "VALIDATION_ERROR" and set(error["allowed"]) == set(task.components)
