"""The runs API runs no code it was not allowed to, on a real `sredrill serve` process (the attack as a user
would make it): a `cmd:`, `py:`, `http://` or custom-endpoint `openai:` agent is refused without
`--allow-agent`, and nothing runs, is imported or is contacted; built-in agents run without a flag; every
runs API and UI route needs the token the server printed; the OpenEnv routes stay open without it; a foreign
`Host` or `Origin` is refused on every route."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from tests.server.launch import Launched, launched

EVIL_AGENT = """
from pathlib import Path

Path(__file__).with_name("imported.marker").touch()  # runs when the module is imported


async def agent(task):
    return "the module was imported"
"""
ONE_SCENARIO = {"packs": ["rds_postgres"], "scenarios": ["000-healthy"]}
BUILTIN = ["reference", "majority", "keyword", "random"]


@dataclass
class Site:
    """The folder a server runs in (holding a module that leaves a mark when imported) and an HTTP listener
    that records every request: what a refused agent must not touch."""

    root: Path
    port: int
    hits: list[str] = field(default_factory=list)

    def marks(self) -> list[str]:
        return sorted(p.name for p in self.root.glob("*.marker"))


@contextlib.contextmanager
def site(root: Path) -> Iterator[Site]:
    (root / "evil_agent.py").write_text(EVIL_AGENT)
    hits: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            hits.append(self.path)
            body = b'{"output": "contacted"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST

        def log_message(self, *args: Any) -> None:
            pass

    listener = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=listener.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(root, listener.server_address[1], hits)
    finally:
        listener.shutdown()
        listener.server_close()


def env() -> dict[str, str]:
    # No OpenAI key or endpoint from the developer's shell: an `openai:` agent must not reach a real service.
    return {k: v for k, v in os.environ.items() if not k.startswith(("SREDRILL_", "OPENAI_"))}


@contextlib.contextmanager
def serving(root: Path, *args: str) -> Iterator[Launched]:
    cmd = [sys.executable, "-m", "sredrill", "serve", "--port", "0", "--pack", "rds_postgres",
           "--db", str(root / "runs.db"), *args]  # fmt: skip
    with launched(cmd, env=env(), cwd=str(root)) as server:
        yield server


@pytest.fixture(scope="module")
def default_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with site(tmp_path_factory.mktemp("default")) as made:
        yield made


@pytest.fixture(scope="module")
def server(default_site: Site) -> Iterator[Launched]:
    """`sredrill serve` as a user starts it: no token, no --allow-agent."""
    with serving(default_site.root) as running:
        yield running


def finish(server: Launched, run_id: str) -> str:
    """Follow a run's events to its end; its final status."""
    status = None
    with httpx.stream("GET", f"{server.url}/api/runs/{run_id}/events", headers=server.auth(), timeout=120) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data: ") and '"run_finished"' in line:
                status = json.loads(line.removeprefix("data: "))["status"]
    assert status is not None
    return status


