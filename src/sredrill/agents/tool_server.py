"""The tool server: each agent run's tools over HTTP on a loopback port, for agents outside this process.

DESIGN §4.1's routes; every request carries `Authorization: Bearer <token>`, a token reaches only its own run:

    GET  /runs/{run_id}/tools          -> 200 {"tools": [{"name", "description", "input_schema"}, …]}
    POST /runs/{run_id}/tools/{name}   -> 200 {"result": …}
                                          4xx {"error": {"code", "message"}}

A call lands on the run's `Recorder` through `Recorder.call_tool`, exactly like `await task.call_tool(…)` in
process, so the trajectory does not depend on the transport. Errors: 401 `unauthorized` (no bearer token),
403 `forbidden` (a token of another run; nothing is recorded), 404 `unknown_run` (the run ended or never
existed), 404 `unknown_tool`, 400 `bad_json` (the body is not JSON), 400 `bad_arguments` or the toolset's
own code (the arguments were rejected), 500 `tool_failed` (the toolset itself crashed). Every route, the MCP
endpoint and the OTLP receiver included, first refuses a foreign `Host` or `Origin` with 403 `forbidden_host`
or `forbidden_origin` (`host_origin.py`: a web page in the user's browser cannot reach the tools).

Bad input never crashes a call: a body nested deeper than `MAX_ARGS_DEPTH` is 400 `bad_json`, arguments over
`MAX_ARGS_BYTES` are 413 `too_large`, and text that is not valid Unicode (a lone surrogate, `"\\ud800"`) is
replaced with U+FFFD before the call is recorded, the answer's `notes` saying so.

The same registry and tokens serve the tools over MCP at `/runs/{run_id}/mcp` (`mcp_server.McpEndpoint`, started
with the server when the `mcp` extra is installed; the Task's `mcp_url`).

`tool_routes(registry)` is the FastAPI router, for `sredrill serve` to mount; `ToolServer` serves it with
uvicorn on an asyncio task of the running loop; `ToolHost` is what the engine keeps per run: it starts the
server on the first agent run that needs it (`needs_tool_server`), and stops it when the run ends.

Examples:
    >>> host = ToolHost()
    >>> access = await host.open("run-1", toolset, recorder)   # starts the server on first use
    >>> access.tools_url, access.token                           # what the Task carries
    ('http://127.0.0.1:41237/runs/run-1', '…')
    >>> host.close_run("run-1"); await host.aclose()
"""

# No `from __future__ import annotations` here: FastAPI reads the route functions' annotations at run time,
# and those name classes imported inside `tool_routes` (fastapi is an extra, loaded only when a server starts).

import asyncio
import contextlib
import importlib.util
import logging
import os
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ConfigDict, JsonValue

from sredrill.errors import MissingExtra, StateError
from sredrill.text import REPLACED_NOTE, parse_json
from sredrill.trajectory import Recorder, ToolError, Toolset, ToolSpec

from .host_origin import foreign_scope
from .mcp_server import MCP_PATH
from .tool_registry import Denied, ToolRegistry

if TYPE_CHECKING:
    from fastapi import APIRouter, FastAPI

    from sredrill.traces import SpanCollector

    from .mcp_server import McpEndpoint

__all__ = [
    "ToolAccess",
    "ToolErrorBody",
    "ToolErrorDetail",
    "ToolHost",
    "ToolListBody",
    "ToolResultBody",
    "ToolServer",
    "needs_tool_server",
    "tool_app",
    "tool_routes",
]

logger = logging.getLogger(__name__)

LOOPBACK: Final = "127.0.0.1"
_START_TIMEOUT_S: Final = 10.0
_START_POLL_S: Final = 0.005
_STOP_TIMEOUT_S: Final = 10.0
_GRACEFUL_S: Final = 2
"""Seconds uvicorn waits for requests still in flight when the server stops (a killed agent's, usually)."""
MAX_ARGS_BYTES: Final = 1024 * 1024
"""A tool call's arguments larger than this are refused (413 `too_large`) before they are read whole."""
MAX_ARGS_DEPTH: Final = 64
"""Arguments nested deeper are refused (400 `bad_json`): the trajectory's models validate JSON to a bounded
depth, and no tool takes anything near it."""


def needs_tool_server(agent: object) -> bool:
    """True for agents outside this process (`cmd:`, `http(s)://`): they reach their tools over HTTP.

    A connector says so with a class attribute `needs_tool_server = True`; in-process agents (`py:`,
    `openai:`, the built-in ones) call the toolset directly and leave it out.
    """
    return getattr(agent, "needs_tool_server", False) is True


