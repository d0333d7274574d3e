"""`POST /mcp` (and the WebSocket `mcp` message): OpenEnv's JSON-RPC 2.0 over the environment's actions.

Methods, as openenv-core 0.3.0 serves them, plus MCP's handshake:

- `tools/list` (`session_id`?) → `{"tools": [{name, description, inputSchema}]}`: one tool per action type of
  the session's episode, its targets enumerated (a family's episode names its own topology's components;
  without a session or an episode: the first task's).
- `tools/call` (`name`, `arguments`, `session_id`?) → MCP's `CallToolResult`: `structuredContent` is the
  step's `{observation, reward, done, info}`; an action the environment rejects is `isError: true` with
  the message and the allowed values.
- `openenv/session/create` (`task_id`?, `seed`?) → `{"session_id", "reset": {…}}`: a session with its first
  episode started. `openenv/session/close` (`session_id`) → `{"session_id", "closed": true}`.
- `initialize`, `ping`: MCP's handshake answers.

A call acts on `params.session_id`, else the request's `X-Session-Id`, else the HTTP default session (over
WebSocket: the connection's session). Every answer is HTTP 200 with a JSON-RPC object, errors included
(`{}` → `-32600 Invalid Request`); a notification (a `notifications/…` method) gets no body (HTTP 202).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from enum import IntEnum
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from sredrill.errors import InputError, StateError
from sredrill.server.service import EnvService
from sredrill.server.sessions import CapacityError, Session, SessionKind
from sredrill.server.wire import ResetRequest
from sredrill.text import REPLACED_NOTE, parse_json

__all__ = ["MCP_PROTOCOL_VERSION", "JsonRpcCode", "McpHandler"]

logger = logging.getLogger(__name__)

MCP_PROTOCOL_VERSION: Final = "2025-06-18"
_METHODS: Final = (
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "openenv/session/create",
    "openenv/session/close",
)


class JsonRpcCode(IntEnum):
    """JSON-RPC 2.0's error codes (the ones this server answers)."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    SERVER_ERROR = -32000


