"""Who may call the environment routes: the optional bearer token of the session routes.

DESIGN §10: the server binds 127.0.0.1 unless told otherwise. `Host` and `Origin` are checked on every
route before this layer, where the app receives a request (`gate.foreign_denial`, over
`sredrill.agents.foreign_request`): a web page the user happens to visit cannot drive a local server.

- **Token** (`--token T`): the routes that act on sessions (`/reset`, `/step`, `/state`, `/mcp`, `/ws`) need
  `Authorization: Bearer T` (or the web UI's cookie). `/health`, `/metadata`, `/schema`, `/tasks` and the
  docs stay open on loopback; the tool routes under `/runs/{run_id}/` have a token per agent run of their own.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie

from sredrill.agents import LOOPBACK_NAMES
from sredrill.server.wire import ErrorBody, error_body

TOKEN_COOKIE = "sredrill_token"
"""The web UI's HttpOnly cookie carrying the server's token (set by opening `/ui?token=T` once)."""

__all__ = ["LOOPBACK_HOSTS", "Denied", "Guard", "is_loopback"]

LOOPBACK_HOSTS = LOOPBACK_NAMES


def is_loopback(host: str) -> bool:
    """True for a loopback bind address or host name (`127.0.0.1`, `localhost`, `::1`, `127.x.y.z`)."""
    return host in LOOPBACK_HOSTS or host.startswith("127.")


@dataclass(frozen=True, slots=True)
class Denied:
    """Why a request is refused: the HTTP status and the error body."""

    status: int
    body: ErrorBody


class Guard:
    """The token check of one server's session routes.

    Args:
        token: the bearer token the session routes need; None: no token.
    """

    def __init__(self, *, token: str | None) -> None:
        self.token = token
        self._expected = f"Bearer {token}".encode() if token else None

    def _cookie_ok(self, cookie: bytes | None) -> bool:
        """The web UI's HttpOnly token cookie (set by `/ui?token=T`) counts like the Authorization header."""
        if cookie is None or self.token is None:
            return False
        jar = SimpleCookie()
        try:
            jar.load(cookie.decode("latin-1"))
        except CookieError:
            return False
        morsel = jar.get(TOKEN_COOKIE)
        return morsel is not None and secrets.compare_digest(morsel.value.encode(), self.token.encode())

    def check(self, headers: dict[bytes, bytes], *, write: bool) -> Denied | None:
        """None when the request may proceed; else why not.

        Args:
            headers: the request's headers, names lower-case (ASGI's raw form).
            write: the route acts on a session (the token applies).
        """
        if not write:
            return None
        if self._expected is not None and not self._cookie_ok(headers.get(b"cookie")):
            given = headers.get(b"authorization")
            if given is None or not secrets.compare_digest(given, self._expected):
                return Denied(
                    401,
                    error_body(
                        "unauthorized",
                        ["header", "Authorization"],
                        "this server needs its token: send 'Authorization: Bearer <token>' (the --token given to "
                        "sredrill serve)"
                        if given is None
                        else "wrong token in the Authorization header",
                    ),
                )
        return None


def header_map(raw: Iterable[tuple[bytes, bytes]]) -> dict[bytes, bytes]:
    """ASGI's header list as a dict (the last value of a repeated header wins)."""
    return dict(raw)
