"""One TLS context per process for every HTTP client sredrill opens (`sredrill.agents.http_client`)."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from sredrill.agents import ChatClient
from sredrill.agents.http_client import async_client, tls_context, verify_for

ROOT = Path(__file__).resolve().parents[2]


def _context_of(client: httpx.AsyncClient) -> ssl.SSLContext:
    # httpx 0.28 keeps the context on its default transport's connection pool; no public way to read it.
    return client._transport._pool._ssl_context  # type: ignore[attr-defined]


def test_every_https_client_shares_one_verifying_context() -> None:
    assert tls_context() is tls_context()
    assert tls_context().verify_mode is ssl.CERT_REQUIRED and tls_context().check_hostname
    assert tls_context().cert_store_stats()["x509_ca"] > 0, "the trust anchors are loaded"
    first, second = async_client("https://a.example/v1"), async_client("https://b.example/agent", timeout=5)
    assert _context_of(first) is _context_of(second) is tls_context()


def test_a_plain_http_client_reads_no_certificate_bundle_and_trusts_nothing() -> None:
    plain = verify_for("http://127.0.0.1:9/v1")
    assert plain is verify_for(httpx.URL("http://localhost/agent")) and plain is not tls_context()
    assert plain.cert_store_stats()["x509_ca"] == 0
    assert plain.verify_mode is ssl.CERT_REQUIRED and plain.check_hostname, "fails closed if ever used"
    assert _context_of(async_client("http://127.0.0.1:9/v1")) is plain


def test_the_openai_and_judge_client_uses_the_shared_context() -> None:
    # The judge (sdk/judge.py) and `openai:` agents talk through ChatClient.
    secure = ChatClient("https://api.example/v1", model="m")
    again = ChatClient("https://other.example/v1", model="m", api_key="k")
    assert _context_of(secure._http) is _context_of(again._http) is tls_context()
    assert _context_of(ChatClient("http://127.0.0.1:9/v1", model="m")._http) is verify_for("http://x")


# A real HTTPS server on loopback with a self-signed certificate, trusted through SSL_CERT_FILE (read by the
# shared context as httpx's default would): an `https://` agent and a chat client each run twice, and the
# certificate bundle is read once in the whole process.
HTTPS_RUN = """
import asyncio, json, ssl, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

loads = []
_load = ssl.SSLContext.load_verify_locations
def counting(self, *args, **kwargs):
    loads.append(args or kwargs)
    return _load(self, *args, **kwargs)
ssl.SSLContext.load_verify_locations = counting

cert, key = sys.argv[1], sys.argv[2]

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        if self.path.endswith("/chat/completions"):
            message = {"role": "assistant", "content": "pong"}
            body = {"id": "x", "object": "chat.completion", "model": "m",
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        else:
            body = {"output": "pong"}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
base = f"https://127.0.0.1:{server.server_address[1]}"

from sredrill.agents import ChatClient, Task, resolve_agent
from sredrill.trajectory import Recorder

async def main():
    agent = resolve_agent(base + "/agent")
    outputs = []
    for _ in range(2):
        reply = await agent.run(Task(run_id="r1", prompt="ping"), Recorder())
        outputs.append(reply.output)
        async with ChatClient(base + "/v1", model="m") as llm:
            outputs.append((await llm.complete([{"role": "user", "content": "ping"}])).content)
    print(json.dumps({"outputs": outputs, "loads": len(loads)}))

asyncio.run(main())
server.shutdown()
"""


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_https_agents_and_chat_clients_read_the_trust_anchors_once(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    script = tmp_path / "https_run.py"
    script.write_text(textwrap.dedent(HTTPS_RUN))
    env = {"PATH": "/usr/bin:/bin", "SSL_CERT_FILE": str(cert), "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, str(script), str(cert), str(key)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["outputs"] == ["pong"] * 4
    assert result["loads"] == 1, "one trust-anchor load for four clients"