ATTACKS: dict[str, Callable[[Site], dict[str, Any]]] = {
    "cmd": lambda s: {"agent": f"cmd:touch {s.root / 'cmd.marker'}"},
    "cmd-shell": lambda s: {"agent": f"cmd:sh -c 'touch {s.root / 'shell.marker'}'"},
    "py-import": lambda s: {"agent": "py:evil_agent:agent"},
    "py-os-system": lambda s: {"agent": "py:os:system"},
    "http": lambda s: {"agent": f"http://127.0.0.1:{s.port}/agent"},
    "openai-base-url": lambda s: {"agent": "openai:gpt-4o-mini", "base_url": f"http://127.0.0.1:{s.port}/v1"},
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_agent_spec_that_is_code_is_refused_and_nothing_runs(server: Launched, default_site: Site,
                                                                attack: str) -> None:  # fmt: skip
    body = {**ONE_SCENARIO, **ATTACKS[attack](default_site)}
    url = f"{server.url}/api/runs"
    without = httpx.post(url, json=body)
    assert without.status_code == 401 and "token" in without.text
    wrong = httpx.post(url, json=body, headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 403 and wrong.json()["detail"][0]["type"] == "forbidden_token"
    refused = httpx.post(url, json=body, headers=server.auth())
    assert refused.status_code == 403, refused.text
    answer = refused.json()
    assert answer["detail"][0]["type"] == "agent_not_allowed"
    assert "--allow-agent" in answer["detail"][0]["msg"] and "patterns given: none" in answer["detail"][0]["msg"]
    assert "--allow-agent" in answer["hint"]
    # The built-in agents: the baselines and the reference agents (`reference` runs the scenario domain's own).
    builtin = ["k8s-reference", "keyword", "majority", "random", "rds-reference", "reference"]
    assert answer["allowed"] == [*builtin, "openai:MODEL"]
    # Nothing ran, was imported or was contacted, and no run was stored.
    assert default_site.marks() == []
    assert default_site.hits == []
    listed = httpx.get(url, headers=server.auth()).json()["runs"]
    assert [r["agent"] for r in listed if r["agent"] not in BUILTIN] == []


@pytest.mark.parametrize("agent", BUILTIN)
def test_built_in_agents_run_without_a_flag(server: Launched, agent: str) -> None:
    started = httpx.post(f"{server.url}/api/runs", json={**ONE_SCENARIO, "agent": agent}, headers=server.auth())
    assert started.status_code == 201, started.text
    assert finish(server, started.json()["run_id"]) == "finished"


def test_openai_on_its_default_endpoint_is_built_in(server: Launched) -> None:
    # Allowed (not 403): it fails only because this server has no OpenAI key, before any request is made.
    body = {**ONE_SCENARIO, "agent": "openai:gpt-4o-mini"}
    answer = httpx.post(f"{server.url}/api/runs", json=body, headers=server.auth())
    assert answer.status_code == 400 and "no API key" in answer.text


def test_allow_agent_opens_the_specs_its_patterns_match(tmp_path: Path) -> None:
    with (
        site(tmp_path) as here,
        serving(here.root, "--allow-agent", "cmd:*", "--allow-agent", "py:evil_agent:*") as srv,
    ):
        url = f"{srv.url}/api/runs"
        marker = here.root / "cmd.marker"
        # At process level: the marker is written into the site, which a sandbox shows read-only.
        ran = httpx.post(
            url, json={**ONE_SCENARIO, "agent": f"cmd:touch {marker}", "isolation": "process"}, headers=srv.auth()
        )
        assert ran.status_code == 201, ran.text
        finish(srv, ran.json()["run_id"])
        assert marker.exists()
        imported = httpx.post(
            url, json={**ONE_SCENARIO, "agent": "py:evil_agent:agent", "isolation": "process"}, headers=srv.auth()
        )
        assert imported.status_code == 201, imported.text
        finish(srv, imported.json()["run_id"])
        assert (here.root / "imported.marker").exists()
        # Other specs stay refused, and the message lists the patterns given.
        other = httpx.post(url, json={**ONE_SCENARIO, "agent": f"http://127.0.0.1:{here.port}/"}, headers=srv.auth())
        assert other.status_code == 403
        assert "'cmd:*', 'py:evil_agent:*'" in other.json()["detail"][0]["msg"]
        assert other.json()["allowed"][-2:] == ["cmd:*", "py:evil_agent:*"]
        assert here.hits == []


def test_reads_need_the_token_from_the_printed_link(server: Launched) -> None:
    port = server.url.rsplit(":", 1)[1]
    (line,) = [line for line in server.stderr if "sredrill serve: listening on" in line]
    link = re.search(rf"http://127\.0\.0\.1:{port}/\?token=\S+", line)
    assert link is not None, line
    started = httpx.post(f"{server.url}/api/runs", json={**ONE_SCENARIO, "agent": "keyword"}, headers=server.auth())
    run_id = started.json()["run_id"]
    finish(server, run_id)
    reads = ["/api/runs", f"/api/runs/{run_id}", f"/api/runs/{run_id}/events",
             f"/api/runs/{run_id}/results/rds_postgres/000-healthy%231", f"/api/compare?a={run_id}&b={run_id}",
             "/ui", f"/ui/runs/{run_id}", f"/ui/runs/{run_id}/tests/rds_postgres/000-healthy%231", "/ui/env",
             f"/ui/compare?a={run_id}&b={run_id}"]  # fmt: skip
    with httpx.Client(base_url=server.url, timeout=60) as anonymous:
        for path in reads:
            assert anonymous.get(path).status_code == 401, path
            assert anonymous.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 403, path
        assert anonymous.get("/ui?token=wrong", follow_redirects=False).status_code == 403
        assert "sredrill_token" not in anonymous.cookies
    with httpx.Client(base_url=server.url, timeout=60) as bearer:
        for path in reads:
            assert bearer.get(path, headers=server.auth()).status_code == 200, path
            joiner = "&" if "?" in path else "?"
            # Each request alone (no cookie jar); `/ui?token=` answers by setting the cookie (a redirect).
            queried = httpx.get(f"{server.url}{path}{joiner}token={server.token}", timeout=60)
            assert queried.status_code == (303 if path == "/ui" else 200), path
    with httpx.Client(timeout=60) as browser:
        opened = browser.get(link.group(0), follow_redirects=True)
        assert opened.status_code == 200 and str(opened.url) == f"{server.url}/ui"
        assert "token=" not in str(opened.url)  # the token left the address bar
        assert run_id in opened.text
        cookie = opened.history[-1].headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        for path in reads:
            assert browser.get(f"{server.url}{path}").status_code == 200, path


def test_the_openenv_routes_stay_open_on_loopback(server: Launched) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        for path in ("/health", "/metadata", "/schema", "/tasks", "/", "/openapi.json"):
            assert http.get(path).status_code == 200, path
        reset = http.post("/reset", json={"task_id": "easy_cpu_spike", "seed": 0})
        assert reset.status_code == 200
        sid = {"X-Session-Id": reset.headers["X-Session-Id"]}
        assert http.post("/step", json={"action": {"action_type": "wait"}}, headers=sid).status_code == 200
        assert http.get("/state", headers=sid).status_code == 200
        tools = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert tools.status_code == 200 and tools.json()["result"]["tools"]
    with connect(server.url.replace("http://", "ws://") + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_id": "easy_cpu_spike"}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"


ROUTES = [
    ("GET", "/health"), ("GET", "/metadata"), ("GET", "/schema"), ("GET", "/tasks"), ("GET", "/"), ("GET", "/docs"),
    ("POST", "/reset"), ("GET", "/state"), ("POST", "/mcp"), ("GET", "/api/runs"), ("POST", "/api/runs"),
    ("GET", "/ui"), ("GET", "/ui/env"), ("POST", "/v1/traces"), ("GET", "/runs/x/tools"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({"Host": "evil.example"}, "forbidden_host"),
        ({"Host": "evil.example:{port}"}, "forbidden_host"),
        ({"Host": "127.0.0.1.evil.example:{port}"}, "forbidden_host"),
        ({"Origin": "http://evil.example"}, "forbidden_origin"),
        ({"Origin": "null"}, "forbidden_origin"),
        ({"Origin": "http://localhost:1"}, "forbidden_origin"),  # another program's page on this machine
    ],
)
def test_a_foreign_host_or_origin_is_refused_on_every_route(server: Launched, headers: dict[str, str],
                                                            code: str) -> None:  # fmt: skip
    port = server.url.rsplit(":", 1)[1]
    sent = {**server.auth(), **{k: v.format(port=port) for k, v in headers.items()}}
    for method, path in ROUTES:
        answer = httpx.request(method, f"{server.url}{path}", headers=sent, json={})
        assert answer.status_code == 403, (method, path, answer.text)
        assert answer.json()["detail"][0]["type"] == code, (method, path)
    assert websocket_handshake(server, {k: v.format(port=port) for k, v in headers.items()}) == 403


def websocket_handshake(server: Launched, headers: dict[str, str]) -> int:
    """The HTTP status answering a WebSocket handshake to `/ws` with these headers (a raw socket, so `Host`
    is exactly what the test says)."""
    address = server.url.removeprefix("http://")
    lines = {"Host": address, "Upgrade": "websocket", "Connection": "Upgrade",
             "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13", **headers}  # fmt: skip
    request = "GET /ws HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in lines.items()) + "\r\n"
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request.encode())
        status_line = sock.makefile("rb").readline().decode()
    return int(status_line.split()[1])


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "localhost"])
def test_loopback_names_and_the_own_origin_are_accepted(server: Launched, host: str) -> None:
    port = server.url.rsplit(":", 1)[1]
    named = host.format(port=port)
    headers = {"Host": named, "Origin": f"http://{named}", **server.auth()}
    for method, path in ROUTES:
        body = {"packs": ["not-served"]} if path == "/api/runs" else {}  # 400: no run starts
        answer = httpx.request(method, f"{server.url}{path}", headers=headers, json=body if method == "POST" else None)
        assert answer.status_code not in (401, 403), (method, path, answer.text)
    assert websocket_handshake(server, {"Host": named, "Origin": f"http://{named}"}) == 101


def test_an_empty_allow_agent_pattern_is_a_usage_error(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    cmd = [sys.executable, "-m", "sredrill", "serve", "--port", "0", "--allow-agent", " ", "--db", db]
    done = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("error:") and "--allow-agent" in done.stderr
