"""Agents: the protocol, connectors (`py:`, `cmd:`, …), baselines and the reference agent."""

from sredrill.agents.protocol import Agent, AgentReply, ContextItem, Task

__all__ = ["Agent", "AgentReply", "ContextItem", "Task"]
