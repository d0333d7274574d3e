"""`create_app`: the FastAPI application of `sredrill serve` (DESIGN §6).

Routes (`docs/server.md` has the details):

| route | what |
|---|---|
| `POST /reset` | `{}` or `{task_id, seed, reward_mode}` → `{observation, reward, done, info}`; `X-Session-Id` |
| `POST /step` | `{"action": {…}}` → the same shape |
| `GET /state` | the session's state |
| `GET /schema` | the action schema of the session's episode (its targets), the observation's and the state's |
| `GET /health`, `/metadata`, `/tasks` | OpenEnv's fixed answers, and the task list |
| `POST /mcp` | JSON-RPC: `tools/list`, `tools/call` over the actions, `openenv/session/create`/`close` |
| `WS /ws` | OpenEnv's WebSocket protocol; one session per connection |
| `/runs/{run_id}/tools…` | the tool routes of `sredrill.agents.tool_server`, over the server's own registry |

The session routes and `/ws` are served before FastAPI's middleware and dependency layers (`_FAST_HTTP`):
an environment step is a few microseconds of computation, and those layers would otherwise cost more than
the step itself. They are also registered as ordinary FastAPI routes, calling the same functions, so they
appear in the OpenAPI document (`openenv validate --url` reads it) and still work when this app is mounted
under a prefix.
"""

# No `from __future__ import annotations`: FastAPI reads the route functions' annotations at run time, and
# `Request` is imported inside `create_app` (fastapi is the `server` extra, loaded only when a server starts).

import contextlib
import json
import logging
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from sredrill.engine.prices import Prices, load_prices
from sredrill.errors import MissingExtra
from sredrill.scenarios import Pack
from sredrill.server.agent_policy import AgentPolicy
from sredrill.server.agent_routes import mount_agent_routes, serving_agent_routes
from sredrill.server.catalog import EnvCatalog, TraceCatalog
from sredrill.server.gate import foreign_denial, send_denied
from sredrill.server.live import DEFAULT_MAX_RUNS, RunCapacityError
from sredrill.server.mcp import McpHandler
from sredrill.server.options import DEFAULT_IDLE_TIMEOUT_S, DEFAULT_MAX_SESSIONS, ServerOptions
from sredrill.server.security import Guard
from sredrill.server.service import SESSION_HEADER, Answer, EnvService
from sredrill.server.sessions import Session, SessionStore, reaping
from sredrill.server.websocket import Receive, Scope, Send, WebSocketEndpoint
from sredrill.server.wire import ErrorBody, ResetRequest, error_body

if TYPE_CHECKING:
    from fastapi import FastAPI

    from sredrill.harness.context import JudgeConfig

__all__ = ["create_app"]

logger = logging.getLogger(__name__)

