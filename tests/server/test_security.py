"""Security defaults: loopback binding, `Host` and `Origin` checks on every route (the per-run tool server's
included), the optional token of the session routes. The runs API's own rules (`--allow-agent`, its token)
are tested on a real `sredrill serve` in `test_allow_agent.py`."""

from __future__ import annotations

import httpx
import pytest

from sredrill.agents import ToolHost, foreign_request
from sredrill.server import is_loopback
from sredrill.server.security import Guard
from sredrill.traces import SpanCollector
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


@pytest.mark.parametrize("route", ["/health", "/metadata", "/schema", "/tasks", "/", "/docs", "/openapi.json"])
def test_read_only_routes_refuse_a_foreign_host_too(client: httpx.Client, route: str) -> None:
    # DNS rebinding: a page of evil.example, its name now pointing at 127.0.0.1, reads what it fetches.
    assert client.get(route).status_code == 200
    answer = client.get(route, headers={"Host": "attacker.example"})
    assert answer.status_code == 403 and answer.json()["detail"][0]["type"] == "forbidden_host"


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("https://evil.example", 403),
        ("null", 403),
        ("http://localhost:3000", 403),  # another program's page on this machine is another site
        ("http://127.0.0.1:9999", 403),
        ("file://", 403),
    ],
)
def test_origin_checks(client: httpx.Client, origin: str, status: int) -> None:
    for method, route in (("POST", "/reset"), ("GET", "/health"), ("GET", "/tasks")):
        answer = client.request(method, route, json={} if method == "POST" else None, headers={"Origin": origin})
        assert answer.status_code == status, (route, answer.text)
        assert answer.json()["detail"][0]["type"] == "forbidden_origin"


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


def test_a_public_server_accepts_any_host_but_still_checks_origin(serve: ServerFactory) -> None:
    with serve(loopback_only=False) as server, httpx.Client(base_url=server.url) as http:
        space = {"Host": "trace.hf.space"}
        assert http.post("/reset", json={}, headers=space).status_code == 200
        assert http.get("/health", headers={**space, "Origin": "https://trace.hf.space"}).status_code == 200
        foreign = http.post("/reset", json={}, headers={**space, "Origin": "https://evil.example"})
        assert foreign.status_code == 403 and foreign.json()["detail"][0]["type"] == "forbidden_origin"


@pytest.mark.parametrize(
    ("headers", "refused"),
    [
        ([(b"host", b"127.0.0.1:7860")], None),
        ([(b"host", b"LOCALHOST")], None),
        ([(b"host", b"[::1]:7860")], None),
        ([(b"host", b"127.0.0.2:7860")], None),  # the bound address
        ([(b"host", b"127.0.0.3:7860")], "forbidden_host"),
        ([], "forbidden_host"),
        ([(b"host", b"127.0.0.1:7860"), (b"host", b"evil.example")], "forbidden_host"),
        ([(b"host", b"127.0.0.1:7860"), (b"origin", b"http://127.0.0.1:7860")], None),
        ([(b"host", b"127.0.0.1:7860"), (b"origin", b"http://127.0.0.1:7860"), (b"origin", b"http://x.example")],
         "forbidden_origin"),
        ([(b"host", b"127.0.0.1:7860"), (b"origin", b"http://127.0.0.1:7861")], "forbidden_origin"),
        ([(b"host", b"127.0.0.1:7860"), (b"origin", b"ftp://127.0.0.1:7860")], "forbidden_origin"),
    ],
)  # fmt: skip
def test_the_host_and_origin_rule(headers: list[tuple[bytes, bytes]], refused: str | None) -> None:
    got = foreign_request(headers, server=("127.0.0.2", 7860), any_host=False)
    assert (got.code if got is not None else None) == refused


async def test_the_per_run_tool_server_checks_host_and_origin_on_every_route() -> None:
    # Its own loopback port, reached by cmd: and http(s):// agents: the tools, MCP and the OTLP receiver.
    host = ToolHost(spans=SpanCollector())
    try:
        server = await host.started()
        base = server.base_url
        routes = [("GET", "/runs/r1/tools"), ("POST", "/runs/r1/tools/get_alert"), ("POST", "/v1/traces"),
                  ("POST", "/runs/r1/mcp"), ("GET", "/nowhere")]  # fmt: skip
        async with httpx.AsyncClient() as http:
            for method, path in routes:
                for headers, code in (
                    ({"Host": "evil.example"}, "forbidden_host"),
                    ({"Host": f"evil.example:{server.port}"}, "forbidden_host"),
                    ({"Origin": "http://evil.example"}, "forbidden_origin"),
                    ({"Origin": "http://localhost:3000"}, "forbidden_origin"),
                ):
                    answer = await http.request(method, base + path, headers=headers, json={})
                    assert answer.status_code == 403, (method, path, headers)
                    assert answer.json()["error"]["code"] == code
                # Without them, the request reaches the route (which wants the run's token, or a valid body).
                plain = await http.request(method, base + path, json={})
                assert plain.status_code != 403, (method, path)
    finally:
        await host.aclose()


def test_the_ui_token_cookie_counts_like_the_authorization_header() -> None:
    # The web UI's environment view calls /reset, /step and /state from the browser with its HttpOnly cookie.
    guard = Guard(token="s3cret")
    base = {b"host": b"example.org"}
    assert guard.check({**base, b"cookie": b"sredrill_token=s3cret"}, write=True) is None
    assert guard.check({**base, b"cookie": b"other=1; sredrill_token=s3cret"}, write=True) is None
    denied = guard.check({**base, b"cookie": b"sredrill_token=wrong"}, write=True)
    assert denied is not None and denied.status == 401
    assert guard.check({**base, b"cookie": b"\x00garbage"}, write=True) is not None
    assert guard.check({**base, b"authorization": b"Bearer s3cret"}, write=True) is None