class JsonRpcRequest(BaseModel):
    """One JSON-RPC 2.0 request."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    jsonrpc: Literal["2.0"]
    method: str
    params: dict[str, JsonValue] = {}
    id: str | int | None = None


class _Fault(Exception):
    """A JSON-RPC error to answer."""

    def __init__(self, code: JsonRpcCode, message: str, data: JsonValue = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def _error(code: JsonRpcCode, message: str, request_id: str | int | None, data: JsonValue = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": int(code), "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _input_fault(exc: InputError) -> _Fault:
    # JSON lists are invariant in their item type: the names are copied into a list of JSON values.
    allowed: list[JsonValue] | None = [*exc.allowed] if exc.allowed is not None else None
    return _Fault(JsonRpcCode.INVALID_PARAMS, exc.message, {"field": exc.field, "allowed": allowed, "hint": exc.hint})


class McpHandler:
    """Answers JSON-RPC requests over one server's `EnvService`."""

    def __init__(self, service: EnvService) -> None:
        self.service = service

    def handle_bytes(
        self, body: bytes, *, session: Callable[[str | None], Session | None]
    ) -> tuple[int, dict[str, Any] | None]:
        """Answer a raw request body: (HTTP status, response; None for a notification).

        The status is 200 for every JSON-RPC answer, errors included; a body that is not UTF-8 or nested too
        deeply to parse is refused like an oversized one, 400, with the JSON-RPC parse error and FastAPI's
        `detail` beside it.

        Args:
            body: the JSON-RPC request as received.
            session: finds the session a call acts on, given `params.session_id` (None when absent);
                returns None when there is none (raises `InputError` for an unknown id).
        """
        try:
            payload, replaced = parse_json(body) if body.strip() else (None, False)
        except json.JSONDecodeError as exc:
            return 200, _error(JsonRpcCode.PARSE_ERROR, f"Parse error: the body is not JSON ({exc})", None)
        except ValueError as exc:  # parse_json's: not UTF-8, or nested too deeply
            answer = _error(JsonRpcCode.PARSE_ERROR, f"Parse error: {exc}", None)
            answer["detail"] = [{"type": "json_invalid", "loc": ["body"], "msg": str(exc)}]
            return 400, answer
        return 200, self.handle(payload, session=session, replaced=replaced)

    def handle(
        self, payload: Any, *, session: Callable[[str | None], Session | None], replaced: bool = False
    ) -> dict[str, Any] | None:
        """Answer a parsed request; None for a notification.

        `replaced`: lone surrogates in the request were replaced with U+FFFD (a tool call's result says so).
        """
        request_id = payload.get("id") if isinstance(payload, dict) else None
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            request_id = None
        try:
            request = JsonRpcRequest.model_validate(payload)
        except ValidationError as exc:
            errors: list[JsonValue] = [{"loc": [*e["loc"]], "msg": e["msg"]} for e in exc.errors(include_url=False)]
            return _error(
                JsonRpcCode.INVALID_REQUEST,
                'Invalid Request: send {"jsonrpc": "2.0", "method": …, "params": {…}, "id": …}',
                request_id,
                {"errors": errors, "methods": list(_METHODS)},
            )
        if request.method.startswith("notifications/"):
            return None
        try:
            result = self._dispatch(request, session)
        except _Fault as fault:
            return _error(fault.code, fault.message, request.id, fault.data)
        if replaced and isinstance(result, dict):
            structured = result.get("structuredContent")
            if isinstance(structured, dict):
                structured["notes"] = [REPLACED_NOTE]
            else:
                result["notes"] = [REPLACED_NOTE]
        return {"jsonrpc": "2.0", "id": request.id, "result": result}

    def _dispatch(self, request: JsonRpcRequest, find: Callable[[str | None], Session | None]) -> Any:
        params = request.params
        method = request.method
        if method == "initialize":
            return {
                "protocolVersion": MCP_PROTOCOL_VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": f"sredrill-{self.service.catalog.description.name}", "version": "1"},
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            session = self._find(find, params)
            tools = self.service.catalog.tools(session.env if session is not None else None)
            return {"tools": [t.model_dump(mode="json") for t in tools]}
        if method == "tools/call":
            return self._call(params, find)
        if method == "openenv/session/create":
            return self._create(params)
        if method == "openenv/session/close":
            session_id = params.get("session_id")
            if not isinstance(session_id, str) or not session_id:
                raise _Fault(JsonRpcCode.INVALID_PARAMS, "Invalid params: 'session_id' (a string) is required")
            if self.service.sessions.close(session_id) is None:
                raise _Fault(JsonRpcCode.INVALID_PARAMS, f"Unknown session_id: {session_id}")
            return {"session_id": session_id, "closed": True}
        raise _Fault(JsonRpcCode.METHOD_NOT_FOUND, f"Method not found: {method}", {"methods": list(_METHODS)})

    @staticmethod
    def _find(find: Callable[[str | None], Session | None], params: Mapping[str, Any]) -> Session | None:
        session_id = params.get("session_id")
        if session_id is not None and not isinstance(session_id, str):
            raise _Fault(JsonRpcCode.INVALID_PARAMS, "Invalid params: 'session_id' must be a string")
        try:
            return find(session_id)
        except InputError as exc:
            raise _input_fault(exc) from None

    def _call(self, params: Mapping[str, Any], find: Callable[[str | None], Session | None]) -> Any:
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if not isinstance(name, str) or not name:
            raise _Fault(JsonRpcCode.INVALID_PARAMS, "Missing 'name' in params: the tool (action type) to call")
        if not isinstance(arguments, dict):
            raise _Fault(JsonRpcCode.INVALID_PARAMS, "'arguments' must be an object")
        session = self._find(find, params)
        if session is None or session.env is None:
            return _tool_error(
                "no episode: start one first (POST /reset, the WebSocket reset message, or openenv/session/create)",
                {"type": "no_episode"},
            )
        try:
            action = self.service.catalog.tool_action(session.env, name, arguments)
        except InputError as exc:
            raise _input_fault(exc) from None
        try:
            result = self.service.step(session, action)
        except StateError as exc:
            message = str(exc).replace("reset()", "reset (POST /reset or openenv/session/create)")
            return _tool_error(message, {"type": "no_episode"})
        except InputError as exc:
            return _tool_error(
                exc.render(), {"type": "invalid_action", "field": exc.field, "allowed": exc.allowed, "hint": exc.hint}
            )
        data = result.model_dump(mode="json")
        return {
            "content": [{"type": "text", "text": json.dumps(data, separators=(",", ":"))}],
            "structuredContent": data,
            "isError": False,
        }

    def _create(self, params: Mapping[str, Any]) -> Any:
        try:
            request = ResetRequest.model_validate({k: v for k, v in params.items() if k != "_meta"})
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            raise _Fault(
                JsonRpcCode.INVALID_PARAMS,
                f"Invalid params: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}",
                {"allowed": [*sorted(ResetRequest.model_fields)]},
            ) from None
        sessions = self.service.sessions
        try:
            env = self.service.catalog.make(request.task_id or self.service.default_task)
            session = sessions.open(SessionKind.MCP)
        except InputError as exc:
            raise _input_fault(exc) from None
        except CapacityError as exc:
            raise _Fault(JsonRpcCode.SERVER_ERROR, str(exc), {"active": exc.active, "limit": exc.limit}) from None
        session.replace_env(env)
        try:
            reset = self.service.reset(session, request)
        except InputError as exc:
            sessions.close(session.id)
            raise _input_fault(exc) from None
        return {"session_id": session.id, "reset": reset.model_dump(mode="json")}


def _tool_error(message: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "structuredContent": {"error": details}, "isError": True}
