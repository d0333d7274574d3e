"""A real agent service that answers every POST with bytes a test chose: fuzzed bodies, huge or endless ones.

It listens on 127.0.0.1 (a free port) in a background thread. Set `reply` to `(content_type, body)`; the body
is bytes, or an iterable of byte chunks written as they come (a 100 MB reply is never held in memory). The
reply has no Content-Length: the connection closes when the body ends, as a streaming service's does.

Examples:
    >>> with CannedService() as service:
    ...     service.reply = ("application/json", b'{"output": "hi"}')
    ...     reply = await resolve_agent(service.url).run(task, Recorder())
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["CannedService"]


class CannedService:
    """A local service replying with `reply`; use it as a context manager."""

    def __init__(self) -> None:
        self.reply: tuple[str, bytes | Iterable[bytes]] = ("application/json", b"{}")
        self.status = 200
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "use CannedService as a context manager"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/agent"

    def __enter__(self) -> CannedService:
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the body ends when the connection closes

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                content_type, body = service.reply
                self.send_response(service.status)
                self.send_header("Content-Type", content_type)
                self.end_headers()
                try:
                    for chunk in [body] if isinstance(body, bytes) else body:
                        self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading: what a bounded client does with an endless reply

            def log_message(self, format: str, *args: Any) -> None:
                pass

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
