"""Security defaults: loopback binding, `Host` and `Origin` checks on the session routes, the optional token."""

from __future__ import annotations

import httpx
import pytest

from sredrill.server import is_loopback
from sredrill.server.security import Guard
from tests.server.conftest import ServerFactory


def test_the_default_bind_address_is_loopback() -> None:
    import inspect

    from sredrill.server import DEFAULT_HOST, ServerThread, serve

    assert DEFAULT_HOST == "127.0.0.1"
    assert inspect.signature(serve).parameters["host"].default == "127.0.0.1"
    assert inspect.signature(ServerThread).parameters["host"].default == "127.0.0.1"
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0")


@pytest.mark.parametrize("route", ["/reset", "/step", "/mcp"])
def test_a_foreign_host_is_refused_on_write_routes(client: httpx.Client, route: str) -> None:
    answer = client.post(route, json={}, headers={"Host": "attacker.example:7860"})
    assert answer.status_code == 403
    assert answer.json()["detail"][0]["type"] == "forbidden_host"
    assert "--host 0.0.0.0" in answer.json()["hint"]


def test_read_only_routes_answer_any_host(client: httpx.Client) -> None:
    assert client.get("/health", headers={"Host": "attacker.example"}).status_code == 200


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("https://evil.example", 403),
        ("null", 403),
        ("http://localhost:3000", 200),
        ("http://127.0.0.1:9999", 200),
    ],
)
def test_origin_checks(client: httpx.Client, origin: str, status: int) -> None:
    answer = client.post("/reset", json={}, headers={"Origin": origin})
    assert answer.status_code == status, answer.text


def test_same_origin_is_accepted(client: httpx.Client) -> None:
    assert client.post("/reset", json={}, headers={"Origin": str(client.base_url).rstrip("/")}).status_code == 200


def test_the_token_guards_the_session_routes(serve: ServerFactory) -> None:
    with serve(token="s3cret") as server, httpx.Client(base_url=server.url) as http:
        missing = http.post("/reset", json={})
        assert missing.status_code == 401 and "Authorization: Bearer" in missing.json()["detail"][0]["msg"]
        wrong = http.post("/reset", json={}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        auth = {"Authorization": "Bearer s3cret"}
        assert http.post("/reset", json={}, headers=auth).status_code == 200
        assert http.get("/state").status_code == 401
        assert http.post("/mcp", json={}).status_code == 401
        for route in ("/health", "/metadata", "/schema", "/tasks", "/openapi.json"):
            assert http.get(route).status_code == 200, route


def test_a_public_server_accepts_any_host_but_still_checks_origin() -> None:
    guard = Guard(token=None, loopback_only=False)
    assert guard.check({b"host": b"trace.hf.space"}, write=True) is None
    assert guard.check({b"host": b"trace.hf.space", b"origin": b"https://trace.hf.space"}, write=True) is None
    denied = guard.check({b"host": b"trace.hf.space", b"origin": b"https://evil.example"}, write=True)
    assert denied is not None and denied.status == 403


def test_the_ui_token_cookie_counts_like_the_authorization_header() -> None:
    # The web UI's environment view calls /reset, /step and /state from the browser with its HttpOnly cookie.
    guard = Guard(token="s3cret", loopback_only=False)
    base = {b"host": b"example.org"}
    assert guard.check({**base, b"cookie": b"sredrill_token=s3cret"}, write=True) is None
    assert guard.check({**base, b"cookie": b"other=1; sredrill_token=s3cret"}, write=True) is None
    denied = guard.check({**base, b"cookie": b"sredrill_token=wrong"}, write=True)
    assert denied is not None and denied.status == 401
    assert guard.check({**base, b"cookie": b"\x00garbage"}, write=True) is not None
    assert guard.check({**base, b"authorization": b"Bearer s3cret"}, write=True) is None
