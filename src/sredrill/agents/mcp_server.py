"""MCP tools: each agent run's tools through the official `mcp` SDK, streamable HTTP, at `{mcp_url}`.

DESIGN §4.1: the same tools, registry and bearer token as the HTTP tool routes (`tool_server.py`), so an agent
may use either transport, or both, and its trajectory does not tell them apart:

    POST /runs/{run_id}/mcp     (streamable HTTP, JSON responses, stateless: no session to keep)

Authorization happens before the MCP SDK sees the request, with the registry's own check: 401 without a
bearer token, 403 with another run's token, 404 for a run that has ended. A tool call lands on the run's
`Recorder` through `Recorder.call_tool`; a rejected call (`ToolError`) is an MCP tool result with
`isError: true` and the message `"<code>: <message>"`, so the agent's model reads why.

Examples:
    >>> endpoint = McpEndpoint(registry)
    >>> await endpoint.start()                       # the SDK's session manager, on a task of its own
    >>> app.add_route(MCP_PATH, endpoint, methods=["GET", "POST", "DELETE"])
    >>> await endpoint.stop()
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
from typing import TYPE_CHECKING, Any, Final

from sredrill.errors import MissingExtra, StateError
from sredrill.text import REPLACED_NOTE, scrub_json
from sredrill.trajectory import ToolError

from .tool_registry import Denied

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from .tool_registry import Registration, ToolRegistry

__all__ = ["MCP_PATH", "McpEndpoint", "mcp_installed"]

logger = logging.getLogger(__name__)

MCP_PATH: Final = "/runs/{run_id}/mcp"
"""Where a run's MCP endpoint lives, below the server's base URL (a Starlette path with `run_id`)."""

_SCOPE_KEY: Final = "sredrill.run"
"""The ASGI scope key that carries the authorized run's registration from the route to the MCP handlers."""


def mcp_installed() -> bool:
    """True when the `mcp` extra is installed; found without importing it (the SDK takes about 0.4 s)."""
    return all(importlib.util.find_spec(name) is not None for name in ("mcp", "mcp_types"))


def _denied_response(status: int, code: str, message: str) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


class McpEndpoint:
    """An ASGI app serving every registered run's tools over MCP; mount it at `MCP_PATH`.

    One per `ToolRegistry` (the engine's tool server, or `sredrill serve`). `start` runs the SDK's session
    manager on a task of its own, because its task group must be entered and left by one task, while the
    servers that mount this endpoint start and stop from whichever task needs them.

    Raises:
        MissingExtra: the `mcp` extra is not installed.
    """

    def __init__(self, registry: ToolRegistry) -> None:
        try:
            import mcp_types as types
            from mcp.server.lowlevel.server import Server
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
            from mcp.server.transport_security import TransportSecuritySettings
        except ImportError as exc:
            raise MissingExtra("serving tools over MCP", "mcp") from exc
        self._registry = registry
        self._types = types

        server: Any = Server(
            "sredrill",
            instructions="The tools of one sredrill agent run; the bearer token chooses the run.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        # Stateless with JSON answers: a tool call is one request and one response, nothing to resume, and
        # the run's token (checked per request in `__call__`) is the only state. DNS-rebinding protection is
        # the servers' own job (loopback binding, `sredrill serve`'s Host/Origin checks), and a browser cannot
        # forge the bearer token anyway.
        self._manager = StreamableHTTPSessionManager(
            app=server,
            json_response=True,
            stateless=True,
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    def __repr__(self) -> str:
        return f"McpEndpoint({'running' if self.is_running else 'stopped'}, {len(self._registry)} run(s))"

    @property
    def is_running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Start the SDK's session manager; requests are answered once this returns.

        Raises:
            StateError: already started (the SDK's manager runs once per instance).
        """
        if self._task is not None:
            raise StateError("the MCP endpoint is already started: make a new McpEndpoint to serve again")
        ready = asyncio.Event()

        async def serve() -> None:
            async with self._manager.run():
                ready.set()
                await self._stopping.wait()

        self._task = asyncio.create_task(serve(), name="sredrill-mcp")
        waiter = asyncio.create_task(ready.wait())
        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self._task.done():
            self._task.result()  # the manager failed to start: raise why
            raise StateError("the MCP session manager stopped while starting")

    async def stop(self) -> None:
        """Stop the session manager, cancelling MCP requests still in flight."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping.set()
        await task

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        run_id = scope.get("path_params", {}).get("run_id", "")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        access = self._registry.authorize(run_id, headers.get("authorization"))
        if isinstance(access, Denied):
            await _denied_response(access.status, access.code, access.message)(scope, receive, send)
            return
        if not self.is_running:
            response = _denied_response(503, "unavailable", "the MCP endpoint is not started; retry shortly")
            await response(scope, receive, send)
            return
        scope[_SCOPE_KEY] = access
        await self._manager.handle_request(scope, receive, send)

    # -- MCP handlers (the SDK calls them with the HTTP request whose scope carries the run) --------------

    def _run_of(self, ctx: Any) -> Registration:
        request = ctx.request
        if request is None or _SCOPE_KEY not in request.scope:
            # Only reachable if the SDK stopped passing the HTTP request to handlers: fail loudly, not open.
            raise StateError("an MCP request arrived without its authorized run")
        run: Registration = request.scope[_SCOPE_KEY]  # put there by __call__, from the registry
        return run

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        types = self._types
        run = self._run_of(ctx)
        tools = [
            types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema)
            for spec in run.toolset.specs()
        ]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        types = self._types
        run = self._run_of(ctx)
        # The SDK's parser refuses lone surrogates already; arguments reach here from other transports too.
        args, replaced = scrub_json(dict(params.arguments or {}))
        try:
            result = await run.recorder.call_tool(run.toolset, params.name, args)
        except ToolError as exc:
            text = f"{exc.code}: {exc.message}"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        except Exception as exc:
            # The server's edge (STYLE #16), as on the HTTP route: the agent reads that the tool crashed, and the
            # traceback goes to the log; the call is already recorded as failed on the trajectory.
            logger.exception("MCP tool %r failed", params.name)
            text = f"tool_failed: tool {params.name!r} failed: {type(exc).__name__}: {exc}"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        text = json.dumps(result, separators=(",", ":"))
        # structured_content must be an object: the result sits under "result", as in the HTTP route's body.
        structured: dict[str, Any] = {"result": result}
        if replaced:
            structured["notes"] = [REPLACED_NOTE]
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)
