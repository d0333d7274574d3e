"""`WS /ws`: openenv-core 0.3.0's message protocol, one session per connection."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from sredrill.server import ServerThread
from tests.server.conftest import ServerFactory


def ws_url(server: ServerThread) -> str:
    return server.url.replace("http://", "ws://") + "/ws"


@pytest.fixture
def ws(server: ServerThread) -> Iterator[ClientConnection]:
    with connect(ws_url(server)) as connection:
        yield connection


def ask(ws: ClientConnection, message: dict[str, Any] | str) -> dict[str, Any]:
    ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(ws.recv(timeout=10))


def test_reset_step_state_in_one_connection(ws: ClientConnection) -> None:
    reset = ask(ws, {"type": "reset", "data": {"task_id": "hard_mixed", "seed": 2}})
    assert reset["type"] == "observation"
    assert set(reset["data"]) == {"observation", "reward", "done", "info"}
    assert reset["data"]["info"]["task_id"] == "hard_mixed"
    step = ask(ws, {"type": "step", "data": {"action_type": "inspect_logs", "target": "database"}})
    assert step["type"] == "observation" and step["data"]["reward"] == 1.0 and step["data"]["done"] is False
    assert step["data"]["info"]["step"] == 1
    state = ask(ws, {"type": "state"})
    assert state["type"] == "state"
    assert state["data"]["step_count"] == 1 and state["data"]["episode_id"] == reset["data"]["info"]["episode_id"]


def test_reset_without_data_and_state_before_reset(ws: ClientConnection) -> None:
    state = ask(ws, {"type": "state"})
    assert state["type"] == "state" and state["data"]["episode_id"] is None
    assert ask(ws, {"type": "reset"})["data"]["info"]["task_id"] == "easy_cpu_spike"


@pytest.mark.parametrize(
    ("message", "code", "phrase"),
    [
        ("{not json", "INVALID_JSON", "Invalid JSON"),
        ({"type": "dance"}, "UNKNOWN_TYPE", "Unknown message type: dance"),
        ({"type": "step", "data": {"action_type": "wait"}}, "EXECUTION_ERROR", "reset"),
        ({"type": "reset", "data": {"task_id": "nope"}}, "VALIDATION_ERROR", "unknown task 'nope'"),
        ({"type": "reset", "data": {"seed": -3}}, "VALIDATION_ERROR", "Invalid message"),
        ({"type": "reset", "data": {}, "extra": 1}, "VALIDATION_ERROR", "unknown message field"),
        ({"type": "step", "data": "wait"}, "VALIDATION_ERROR", "action object"),
        ([1, 2], "VALIDATION_ERROR", "JSON object"),
    ],
)
def test_errors_use_openenv_codes_and_keep_the_connection(
    ws: ClientConnection, message: dict[str, Any] | str, code: str, phrase: str
) -> None:
    error = ask(ws, message if isinstance(message, str | dict) else json.dumps(message))
    assert error["type"] == "error"
    assert error["data"]["code"] == code and phrase in error["data"]["message"]
    assert ask(ws, {"type": "reset"})["type"] == "observation"  # the session goes on


def test_an_invalid_action_lists_the_allowed_values_and_changes_nothing(ws: ClientConnection) -> None:
    ask(ws, {"type": "reset", "data": {"seed": 0}})
    error = ask(ws, {"type": "step", "data": {"action_type": "restart_service", "target": "database"}})
    assert error["data"]["code"] == "VALIDATION_ERROR"
    assert error["data"]["field"] == "target" and error["data"]["allowed"] == ["api_workers", "queue_service"]
    assert "restart_database" in error["data"]["message"]
    assert ask(ws, {"type": "state"})["data"]["step_count"] == 0


def test_close_ends_the_session(server: ServerThread) -> None:
    with connect(ws_url(server)) as ws:
        ask(ws, {"type": "reset"})
        assert len(server.app.state.sessions) == 1
        ws.send(json.dumps({"type": "close"}))
        with pytest.raises(Exception, match="1000"):
            ws.recv(timeout=10)
    assert len(server.app.state.sessions) == 0


def test_two_websocket_sessions_never_share_state(server: ServerThread) -> None:
    seen: dict[str, list[tuple[str, int]]] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def play(task_id: str, steps: int) -> None:
        try:
            with connect(ws_url(server)) as ws:
                ask(ws, {"type": "reset", "data": {"task_id": task_id, "seed": 5}})
                barrier.wait(timeout=10)
                trail = []
                for _ in range(steps):
                    data = ask(ws, {"type": "step", "data": {"action_type": "wait"}})["data"]
                    state = ask(ws, {"type": "state"})["data"]
                    trail.append((state["task_id"], data["info"]["step"]))
                assert ask(ws, {"type": "state"})["data"]["step_count"] == steps
                seen[task_id] = trail
        except BaseException as exc:  # surfaced by the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=play, args=a) for a in (("hard_mixed", 7), ("medium_error_spike", 5))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert seen["hard_mixed"] == [("hard_mixed", i) for i in range(1, 8)]
    assert seen["medium_error_spike"] == [("medium_error_spike", i) for i in range(1, 6)]


def test_websocket_and_http_sessions_are_separate(server: ServerThread) -> None:
    import httpx

    with connect(ws_url(server)) as ws, httpx.Client(base_url=server.url) as http:
        ask(ws, {"type": "reset", "data": {"task_id": "hard_mixed"}})
        http.post("/reset", json={"task_id": "medium_cascade"})
        http.post("/step", json={"action": {"action_type": "wait"}})
        assert ask(ws, {"type": "state"})["data"]["step_count"] == 0
        assert http.get("/state").json()["step_count"] == 1


def test_capacity_reached_is_sent_then_the_connection_closes(serve: ServerFactory) -> None:
    with serve(max_sessions=1) as server, connect(ws_url(server)) as first:
        ask(first, {"type": "reset"})
        with connect(ws_url(server)) as second:
            error = json.loads(second.recv(timeout=10))
            assert error["type"] == "error" and error["data"]["code"] == "CAPACITY_REACHED"
            assert error["data"]["max_sessions"] == 1 and "1/1 sessions active" in error["data"]["message"]
            with pytest.raises(Exception, match="1013"):
                second.recv(timeout=10)


def test_mcp_messages_act_on_the_connections_session(ws: ClientConnection) -> None:
    ask(ws, {"type": "reset", "data": {"task_id": "hard_mixed", "seed": 1}})
    listed = ask(ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}})
    assert listed["type"] == "mcp" and "restart_database" in [t["name"] for t in listed["data"]["result"]["tools"]]
    called = ask(
        ws,
        {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                 "params": {"name": "inspect_logs", "arguments": {"target": "database"}}}},
    )  # fmt: skip
    assert called["data"]["result"]["structuredContent"]["info"]["step"] == 1
    assert ask(ws, {"type": "state"})["data"]["step_count"] == 1


def test_a_foreign_origin_cannot_open_a_websocket(server: ServerThread) -> None:
    with pytest.raises(InvalidStatus) as caught:
        connect(ws_url(server), origin="https://evil.example")  # type: ignore[arg-type]
    assert caught.value.response.status_code == 403