# -- wire models ------------------------------------------------------------------------------------------


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ToolListBody(_Body):
    """`GET {tools_url}/tools`: the run's tools, in the order agents should see them."""

    tools: list[ToolSpec]


class ToolResultBody(_Body):
    """`POST {tools_url}/tools/{name}` succeeded."""

    result: JsonValue
    """What the tool returned."""
    notes: list[str] | None = None
    """What sredrill changed in the request (text that was not valid Unicode replaced with U+FFFD); absent
    when nothing was."""


class ToolErrorDetail(_Body):
    code: str
    """`unauthorized`, `forbidden`, `unknown_run`, `unknown_tool`, `bad_json`, `bad_arguments` (or the
    toolset's own code for arguments it rejected), `tool_failed`."""
    message: str
    """What went wrong and how to fix it; meant for the agent (or its model) to read."""


class ToolErrorBody(_Body):
    """Any 4xx or 5xx answer of the tool server."""

    error: ToolErrorDetail


# -- access (the registry itself is `tool_registry.py`) ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolAccess:
    """How one agent run reaches its tools: what its Task carries as `tools_url` and `token`."""

    run_id: str
    tools_url: str
    """`http://127.0.0.1:PORT/runs/{run_id}`; the routes are below it."""
    token: str = field(repr=False)
    """The bearer token of this run only; never shown in a repr."""
    mcp_url: str | None = None
    """`{tools_url}/mcp`, the same tools over MCP (`mcp_server.py`); None without the `mcp` extra."""


# -- the routes -------------------------------------------------------------------------------------------


def _json(status: int, body: _Body) -> Any:
    from fastapi.responses import Response

    return Response(content=body.model_dump_json(exclude_none=True), status_code=status, media_type="application/json")


async def _read_limited(request: Any) -> bytes | None:
    """The request body; None once it exceeds `MAX_ARGS_BYTES` (the rest is not read)."""
    size = request.headers.get("content-length")
    if size is not None and size.isdigit() and int(size) > MAX_ARGS_BYTES:
        return None
    chunks: list[bytes] = []
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > MAX_ARGS_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _depth(value: Any) -> int:
    """How deeply a parsed JSON value nests (a scalar: 0); iterative, so any depth costs no stack."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is not None:
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


def _error(status: int, code: str, message: str) -> Any:
    return _json(status, ToolErrorBody(error=ToolErrorDetail(code=code, message=message)))


def _status_of(error: ToolError) -> int:
    return 404 if error.code == "unknown_tool" else 400


def tool_routes(registry: ToolRegistry) -> "APIRouter":
    """The tool routes over `registry`, as a FastAPI router (paths start with `/runs/{run_id}/tools`).

    The engine's `ToolServer` serves it alone; `sredrill serve` includes it in its app, so agents see the
    same routes either way.

    Raises:
        MissingExtra: fastapi is not installed (the `server` extra).
    """
    try:
        from fastapi import APIRouter, Request
    except ImportError as exc:
        raise MissingExtra("serving tools to cmd: and http(s):// agents", "server") from exc

    router = APIRouter()
    errors: dict[int | str, dict[str, Any]] = {
        status: {"model": ToolErrorBody, "description": what}
        for status, what in (
            (400, "bad_json, bad_arguments"),
            (401, "unauthorized"),
            (403, "forbidden"),
            (404, "unknown_run, unknown_tool"),
            (413, "too_large"),
            (500, "tool_failed"),
        )
    }

    @router.get("/runs/{run_id}/tools", response_model=ToolListBody, responses=errors)
    async def list_tools(run_id: str, request: Request) -> Any:
        """The run's tools: name, description and a JSON Schema of the arguments of each."""
        access = registry.authorize(run_id, request.headers.get("authorization"))
        if isinstance(access, Denied):
            return _error(access.status, access.code, access.message)
        return _json(200, ToolListBody(tools=access.toolset.specs()))

    @router.post("/runs/{run_id}/tools/{name}", response_model=ToolResultBody, responses=errors)
    async def call_tool(run_id: str, name: str, request: Request) -> Any:
        """Call one tool with the arguments as a JSON object (an empty body means no arguments)."""
        access = registry.authorize(run_id, request.headers.get("authorization"))
        if isinstance(access, Denied):
            return _error(access.status, access.code, access.message)
        raw = await _read_limited(request)
        if raw is None:
            return _error(413, "too_large", f"tool arguments are limited to {MAX_ARGS_BYTES} bytes")
        try:
            # Lone surrogates ("\\ud800") become U+FFFD, so the call can be recorded, stored and answered.
            args, replaced = parse_json(raw) if raw.strip() else ({}, False)
        except ValueError as exc:  # not JSON, or nested too deeply to parse
            return _error(400, "bad_json", f"the request body is not JSON ({exc}): send the arguments as an object")
        if _depth(args) > MAX_ARGS_DEPTH:
            msg = f"the arguments are nested more than {MAX_ARGS_DEPTH} levels deep: flatten them"
            return _error(400, "bad_json", msg)
        if not isinstance(args, dict):
            return _error(
                400, "bad_arguments", f"the arguments must be a JSON object, got {type(args).__name__}: {raw[:80]!r}"
            )
        try:
            result = await access.recorder.call_tool(access.toolset, name, args)
        except ToolError as exc:
            return _error(_status_of(exc), exc.code, exc.message)
        except Exception as exc:
            # The server's edge (STYLE #16): a crashing toolset is reported to the agent as a 500 with its
            # message and logged with its traceback, rather than dropping the connection.
            logger.exception("tool %r of agent run %s failed", name, run_id)
            return _error(500, "tool_failed", f"tool {name!r} failed: {type(exc).__name__}: {exc}")
        # The toolset returns JSON values; building the body without validating it again keeps large
        # results (a whole metric window) cheap.
        notes = [REPLACED_NOTE] if replaced else None
        return _json(200, ToolResultBody.model_construct(result=result, notes=notes))

    return router


