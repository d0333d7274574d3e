"""Running the server: `serve()` in the foreground (`sredrill serve`), `ServerThread` in the background.

Both bind their own socket first (loopback by default), so the port is known at once (`port=0` picks a free
one) and an early connection waits in the backlog instead of being refused. The socket says IPPROTO_TCP so
asyncio sets TCP_NODELAY on its connections (without it, a keep-alive client waits for delayed ACKs).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Final

from sredrill.errors import MissingExtra, StateError

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "ServerThread", "bind", "serve", "url_of"]

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 7860
_START_TIMEOUT_S: Final = 30.0
_POLL_S: Final = 0.005
_GRACEFUL_S: Final = 2


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host:port` (`port=0`: a free port).

    Raises:
        OSError: the address cannot be bound (in use, not local).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    """`http://host:port` of a bound socket."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _uvicorn(app: Any, *, quiet: bool) -> Any:
    try:
        import uvicorn
    except ImportError as exc:
        raise MissingExtra("`sredrill serve`", "server") from exc
    config = uvicorn.Config(
        app,
        lifespan="on",
        access_log=False,
        log_level="warning",
        # A server thread must not reconfigure its host process's logging.
        log_config=None if quiet else uvicorn.config.LOGGING_CONFIG,
        timeout_graceful_shutdown=_GRACEFUL_S,
    )
    return uvicorn.Server(config)


def serve(app: Any, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, on_ready: Callable[[str], None]) -> None:
    """Serve `app` until interrupted (Ctrl-C or SIGTERM stop it gracefully).

    Args:
        app: the ASGI app (`create_app()`).
        host: the address to bind; loopback unless you mean to expose the server.
        port: 0 picks a free port.
        on_ready: called with the server's URL once the socket is bound.

    Raises:
        MissingExtra: uvicorn is not installed.
        OSError: the address cannot be bound.
    """
    server = _uvicorn(app, quiet=False)
    sock = bind(host, port)
    try:
        on_ready(url_of(sock))
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        # uvicorn shuts down gracefully on Ctrl-C, then raises the signal again for the caller: stopping
        # is what was asked for, not an error. (SIGTERM ends the process the same way, after the shutdown.)
        pass
    finally:
        sock.close()


class ServerThread:
    """`app` served by uvicorn on a thread of its own (its own event loop), e.g. for tests or a notebook.

    Examples:
        >>> with ServerThread(create_app()) as server:
        ...     httpx.post(f"{server.url}/reset", json={})
    """

    def __init__(self, app: Any, *, host: str = DEFAULT_HOST, port: int = 0) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        """`http://host:port`, once started.

        Raises:
            StateError: not started.
        """
        if self._sock is None:
            raise StateError("the server is not started: call start() (or use it as a context manager)")
        return url_of(self._sock)

    def start(self) -> ServerThread:
        """Bind, start serving, and return once requests are answered.

        Raises:
            StateError: already started, or the server stopped while starting.
            OSError: the address cannot be bound.
        """
        if self._thread is not None:
            raise StateError("the server is already started")
        self._server = server = _uvicorn(self.app, quiet=True)
        self._sock = sock = bind(self.host, self.port)

        def run() -> None:
            try:
                asyncio.run(server.serve(sockets=[sock]))
            except BaseException as exc:  # reported by start() or stop(), in the caller's thread
                self._error = exc

        self._thread = threading.Thread(target=run, name=f"sredrill-server:{url_of(sock)}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise StateError(f"the server on {url_of(sock)} did not start: {self._error!r}")
            time.sleep(_POLL_S)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread (open connections get a couple of seconds)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join()
        if self._sock is not None:
            self._sock.close()
        self._server = self._thread = self._sock = None

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
