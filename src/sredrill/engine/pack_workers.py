"""Pack workers: a pack run's episodes played in N worker processes (`sredrill run --workers N`), so grading and a
built-in agent's reasoning, which are CPU-bound, use N cores.

Each worker gets the run's plan (JSON, as the store keeps it) and builds the same tests from it that the driver
did (`choose_packs`: test ids are the plan's, wherever it is expanded), with its own agent and toolsets; the
driver sends it a test id and an attempt, as it sends a body worker (`BodyWorkers`, whose driver side this
reuses). The driver keeps scheduling, retries, storage and reporting. The workers grade, so they hold the
scenarios and answer keys: they are never given to an agent, and the agents they start run under the run's
isolation, as the driver's would.
"""

from __future__ import annotations

import contextlib
import gc
from dataclasses import replace
from typing import Any

from sredrill.errors import InputError
from sredrill.workers import Ask, attach_worker_data

from .body_workers import BodyHandler, PackInit, WorkerHooks, policy_of

__all__ = ["PackHandler"]


class PackHandler(BodyHandler):
    """A body worker whose tests are a plan's episodes: `init_plan` once, then `run` requests as `BodyHandler`."""

    def __init__(self) -> None:
        super().__init__()
        self._open = contextlib.AsyncExitStack()

    async def handle(self, body: Any, ask: Ask) -> Any:
        if isinstance(body, dict) and body.get("op") == "init_plan":
            return await self._init_plan(PackInit.model_validate(body))
        return await super().handle(body, ask)

    async def _init_plan(self, init: PackInit) -> dict[str, Any]:
        from sredrill.agents import ToolHost, needs_tool_server
        from sredrill.traces import SpanCollector

        from .config import Settings
        from .launch import choose_packs
        from .plan import PackSelection, RunPlan

        # Workers of their own would start workers again: here the plan plays in this process.
        plan = RunPlan.model_validate(init.plan).model_copy(update={"workers": 1, "executor": "local"})
        assert isinstance(plan.selection, PackSelection)
        settings = Settings(agent=plan.agent, base_url=init.base_url, api_key=init.api_key)
        policy = policy_of(init.isolation)
        assert policy is not None  # the driver passes the run's, resolved
        try:
            chosen = await choose_packs(plan, plan.selection, settings, None)
            opened = await self._open.enter_async_context(chosen.open(init.run_id, chosen.tests, policy))
        except InputError as exc:  # raised again by the driver, with the same fields: a usage error
            fields: dict[str, object] = {"class": type(exc).__name__, "message": exc.message, "path": exc.path}
            fields |= {"field": exc.field, "allowed": exc.allowed, "hint": exc.hint}
            attach_worker_data(exc, fields)
            raise
        agent = opened.runtime.agent
        spans = SpanCollector()
        tool_host = (
            ToolHost(spans=spans, unix_path=getattr(agent, "tools_socket", None)) if needs_tool_server(agent) else None
        )
        self._runtime = replace(opened.runtime, spans=spans, tool_host=tool_host)
        self._tests = {t.id: t for t in chosen.tests}
        self._hooks = WorkerHooks(list(chosen.tests))
        gc.freeze()  # the packs and the agent live as long as this worker: keep full collections off them
        return {"tests": len(self._tests)}
