"""Who may call the environment routes: the `Host` and `Origin` checks, and the optional bearer token.

DESIGN §10: the server binds 127.0.0.1 unless told otherwise, and checks `Host` and `Origin` on write
routes even there. A web page the user happens to visit can make their browser send requests to
`http://127.0.0.1:7860` (cross-site requests, DNS rebinding): the browser then sends that page's `Origin`,
or a `Host` naming the attacker's domain, and both are refused. Clients that are not browsers send no
`Origin` and a loopback `Host`, and pass.

- **Host**: on a loopback server only `localhost`, `127.0.0.1` and `[::1]` (any port) are accepted; a
  server bound to another address (`--host 0.0.0.0`, a Space) accepts any host, as it must.
- **Origin**, when present: accepted if its host is a loopback name or the request's own `Host`
  (same-origin); `Origin: null` is refused.
- **Token** (`--token T`): the routes that act on sessions (`/reset`, `/step`, `/state`, `/mcp`, `/ws`) need
  `Authorization: Bearer T`. `/health`, `/metadata`, `/schema`, `/tasks` and the docs stay open; the tool
  routes under `/runs/{run_id}/` have a token per agent run of their own.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from urllib.parse import urlsplit

from sredrill.server.wire import ErrorBody, error_body

TOKEN_COOKIE = "sredrill_token"
"""The web UI's HttpOnly cookie carrying the server's token (set by opening `/ui?token=T` once)."""

__all__ = ["LOOPBACK_HOSTS", "Denied", "Guard", "is_loopback"]

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    """True for a loopback bind address or host name (`127.0.0.1`, `localhost`, `::1`, `127.x.y.z`)."""
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def _hostname(authority: str) -> str:
    """`localhost:7860` → `localhost`; `[::1]:7860` → `::1`."""
    if authority.startswith("["):
        return authority[1:].partition("]")[0]
    return authority.rpartition(":")[0] if authority.count(":") == 1 else authority


@dataclass(frozen=True, slots=True)
class Denied:
    """Why a request is refused: the HTTP status and the error body."""

    status: int
    body: ErrorBody


class Guard:
    """The checks of one server.

    Args:
        token: the bearer token the session routes need; None: no token.
        loopback_only: accept only loopback `Host` names (a server bound to a loopback address).
    """

    def __init__(self, *, token: str | None, loopback_only: bool) -> None:
        self.token = token
        self.loopback_only = loopback_only
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
            write: the route acts on a session (token, `Host` and `Origin` apply).
        """
        if not write:
            return None
        host = headers.get(b"host", b"").decode("latin-1")
        if self.loopback_only and _hostname(host) not in LOOPBACK_HOSTS:
            return Denied(
                403,
                error_body(
                    "forbidden_host",
                    ["header", "Host"],
                    f"Host {host!r} is not a loopback name: this server listens on a loopback address and "
                    "answers only requests addressed to localhost, 127.0.0.1 or [::1]",
                    allowed=sorted(LOOPBACK_HOSTS),
                    hint="call http://127.0.0.1:PORT, or start the server with --host 0.0.0.0 to serve other hosts",
                ),
            )
        origin = headers.get(b"origin")
        if origin is not None and not self._origin_ok(origin.decode("latin-1"), host):
            return Denied(
                403,
                error_body(
                    "forbidden_origin",
                    ["header", "Origin"],
                    f"requests from the web origin {origin.decode('latin-1')!r} are refused: only loopback and "
                    "same-origin pages may act on sessions",
                ),
            )
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

    @staticmethod
    def _origin_ok(origin: str, host: str) -> bool:
        if origin == "null":
            return False
        parts = urlsplit(origin)
        if parts.hostname is None:
            return False
        return parts.hostname in LOOPBACK_HOSTS or parts.netloc == host


def header_map(raw: Iterable[tuple[bytes, bytes]]) -> dict[bytes, bytes]:
    """ASGI's header list as a dict (the last value of a repeated header wins)."""
    return dict(raw)
