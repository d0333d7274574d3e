"""Sessions: isolation, the default HTTP session, capacity (503), and the idle reaper."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import httpx
import pytest
from websockets.sync.client import connect

from sredrill.errors import InputError
from sredrill.server import CapacityError, SessionStore
from sredrill.server.sessions import SessionKind
from tests.server.conftest import ServerFactory
from tests.support.processes import wait_until

WAIT = {"action": {"action_type": "wait"}}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# -- the store ------------------------------------------------------------------------------------------------------


def test_store_releases_the_oldest_unaddressed_http_session_when_full() -> None:
    clock = FakeClock()
    store = SessionStore(max_sessions=2, idle_timeout_s=60, clock=clock)
    first = store.open(SessionKind.HTTP, default=True)
    clock.now += 1
    second = store.open(SessionKind.HTTP, default=True)
    assert store.default is second
    clock.now += 1
    third = store.open(SessionKind.HTTP, default=True)  # full: `first` (never addressed) makes room
    assert first.id not in store and second.id in store and third.id in store
    store.get(second.id)  # addressed by its id: kept from now on
    store.get(third.id)
    with pytest.raises(CapacityError, match="2/2 sessions active"):
        store.open(SessionKind.HTTP, default=True)


def test_store_never_releases_websocket_sessions() -> None:
    store = SessionStore(max_sessions=1, idle_timeout_s=60, clock=FakeClock())
    store.open(SessionKind.WEBSOCKET)
    with pytest.raises(CapacityError) as caught:
        store.open(SessionKind.HTTP, default=True)
    assert caught.value.active == 1 and caught.value.limit == 1
    assert "--max-sessions" in str(caught.value)


def test_store_unknown_session_says_how_to_open_one() -> None:
    store = SessionStore(max_sessions=1, idle_timeout_s=60)
    with pytest.raises(InputError) as caught:
        store.get("nope")
    assert caught.value.field == "X-Session-Id" and "POST /reset" in (caught.value.hint or "")


async def test_store_reap_closes_idle_sessions_and_their_sockets() -> None:
    clock = FakeClock()
    store = SessionStore(max_sessions=4, idle_timeout_s=10, clock=clock)
    idle = store.open(SessionKind.WEBSOCKET)
    closed: list[str] = []

    async def closer(reason: str) -> None:
        closed.append(reason)

    idle.closer = closer
    clock.now += 8
    busy = store.open(SessionKind.HTTP)
    clock.now += 5
    assert await store.reap() == 1
    assert idle.id not in store and busy.id in store
    assert closed == ["session idle for more than 10 s"]


@pytest.mark.parametrize(("max_sessions", "idle"), [(0, 1.0), (1, 0.0)])
def test_store_rejects_bad_limits(max_sessions: int, idle: float) -> None:
    with pytest.raises(InputError):
        SessionStore(max_sessions=max_sessions, idle_timeout_s=idle)


async def test_reaper_task_runs_until_cancelled() -> None:
    store = SessionStore(max_sessions=1, idle_timeout_s=0.04)
    store.open(SessionKind.HTTP)
    task = asyncio.create_task(store.run_reaper())
    try:
        async with asyncio.timeout(5):
            while len(store):
                await asyncio.sleep(0.01)
    finally:
        task.cancel()


# -- over HTTP --------------------------------------------------------------------------------------------------------


def test_two_concurrent_http_sessions_never_share_state(serve: ServerFactory) -> None:
    with serve() as server:
        results: dict[str, list[int]] = {}
        errors: list[BaseException] = []
        barrier = threading.Barrier(2)

        def play(task_id: str, steps: int) -> None:
            try:
                with httpx.Client(base_url=server.url) as http:
                    reset = http.post("/reset", json={"task_id": task_id, "seed": 1})
                    headers = {"X-Session-Id": reset.headers["X-Session-Id"]}
                    barrier.wait(timeout=10)
                    seen = []
                    for _ in range(steps):
                        answer = http.post("/step", json=WAIT, headers=headers).json()
                        assert http.get("/state", headers=headers).json()["task_id"] == task_id
                        seen.append(answer["info"]["step"])
                    state = http.get("/state", headers=headers).json()
                    assert state["task_id"] == task_id and state["step_count"] == steps
                    results[task_id] = seen
            except BaseException as exc:  # surfaced by the main thread below
                errors.append(exc)

        threads = [
            threading.Thread(target=play, args=("hard_mixed", 6)),
            threading.Thread(target=play, args=("medium_cascade", 5)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert results == {"hard_mixed": [1, 2, 3, 4, 5, 6], "medium_cascade": [1, 2, 3, 4, 5]}


def test_requests_without_the_header_use_the_latest_headerless_session(client: httpx.Client) -> None:
    first = client.post("/reset", json={"task_id": "hard_mixed"})
    second = client.post("/reset", json={"task_id": "medium_cascade"})
    assert first.headers["X-Session-Id"] != second.headers["X-Session-Id"]
    assert client.post("/step", json=WAIT).status_code == 200
    assert client.get("/state").json()["task_id"] == "medium_cascade"
    # the first session is still there for whoever holds its id
    old = {"X-Session-Id": first.headers["X-Session-Id"]}
    assert client.post("/step", json=WAIT, headers=old).status_code == 200
    assert client.get("/state", headers=old).json()["task_id"] == "hard_mixed"


def test_reset_with_the_header_restarts_that_session(client: httpx.Client) -> None:
    session = client.post("/reset", json={"task_id": "hard_mixed"}).headers["X-Session-Id"]
    headers = {"X-Session-Id": session}
    client.post("/step", json=WAIT, headers=headers)
    again = client.post("/reset", json={"seed": 4}, headers=headers)
    assert again.headers["X-Session-Id"] == session
    assert again.json()["info"]["task_id"] == "hard_mixed"  # the session's task, when none is named
    assert client.get("/state", headers=headers).json()["step_count"] == 0


def test_a_full_server_answers_503_with_a_clear_message(serve: ServerFactory) -> None:
    with serve(max_sessions=2) as server, httpx.Client(base_url=server.url) as http:
        ws_url = server.url.replace("http://", "ws://") + "/ws"
        with connect(ws_url) as one, connect(ws_url) as two:
            one.send('{"type": "reset"}')
            two.send('{"type": "reset"}')
            assert '"observation"' in one.recv(timeout=5) and '"observation"' in two.recv(timeout=5)
            answer = http.post("/reset", json={})
            assert answer.status_code == 503
            error = answer.json()
            assert error["detail"][0]["type"] == "capacity"
            assert "server at capacity: 2/2 sessions active" in error["detail"][0]["msg"]
            assert "--max-sessions" in error["detail"][0]["msg"]
        assert wait_until(lambda: http.post("/reset", json={}).status_code == 200)


def test_headerless_resets_never_fill_the_server(serve: ServerFactory) -> None:
    with serve(max_sessions=3) as server, httpx.Client(base_url=server.url) as http:
        for _ in range(10):  # an OpenEnv-style client: reset, step, reset, … never sending a header
            assert http.post("/reset", json={}).status_code == 200
            assert http.post("/step", json=WAIT).status_code == 200
        assert len(server.app.state.sessions) <= 3


def test_the_idle_reaper_closes_http_and_websocket_sessions(serve: ServerFactory) -> None:
    with serve(idle_timeout_s=0.3) as server, httpx.Client(base_url=server.url) as http:
        session = http.post("/reset", json={}).headers["X-Session-Id"]
        with connect(server.url.replace("http://", "ws://") + "/ws") as ws:
            ws.send('{"type": "reset"}')
            ws.recv(timeout=5)
            store = server.app.state.sessions
            assert len(store) == 2
            assert wait_until(lambda: len(store) == 0, deadline_s=10)
            gone = http.post("/step", json=WAIT, headers={"X-Session-Id": session})
            assert gone.status_code == 400 and "idle" in gone.json()["detail"][0]["msg"]
            closed = _closed(ws.recv)
            assert closed is not None and "idle" in closed


def _closed(recv: Callable[..., object]) -> str | None:
    """The close reason once the server closed the connection (None if a message came instead)."""
    from websockets.exceptions import ConnectionClosed

    try:
        recv(timeout=5)
    except ConnectionClosed as exc:
        return exc.rcvd.reason if exc.rcvd is not None else ""
    return None
