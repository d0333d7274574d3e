"""Every HTTP route of `sredrill serve`, against a real server on a loopback port."""

from __future__ import annotations

import httpx
import pytest

from sredrill.env import Action, EnvState, Observation, StepResult
from sredrill.server import ServerThread
from sredrill.trajectory import Recorder
from tests.server.conftest import ServerFactory
from tests.support.toolsets import StaticToolset

WAIT = {"action": {"action_type": "wait"}}


def sid(response: httpx.Response) -> str:
    value = response.headers.get("X-Session-Id")
    assert value, f"no X-Session-Id in {dict(response.headers)}"
    return value


# -- read-only routes ---------------------------------------------------------------------------------------


def test_health_metadata_schema_tasks(shared: ServerThread) -> None:
    with httpx.Client(base_url=shared.url) as http:
        assert http.get("/health").json() == {"status": "healthy"}
        metadata = http.get("/metadata").json()
        assert metadata["name"] == "trace" and metadata["description"] and metadata["version"]
        schema = http.get("/schema").json()
        assert set(schema) == {"action", "observation", "state"}
        assert schema["action"] == Action.model_json_schema()
        assert schema["observation"] == Observation.model_json_schema()
        assert schema["state"] == EnvState.model_json_schema()
        tasks = http.get("/tasks").json()["tasks"]
        assert [t["task_id"] for t in tasks][:3] == ["easy_cpu_spike", "medium_cascade", "hard_mixed"]
        # packs=(): the classic incident tasks, then the task families; no RCA task
        assert [t["kind"] for t in tasks] == ["incident"] * 6 + ["family"] * 3
        assert "wait" in tasks[0]["actions"] and "action_schema" in tasks[0]
        assert "/docs" in http.get("/").json()["routes"][-1]


def test_openapi_lists_the_session_routes_for_openenv_validate(shared: ServerThread) -> None:
    document = httpx.get(f"{shared.url}/openapi.json").json()
    assert document["info"]["version"]
    for path in ("/reset", "/step", "/state", "/health", "/metadata", "/schema", "/tasks", "/mcp"):
        assert path in document["paths"], path
    assert "/runs/{run_id}/tools" in document["paths"]


def test_builtin_packs_add_rca_tasks_with_opaque_ids(serve: ServerFactory) -> None:
    with serve(packs=["rds_postgres"]) as server, httpx.Client(base_url=server.url) as http:
        tasks = http.get("/tasks").json()["tasks"]
        rca = [t for t in tasks if t["kind"] == "rca"]
        assert rca and all(t["task_id"].startswith("rca-") for t in rca)
        task_id = rca[0]["task_id"]
        reset = http.post("/reset", json={"task_id": task_id})
        assert reset.status_code == 200 and reset.json()["observation"]["services"] == {}
        step = http.post(
            "/step", json={"action": {"action_type": "inspect_alert"}}, headers={"X-Session-Id": sid(reset)}
        )
        assert step.status_code == 200, step.text
        assert step.json()["observation"]["inspection"]["evidence"]
        bad = http.post("/step", json={"action": {"action_type": "wait"}}, headers={"X-Session-Id": sid(reset)})
        assert bad.status_code == 400
        assert bad.json()["allowed"] == sorted(["inspect_alert", "inspect_metrics", "inspect_logs", "submit_diagnosis"])


# -- the episode routes ----------------------------------------------------------------------------------------


def test_reset_with_an_empty_body_then_step_just_works(client: httpx.Client) -> None:
    reset = client.post("/reset", json={})
    assert reset.status_code == 200
    body = reset.json()
    assert set(body) == {"observation", "reward", "done", "info"}
    assert body["reward"] == 0.0 and body["done"] is False
    # info: the episode, the task, the step limit, and nothing that could name the cause
    assert set(body["info"]) == {"episode_id", "task_id", "max_steps"}
    assert body["info"]["task_id"] == "easy_cpu_spike" and body["info"]["max_steps"] == 5
    assert "root_cause" not in reset.text
    step = client.post("/step", json={"action": {"action_type": "inspect_logs", "target": "api_workers"}})
    assert step.status_code == 200
    assert sid(step) == sid(reset)
    result = StepResult.model_validate(step.json())
    assert result.info.step == 1 and result.reward == 1.0 and result.done is False
    assert set(step.json()["info"]) >= {"step", "episode_reward", "message"}
    assert result.observation.inspection is not None and result.observation.inspection.logs


