"""Agents: the protocol, connectors (`py:`, `cmd:`, …), baselines and the reference agent."""

from sredrill.agents.llm import ChatClient, ChatReply, ChatToolCall, LLMError, LLMUnavailable
from sredrill.agents.protocol import Agent, AgentReply, ContextItem, Task
from sredrill.agents.spec import AgentSpec, ConnectOptions, parse_agent_spec, resolve_agent

__all__ = [
    "Agent",
    "AgentReply",
    "AgentSpec",
    "ChatClient",
    "ChatReply",
    "ChatToolCall",
    "ConnectOptions",
    "ContextItem",
    "LLMError",
    "LLMUnavailable",
    "Task",
    "parse_agent_spec",
    "resolve_agent",
]