MAX_BODY_BYTES: Final = 4 * 1024 * 1024
"""Larger request bodies are refused (413) before they are read whole."""
_JSON: Final = (b"content-type", b"application/json")


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body; None when it exceeds `MAX_BODY_BYTES`."""
    message = await receive()
    body: bytes = message.get("body", b"")  # an ASGI http.request message's body is bytes
    if not message.get("more_body"):
        return body
    chunks = [body]
    size = len(body)
    while message.get("more_body"):
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


async def _send_answer(send: Send, answer: Answer) -> None:
    headers = [_JSON, (b"content-length", str(len(answer.body)).encode())]
    if answer.session_id is not None:
        headers.append((b"x-session-id", answer.session_id.encode()))
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body})


def _internal_error(exc: Exception) -> Answer:
    # The server's edge (STYLE #16): a bug answers 500 with its message and is logged with its traceback,
    # rather than dropping the connection.
    logger.exception("internal error while answering a request")
    body = error_body("internal_error", [], f"internal error in sredrill (a bug): {type(exc).__name__}: {exc}")
    return Answer.error(500, body)


class _Routes:
    """The session routes as byte-level functions, shared by the fast path and the FastAPI routes."""

    def __init__(self, service: EnvService, mcp: McpHandler, guard: Guard) -> None:
        self.service = service
        self.mcp = mcp
        self.guard = guard

    def answer(self, route: Callable[[dict[bytes, bytes], bytes], Answer], headers: dict[bytes, bytes],
               body: bytes | None) -> Answer:  # fmt: skip
        denied = self.guard.check(headers, write=True)
        if denied is not None:
            if route == self.schema:
                # `/schema` is public: without the token it answers the generic schemas, no session's.
                return self.service.http_schema(headers, sessions=False)
            return Answer.error(denied.status, denied.body)
        if body is None:
            too_large = f"request bodies are limited to {MAX_BODY_BYTES} bytes"
            return Answer.error(413, error_body("too_large", ["body"], too_large))
        try:
            return route(headers, body)
        except Exception as exc:
            return _internal_error(exc)

    def reset(self, headers: dict[bytes, bytes], body: bytes) -> Answer:
        return self.service.http_reset(headers, body)

    def step(self, headers: dict[bytes, bytes], body: bytes) -> Answer:
        return self.service.http_step(headers, body)

    def state(self, headers: dict[bytes, bytes], body: bytes) -> Answer:
        return self.service.http_state(headers)

    def schema(self, headers: dict[bytes, bytes], body: bytes) -> Answer:
        return self.service.http_schema(headers)

    def mcp_call(self, headers: dict[bytes, bytes], body: bytes) -> Answer:
        named = headers.get(b"x-session-id")
        sessions = self.service.sessions

        def find(session_id: str | None) -> Session | None:
            if session_id is not None:
                return sessions.get(session_id)
            if named is not None:
                return sessions.get(named.decode("latin-1"))
            return sessions.default

        status, response = self.mcp.handle_bytes(body, session=find)
        if response is None:
            return Answer(202, b"")
        return Answer(status, json.dumps(response, ensure_ascii=False).encode())


def create_app(
    *,
    packs: Sequence[str | os.PathLike[str] | Pack] | None = None,
    catalog: EnvCatalog | None = None,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
    token: str | None = None,
    loopback_only: bool = True,
    evals: str | None = None,
    db: str | os.PathLike[str] | None = None,
    allow_agents: Sequence[str] = (),
    max_runs: int = DEFAULT_MAX_RUNS,
    episode_key: str | None = None,
    judge: "JudgeConfig | None" = None,
    prices: "str | os.PathLike[str] | Prices | None" = None,
) -> "FastAPI":
    """The environment server as a FastAPI application.

    Args:
        packs: scenario packs whose scenarios are served as RCA tasks beside the incident tasks (built-in names
            or folders); None: every built-in pack; `()`: incident tasks only. Ignored when `catalog` is given.
        catalog: serve this instead of sredrill's tasks (any `EnvCatalog`).
        max_sessions: sessions open at once (HTTP, WebSocket and MCP together); one more answers 503.
        idle_timeout_s: a session unused this long is closed.
        token: when set, the session routes need `Authorization: Bearer <token>`; the runs API and UI always
            need a token: this one, else one generated here (`app.state.options.runs_token`).
        loopback_only: accept only loopback `Host` names on the session routes (a server bound to loopback);
            False for a server bound to another address.
        evals: the folder of eval files the runs API may run (none outside it).
        db: the SQLite store of the runs API and web UI (None: `.sredrill/sredrill.db`, opened on first use).
        allow_agents: glob patterns of agent specs the runs API may start beyond the built-in agents
            (`sredrill serve --allow-agent`; `agent_policy.py`).
        max_runs: runs of the runs API going on at once; one more answers 429 with `Retry-After`.
        episode_key: a secret that keys the task families' episodes, so a client cannot regenerate one from
            the public generator (an evaluation server); None: their public tasks (training). Ignored when
            `catalog` is given; never served.
        judge: the judge of eval runs the runs API starts when a request names none (`sredrill serve
            --judge-*`); its API key is sent only to its own `base_url`, never answered or stored.
        prices: a prices file, or the prices loaded from one (`sredrill serve --prices`): runs started here
            are priced as they run, and the runs the API and UI show are priced by it.

    Returns:
        The app; `app.state` holds `options`, `catalog`, `sessions` and `tool_registry`.

    Raises:
        MissingExtra: fastapi is not installed (the `server` extra).
        InputError: a bad option or a pack that cannot be loaded.
    """
    try:
        from fastapi import FastAPI, Request
        from fastapi.responses import Response
        from starlette.routing import WebSocketRoute
    except ImportError as exc:
        raise MissingExtra("`sredrill serve`", "server") from exc
    from sredrill.agents import ToolRegistry, tool_routes

    options = ServerOptions(
        max_sessions=max_sessions,
        idle_timeout_s=idle_timeout_s,
        token=token,
        loopback_only=loopback_only,
        packs=None if packs is None else tuple(str(p.name if isinstance(p, Pack) else p) for p in packs),
        evals=evals,
        allow_agents=AgentPolicy.of(allow_agents).patterns,
        runs_token=token if token is not None else (secrets.token_urlsafe(24) if loopback_only else None),
        max_runs=max_runs,
        judge=judge,
        prices=load_prices(os.fspath(prices)) if prices is not None and not isinstance(prices, Prices) else prices,
    )
    sessions = SessionStore(max_sessions=max_sessions, idle_timeout_s=idle_timeout_s)
    served = catalog if catalog is not None else TraceCatalog.load(packs=packs, episode_key=episode_key)
    service = EnvService(served, sessions)
    guard = Guard(token=token)
    mcp = McpHandler(service)
    routes = _Routes(service, mcp, guard)
    websocket = WebSocketEndpoint(service, mcp, guard)

    async def serve_http(scope: Scope, receive: Receive, send: Send,
                         route: Callable[[dict[bytes, bytes], bytes], Answer]) -> None:  # fmt: skip
        body = await _read_body(receive)
        await _send_answer(send, routes.answer(route, dict(scope["headers"]), body))

    fast_http: dict[tuple[str, str], Callable[[dict[bytes, bytes], bytes], Answer]] = {
        ("POST", "/reset"): routes.reset,
        ("POST", "/step"): routes.step,
        ("GET", "/state"): routes.state,
        ("POST", "/mcp"): routes.mcp_call,
    }
    if loopback_only:
        # Beyond loopback, `/schema` is a read route like `/tasks`: FastAPI's layers (the token on every route)
        # answer it, then the same function.
        fast_http[("GET", "/schema")] = routes.schema

    class EnvApp(FastAPI):
        """FastAPI, with the session routes and `/ws` answered before its middleware and routing."""

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            kind = scope["type"]
            if kind in ("http", "websocket"):
                # Every route, before anything else: a foreign Host (DNS rebinding) or Origin is refused.
                denied = foreign_denial(scope, loopback_only=loopback_only)
                if denied is not None:
                    await send_denied(scope, send, denied)
                    return
            if kind == "http":
                route = fast_http.get((scope["method"], scope["path"]))
                if route is not None:
                    await serve_http(scope, receive, send, route)
                    return
            elif kind == "websocket" and scope["path"] == "/ws":
                await websocket(scope, receive, send)
                return
            await super().__call__(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with reaping(sessions), serving_agent_routes(app):
            yield

    description = served.description
    app = EnvApp(
        title=f"sredrill environment server: {description.name}",
        version="1.0.0",
        description=description.description,
        lifespan=lifespan,
        docs_url=None,  # `mount_docs`: Swagger UI from the package, not a CDN
        redoc_url=None,
    )
    registry = ToolRegistry()
    app.state.options = options
    app.state.catalog = served
    app.state.sessions = sessions
    app.state.tool_registry = registry

    def _fixed(body: bytes) -> Callable[[], Awaitable[Any]]:
        async def answer() -> Any:
            return Response(content=body, media_type="application/json")

        return answer

    errors: dict[int | str, dict[str, Any]] = {
        400: {"model": ErrorBody, "description": "invalid action, task or session (with the allowed values)"},
        422: {"model": ErrorBody, "description": "a body that does not fit the request (FastAPI's detail)"},
        413: {"model": ErrorBody, "description": f"a body over {MAX_BODY_BYTES} bytes"},
        401: {"model": ErrorBody, "description": "missing or wrong token (--token)"},
        403: {"model": ErrorBody, "description": "Host or Origin refused"},
        503: {"model": ErrorBody, "description": "every session slot is taken"},
    }
    step_result: dict[int | str, dict[str, Any]] = {
        200: {"description": "{observation, reward, done, info}; X-Session-Id names the session"}
    }

    async def via_fastapi(request: Request, route: Callable[[dict[bytes, bytes], bytes], Answer]) -> Any:
        body = await request.body()
        answer = routes.answer(route, dict(request.scope["headers"]), body if len(body) <= MAX_BODY_BYTES else None)
        headers = {SESSION_HEADER: answer.session_id} if answer.session_id is not None else None
        return Response(content=answer.body, status_code=answer.status, media_type="application/json", headers=headers)

    @app.post(
        "/reset",
        tags=["environment"],
        summary="Start an episode",
        responses={**step_result, **errors},
        openapi_extra={
            "requestBody": {
                "required": False,
                "content": {"application/json": {"schema": ResetRequest.model_json_schema()}},
            }
        },
    )
    async def reset(request: Request) -> Any:
        """`{}` allowed. Without `X-Session-Id`: a new session, which becomes the default one."""
        return await via_fastapi(request, routes.reset)

    @app.post(
        "/step",
        tags=["environment"],
        summary="Apply one action",
        responses={**step_result, **errors},
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {"action": {"type": "object", "description": "see GET /schema"}},
                            "required": ["action"],
                            "additionalProperties": False,
                        }
                    }
                },
            }
        },
    )
    async def step(request: Request) -> Any:
        """On the session named by `X-Session-Id`, or the default one."""
        return await via_fastapi(request, routes.step)

    @app.get("/state", tags=["environment"], summary="The session's state", responses=errors)
    async def state(request: Request) -> Any:
        return await via_fastapi(request, routes.state)

    @app.get(
        "/schema",
        tags=["info"],
        summary="JSON Schemas of the action (the session's episode's, when it has one), the observation and the state",
        responses=errors,
    )
    async def schema(request: Request) -> Any:
        return await via_fastapi(request, routes.schema)

    @app.post("/mcp", tags=["environment"], summary="JSON-RPC: tools/list, tools/call, openenv/session/*")
    async def mcp_route(request: Request) -> Any:
        return await via_fastapi(request, routes.mcp_call)

    for path, body, summary in (
        ("/health", service.health_json, 'Always {"status": "healthy"} while the server runs'),
        ("/metadata", service.metadata_json, "Name, description and version"),
        ("/tasks", service.tasks_json, "Every task served; the first is the default one"),
    ):
        app.add_api_route(path, _fixed(body), methods=["GET"], tags=["info"], summary=summary)

    index_body = _index(description.name)

    @app.get("/", include_in_schema=False)
    async def index(request: Request) -> Any:
        """The routes; `/?token=T` (the link `sredrill serve` prints) goes on to the UI, which keeps the token."""
        from fastapi.responses import RedirectResponse

        if "token" in request.query_params:
            return RedirectResponse("/ui?" + request.url.query, status_code=303)
        # A browser (it asks for HTML first) goes to the UI; an API client gets the routes as JSON.
        if request.headers.get("accept", "").split(",")[0].strip().startswith("text/html"):
            return RedirectResponse("/ui", status_code=303)
        return Response(content=index_body, media_type="application/json")

    _mount_error_handlers(app)
    from sredrill.server.docs import mount_docs

    mount_docs(app)

    # A plain ASGI endpoint (not a function), so Starlette hands it the raw connection, as the fast path does.
    app.router.routes.append(WebSocketRoute("/ws", websocket))

    app.include_router(tool_routes(registry))
    mount_agent_routes(app, registry)
    from sredrill.server.web import mount_web

    mount_web(app, options, db=db)  # the runs API (/api/...) and the web UI (/ui/...)
    return app


def _mount_error_handlers(app: "FastAPI") -> None:
    """Errors raised through FastAPI's own routes answered as the session routes answer theirs (`detail`)."""
    from fastapi.responses import Response

    def answer(status: int, body: ErrorBody, headers: dict[str, str] | None = None) -> Response:
        content = body.__pydantic_serializer__.to_json(body, exclude_none=True)
        return Response(content=content, status_code=status, media_type="application/json", headers=headers)

    async def too_deep(_: Any, exc: Exception) -> Response:
        # A JSON body nested deeper than Python's parser recurses (e.g. `await request.json()` on 100k `[`).
        msg = "JSON nested too deeply to parse: flatten the document"
        return answer(400, error_body("json_invalid", ["body"], msg))

    async def busy(_: Any, exc: Exception) -> Response:
        assert isinstance(exc, RunCapacityError)
        error = error_body("too_many_runs", ["body"], str(exc), hint=f"retry after {exc.retry_after_s} s")
        return answer(429, error, {"Retry-After": str(exc.retry_after_s)})

    app.add_exception_handler(RecursionError, too_deep)
    app.add_exception_handler(RunCapacityError, busy)


_ROUTES: Final = (
    "POST /reset", "POST /step", "GET /state", "GET /health", "GET /metadata", "GET /schema", "GET /tasks",
    "POST /mcp", "WS /ws", "GET /docs",
)  # fmt: skip


def _index(name: str) -> bytes:
    return json.dumps({"name": name, "routes": list(_ROUTES)}).encode()
