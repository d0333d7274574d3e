"""Which requests a local sredrill server answers: the `Host` and `Origin` checks of every route.

A web page the user happens to visit can make their browser send requests to a server on their machine:
cross-site requests carry the page's `Origin`, and a page whose DNS name is rebound to 127.0.0.1 sends its
own name as `Host`. Both are refused on every route, reads included, by `sredrill serve` and by the
per-run tool server (`tool_server.py`). Clients that are not browsers send no `Origin` and a loopback
`Host`, and pass.

- **Host**: a loopback name (`localhost`, `127.0.0.1`, `[::1]`) or the address the connection arrived on
  (a server bound to `127.0.0.2`, say), with any port or none. A server bound beyond loopback (`--host
  0.0.0.0`, a Space) is reached by names it cannot know, so it accepts any `Host` (`any_host`).
- **Origin**, when present: only the server's own origin (`scheme://` + the request's `Host`). `Origin:
  null` (sandboxed frames, `file:` pages) is refused, and so are other local origins
  (`http://localhost:3000`): a page served by another program on this machine is another site.

Examples:
    >>> foreign_request([(b"host", b"evil.example:7860")], server=("127.0.0.1", 7860), any_host=False).code
    'forbidden_host'
    >>> foreign_request([(b"host", b"127.0.0.1:7860")], server=("127.0.0.1", 7860), any_host=False) is None
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit

__all__ = ["LOOPBACK_NAMES", "ForeignRequest", "foreign_request", "foreign_scope", "hostname"]

LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "::1"})


@dataclass(frozen=True, slots=True)
class ForeignRequest:
    """Why a request is refused (HTTP 403): which header, an error code, and a message saying what to do."""

    header: Literal["Host", "Origin"]
    code: Literal["forbidden_host", "forbidden_origin"]
    message: str
    allowed: tuple[str, ...]
    """The `Host` names accepted (for a refused `Host`), or the one origin accepted."""


def hostname(authority: str) -> str:
    """`localhost:7860` → `localhost`; `[::1]:7860` → `::1`; lower case."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[1:].partition("]")[0]
    return authority.rpartition(":")[0] if authority.count(":") == 1 else authority


def foreign_request(
    headers: Iterable[tuple[bytes, bytes]], *, server: Sequence[Any] | None, any_host: bool
) -> ForeignRequest | None:
    """None when a request's `Host` and `Origin` are acceptable; else why not.

    Args:
        headers: the request's headers (ASGI's raw pairs; names in any case). Every `Host` and every
            `Origin` header must pass, so a repeated header cannot smuggle a second value.
        server: ASGI's `scope["server"]`, `(address, port)` of the socket the connection arrived on; its
            address is accepted as a `Host` name beside the loopback names.
        any_host: accept any `Host` (a server bound beyond loopback); `Origin` is checked all the same.
    """
    hosts: list[str] = []
    origins: list[str] = []
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"host":
            hosts.append(value.decode("latin-1"))
        elif lowered == b"origin":
            origins.append(value.decode("latin-1"))
    host = hosts[0] if hosts else ""
    if not any_host:
        allowed = set(LOOPBACK_NAMES)
        if server:
            allowed.add(str(server[0]).lower())
        for given in hosts or [""]:
            if hostname(given) not in allowed:
                return ForeignRequest(
                    "Host",
                    "forbidden_host",
                    f"Host {given!r} is not a name of this server: it listens on a loopback address and answers only "
                    "requests addressed to localhost, 127.0.0.1 or [::1] (a page whose DNS name points here is "
                    "another site)",
                    tuple(sorted(allowed)),
                )
    for origin in origins:
        if not _same_origin(origin, host):
            return ForeignRequest(
                "Origin",
                "forbidden_origin",
                f"requests from the web origin {origin!r} are refused: only this server's own pages may call it",
                (f"http://{host}",),
            )
    return None


def foreign_scope(scope: Any, *, any_host: bool) -> ForeignRequest | None:
    """`foreign_request` on an ASGI HTTP or WebSocket scope."""
    return foreign_request(scope.get("headers") or (), server=scope.get("server"), any_host=any_host)


def _same_origin(origin: str, host: str) -> bool:
    parts = urlsplit(origin.strip())
    # Browsers send `http(s)://host[:port]` (also for WebSockets); anything else (`null`, a bare word) is foreign.
    return parts.scheme in ("http", "https") and bool(host) and parts.netloc.lower() == host.strip().lower()
