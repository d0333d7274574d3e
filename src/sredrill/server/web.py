"""The runs API and the web UI mounted on `sredrill serve`'s app (one call from `create_app`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sredrill.server.agent_policy import AgentPolicy
from sredrill.server.gate import RunsGate, TokenEverywhere
from sredrill.server.live import RunLauncher
from sredrill.server.runs_api import runs_router

if TYPE_CHECKING:
    from fastapi import FastAPI

    from sredrill.server.options import ServerOptions
    from sredrill.store import Store

__all__ = ["mount_web"]

_STOP_TIMEOUT_S: Final = 10.0


class _StoreOpener:
    """Opens the store on first use, so a server that never serves a run creates no database file."""

    def __init__(self, path: str | Path) -> None:
        self._path = path
        self._store: Store | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Store:
        with self._lock:
            if self._store is None:
                from sredrill.store import Store

                self._store = Store(self._path)
            return self._store


def mount_web(app: FastAPI, options: ServerOptions, *, db: str | os.PathLike[str] | None) -> None:
    """Add the runs API (`/api/…`) and the web UI (`/ui/…`) to `app`.

    Args:
        app: the server's app.
        options: what the server was started with (token, loopback, packs, evals).
        db: the SQLite store (None: `.sredrill/sredrill.db`).
    """
    from sredrill.server.ui.routes import ui_router
    from sredrill.store import DEFAULT_DB_PATH

    open_store = _StoreOpener(Path(db) if db is not None else DEFAULT_DB_PATH)
    launcher = RunLauncher(max_running=options.max_runs)
    gate = RunsGate(token=options.runs_token)
    app.state.runs = launcher
    if not options.loopback_only and options.token is not None:
        app.add_middleware(TokenEverywhere, gate=gate)
    app.include_router(
        runs_router(
            open_store=open_store,
            launcher=launcher,
            gate=gate,
            packs=options.packs,
            evals=options.evals,
            agents=AgentPolicy(options.allow_agents),
            judge=options.judge,
            prices=options.prices,
        )
    )
    app.include_router(ui_router(open_store=open_store, launcher=launcher, gate=gate, app=app))

    # When the server stops (Ctrl-C), runs still going are cancelled and their finished results flushed to the
    # store, where `sredrill run --resume RUN` finds them: the app's own lifespan, wrapped.
    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(served: Any) -> AsyncIterator[Any]:
        async with inner(served) as state:
            try:
                yield state
            finally:
                await asyncio.to_thread(launcher.cancel_all, timeout_s=_STOP_TIMEOUT_S)

    app.router.lifespan_context = lifespan
