"""A real agent service for tests of the `http(s)://` connector: one behaviour per path, over real HTTP.

It listens on 127.0.0.1 (a free port) in a background thread. `POST {url}/{behaviour}` with a Task:

| behaviour | reply |
|---|---|
| `answer` | `{"output": "answer: <prompt>"}` |
| `diagnose` | `{"diagnosis": {…cpu_saturation…}}` |
| `steps` | steps of every kind (one of them malformed), then `output` |
| `use_tools` | calls `get_alert` through the Task's `tools_url` and `token`, answers with the alert's title |
| `echo` | `{"output": <JSON of the request's headers and body>}` |
| `fail` | HTTP 500 with a traceback as text |
| `not_json` | 200 with an HTML page |
| `event_stream` | 200 `text/event-stream` |
| `not_an_object` | 200 `[1, 2]` |
| `unknown_key` | 200 `{"output": "x", "verdict": "ok"}` |
| `bad_diagnosis` | 200 `{"diagnosis": {"category": "nope"}}` |
| `hang` | never answers; notes when the client closes the connection (`closed` is set) |
"""

from __future__ import annotations

import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["AgentService"]


class AgentService:
    """A local agent service; use it as a context manager."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.hanging = threading.Event()
        """Set when a `hang` request has arrived."""
        self.closed = threading.Event()
        """Set when the client of a `hang` request closed its connection."""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "use AgentService as a context manager"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> AgentService:
        service = self

        class Handler(_Handler):
            owner = service

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        server = self._server
        self._thread = threading.Thread(target=lambda: server.serve_forever(poll_interval=0.01), daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()


def _use_tools(task: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{task['tools_url']}/tools/get_alert",
        data=b"{}",
        method="POST",
        headers={"Authorization": f"Bearer {task['token']}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        alert = json.load(response)["result"]
    return {"steps": [{"kind": "thinking", "content": "read the alert"}], "output": f"the alert says: {alert['title']}"}


_STEPS = [
    {"kind": "thinking", "content": "CPU is high; check the top SQL"},
    {"kind": "tool_call", "name": "psql", "args": {"query": "select 1"}, "call_id": "c1"},
    {"kind": "tool_result", "call_id": "c1", "result": {"rows": 1}},
    {"kind": "assistant", "content": "The top query is a full scan."},
    {"kind": "thinking", "contents": "a typo: this step is kept as text"},
]

_DIAGNOSIS = {
    "root_cause": "a runaway query saturates the CPU",
    "category": "resource_exhaustion",
    "failure_modes": ["cpu_saturation"],
    "causal_chain": ["runaway query", "CPU at 100%", "slow responses"],
}


class _Handler(BaseHTTPRequestHandler):
    owner: AgentService
    protocol_version = "HTTP/1.1"

    def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
        payload = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        task = json.loads(raw)
        behaviour = self.path.strip("/")
        self.owner.requests.append({"path": self.path, "headers": dict(self.headers.items()), "task": task})
        match behaviour:
            case "answer":
                self._send(200, {"output": f"answer: {task['prompt']}"})
            case "diagnose":
                self._send(200, {"diagnosis": _DIAGNOSIS})
            case "steps":
                self._send(200, {"steps": _STEPS, "output": "ROOT_CAUSE: a full scan\nFAILURE_MODES: cpu_saturation"})
            case "use_tools":
                self._send(200, _use_tools(task))
            case "echo":
                self._send(200, {"output": json.dumps({"headers": dict(self.headers.items()), "task": task})})
            case "fail":
                self._send(500, "Traceback (most recent call last):\nRuntimeError: disk on fire\n", "text/plain")
            case "not_json":
                self._send(200, "<html><body>Welcome to nginx!</body></html>", "text/html")
            case "event_stream":
                self._send(200, 'data: {"type": "RUN_STARTED"}\n\n', "text/event-stream")
            case "not_an_object":
                self._send(200, [1, 2])
            case "unknown_key":
                self._send(200, {"output": "x", "verdict": "ok"})
            case "bad_diagnosis":
                self._send(200, {"diagnosis": {"category": "nope"}})
            case "hang":
                self.owner.hanging.set()
                self.connection.settimeout(30)
                # The client sends nothing more: read() returns b"" only when it closes the connection.
                if self.rfile.read(1) == b"":
                    self.owner.closed.set()
                self.close_connection = True
            case _:
                self._send(404, {"error": f"unknown behaviour {behaviour!r}"})

    def log_message(self, format: str, *args: Any) -> None:
        pass
