"""TRACE, sredrill's incident-response environment, as an OpenEnv package.

>>> from trace_env import TraceAction, TraceEnv
>>> async with TraceEnv(base_url="http://127.0.0.1:7860") as env:
...     result = await env.reset(task_id="easy_cpu_spike", seed=0)

The names load on first use: the server (`trace_env.server.app`) starts without importing openenv-core's
client side (and the many seconds of imports behind it).
"""

from typing import Any

__all__ = ["TraceAction", "TraceEnv", "TraceObservation", "TraceState"]


def __getattr__(name: str) -> Any:
    if name == "TraceEnv":
        from .client import TraceEnv

        return TraceEnv
    if name in __all__:
        from . import models

        return getattr(models, name)
    raise AttributeError(f"module 'trace_env' has no attribute {name!r}")
