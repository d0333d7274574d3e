"""The environment routes' logic, independent of the transport: reset, step and state on sessions.

HTTP (`POST /reset`, `POST /step`, `GET /state`), the WebSocket protocol and MCP's `tools/call` all land
here, so a session behaves the same whichever way it is driven. HTTP answers are built as bytes
(`Answer`) by one function per route; the app serves them from its fast path and from its FastAPI routes
alike. Environment steps are pure computation (STYLE #17) and run on the event loop's thread, so a
session's environment is never touched by two threads.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from sredrill.errors import InputError, StateError
from sredrill.server.catalog import EnvCatalog, SessionEnv, schemas_json
from sredrill.server.sessions import CapacityError, Session, SessionKind, SessionStore
from sredrill.server.wire import (
    ErrorBody,
    HealthBody,
    MetadataBody,
    ResetRequest,
    StepRequest,
    error_body,
    input_error_body,
    state_error_body,
    validation_error_body,
)
from sredrill.text import REPLACED_NOTE, parse_json

__all__ = ["INVALID_BODY", "SESSION_HEADER", "Answer", "EnvService", "dump", "parse_request", "with_notes"]

logger = logging.getLogger(__name__)

SESSION_HEADER: Final = "X-Session-Id"
_SESSION_KEY: Final = b"x-session-id"
_RESET_FIELDS: Final = tuple(sorted(ResetRequest.model_fields))
_STEP_FIELDS: Final = tuple(sorted(StepRequest.model_fields))
INVALID_BODY: Final = 422
"""A body that does not fit its request model (not JSON, too deep, missing or extra keys, wrong types), as
FastAPI and openenv-core answer it; a valid body the environment rejects (an action, a task) is 400."""
_Request = TypeVar("_Request", bound=BaseModel)


def dump(model: BaseModel) -> bytes:
    """A model as JSON bytes (pydantic-core's serializer straight to bytes)."""
    return model.__pydantic_serializer__.to_json(model)


def with_notes(body: bytes, replaced: bool) -> bytes:
    """A JSON object's bytes with `"notes": [REPLACED_NOTE]` added when input text was replaced."""
    if not replaced:
        return body
    return body[:-1] + b',"notes":' + json.dumps([REPLACED_NOTE]).encode() + b"}"


def parse_request(model: type[_Request], body: bytes) -> tuple[_Request, bool]:
    """A request body validated against `model`, and whether lone surrogates in it were replaced.

    pydantic parses the bytes itself (the fast path); it refuses lone surrogates (`"\\ud800"`) as invalid
    JSON, so only then is the body parsed again, scrubbed (U+FFFD) and validated from the scrubbed value.

    Raises:
        ValidationError: the body does not fit `model` (not JSON, nested too deeply, wrong keys or types).
    """
    try:
        return model.model_validate_json(body), False
    except ValidationError as exc:
        if all(e["type"] != "json_invalid" for e in exc.errors(include_url=False)):
            raise
        refused = exc
    try:
        value, replaced = parse_json(body)
    except ValueError:
        raise refused from None
    if not replaced:
        raise refused  # pydantic's reason stands (NaN, nesting deeper than pydantic parses, …)
    try:
        # Dumped again so pydantic validates JSON as JSON (no NaN, the same types as the fast path).
        clean = json.dumps(value, allow_nan=False)
    except (ValueError, RecursionError):
        raise refused from None
    return model.model_validate_json(clean), True


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer: status, JSON body, and the session it concerns (sent as `X-Session-Id`)."""

    status: int
    body: bytes
    session_id: str | None = None

    @classmethod
    def error(cls, status: int, body: ErrorBody, session_id: str | None = None) -> Answer:
        return cls(status, body.__pydantic_serializer__.to_json(body, exclude_none=True), session_id)


class EnvService:
    """One server's environment logic over its catalog and sessions.

    Args:
        catalog: what is served.
        sessions: the server's session store.
    """

    def __init__(self, catalog: EnvCatalog, sessions: SessionStore) -> None:
        self.catalog = catalog
        self.sessions = sessions
        self.default_task = catalog.ids()[0]
        d = catalog.description
        # The read-only answers never change: built once.
        self.health_json = dump(HealthBody())
        self.metadata_json = dump(
            MetadataBody(
                name=d.name,
                description=d.description,
                version=d.version,
                readme_content=d.readme,
                documentation_url=d.documentation_url,
            )
        )
        self.schema_json = schemas_json(d)
        self.tasks_json = json.dumps({"tasks": [t.model_dump(mode="json") for t in catalog.tasks()]}).encode()

    # -- shared by every transport ------------------------------------------------------------------------

    def reset(self, session: Session, request: ResetRequest) -> BaseModel:
        """Start an episode in `session` (a new environment when the task changes).

        Raises:
            InputError: unknown task or bad seed.
        """
        env = session.env
        task_id = request.task_id or (env.task_id if env is not None else self.default_task)
        if env is None or env.task_id != task_id:
            env = self.catalog.make(task_id)
            session.replace_env(env)
        return _reset(env, request)

    def step(self, session: Session, action: Mapping[str, Any]) -> BaseModel:
        """One action in `session`.

        Raises:
            StateError: no episode yet (reset first) or the episode is over.
            InputError: the action is invalid (`ActionError`); the episode is unchanged.
        """
        if session.env is None:
            raise StateError("step() called before reset(): call reset() to start an episode first")
        return session.env.step(action)

    def schema(self, session: Session | None) -> bytes:
        """`GET /schema`: the action schema of the session's episode (its targets); without a session or an
        episode, the generic action envelope."""
        if session is None or session.env is None:
            return self.schema_json
        return schemas_json(self.catalog.description, action=self.catalog.action_schema(session.env))

    def state(self, session: Session | None) -> BaseModel:
        """The session's state; without a session or an episode: the default task's state before any episode."""
        if session is None or session.env is None:
            env = self.catalog.make(self.default_task)
            try:
                return env.state
            finally:
                env.close()
        return session.env.state

    # -- HTTP -----------------------------------------------------------------------------------------------

    def http_reset(self, headers: Mapping[bytes, bytes], body: bytes) -> Answer:
        """`POST /reset`: `{}` (or no body) allowed; `task_id`, `seed`."""
        try:
            request, replaced = parse_request(ResetRequest, body) if body.strip() else (ResetRequest(), False)
        except ValidationError as exc:
            return Answer.error(INVALID_BODY, validation_error_body(exc, ["body"], _RESET_FIELDS))
        named = headers.get(_SESSION_KEY)
        try:
            if named is not None:
                session = self.sessions.get(named.decode("latin-1"))
                result = self.reset(session, request)
            else:
                # The episode first: an unknown task or a bad seed must not open a session (nor change the default).
                env = self.catalog.make(request.task_id or self.default_task)
                try:
                    result = _reset(env, request)
                except InputError:
                    env.close()
                    raise
                session = self.sessions.open(SessionKind.HTTP, default=True)
                session.replace_env(env)
        except CapacityError as exc:
            return Answer.error(503, error_body("capacity", ["body"], str(exc)))
        except InputError as exc:
            if exc.field == SESSION_HEADER:
                return Answer.error(400, input_error_body(exc, ["header"], "unknown_session"))
            if exc.field == "task_id":
                error = input_error_body(exc, ["body"], "unknown_task", value=request.task_id)
                error = error.model_copy(update={"hint": "GET /tasks lists every task (RCA tasks have opaque ids)"})
            else:
                error = input_error_body(exc, ["body"], "invalid_value")
            return Answer.error(400, error, named.decode("latin-1") if named else None)
        return Answer(200, with_notes(dump(result), replaced), session.id)

    def http_step(self, headers: Mapping[bytes, bytes], body: bytes) -> Answer:
        """`POST /step {action}` on the named session, or the default one."""
        try:
            request, replaced = parse_request(StepRequest, body)
        except ValidationError as exc:
            error = validation_error_body(exc, ["body"], _STEP_FIELDS)
            if _looks_unwrapped(body):
                error = error.model_copy(update={"hint": 'wrap the action: {"action": {"action_type": …}}'})
            return Answer.error(INVALID_BODY, error)
        found = self._http_session(headers)
        if isinstance(found, Answer):
            return found
        try:
            result = self.step(found, request.action)
        except StateError as exc:
            return Answer.error(400, state_error_body(exc, reset="POST /reset"), found.id)
        except InputError as exc:
            value = request.action.get(exc.field) if exc.field else None
            return Answer.error(400, input_error_body(exc, ["body", "action"], "invalid_action", value=value), found.id)
        return Answer(200, with_notes(dump(result), replaced), found.id)

    def http_schema(self, headers: Mapping[bytes, bytes], *, sessions: bool = True) -> Answer:
        """`GET /schema` of the named session, or the default one; with neither, the generic schemas.

        `sessions=False` (a request without the server's token): the generic schemas, whatever it names.
        """
        if not sessions:
            return Answer(200, self.schema_json)
        if _SESSION_KEY not in headers:
            default = self.sessions.default
            return Answer(200, self.schema(default), default.id if default is not None else None)
        found = self._http_session(headers)
        if isinstance(found, Answer):
            return found
        return Answer(200, self.schema(found), found.id)

    def http_state(self, headers: Mapping[bytes, bytes]) -> Answer:
        """`GET /state` of the named session, or the default one."""
        if _SESSION_KEY not in headers and self.sessions.default is None:
            return Answer(200, dump(self.state(None)))
        found = self._http_session(headers)
        if isinstance(found, Answer):
            return found
        return Answer(200, dump(self.state(found)), found.id)

    def _http_session(self, headers: Mapping[bytes, bytes]) -> Session | Answer:
        named = headers.get(_SESSION_KEY)
        if named is None:
            session = self.sessions.default
            if session is None:
                return Answer.error(
                    400,
                    error_body(
                        "no_episode",
                        ["header", SESSION_HEADER],
                        "no session: start an episode with POST /reset first (its X-Session-Id response header "
                        "names the session; requests without the header use the latest one)",
                        hint='POST /reset {} then POST /step {"action": {…}}',
                    ),
                )
            self.sessions.touch(session)
            return session
        try:
            return self.sessions.get(named.decode("latin-1"))
        except InputError as exc:
            return Answer.error(400, input_error_body(exc, ["header"], "unknown_session"))


def _reset(env: SessionEnv, request: ResetRequest) -> BaseModel:
    if request.reward_mode is None:
        # Only when asked: a catalog of environments without reward modes serves as before.
        return env.reset_result(seed=request.seed)
    return env.reset_result(seed=request.seed, reward_mode=request.reward_mode)  # type: ignore[call-arg]


def _looks_unwrapped(body: bytes) -> bool:
    """A bare action posted to /step (`{"action_type": …}` without the `action` wrapper)."""
    try:
        data, _ = parse_json(body)
    except ValueError:
        return False
    return isinstance(data, dict) and "action_type" in data
