"""What a session's episode chooses over HTTP: the task (classic or family) and seed, the reward mode, and the
action schema and MCP tools that follow it. Real servers on loopback ports."""

from __future__ import annotations

import httpx

from sredrill.env import Action, make
from sredrill.server import ServerThread
from tests.server.conftest import ServerFactory

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
