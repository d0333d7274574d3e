"""The agent runs whose tools are being served, by run id, and who may call them (a run's bearer token).

Shared by the HTTP routes (`tool_server.py`) and the MCP endpoint (`mcp_server.py`), which serve the same
registry; it lives apart from both so neither imports the other for it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from sredrill.errors import StateError
from sredrill.trajectory import Recorder, Toolset

__all__ = ["Denied", "Registration", "ToolRegistry"]


@dataclass(frozen=True, slots=True)
class Registration:
    toolset: Toolset
    recorder: Recorder
    token: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class Denied:
    status: int
    code: str
    message: str


class ToolRegistry:
    """The agent runs whose tools are being served: run id -> (toolset, recorder, token).

    One per server (the engine's run, or `sredrill serve`), never module-level. Registration and lookup are
    plain dictionary operations on the event loop's thread, so they need no lock.
    """

    def __init__(self) -> None:
        self._runs: dict[str, Registration] = {}

    def __len__(self) -> int:
        return len(self._runs)

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._runs

    def register(self, run_id: str, toolset: Toolset, recorder: Recorder) -> str:
        """Serve `toolset` for `run_id`, recording on `recorder`; returns a fresh random bearer token.

        Raises:
            StateError: `run_id` is already registered (each agent run has its own id).
        """
        if run_id in self._runs:
            raise StateError(f"agent run {run_id!r} already has its tools served: unregister it first")
        token = secrets.token_urlsafe(32)
        self._runs[run_id] = Registration(toolset=toolset, recorder=recorder, token=token)
        return token

    def unregister(self, run_id: str) -> None:
        """Stop serving `run_id`'s tools; later requests get 404 `unknown_run`. Unknown ids are ignored."""
        self._runs.pop(run_id, None)

    def authorize(self, run_id: str, authorization: str | None) -> Registration | Denied:
        """The run's registration when `authorization` is `Bearer <its token>`, else why not."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return Denied(
                401,
                "unauthorized",
                "send the run's token as 'Authorization: Bearer <token>' (the Task's `token`, or "
                "SREDRILL_RUN_TOKEN for a cmd: agent)",
            )
        entry = self._runs.get(run_id)
        if entry is None:
            return Denied(
                404,
                "unknown_run",
                f"no agent run {run_id!r} is being served: it has ended, or the URL is not the Task's tools_url",
            )
        if not secrets.compare_digest(token.strip().encode(), entry.token.encode()):
            return Denied(403, "forbidden", f"this token does not give access to run {run_id!r}")
        return entry
