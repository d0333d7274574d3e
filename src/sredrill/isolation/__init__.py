"""Isolation: keeping an agent's process away from the grader's data (DESIGN §11.3).

Levels (`sandbox`, `process`, `none`, and `auto`) resolve once per run to an `IsolationPolicy`; connectors and
workers take from it the agent's environment (`agent_environment`) and, at sandbox level, the bwrap command that
wraps the agent (`Sandbox.command`). `python -m sredrill.isolation.forward` is the in-sandbox forwarder from
127.0.0.1 to the tool server's Unix socket.

Examples:
    >>> policy = resolve_isolation("auto", masked=[pack_root])
    >>> env = agent_environment(policy, os.environ, {"SREDRILL_TOOLS_URL": url})
    >>> argv = Sandbox(policy).command(["python", "agent.py"], workdir=workdir)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sredrill.isolation.environment import agent_environment
    from sredrill.isolation.levels import (
        AgentNetwork,
        Isolation,
        IsolationPolicy,
        IsolationUnavailable,
        recorded_level,
        resolve_isolation,
        sandbox_problem,
    )
    from sredrill.isolation.sandbox import Sandbox, ToolsBridge

__all__ = [
    "AgentNetwork",
    "Isolation",
    "IsolationPolicy",
    "IsolationUnavailable",
    "Sandbox",
    "ToolsBridge",
    "agent_environment",
    "recorded_level",
    "resolve_isolation",
    "sandbox_problem",
]

# Resolved on first use: `python -m sredrill.isolation.forward` starts in every sandboxed run and imports this
# package first, so it must not pay for the rest of it (about 35 ms).
_LAZY = {
    **dict.fromkeys(("agent_environment",), "sredrill.isolation.environment"),
    **dict.fromkeys(("Sandbox", "ToolsBridge"), "sredrill.isolation.sandbox"),
    **dict.fromkeys(
        (
            "AgentNetwork",
            "Isolation",
            "IsolationPolicy",
            "IsolationUnavailable",
            "recorded_level",
            "resolve_isolation",
            "sandbox_problem",
        ),
        "sredrill.isolation.levels",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sredrill.isolation' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
