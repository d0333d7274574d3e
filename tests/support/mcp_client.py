"""An MCP client session on a run's `mcp_url`, through the official `mcp` SDK, as an agent would open one."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any


@contextlib.asynccontextmanager
async def mcp_session(url: str, token: str) -> AsyncIterator[Any]:
    """An initialized `mcp.ClientSession` on `url`, sending `Authorization: Bearer <token>`."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
