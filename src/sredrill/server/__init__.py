"""The environment server (DESIGN §6): OpenEnv's protocol over sredrill's environment, natively.

`sredrill serve` runs it; `create_app()` builds it for your own ASGI server; `ServerThread` runs it in the
background (tests, notebooks, `envs/trace_env/inference.py`). `docs/server.md` documents the routes, sessions,
the WebSocket and MCP protocols and the security defaults.

Examples:
    >>> from sredrill.server import ServerThread, create_app
    >>> with ServerThread(create_app(packs=())) as server:
    ...     r = httpx.post(f"{server.url}/reset", json={"task_id": "easy_cpu_spike", "seed": 0})
    ...     sid = r.headers["X-Session-Id"]
    ...     httpx.post(f"{server.url}/step", json={"action": {"action_type": "wait"}},
    ...                headers={"X-Session-Id": sid}).json()["info"]["step"]
    1

Importing this package is cheap: fastapi and uvicorn load when an app is created or served (the `server`
extra; without it, `MissingExtra` says how to install it).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_IDLE_TIMEOUT_S",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_PORT",
    "CapacityError",
    "EnvCatalog",
    "EnvDescription",
    "McpTool",
    "ServerOptions",
    "ServerThread",
    "SessionEnv",
    "SessionStore",
    "TraceCatalog",
    "create_app",
    "is_loopback",
    "read_key_file",
    "serve",
]

_LAZY = {
    "DEFAULT_HOST": "sredrill.server.run",
    "DEFAULT_PORT": "sredrill.server.run",
    "ServerThread": "sredrill.server.run",
    "serve": "sredrill.server.run",
    "DEFAULT_IDLE_TIMEOUT_S": "sredrill.server.options",
    "DEFAULT_MAX_SESSIONS": "sredrill.server.options",
    "ServerOptions": "sredrill.server.options",
    "create_app": "sredrill.server.app",
    "CapacityError": "sredrill.server.sessions",
    "SessionStore": "sredrill.server.sessions",
    "EnvCatalog": "sredrill.server.catalog",
    "EnvDescription": "sredrill.server.catalog",
    "McpTool": "sredrill.server.catalog",
    "SessionEnv": "sredrill.server.catalog",
    "TraceCatalog": "sredrill.server.catalog",
    "is_loopback": "sredrill.server.security",
    # An evaluation server's episode key (`create_app(episode_key=...)`) is read with the families' reader.
    "read_key_file": "sredrill.incidents.families.generate",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sredrill.server' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
