"""Fuzz: mutated JSON bodies and WebSocket frames against a real `sredrill serve` app on a loopback port.

Whatever a client sends, the server answers: never a 5xx, never a connection dropped without an error frame,
and every 4xx carries what is wrong (`detail` on the environment routes, `error.message` on the tool routes).
Bodies start from valid ones and are mutated (a subtree replaced, a key added, the text cut short, lone
surrogates, nesting of any depth), so most examples get past the parser and into validation and the
environment. The `fuzz` profile (tests/fuzz/conftest.py) fixes the seed and bounds the example count.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from websockets.sync.client import ClientConnection, connect

from sredrill.env import make
from sredrill.env.toolset import EnvToolset
from sredrill.server import ServerThread, create_app
from sredrill.trajectory import Recorder
from tests.fuzz.conftest import FUZZ

VALID: dict[str, list[Any]] = {
    "/reset": [{}, {"task_id": "hard_mixed", "seed": 3}, {"task_id": "easy_cpu_spike"}],
    "/step": [
        {"action": {"action_type": "inspect_logs", "target": "database"}},
        {"action": {"action_type": "scale_workers", "target": "api_workers", "value": 4}},
        {"action": {"action_type": "wait"}},
    ],
    "/mcp": [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "inspect_logs", "arguments": {"target": "database"}},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "openenv/session/create", "params": {"task_id": "hard_mixed"}},
    ],
}
FRAMES: list[Any] = [
    {"type": "reset", "data": {"task_id": "hard_mixed", "seed": 1}},
    {"type": "step", "data": {"action_type": "inspect_logs", "target": "database"}},
    {"type": "state"},
    {"type": "mcp", "data": VALID["/mcp"][1]},
]

surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
texts = st.text(st.one_of(st.characters(), surrogates), max_size=12)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False), texts,
    st.sampled_from(["hard_mixed", "database", "api_workers", "inspect_logs", "wait", "tools/call", "2.0"]),
)  # fmt: skip
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
                      max_leaves=12)  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value)
    copy[path[0]] = _replace(value[path[0]], path[1:], new)
    return copy


@st.composite
def mutated(draw: st.DrawFn, bases: list[Any]) -> bytes:
    """A valid body with one mutation, as the bytes a client sends."""
    base = draw(st.sampled_from(bases))
    kind = draw(st.sampled_from(["replace", "add_key", "cut", "deep", "raw", "as_is"]))
    if kind == "deep":
        depth = draw(st.sampled_from([150, 250, 1_000, 5_000, 100_000]))
        nest = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
        path = draw(st.sampled_from(list(_paths(base))))
        text = json.dumps(_replace(base, path, "@@"))
        return text.replace('"@@"', nest[0] * depth + "1" + nest[1] * depth).encode()
    if kind == "raw":
        return draw(st.binary(max_size=40))
    if kind == "replace":
        base = _replace(base, draw(st.sampled_from(list(_paths(base)))), draw(values))
    elif kind == "add_key":
        path = draw(st.sampled_from([p for p in _paths(base) if _is_dict(base, p)]))
        base = _replace(base, path, {**_get(base, path), draw(texts): draw(values)})
    text = json.dumps(base)  # lone surrogates become their \\udxxx escapes, as a JSON client writes them
    if kind == "cut":
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
    return text.encode()


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _is_dict(value: Any, path: tuple[Any, ...]) -> bool:
    return isinstance(_get(value, path), dict)


@pytest.fixture(scope="module")
def app() -> Any:
    return create_app(packs=())


@pytest.fixture(scope="module")
def server(app: Any) -> Iterator[ServerThread]:
    with ServerThread(app) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: ServerThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.post("/reset", json={"task_id": "hard_mixed"}).status_code == 200
        yield http


@pytest.fixture(scope="module")
def tool_token(app: Any) -> str:
    env = make("hard_mixed", seed=0)
    env.reset()
    return app.state.tool_registry.register("fuzz-run", EnvToolset(env), Recorder())


def check_answer(answer: httpx.Response, *, tool_route: bool = False) -> None:
    assert answer.status_code < 500, answer.text[:500]
    if answer.status_code == 202:
        return
    body = answer.json()  # every answer is JSON, errors included
    if 400 <= answer.status_code < 500:
        if tool_route:
            assert body["error"]["message"], body
        else:
            assert body["detail"] and all(d["msg"] for d in body["detail"]), body


@FUZZ
@given(path=st.sampled_from(sorted(VALID)), data=st.data())
def test_http_bodies_never_5xx_and_every_4xx_says_why(client: httpx.Client, path: str, data: st.DataObject) -> None:
    body = data.draw(mutated(VALID[path]), label="body")
    answer = client.post(path, content=body, headers={"Content-Type": "application/json"})
    check_answer(answer)
    if path == "/mcp" and answer.status_code == 200:
        assert answer.json()["jsonrpc"] == "2.0"


@FUZZ
@given(body=mutated([{"target": "database"}, {"target": "api_workers", "value": 3}, {}]),
       tool=st.sampled_from(["inspect_logs", "scale_workers", "observe", "nope"]))  # fmt: skip
def test_tool_call_bodies_never_5xx(server: ServerThread, tool_token: str, body: bytes, tool: str) -> None:
    headers = {"Authorization": f"Bearer {tool_token}", "Content-Type": "application/json"}
    answer = httpx.post(f"{server.url}/runs/fuzz-run/tools/{tool}", content=body, headers=headers, timeout=30)
    check_answer(answer, tool_route=True)


@pytest.fixture(scope="module")
def ws(server: ServerThread) -> Iterator[ClientConnection]:
    with connect(server.url.replace("http://", "ws://") + "/ws", max_size=None) as connection:
        yield connection


def _ends_the_session(frame: bytes) -> bool:
    """A `close` message ends the session: not what this test probes."""
    try:
        message = json.loads(frame)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and message.get("type") == "close"


@FUZZ
@given(frame=mutated(FRAMES), n=st.integers(0, 10**9))
def test_websocket_frames_are_answered_and_the_connection_stays(ws: ClientConnection, frame: bytes, n: int) -> None:
    assume(not _ends_the_session(frame))
    ws.send(frame.decode("utf-8", errors="replace"))
    # A probe after each frame: every reply before the probe's is well formed, and the connection answers it
    # (an MCP notification has no reply, so the frame's reply is not counted on).
    probe = f"probe-{n}"
    ws.send(json.dumps({"type": "mcp", "data": {"jsonrpc": "2.0", "id": probe, "method": "ping"}}))
    while True:
        reply = json.loads(ws.recv(timeout=30))
        assert reply["type"] in ("observation", "state", "mcp", "error"), reply
        if reply["type"] == "error":
            assert reply["data"]["message"] and reply["data"]["code"], reply
        if reply["type"] == "mcp" and reply["data"].get("id") == probe:
            break
