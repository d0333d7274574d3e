"""The forwarder: an agent in a sandbox without network reaches the tool server's Unix socket over its own
127.0.0.1, with the same URL; the agent's exit code passes through."""

from __future__ import annotations

import http.server
import os
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sredrill.isolation import Sandbox, ToolsBridge, forward, resolve_isolation
from sredrill.isolation.forward import parse_args
from tests.isolation import require_sandbox

FORWARD = [sys.executable, "-m", "sredrill.isolation.forward"]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.reply(f"tools at {self.path}".encode())

    def do_POST(self) -> None:
        self.reply(b"echo " + self.rfile.read(int(self.headers["Content-Length"])))

    def reply(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def address_string(self) -> str:
        return "unix"  # an AF_UNIX peer has no host

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def unix_server() -> Iterator[Path]:
    """A real HTTP server on a Unix socket (the tool server's side of the bridge)."""
    with tempfile.TemporaryDirectory(prefix="sd-sock-") as tmp:  # short: AF_UNIX paths stop at 107 bytes
        path = Path(tmp) / "tools.sock"
        server = socketserver.ThreadingUnixStreamServer(str(path), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield path
        finally:
            server.shutdown()
            server.server_close()


@pytest.fixture
def host_port() -> Iterator[int]:
    """A port busy on the host's loopback: the sandbox's own 127.0.0.1 has it free for the forwarder."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield busy.getsockname()[1]


def sandboxed(tmp_path: Path, code: str, bridge: ToolsBridge) -> subprocess.CompletedProcess[str]:
    require_sandbox()
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    policy = resolve_isolation("sandbox", launch_dir=tmp_path)
    argv = Sandbox(policy).command([sys.executable, "-c", textwrap.dedent(code)], workdir=work, tools=bridge)
    assert argv[argv.index(sys.executable) :][:9] == [
        sys.executable, "-I", "-S", forward.__file__, "--port", str(bridge.port), "--socket", str(bridge.socket), "--",
    ]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def test_an_agent_without_network_reaches_the_tool_server_at_the_same_url(
    tmp_path: Path, unix_server: Path, host_port: int
) -> None:
    done = sandboxed(
        tmp_path,
        f"""
        import http.client, socket
        conn = http.client.HTTPConnection("127.0.0.1", {host_port}, timeout=10)
        conn.request("GET", "/tools/list")
        print(conn.getresponse().read().decode())
        conn.request("POST", "/tools/call", body=b"x" * 200000)
        print(len(conn.getresponse().read()))
        # Half-close: the request's write side is shut before the answer is read.
        raw = socket.create_connection(("127.0.0.1", {host_port}), timeout=10)
        raw.sendall(b"GET /half HTTP/1.0\\r\\n\\r\\n")
        raw.shutdown(socket.SHUT_WR)
        print(b"".join(iter(lambda: raw.recv(4096), b"")).split(b"\\r\\n\\r\\n")[1].decode())
        """,
        ToolsBridge(socket=unix_server, port=host_port),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["tools at /tools/list", str(len("echo ") + 200000), "tools at /half"]


@pytest.mark.parametrize(
    ("code", "exit_code"),
    [("pass", 0), ("raise SystemExit(3)", 3), ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 143)],
)
def test_the_agents_exit_code_passes_through(
    tmp_path: Path, unix_server: Path, host_port: int, code: str, exit_code: int
) -> None:
    done = sandboxed(tmp_path, code, ToolsBridge(socket=unix_server, port=host_port))
    assert done.returncode == exit_code, done.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_sigterm_to_the_forwarder_kills_the_agent(unix_server: Path) -> None:
    agent = "import os, time; print(os.getpid(), flush=True); time.sleep(120)"
    cmd = [*FORWARD, "--port", str(free_port()), "--socket", str(unix_server), "--", sys.executable, "-c", agent]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as forwarder:
        assert forwarder.stdout is not None
        child = int(forwarder.stdout.readline())
        forwarder.send_signal(signal.SIGTERM)
        assert forwarder.wait(timeout=30) == 128 + signal.SIGTERM
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_a_dead_tool_server_is_reported_not_hung(tmp_path: Path) -> None:
    port = free_port()
    # The forwarder listens before it starts the agent: the first connect is accepted.
    code = f"import socket; print(repr(socket.create_connection(('127.0.0.1', {port}), timeout=10).recv(10)))"
    cmd = [*FORWARD, "--port", str(port), "--socket", str(tmp_path / "gone.sock"), "--", sys.executable, "-c", code]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "b''\n"), done.stderr
    assert "cannot reach the tool server at" in done.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "x", "--socket", "/s", "--", "true"], "--port 'x' is not a TCP port"),
        (["--port", "1", "--", "true"], "--port, --socket and a command after -- are required"),
        (["--port", "1", "--socket", "/s", "--"], "a command after -- are required"),
        (["--sock", "/s"], "unexpected '--sock'"),
    ],
)
def test_bad_arguments_say_what_is_wrong(argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit, match=message):
        parse_args(argv)
    assert parse_args(["--port", "8123", "--socket", "/s", "--", "a", "--b"]) == (8123, "/s", ["a", "--b"])
