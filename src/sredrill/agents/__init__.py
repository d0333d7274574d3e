"""Agents: the protocol, connectors (`py:`, `cmd:`, …), baselines and the reference agent."""

from __future__ import annotations

from typing import Any

from sredrill.agents.host_origin import LOOPBACK_NAMES, ForeignRequest, foreign_request, foreign_scope
from sredrill.agents.protocol import Agent, AgentReply, ContextItem, Task
from sredrill.agents.spec import CONNECTORS, AgentSpec, ConnectOptions, parse_agent_spec, resolve_agent

__all__ = [
    "CONNECTORS",
    "LOOPBACK_NAMES",
    "MCP_PATH",
    "Agent",
    "AgentReply",
    "AgentSpec",
    "ChatClient",
    "ChatReply",
    "ChatToolCall",
    "ConnectOptions",
    "ContextItem",
    "ForeignRequest",
    "LLMError",
    "LLMUnavailable",
    "McpEndpoint",
    "Task",
    "ToolAccess",
    "ToolHost",
    "ToolRegistry",
    "ToolServer",
    "foreign_request",
    "foreign_scope",
    "needs_tool_server",
    "parse_agent_spec",
    "resolve_agent",
    "tool_routes",
]

# The LLM client imports httpx (about 0.3 s with its CLI's dependencies installed): loaded on first use,
# so resolving a `py:` or `cmd:` agent does not pay for it (STYLE #3).
_LAZY = {
    name: "sredrill.agents.llm" for name in ("ChatClient", "ChatReply", "ChatToolCall", "LLMError", "LLMUnavailable")
}
# The tool server's module is light (fastapi and uvicorn load when a server starts), but only runs with an
# agent outside this process need it.
_LAZY.update(
    {
        name: "sredrill.agents.tool_server"
        for name in ("ToolAccess", "ToolHost", "ToolServer", "needs_tool_server", "tool_routes")
    }
)
_LAZY["ToolRegistry"] = "sredrill.agents.tool_registry"
_LAZY.update({name: "sredrill.agents.mcp_server" for name in ("MCP_PATH", "McpEndpoint")})


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sredrill.agents' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
