"""Sessions: one environment each, a capacity, an idle timeout, and which one is the HTTP default.

DESIGN §6. A WebSocket connection is one session for its lifetime. Over HTTP, `POST /reset` without an
`X-Session-Id` header opens a new session, answers its id in `X-Session-Id`, and makes it the *default*
session: a later request without the header uses it, so `POST /reset {}` then `POST /step` just works. A
request with the header uses that session (and a reset with it restarts that session's episode).

Capacity (`max_sessions`, default 64) counts every session. When it is reached, opening one more first
releases the oldest HTTP session that no request ever addressed by its id (its client cannot come back to
it once a newer header-less reset made another session the default); if there is none, opening fails with
`CapacityError` (HTTP 503, WebSocket `CAPACITY_REACHED`). A session idle for `idle_timeout_s` (default
300 s) is closed by the reaper; a WebSocket connection's session closes its socket too.

Everything here runs on the server's event loop thread, so plain dictionaries need no lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from enum import StrEnum

from sredrill.errors import InputError, SredrillError
from sredrill.server.catalog import SessionEnv

__all__ = ["CapacityError", "Session", "SessionKind", "SessionStore"]

logger = logging.getLogger(__name__)

_REAP_INTERVAL_BOUNDS_S = (0.01, 30.0)
"""The reaper looks every quarter of the idle timeout, within these bounds."""


class SessionKind(StrEnum):
    HTTP = "http"
    WEBSOCKET = "websocket"
    MCP = "mcp"
    """Opened by the JSON-RPC method `openenv/session/create` on `POST /mcp`; used like an HTTP session."""


class CapacityError(SredrillError):
    """Raised when every session slot is taken; the message says how to free one.

    Attributes:
        active: sessions open now.
        limit: the server's `max_sessions`.
    """

    def __init__(self, active: int, limit: int, idle_timeout_s: float) -> None:
        self.active = active
        self.limit = limit
        super().__init__(
            f"server at capacity: {active}/{limit} sessions active; close one (a WebSocket client closes its "
            f"connection, openenv/session/close on /mcp) or wait: idle sessions close after {idle_timeout_s:g} s "
            "(start the server with --max-sessions N for more)"
        )


class Session:
    """One client's environment and bookkeeping. Mutable; owned by the `SessionStore`."""

    __slots__ = ("addressed", "closer", "env", "id", "kind", "last_active")

    def __init__(self, session_id: str, kind: SessionKind, *, now: float, addressed: bool) -> None:
        self.id = session_id
        self.kind = kind
        self.env: SessionEnv | None = None
        """The environment of the session's task; None until its first reset."""
        self.last_active = now
        self.addressed = addressed
        """True once a request named this session by its id (or for a WebSocket): never released for room."""
        self.closer: Callable[[str], Awaitable[None]] | None = None
        """For a WebSocket session: closes the connection (with a reason) when the reaper expires the session."""

    def __repr__(self) -> str:
        task = self.env.task_id if self.env is not None else None
        return f"Session({self.id!r}, {self.kind}, task={task!r})"

    def replace_env(self, env: SessionEnv) -> None:
        old, self.env = self.env, env
        if old is not None:
            old.close()


class SessionStore:
    """The open sessions of one server.

    Args:
        max_sessions: the capacity (≥ 1).
        idle_timeout_s: a session unused this long is closed by `reap` (> 0).
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(
        self, *, max_sessions: int, idle_timeout_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if max_sessions < 1:
            raise InputError(f"max_sessions must be at least 1, got {max_sessions}", field="max_sessions")
        if not idle_timeout_s > 0:
            raise InputError(f"idle_timeout_s must be positive, got {idle_timeout_s}", field="idle_timeout_s")
        self.max_sessions = max_sessions
        self.idle_timeout_s = idle_timeout_s
        self.clock = clock
        self._sessions: dict[str, Session] = {}
        self._default: str | None = None

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    @property
    def default(self) -> Session | None:
        """The HTTP default session (the latest opened by a reset without `X-Session-Id`), if still open."""
        return self._sessions.get(self._default) if self._default is not None else None

    def open(self, kind: SessionKind, *, default: bool = False) -> Session:
        """Open a session; `default=True` makes it the HTTP default (a header-less reset).

        Raises:
            CapacityError: every slot is taken by a session that cannot be released.
        """
        if len(self._sessions) >= self.max_sessions and not self._release_one():
            raise CapacityError(len(self._sessions), self.max_sessions, self.idle_timeout_s)
        session_id = secrets.token_urlsafe(12)
        session = Session(session_id, kind, now=self.clock(), addressed=not default)
        self._sessions[session_id] = session
        if default:
            self._default = session_id
        return session

    def get(self, session_id: str) -> Session:
        """The session with this id, marked as addressed and active.

        Raises:
            InputError: no such session (closed, expired, or never opened); says how to open one.
        """
        session = self._sessions.get(session_id)
        if session is None:
            raise InputError(
                f"no session {session_id!r}: it was closed, or idle for more than {self.idle_timeout_s:g} s, "
                "or never opened",
                field="X-Session-Id",
                hint="open a session with POST /reset without an X-Session-Id header; its id comes back in "
                "the X-Session-Id response header",
            )
        session.addressed = True
        session.last_active = self.clock()
        return session

    def touch(self, session: Session) -> None:
        session.last_active = self.clock()

    def close(self, session_id: str) -> Session | None:
        """Close one session and its environment; unknown ids are ignored."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return None
        if self._default == session_id:
            self._default = None
        if session.env is not None:
            session.env.close()
            session.env = None
        return session

    def close_all(self) -> None:
        for session_id in list(self._sessions):
            self.close(session_id)

    def idle(self) -> list[Session]:
        """Sessions unused for longer than the idle timeout."""
        limit = self.clock() - self.idle_timeout_s
        return [s for s in self._sessions.values() if s.last_active < limit]

    async def reap(self) -> int:
        """Close every idle session (a WebSocket session's connection too); returns how many."""
        expired = self.idle()
        for session in expired:
            self.close(session.id)
            if session.closer is not None:
                await session.closer(f"session idle for more than {self.idle_timeout_s:g} s")
        if expired:
            logger.info("closed %d idle session(s)", len(expired))
        return len(expired)

    async def run_reaper(self) -> None:
        """Reap idle sessions until cancelled (the server runs this as a task while it serves)."""
        lo, hi = _REAP_INTERVAL_BOUNDS_S
        interval = min(max(self.idle_timeout_s / 4, lo), hi)
        while True:
            await asyncio.sleep(interval)
            await self.reap()

    def _release_one(self) -> bool:
        """Close the least recently used HTTP session nobody addressed by id; False if there is none."""
        candidates = [s for s in self._sessions.values() if not s.addressed and s.kind is SessionKind.HTTP]
        if not candidates:
            return False
        oldest = min(candidates, key=lambda s: s.last_active)
        logger.info("released unaddressed session %s to make room", oldest.id)
        self.close(oldest.id)
        return True


@contextlib.asynccontextmanager
async def reaping(store: SessionStore) -> AsyncIterator[None]:
    """Run the store's reaper for the duration of a block (the app's lifespan)."""
    task = asyncio.create_task(store.run_reaper(), name="sredrill-session-reaper")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        store.close_all()