def test_no_body_at_all_is_an_empty_reset(client: httpx.Client) -> None:
    assert client.post("/reset").status_code == 200


def test_same_seed_same_episode(client: httpx.Client) -> None:
    first = client.post("/reset", json={"task_id": "hard_mixed", "seed": 7}).json()
    again = client.post("/reset", json={"task_id": "hard_mixed", "seed": 7}).json()
    assert first["observation"] == again["observation"]
    other = client.post("/reset", json={"task_id": "hard_mixed", "seed": 8}).json()
    assert other["observation"] != first["observation"]


def test_state_follows_the_session(client: httpx.Client) -> None:
    before = client.get("/state")
    assert before.status_code == 200 and before.json()["episode_id"] is None
    reset = client.post("/reset", json={"task_id": "medium_cascade", "seed": 3})
    client.post("/step", json=WAIT)
    state = EnvState.model_validate(client.get("/state").json())
    assert state.task_id == "medium_cascade" and state.seed == 3 and state.step_count == 1
    assert state.episode_id == reset.json()["info"]["episode_id"]


def test_a_whole_episode_over_http_ends_with_the_grade(client: httpx.Client) -> None:
    from sredrill.agents.reference.incident_policy import choose

    reset = client.post("/reset", json={"task_id": "medium_db_saturation", "seed": 0})
    headers = {"X-Session-Id": sid(reset)}
    observation = Observation.model_validate(reset.json()["observation"])
    history: list[tuple[Action, Observation]] = []
    done = False
    while not done:
        action = choose(observation, history)
        answer = client.post("/step", json={"action": action.model_dump(exclude_none=True)}, headers=headers)
        assert answer.status_code == 200, answer.text
        result = StepResult.model_validate(answer.json())
        history.append((action, result.observation))
        observation, done = result.observation, result.done
    assert result.info.resolved is True and 0.6 <= result.info.grade <= 1.0
    late = client.post("/step", json=WAIT, headers=headers)
    assert late.status_code == 400 and "POST /reset" in late.json()["detail"][0]["msg"]


# -- errors: 400 with a message and the allowed values --------------------------------------------------------------


def test_step_before_reset_names_reset(client: httpx.Client) -> None:
    answer = client.post("/step", json=WAIT)
    assert answer.status_code == 400
    error = answer.json()
    assert error["detail"][0]["type"] == "no_episode" and "POST /reset" in error["detail"][0]["msg"]


@pytest.mark.parametrize(
    ("action", "field", "allowed"),
    [
        ({"action_type": "scale_worker"}, "action_type", "scale_workers"),
        ({"action_type": "restart_service", "target": "database"}, "target", "queue_service"),
        ({"action_type": "inspect_metrics", "target": "cpu_usage"}, "target", "cpu"),
        ({"action_type": "wait", "colour": "red"}, "colour", "action_type"),
    ],
)
def test_invalid_actions_are_400_with_the_allowed_values(
    client: httpx.Client, action: dict[str, object], field: str, allowed: str
) -> None:
    client.post("/reset", json={})
    before = client.get("/state").json()
    answer = client.post("/step", json={"action": action})
    assert answer.status_code == 400, answer.text
    error = answer.json()
    assert error["detail"][0]["type"] == "invalid_action"
    assert error["detail"][0]["loc"] == ["body", "action", field]
    assert error["detail"][0]["msg"]
    assert allowed in error["allowed"]
    assert client.get("/state").json() == before  # the episode is unchanged


def test_scale_workers_value_error_says_the_range(client: httpx.Client) -> None:
    client.post("/reset", json={})
    answer = client.post(
        "/step", json={"action": {"action_type": "scale_workers", "target": "api_workers", "value": 0}}
    )
    assert answer.status_code == 400
    assert "from 1 to 64" in answer.json()["detail"][0]["msg"]
    assert answer.json()["detail"][0]["input"] == 0


