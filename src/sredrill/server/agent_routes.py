"""The per-run routes for agents outside the process, in `sredrill serve`: MCP tools and the OTLP receiver.

The HTTP tool routes come from `agents.tool_routes`; this module adds the same registry's MCP endpoint at
`/runs/{run_id}/mcp` (DESIGN §4.1; `/mcp` stays OpenEnv's JSON-RPC), run for the app's lifetime, and the
OTLP/HTTP trace receiver at `POST /v1/traces` into `app.state.span_collector`: an agent run whose trace is
opened there (`SpanCollector.open`, whoever registers it in `app.state.tool_registry`) gets the spans its
agent exports; spans of any other trace are refused.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from sredrill.errors import MissingExtra

if TYPE_CHECKING:
    from fastapi import FastAPI

    from sredrill.agents import McpEndpoint, ToolRegistry

__all__ = ["mount_agent_routes", "serving_agent_routes"]

logger = logging.getLogger(__name__)


def mount_agent_routes(app: FastAPI, registry: ToolRegistry) -> None:
    """Add the MCP endpoint over `registry` (`app.state.mcp_endpoint`; None without `mcp`) and the OTLP receiver
    (into `app.state.span_collector`) to `app`."""
    from sredrill.agents import MCP_PATH, McpEndpoint
    from sredrill.traces import SpanCollector, otlp_routes

    collector = SpanCollector()
    app.state.span_collector = collector
    app.include_router(otlp_routes(collector))

    endpoint: McpEndpoint | None
    try:
        endpoint = McpEndpoint(registry)
    except MissingExtra:
        logger.info("the mcp extra is not installed: run tools are served over HTTP only")
        endpoint = None
    app.state.mcp_endpoint = endpoint
    if endpoint is not None:
        app.add_route(MCP_PATH, endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False)


@contextlib.asynccontextmanager
async def serving_agent_routes(app: FastAPI) -> AsyncIterator[None]:
    """Run what `mount_agent_routes` added for the duration of the block (the app's lifespan)."""
    endpoint: McpEndpoint | None = getattr(app.state, "mcp_endpoint", None)
    if endpoint is None:
        yield
        return
    await endpoint.start()
    try:
        yield
    finally:
        await endpoint.stop()
