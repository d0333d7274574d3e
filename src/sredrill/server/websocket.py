"""`WS /ws`: OpenEnv's WebSocket message protocol, as openenv-core 0.3.0 speaks it; one session per connection.

Client → server (JSON text frames):

    {"type": "reset", "data": {"task_id"?, "seed"?, "reward_mode"?}}   (task_id: a task or a task family)
    {"type": "step",  "data": {"action_type": …, "target"?, "value"?, "args"?}}   (the action itself, no wrapper)
    {"type": "state"}
    {"type": "mcp",   "data": <a JSON-RPC request>}
    {"type": "close"}

Server → client:

    {"type": "observation", "data": {"observation": {…}, "reward": …, "done": …, "info": {…}}}
    {"type": "state",       "data": {…}}
    {"type": "mcp",         "data": <the JSON-RPC response>}
    {"type": "error",       "data": {"message": …, "code": …, "errors"?, "allowed"?, "hint"?}}

Error codes are openenv-core's: `INVALID_JSON`, `UNKNOWN_TYPE`, `VALIDATION_ERROR` (a bad message, an
invalid action or an unknown task; the episode is unchanged), `EXECUTION_ERROR` (a step before any reset,
or after the episode ended), `CAPACITY_REACHED` (sent, then the connection closes), `SESSION_ERROR`. The
session closes with the connection, on `close`, or after the idle timeout (the server closes the socket).

It is a plain ASGI application: the app serves it before FastAPI's routing, so a step costs one JSON parse,
the environment's step and one serialisation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from enum import StrEnum
from typing import Any, Final

from pydantic import ValidationError

from sredrill.errors import InputError, StateError
from sredrill.server.mcp import McpHandler
from sredrill.server.security import Guard
from sredrill.server.service import EnvService, dump, with_notes
from sredrill.server.sessions import CapacityError, Session, SessionKind
from sredrill.server.wire import ResetRequest
from sredrill.text import parse_json

__all__ = ["WebSocketEndpoint", "WsErrorCode"]

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_TYPES: Final = ("reset", "step", "state", "mcp", "close")
_POLICY_VIOLATION: Final = 1008
_TRY_AGAIN_LATER: Final = 1013


class WsErrorCode(StrEnum):
    """openenv-core's WebSocket error codes."""

    INVALID_JSON = "INVALID_JSON"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    CAPACITY_REACHED = "CAPACITY_REACHED"
    FACTORY_ERROR = "FACTORY_ERROR"
    SESSION_ERROR = "SESSION_ERROR"


def _error(code: WsErrorCode, message: str, **details: Any) -> str:
    data = {"message": message, "code": code.value}
    data.update({k: v for k, v in details.items() if v is not None})
    return json.dumps({"type": "error", "data": data})


class _Connection:
    """One connection's send side; knows whether the socket is closed already."""

    __slots__ = ("closed", "send")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.closed = False

    async def close(self, code: int = 1000, reason: str = "") -> None:
        if not self.closed:
            self.closed = True
            await self.send({"type": "websocket.close", "code": code, "reason": reason[:120]})