def test_unknown_task_is_400_with_the_task_ids(client: httpx.Client) -> None:
    answer = client.post("/reset", json={"task_id": "easy_cpu_spik"})
    assert answer.status_code == 400
    error = answer.json()
    assert error["detail"][0] == {
        "type": "unknown_task",
        "loc": ["body", "task_id"],
        "msg": "unknown task 'easy_cpu_spik'; did you mean 'easy_cpu_spike'?",
        "input": "easy_cpu_spik",
    }
    assert "hard_mixed" in error["allowed"] and "GET /tasks" in error["hint"]
    assert "X-Session-Id" not in answer.headers  # no session was opened for it


@pytest.mark.parametrize(
    ("body", "kind", "loc"),
    [
        ({"task": "hard_mixed"}, "extra_forbidden", ["body", "task"]),
        ({"seed": -1}, "greater_than_equal", ["body", "seed"]),
        ({"seed": "7"}, "int_type", ["body", "seed"]),
        ({"episode_id": "e1"}, "extra_forbidden", ["body", "episode_id"]),
    ],
)
def test_bad_reset_bodies_are_422_fastapi_style(client: httpx.Client, body: object, kind: str, loc: list[str]) -> None:
    answer = client.post("/reset", json=body)
    assert answer.status_code == 422
    error = answer.json()
    assert error["detail"][0]["type"] == kind and error["detail"][0]["loc"] == loc and error["detail"][0]["msg"]
    assert error["allowed"] == ["reward_mode", "seed", "task_id"]


def test_bad_step_bodies_are_422(client: httpx.Client) -> None:
    client.post("/reset", json={})
    bare = client.post("/step", json={"action_type": "wait"})
    assert bare.status_code == 422
    assert bare.json()["allowed"] == ["action"] and "wrap the action" in bare.json()["hint"]
    assert {d["type"] for d in bare.json()["detail"]} == {"missing", "extra_forbidden"}
    not_json = client.post("/step", content=b"{not json", headers={"Content-Type": "application/json"})
    assert not_json.status_code == 422 and not_json.json()["detail"][0]["type"] == "json_invalid"
    not_object = client.post("/step", json={"action": "wait"})
    assert not_object.status_code == 422 and not_object.json()["detail"][0]["loc"] == ["body", "action"]


def test_unknown_session_is_400_naming_reset(client: httpx.Client) -> None:
    answer = client.post("/step", json=WAIT, headers={"X-Session-Id": "nope"})
    assert answer.status_code == 400
    error = answer.json()
    assert error["detail"][0]["loc"] == ["header", "X-Session-Id"]
    assert "POST /reset" in error["hint"]
    assert client.post("/reset", json={}, headers={"X-Session-Id": "nope"}).status_code == 400


def test_oversized_bodies_are_refused(client: httpx.Client) -> None:
    answer = client.post("/step", content=b"x" * (5 * 1024 * 1024), headers={"Content-Type": "application/json"})
    assert answer.status_code == 413


# -- the tool routes of agents.tool_server, mounted ------------------------------------------------------------------


async def test_tool_routes_are_mounted_on_the_servers_own_registry(server: ServerThread) -> None:
    registry = server.app.state.tool_registry
    toolset = StaticToolset({"get_alert": {"title": "CPU above 90%"}})
    recorder = Recorder()
    token = registry.register("run-1", toolset, recorder)
    try:
        async with httpx.AsyncClient(base_url=f"{server.url}/runs/run-1") as http:
            assert (await http.get("/tools")).status_code == 401
            auth = {"Authorization": f"Bearer {token}"}
            listed = await http.get("/tools", headers=auth)
            assert [t["name"] for t in listed.json()["tools"]] == ["get_alert"]
            called = await http.post("/tools/get_alert", json={}, headers=auth)
            assert called.json() == {"result": {"title": "CPU above 90%"}}
        assert [s.kind for s in recorder.steps] == ["tool_call", "tool_result"]
    finally:
        registry.unregister("run-1")
