"""Who may use the runs API and the web UI: `Host` always, `Origin` on writes, the token beyond loopback.

DESIGN §10 and issue 7: the server binds 127.0.0.1 by default and checks `Host` and `Origin` on every write
route even there (the environment routes' `Guard` does the same checks); a server bound elsewhere needs its
token on every route but `/health`. The `Host` check applies to reads too: a page of another site that
rebinds its DNS name to 127.0.0.1 must not read stored runs.

A browser cannot add an `Authorization` header to a link, so the UI also accepts the token once as
`?token=T`, which sets an HttpOnly, SameSite=Strict cookie for the rest of the visit.
"""

# No `from __future__ import annotations`: FastAPI reads the dependencies' annotations at run time.

import contextlib
import secrets
from http.cookies import CookieError, SimpleCookie
from typing import Any, Final
from urllib.parse import parse_qs

from sredrill.server.security import LOOPBACK_HOSTS, TOKEN_COOKIE, Denied, Guard, _hostname
from sredrill.server.wire import error_body

__all__ = ["TOKEN_COOKIE", "RunsGate", "TokenEverywhere"]


class RunsGate:
    """The checks of the runs API and UI routes, as FastAPI dependencies (`gate.read`, `gate.write`).

    Args:
        token: the server's `--token`; None: none was given.
        loopback_only: the server is bound to a loopback address.
    """

    def __init__(self, *, token: str | None, loopback_only: bool) -> None:
        self.token = token
        self.loopback_only = loopback_only
        self._guard = Guard(token=None, loopback_only=loopback_only)
        from fastapi import Request

        def read(request: Request) -> None:
            """A route that only reads."""
            self._check(request, write=False)

        def write(request: Request) -> None:
            """A route that starts or changes something."""
            self._check(request, write=True)

        self.read = read
        self.write = write

    def _refuse(self, status: int, body: Any) -> None:
        from fastapi import HTTPException

        item = body.detail[0]
        msg = item.msg + (f"; {body.hint}" if body.hint else "")
        raise HTTPException(status_code=status, detail=[{"type": item.type, "loc": item.loc, "msg": msg}])

    def _check(self, request: Any, *, write: bool) -> None:
        headers = {k.lower(): v for k, v in request.scope["headers"]}
        host = headers.get(b"host", b"").decode("latin-1")
        if self.loopback_only and _hostname(host) not in LOOPBACK_HOSTS:
            self._refuse(
                403,
                error_body(
                    "forbidden_host",
                    ["header", "Host"],
                    f"Host {host!r} is not a loopback name",
                    allowed=sorted(LOOPBACK_HOSTS),
                ),
            )
        if write:
            denied = self._guard.check(headers, write=True)
            if denied is not None:
                self._refuse(denied.status, denied.body)
        if self.loopback_only and self.token is None:
            return
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
        denied = self.token_denial(headers, request.scope.get("query_string", b""))
        if denied is not None:
            self._refuse(denied.status, denied.body)

    def token_denial(self, headers: dict[bytes, bytes], query_string: bytes) -> Denied | None:
        """Why the token check refuses a request (401 missing, 403 wrong), or None: given, or none configured.

        The token may come as `Authorization: Bearer T`, as `?token=T`, or in the UI's cookie.
        """
        if self.token is None:
            return None
        given = _given(headers, query_string)
        if given is None:
            return Denied(
                401,
                error_body(
                    "unauthorized",
                    ["header", "Authorization"],
                    "this server needs its token: send 'Authorization: Bearer <token>' or "
                    "open the UI once with ?token=<token>",
                ),
            )
        if not secrets.compare_digest(given.encode(), self.token.encode()):
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
                body = denied.body.model_dump_json(exclude_none=True).encode()
                start = {"type": "http.response.start", "status": denied.status}
                start["headers"] = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ]
                await send(start)
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