class WebSocketEndpoint:
    """The `/ws` ASGI application of one server."""

    def __init__(self, service: EnvService, mcp: McpHandler, guard: Guard) -> None:
        self.service = service
        self.mcp = mcp
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        denied = self.guard.check(dict(scope["headers"]), write=True)
        if denied is not None:
            # Closing before accepting answers the handshake with HTTP 403.
            reason = denied.body.detail[0].msg[:120]
            await send({"type": "websocket.close", "code": _POLICY_VIOLATION, "reason": reason})
            return
        await send({"type": "websocket.accept"})
        connection = _Connection(send)
        store = self.service.sessions
        try:
            session = store.open(SessionKind.WEBSOCKET)
        except CapacityError as exc:
            await send(
                {
                    "type": "websocket.send",
                    "text": _error(WsErrorCode.CAPACITY_REACHED, str(exc), active_sessions=exc.active,
                                   max_sessions=exc.limit),
                }
            )  # fmt: skip
            await connection.close(_TRY_AGAIN_LATER, "server at capacity")
            return

        async def expire(reason: str) -> None:
            await connection.close(1000, reason)

        session.closer = expire
        try:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    connection.closed = True  # websocket.disconnect: the client is gone
                    break
                text = message.get("text")
                if text is None:
                    text = (message.get("bytes") or b"").decode("utf-8", errors="replace")
                store.touch(session)
                try:
                    reply, stop = self.answer(session, text)
                except Exception as exc:
                    # The server's edge (STYLE #16): a bug answers an error frame with its message and is
                    # logged with its traceback; the connection stays open for the next message.
                    logger.exception("internal error while answering a WebSocket message")
                    reply, stop = (
                        _error(WsErrorCode.EXECUTION_ERROR, f"internal error in sredrill (a bug): {exc!r}"),
                        False,
                    )
                if reply is not None and not connection.closed:
                    await send({"type": "websocket.send", "text": reply})
                if stop or connection.closed:
                    break
        finally:
            store.close(session.id)
            await connection.close()

    def answer(self, session: Session, text: str) -> tuple[str | None, bool]:
        """The reply to one message (None: no reply), and whether the session ends."""
        try:
            message, replaced = parse_json(text)
        except ValueError as exc:  # not JSON, or nested too deeply to parse
            return _error(WsErrorCode.INVALID_JSON, f"Invalid JSON: {exc}"), False
        if not isinstance(message, dict):
            return _error(WsErrorCode.VALIDATION_ERROR, "a message is a JSON object with a 'type'"), False
        kind = message.get("type")
        extra = sorted(set(message) - {"type", "data"})
        if extra:
            return _error(
                WsErrorCode.VALIDATION_ERROR, f"unknown message field(s) {extra}", allowed=["data", "type"]
            ), False
        data = message.get("data")
        try:
            if kind == "step":
                if not isinstance(data, dict):
                    return _error(
                        WsErrorCode.VALIDATION_ERROR,
                        "a step message's data is the action object",
                        hint='{"type": "step", "data": {"action_type": …}}',
                    ), False
                result = self.service.step(session, data)
                return '{"type":"observation","data":' + with_notes(dump(result), replaced).decode() + "}", False
            if kind == "reset":
                request = ResetRequest.model_validate(data if data is not None else {})
                result = self.service.reset(session, request)
                return '{"type":"observation","data":' + with_notes(dump(result), replaced).decode() + "}", False
            if kind == "state":
                return '{"type":"state","data":' + dump(self.service.state(session)).decode() + "}", False
            if kind == "close":
                return None, True
            if kind == "mcp":
                response = self.mcp.handle(data, session=lambda sid: self._mcp_session(session, sid), replaced=replaced)
                return (json.dumps({"type": "mcp", "data": response}) if response is not None else None), False
        except ValidationError as exc:
            errors = [
                {"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors(include_url=False)
            ]
            allowed = sorted(ResetRequest.model_fields)
            return _error(WsErrorCode.VALIDATION_ERROR, "Invalid message", errors=errors, allowed=allowed), False
        except StateError as exc:
            return _error(WsErrorCode.EXECUTION_ERROR, str(exc).replace("reset()", "reset"),
                          hint='send {"type": "reset", "data": {}} first'), False  # fmt: skip
        except InputError as exc:
            return _error(
                WsErrorCode.VALIDATION_ERROR, exc.render(), field=exc.field, allowed=exc.allowed, hint=exc.hint
            ), False
        return _error(WsErrorCode.UNKNOWN_TYPE, f"Unknown message type: {kind}", allowed=list(_TYPES)), False

    def _mcp_session(self, own: Session, session_id: str | None) -> Session | None:
        if session_id is None or session_id == own.id:
            return own
        return self.service.sessions.get(session_id)
