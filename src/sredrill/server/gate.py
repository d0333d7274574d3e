"""Who may use `sredrill serve`: `Host` and `Origin` on every route, the token on the runs API and web UI.

DESIGN §10; the threat model is in `docs/server.md`. Every request, on every route (reads, `/health`, the
OTLP receiver and `/ws` included), first passes `foreign_denial`: a loopback name (or the bound address) as
`Host`, no `Origin` or the server's own (`sredrill.agents.foreign_request`), so a web page the user visits
can neither read nor drive the server, even by rebinding its DNS name to 127.0.0.1.

The runs API and the UI need the server's token on every route, reads included (a stored result carries
the scenario's expected answer): `--token T`, or one `create_app` generates when none is given (`sredrill
serve` prints it, in a link). A browser cannot add an `Authorization` header to a link, so the UI also
accepts the token once as `?token=T` (on `/` or `/ui`), which sets an HttpOnly, SameSite=Strict cookie for
the rest of the visit. A server bound beyond loopback without `--token` keeps the runs API and UI closed.
"""

# No `from __future__ import annotations`: FastAPI reads the dependencies' annotations at run time.

import contextlib
import secrets
from http.cookies import CookieError, SimpleCookie
from typing import Any, Final
from urllib.parse import parse_qs

from sredrill.agents import foreign_scope
from sredrill.server.security import TOKEN_COOKIE, Denied
from sredrill.server.wire import ErrorBody, error_body

__all__ = ["TOKEN_COOKIE", "RunsGate", "TokenEverywhere", "foreign_denial", "send_denied"]


def foreign_denial(scope: Any, *, loopback_only: bool) -> Denied | None:
    """Why a request's `Host` or `Origin` is refused (403), or None.

    Args:
        scope: the ASGI scope (HTTP or WebSocket).
        loopback_only: the server is bound to a loopback address (only loopback `Host` names, and the
            bound address, are accepted); False accepts any `Host` and still checks `Origin`.
    """
    refused = foreign_scope(scope, any_host=not loopback_only)
    if refused is None:
        return None
    hint = (
        "call http://127.0.0.1:PORT, or start the server with --host 0.0.0.0 to serve other hosts"
        if refused.header == "Host"
        else "open the page from this server itself, or call it from a program (no Origin header)"
    )
    body = error_body(refused.code, ["header", refused.header], refused.message, allowed=refused.allowed, hint=hint)
    return Denied(403, body)


async def send_denied(scope: Any, send: Any, denied: Denied) -> None:
    """Answer a refused request: its JSON error body over HTTP; a WebSocket handshake is closed (HTTP 403)."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008, "reason": denied.body.detail[0].type})
        return
    body = denied.body.model_dump_json(exclude_none=True).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": denied.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class RunsGate:
    """The token check of the runs API and UI routes, as FastAPI dependencies (`gate.read`, `gate.write`).

    Args:
        token: the token the routes need (`--token`, or the one generated at start); None: the routes are
            closed (a server bound beyond loopback without `--token`).
    """

    def __init__(self, *, token: str | None) -> None:
        self.token = token
        from fastapi import Request

        def read(request: Request) -> None:
            """A route that only reads (stored results carry expected answers: the token applies)."""
            self._check(request)

        def write(request: Request) -> None:
            """A route that starts or changes something."""
            self._check(request)

        self.read = read
        self.write = write

    @staticmethod
    def _refuse(status: int, body: ErrorBody) -> None:
        from fastapi import HTTPException

        item = body.detail[0]
        msg = item.msg + (f"; {body.hint}" if body.hint else "")
        raise HTTPException(status_code=status, detail=[{"type": item.type, "loc": item.loc, "msg": msg}])

    def _check(self, request: Any) -> None:
        if self.token is None:
            self._refuse(
                403,
                error_body(
                    "no_token",
                    [],
                    "this server is reachable beyond loopback and has no token, so the runs API and UI are closed",
                    hint="restart with --token T",
                ),
            )
        headers = {k.lower(): v for k, v in request.scope["headers"]}
        denied = self.token_denial(headers, request.scope.get("query_string", b""))
        if denied is not None:
            self._refuse(denied.status, denied.body)

    def token_denial(self, headers: dict[bytes, bytes], query_string: bytes) -> Denied | None:
        """Why the token check refuses a request (401 missing, 403 wrong), or None: the right token is given.

        The token may come as `Authorization: Bearer T`, as `?token=T`, or in the UI's cookie.
        """
        given = _given(headers, query_string)
        if given is None:
            return Denied(
                401,
                error_body(
                    "unauthorized",
                    ["header", "Authorization"],
                    "this server needs its token: send 'Authorization: Bearer <token>', or open the link "
                    "'sredrill serve' printed when it started (http://127.0.0.1:PORT/?token=…) once in the browser",
                ),
            )
        if self.token is None or not secrets.compare_digest(given.encode(), self.token.encode()):
            return Denied(403, error_body("forbidden_token", ["header", "Authorization"], "wrong token"))
        return None


def _given(headers: dict[bytes, bytes], query_string: bytes) -> str | None:
    auth = headers.get(b"authorization", b"").decode("latin-1")
    if auth.startswith("Bearer "):
        return auth.removeprefix("Bearer ")
    query = parse_qs(query_string.decode("latin-1")).get("token")
    if query:
        return query[0]
    cookie = SimpleCookie()
    with contextlib.suppress(CookieError):
        cookie.load(headers.get(b"cookie", b"").decode("latin-1"))
    morsel = cookie.get(TOKEN_COOKIE)
    return morsel.value if morsel is not None else None


class TokenEverywhere:
    """ASGI middleware of a server bound beyond loopback with a token: every HTTP route but `/health` needs it.

    The session routes and `/ws` are answered before this layer and check the token themselves; the tool
    routes under `/runs/{run_id}/` carry a token per agent run of their own and are left to it.

    Args:
        app: the wrapped ASGI app.
        gate: the server's gate (its token).
    """

    OPEN: Final = frozenset({"/health"})

    def __init__(self, app: Any, *, gate: RunsGate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path not in self.OPEN and not path.startswith("/runs/"):
            headers = {k.lower(): v for k, v in scope["headers"]}
            denied = self.gate.token_denial(headers, scope.get("query_string", b""))
            if denied is not None:
                await send_denied(scope, send, denied)
                return
        await self.app(scope, receive, send)