def tool_app(
    registry: ToolRegistry, mcp: "McpEndpoint | None" = None, spans: "SpanCollector | None" = None
) -> "FastAPI":
    """A FastAPI app serving the tool routes (what `ToolServer` runs), `mcp` at `MCP_PATH` and an OTLP receiver
    into `spans` at `POST /v1/traces`, each if given.

    Raises:
        MissingExtra: fastapi is not installed (the `server` extra).
    """
    routes = tool_routes(registry)
    from fastapi import FastAPI

    app = FastAPI(title="sredrill tools", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(_LocalOnly)
    app.include_router(routes)
    if mcp is not None:
        # Starlette's Route serves an ASGI app (as `mcp` is) as well as a request handler; add_route's
        # annotation names only the handler.
        app.add_route(MCP_PATH, mcp, methods=["GET", "POST", "DELETE"], include_in_schema=False)  # type: ignore[arg-type]
    if spans is not None:
        from sredrill.traces import otlp_routes

        app.include_router(otlp_routes(spans))
    return app


class _LocalOnly:
    """ASGI middleware: a foreign `Host` or `Origin` gets 403 on every route (`host_origin.py`), before any
    token is looked at, so a page in the user's browser learns nothing about the runs being served."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        refused = foreign_scope(scope, any_host=False) if scope["type"] in ("http", "websocket") else None
        if refused is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": refused.code})
        else:
            body = ToolErrorBody(error=ToolErrorDetail(code=refused.code, message=refused.message))
            data = body.model_dump_json().encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
            await send({"type": "http.response.start", "status": 403, "headers": headers})
            await send({"type": "http.response.body", "body": data})


# -- the server -------------------------------------------------------------------------------------------


def _check_extras() -> None:
    """Raise `MissingExtra` now if fastapi or uvicorn is missing, without importing either (they load when the
    first connection arrives)."""
    if importlib.util.find_spec("fastapi") is None or importlib.util.find_spec("uvicorn") is None:
        raise MissingExtra("serving tools to cmd: and http(s):// agents", "server")


def _uvicorn_server(app: "FastAPI") -> Any:
    try:
        import uvicorn
    except ImportError as exc:
        raise MissingExtra("serving tools to cmd: and http(s):// agents", "server") from exc

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn would take SIGINT and SIGTERM for itself while it serves; here it is a guest in the
            # engine's loop, and Ctrl-C must stop the run, not just the tool server.
            yield

    # log_config=None: uvicorn must not reconfigure the process's logging; access logs are noise here.
    config = uvicorn.Config(
        app,
        lifespan="off",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=_GRACEFUL_S,
    )
    return _Server(config)


def _mcp_endpoint(registry: ToolRegistry) -> "McpEndpoint | None":
    """The MCP endpoint over `registry`, or None without the `mcp` extra (the HTTP routes still serve)."""
    from .mcp_server import McpEndpoint

    try:
        return McpEndpoint(registry)
    except MissingExtra:
        logger.info("the mcp extra is not installed: tools are served over HTTP only (pip install 'sredrill[mcp]')")
        return None


def _unix_listener(path: Path) -> socket.socket:
    """A listening Unix socket at `path` (its folder created; a socket left there by a dead run replaced)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(os.fspath(path))
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


class ToolServer:
    """A registry's routes served by uvicorn on a loopback port, on a task of the running event loop.

    `start` only binds the port: FastAPI, uvicorn and the MCP SDK (about half a second of imports, and more
    per worker process) load when the first connection arrives, which waits in the listen backlog meanwhile.
    A run whose agents never call a tool, nor export a span, never pays for them.

    Args:
        registry: the runs to serve.
        host: the address to bind; loopback unless you know why not.
        port: 0 picks a free port (read it from `base_url` after `start`).
        unix_path: also listen on a Unix socket here (created with its folder, removed on `close`): a
            sandboxed agent without a network reaches the same routes through it (`sredrill.isolation.forward`
            serves it on the agent's own 127.0.0.1 at `port`, so its URLs do not change).
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        host: str = LOOPBACK,
        port: int = 0,
        spans: "SpanCollector | None" = None,
        unix_path: Path | None = None,
    ) -> None:
        self.registry = registry
        self.spans = spans
        self.host = host
        self.port = port
        self.unix_path = unix_path
        self._sock: socket.socket | None = None
        """The listening socket, from `start` until `close`."""
        self._unix: socket.socket | None = None
        """The Unix listening socket (`unix_path`), from `start` until `close`."""
        self._has_mcp = False
        """The `mcp` extra is installed: the endpoint is served (and the Task's `mcp_url` given)."""
        self._server: Any = None
        self._startup: asyncio.Task[None] | None = None
        """Starting the app, from the first connection on."""
        self._task: asyncio.Task[None] | None = None
        """uvicorn serving, once the app has started."""
        self._mcp: McpEndpoint | None = None

    def __repr__(self) -> str:
        state = self.base_url if self._sock is not None else "not started"
        return f"ToolServer({state}, {len(self.registry)} run(s))"

    @property
    def base_url(self) -> str:
        """`http://HOST:PORT`, once started.

        Raises:
            StateError: the server is not started.
        """
        if self._sock is None:
            raise StateError("the tool server is not started: await start() (or use it as an async context)")
        return f"http://{self.host}:{self.port}"

    @property
    def is_serving(self) -> bool:
        """True once a connection has arrived and the app answers requests."""
        return self._server is not None and self._server.started

    async def start(self) -> None:
        """Bind the port; the app starts when the first connection arrives (it waits in the backlog until then).

        Raises:
            MissingExtra: fastapi or uvicorn is not installed.
            StateError: already started.
            OSError: the address cannot be bound.
        """
        if self._sock is not None:
            raise StateError("the tool server is already started")
        _check_extras()
        from .mcp_server import mcp_installed

        self._has_mcp = mcp_installed()
        # Our own socket, listening before uvicorn starts: the port is known at once, and a connection
        # that arrives early waits in the backlog instead of being refused. IPPROTO_TCP explicitly: asyncio
        # sets TCP_NODELAY only on sockets whose proto says TCP, and without it every keep-alive call waits
        # about 40 ms for a delayed ACK (Nagle).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.bind((self.host, self.port))
            sock.listen(128)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        if self.unix_path is not None:
            try:
                self._unix = _unix_listener(self.unix_path)
            except OSError:
                sock.close()
                raise
        self._sock = sock
        loop = asyncio.get_running_loop()
        for listening in self._listening():
            loop.add_reader(listening.fileno(), self._first_connection)

    def _listening(self) -> list[socket.socket]:
        return [s for s in (self._sock, self._unix) if s is not None]

    def _first_connection(self) -> None:
        """A connection is waiting: start the app (once), which then accepts it."""
        assert self._sock is not None  # the reader is removed before the socket is closed
        loop = asyncio.get_running_loop()
        for listening in self._listening():
            loop.remove_reader(listening.fileno())
        self._startup = asyncio.create_task(
            self._start_serving(self._listening()), name=f"sredrill-tools-start:{self.port}"
        )

    async def _start_serving(self, sockets: list[socket.socket]) -> None:
        try:
            mcp = _mcp_endpoint(self.registry) if self._has_mcp else None
            server = _uvicorn_server(tool_app(self.registry, mcp, self.spans))
            if mcp is not None:
                self._mcp = mcp
                await mcp.start()
            self._server = server
            self._task = asyncio.create_task(server.serve(sockets=sockets), name=f"sredrill-tools:{self.port}")
            async with asyncio.timeout(_START_TIMEOUT_S):
                while not server.started and not self._task.done():
                    await asyncio.sleep(_START_POLL_S)
            if not server.started:
                raise StateError(f"the tool server on {self.host}:{self.port} stopped while starting")
        except Exception:
            # Nobody awaits this task but `close`: the agents waiting on the port get their connection closed
            # (they report it), and the reason goes to the log.
            logger.exception("the tool server on %s:%s could not start", self.host, self.port)
            await self._stop()
            for sock in sockets:
                sock.close()

    async def _stop_mcp(self) -> None:
        mcp, self._mcp = self._mcp, None
        if mcp is not None:
            await mcp.stop()

    async def _stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            await self._stop_mcp()
            return
        self._server.should_exit = True
        try:
            async with asyncio.timeout(_STOP_TIMEOUT_S):
                await asyncio.shield(task)
        except TimeoutError:
            task.cancel()
            logger.warning("the tool server on port %s did not stop in %ss: cancelled", self.port, _STOP_TIMEOUT_S)
        finally:
            await self._stop_mcp()

    async def close(self) -> None:
        """Stop serving: close the port and wait for requests in flight (a few seconds at most)."""
        if self._sock is None:
            return
        listening = self._listening()
        self._sock = self._unix = None
        startup, self._startup = self._startup, None
        if startup is None:
            for sock in listening:
                asyncio.get_running_loop().remove_reader(sock.fileno())
        else:
            await asyncio.shield(startup)  # it logs its own failure
        await self._stop()
        for sock in listening:
            sock.close()  # uvicorn closed it if it served; if it never did, this does
        if self.unix_path is not None:
            with contextlib.suppress(OSError):
                self.unix_path.unlink()

    async def __aenter__(self) -> "ToolServer":
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def otlp_url(self) -> str | None:
        """`http://HOST:PORT/v1/traces` when the server receives spans, else None."""
        return f"{self.base_url}/v1/traces" if self.spans is not None else None

    def access(self, run_id: str, token: str) -> ToolAccess:
        """The URLs and token a registered run's agent uses."""
        tools_url = f"{self.base_url}/runs/{run_id}"
        mcp_url = self.base_url + MCP_PATH.format(run_id=run_id) if self._has_mcp else None
        return ToolAccess(run_id=run_id, tools_url=tools_url, token=token, mcp_url=mcp_url)


class ToolHost:
    """One engine run's tool service: a registry, and a server started on first use.

    The engine makes one per run when its agent runs out of process (`needs_tool_server`) and closes it when
    the run ends; each agent run opens its tools before the agent starts and closes them when it ends.
    Safe for concurrent agent runs (`--jobs N`): the first `open` starts the server, the others wait for it.
    """

    def __init__(self, spans: "SpanCollector | None" = None, *, unix_path: Path | None = None) -> None:
        self.registry = ToolRegistry()
        self.spans = spans
        """Where the server's OTLP receiver puts the spans agents export; None serves no receiver."""
        self.unix_path = unix_path
        """The Unix socket the server also listens on (`ToolServer.unix_path`); None: its TCP port only."""
        self._server: ToolServer | None = None
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"ToolHost({self._server!r})"

    @property
    def server(self) -> ToolServer | None:
        """The running server; None until an agent run needed it."""
        return self._server

    async def open(self, run_id: str, toolset: Toolset, recorder: Recorder) -> ToolAccess:
        """Serve one agent run's tools (starting the server if needed) and return its URL and token.

        Raises:
            MissingExtra: the `server` extra is not installed.
            StateError: `run_id` is already open.
        """
        server = await self.started()
        token = self.registry.register(run_id, toolset, recorder)
        return server.access(run_id, token)

    async def started(self) -> ToolServer:
        """The server, started now if no agent run needed it yet (an agent without tools may export spans).

        Raises:
            MissingExtra: the `server` extra is not installed.
        """
        async with self._lock:
            if self._server is None:
                server = ToolServer(self.registry, spans=self.spans, unix_path=self.unix_path)
                await server.start()
                self._server = server
            return self._server

    def close_run(self, run_id: str) -> None:
        """Stop serving one agent run's tools; its token stops working at once."""
        self.registry.unregister(run_id)

    @contextlib.asynccontextmanager
    async def serving(self, run_id: str, toolset: Toolset, recorder: Recorder) -> AsyncIterator[ToolAccess]:
        """`open` for the duration of a block, `close_run` after it, however it ends."""
        access = await self.open(run_id, toolset, recorder)
        try:
            yield access
        finally:
            self.close_run(run_id)

    async def aclose(self) -> None:
        """Stop the server, if it was started."""
        server, self._server = self._server, None
        if server is not None:
            await server.close()
